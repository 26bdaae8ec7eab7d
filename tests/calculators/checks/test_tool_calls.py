"""Tool-call check on real chat templates (knowledge/chat_templates, sources in SOURCES.md there)."""

from __future__ import annotations

import json

import pytest

from calculators.checks.chat_template import analyse_template, chat_template_from_tokenizer_config
from calculators.checks.launch_flags import read_command_flags
from calculators.checks.tool_calls import (
    TEMPLATES_DIR,
    check_tool_calls,
    tool_model_from_catalog,
    tool_model_from_template,
)
from calculators.errors import ServewiseInputError
from knowledge.loader import load_knowledge

KB = load_knowledge().tool_calling
ENGINES = ("vllm", "sglang", "llama-cpp", "ollama", "mlx-lm")


def _template(name: str) -> str:
    return (TEMPLATES_DIR / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "call_format"),
    [
        ("meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3-json"),
        ("meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3-json"),
        ("Qwen-Qwen2.5-7B-Instruct.jinja", "hermes-json"),
        ("Qwen-Qwen3-0.6B.jinja", "hermes-json"),
        ("Qwen3-Coder.jinja", "qwen3-xml"),
        ("openai-gpt-oss-120b.jinja", "harmony"),
        ("Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral-v11"),
        ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3"),
        ("CISCai-Mistral-7B-Instruct-v0.3-SOTA-GGUF.jinja", "mistral-v3"),
        ("deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v31"),
        ("google-gemma-2-2b-it.jinja", None),
        ("google-gemma-3-instruct.jinja", None),
        ("mistralai-Mixtral-8x7B-Instruct-v0.1.jinja", None),
    ],
)
def test_real_templates_reveal_their_call_format(file: str, call_format: str | None) -> None:
    support = analyse_template(_template(file), KB.call_formats)
    assert support.call_format == call_format
    assert support.renders_tool_calls is (call_format is not None)


def test_every_template_named_in_the_knowledge_exists_and_agrees_with_its_entry() -> None:
    for entry in KB.catalog_models:
        if entry.template is None:
            continue
        support = analyse_template(_template(entry.template), KB.call_formats)
        assert (support.call_format or "none") == entry.call_format, entry.model


def test_every_catalog_chat_model_gets_a_verdict_on_every_engine() -> None:
    chat_models = [m.id for m in load_knowledge().models.models if m.embedding is None]
    assert {e.model for e in KB.catalog_models} <= set(chat_models)
    for model_id in chat_models:
        model = tool_model_from_catalog(model_id, KB)
        for engine in ENGINES:
            result = check_tool_calls(model, engine, None, KB)
            assert result.verdict in ("works", "needs-flags", "will-not-parse", "unknown")
            assert result.sources and all(result.sources)


def test_vllm_needs_both_flags_and_the_parser_that_reads_the_format() -> None:
    llama = tool_model_from_catalog("llama-3.1-8b", KB)
    bare = check_tool_calls(llama, "vllm", read_command_flags("vllm serve meta-llama/Llama-3.1-8B-Instruct"), KB)
    assert bare.verdict == "needs-flags"
    assert bare.flags_to_add == ("--enable-auto-tool-choice", "--tool-call-parser llama3_json")
    assert bare.tool_choice == {"auto": False, "none": True, "required": False, "named": False}
    good = read_command_flags("vllm serve m --enable-auto-tool-choice --tool-call-parser llama3_json")
    result = check_tool_calls(llama, "vllm", good, KB)
    assert (result.verdict, result.parser) == ("works", "llama3_json")
    assert all(result.tool_choice.values())
    wrong = read_command_flags("vllm serve m --enable-auto-tool-choice --tool-call-parser=hermes")
    result = check_tool_calls(llama, "vllm", wrong, KB)
    assert result.verdict == "will-not-parse"
    assert result.flags_to_remove == ("--tool-call-parser hermes",)
    assert result.flags_to_add == ("--tool-call-parser llama3_json",)
    no_enable = read_command_flags("vllm serve m --tool_call_parser llama3_json")
    assert check_tool_calls(llama, "vllm", no_enable, KB).flags_to_add == ("--enable-auto-tool-choice",)
    unknown = read_command_flags("vllm serve m --enable-auto-tool-choice --tool-call-parser llama31")
    assert check_tool_calls(llama, "vllm", unknown, KB).reasons[0].code == "parser-not-registered"


def test_sglang_auto_detects_qwen3_and_gpt_oss_but_not_llama() -> None:
    auto = read_command_flags("python -m sglang.launch_server --model-path x --tool-call-parser auto")
    qwen3 = check_tool_calls(tool_model_from_catalog("qwen3-8b", KB), "sglang", auto, KB)
    assert (qwen3.verdict, qwen3.parser) == ("works", "qwen")
    gpt_oss = check_tool_calls(tool_model_from_catalog("gpt-oss-20b", KB), "sglang", auto, KB)
    assert (gpt_oss.verdict, gpt_oss.parser) == ("works", "gpt-oss")
    llama = check_tool_calls(tool_model_from_catalog("llama-3.1-8b", KB), "sglang", auto, KB)
    assert llama.verdict == "needs-flags"
    assert llama.flags_to_add == ("--tool-call-parser llama3",)


def test_llama_server_parses_through_the_template_and_not_without_jinja() -> None:
    llama = tool_model_from_catalog("llama-3.1-8b", KB)
    assert check_tool_calls(llama, "llama-cpp", read_command_flags("llama-server -m m.gguf"), KB).verdict == "works"
    off = check_tool_calls(llama, "llama-cpp", read_command_flags("llama-server -m m.gguf --no-jinja"), KB)
    assert (off.verdict, off.flags_to_remove) == ("needs-flags", ("--no-jinja",))
    works = check_tool_calls(llama, "llama-cpp", None, KB)
    assert works.tool_choice["named"] is False and works.tool_choice["required"] is True
    gemma = check_tool_calls(tool_model_from_catalog("gemma-3-27b", KB), "llama-cpp", None, KB)
    assert gemma.verdict == "will-not-parse"
    assert gemma.reasons[0].code == "template-no-tools"


def test_mlx_lm_infers_a_parser_for_qwen_but_none_for_llama_or_gpt_oss() -> None:
    qwen = check_tool_calls(tool_model_from_catalog("qwen2.5-72b", KB), "mlx-lm", None, KB)
    assert (qwen.verdict, qwen.parser) == ("works", "json_tools")
    coder = tool_model_from_template(_template("Qwen3-Coder.jinja"), KB, "Qwen3-Coder", "test")
    assert check_tool_calls(coder, "mlx-lm", None, KB).parser == "qwen3_coder"
    for model_id in ("llama-3.1-8b", "gpt-oss-120b"):
        assert check_tool_calls(tool_model_from_catalog(model_id, KB), "mlx-lm", None, KB).verdict == "will-not-parse"


def test_models_whose_template_was_not_read_are_unknown_not_guessed() -> None:
    phi = tool_model_from_catalog("phi-4", KB)
    assert {check_tool_calls(phi, e, None, KB).verdict for e in ENGINES} == {"unknown"}
    deepseek = tool_model_from_catalog("deepseek-v3", KB)
    assert check_tool_calls(deepseek, "llama-cpp", None, KB).verdict == "unknown"
    assert check_tool_calls(deepseek, "vllm", None, KB).flags_to_add[-1] == "--tool-call-parser deepseek_v3"
    assert tool_model_from_catalog("not-in-the-catalog", KB).call_format == "unknown"


def test_tokenizer_config_forms_and_errors() -> None:
    text = _template("Qwen-Qwen2.5-7B-Instruct.jinja")
    assert chat_template_from_tokenizer_config(json.dumps({"chat_template": text})) == text
    entries = [{"name": "tool_use", "template": "x"}, {"name": "default", "template": text}]
    listed = json.dumps({"chat_template": entries})
    assert chat_template_from_tokenizer_config(listed) == text
    with pytest.raises(ServewiseInputError, match="no chat_template"):
        chat_template_from_tokenizer_config("{}")
    with pytest.raises(ServewiseInputError, match="not valid JSON"):
        chat_template_from_tokenizer_config("{")


def test_a_command_for_another_engine_is_refused() -> None:
    model = tool_model_from_catalog("qwen3-8b", KB)
    with pytest.raises(ServewiseInputError, match="starts vllm"):
        check_tool_calls(model, "sglang", read_command_flags("vllm serve Qwen/Qwen3-8B"), KB)


def test_a_template_file_is_a_model(tmp_path) -> None:
    from calculators.checks.inputs import tool_model_from_file

    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": _template("openai-gpt-oss-120b.jinja")}), encoding="utf-8")
    model = tool_model_from_file(config, KB)
    assert model.call_format == "harmony"
    assert check_tool_calls(model, "vllm", None, KB).flags_to_add[-1] == "--tool-call-parser openai"
    with pytest.raises(ServewiseInputError, match="cannot be read"):
        tool_model_from_file(tmp_path / "missing.jinja", KB)


def test_pasted_text_is_a_template_unless_it_is_a_json_object() -> None:
    from calculators.checks.chat_template import chat_template_from_text

    template = _template("Qwen-Qwen2.5-7B-Instruct.jinja")  # starts with "{%-": a template, not JSON
    assert chat_template_from_text(template, "paste") == template
    assert chat_template_from_text(json.dumps({"chat_template": template}), "paste") == template
    with pytest.raises(ServewiseInputError, match="not a tokenizer_config"):
        chat_template_from_text("[1, 2]", "paste")
