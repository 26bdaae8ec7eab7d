"""Launch-command tokenising and flag matching (flag vocabulary here is a fixture, not the KB)."""

import pytest

from calculators.errors import LaunchCommandError
from calculators.launch.command import EngineCommandSyntax, FlagSpec, parse_launch_command

SYNTAXES = {
    "llama-cpp": EngineCommandSyntax(
        "llama-cpp",
        (
            FlagSpec("ctx_size", ("-c", "--ctx-size")),
            FlagSpec("parallel", ("-np", "--parallel")),
            FlagSpec("cache_type_k", ("-ctk", "--cache-type-k")),
            FlagSpec("cache_type_v", ("-ctv", "--cache-type-v")),
            FlagSpec("flash_attn", ("-fa", "--flash-attn")),
            FlagSpec("kv_unified", ("-kvu", "--kv-unified"), takes_value=False, negation_flags=("--no-kv-unified",)),
            FlagSpec("model", ("-m", "--model")),
        ),
    ),
    "ollama": EngineCommandSyntax("ollama", (FlagSpec("num_parallel", env="OLLAMA_NUM_PARALLEL"),)),
    "vllm": EngineCommandSyntax(
        "vllm",
        (
            FlagSpec("max_model_len", ("--max-model-len",)),
            FlagSpec("tensor_parallel_size", ("-tp", "--tensor-parallel-size")),
            FlagSpec(
                "enable_prefix_caching",
                ("--enable-prefix-caching",),
                takes_value=False,
                negation_flags=("--no-enable-prefix-caching",),
            ),
        ),
        positional_model=True,
    ),
    "sglang": EngineCommandSyntax(
        "sglang", (FlagSpec("tp_size", ("--tp", "--tp-size")), FlagSpec("model", ("--model-path",)))
    ),
    "mlx-lm": EngineCommandSyntax("mlx-lm", (FlagSpec("model", ("--model",)),)),
}


def test_llama_server_issue_example():
    parsed = parse_launch_command("llama-server -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on", SYNTAXES)
    assert parsed.engine == "llama-cpp"
    assert parsed.settings == {
        "ctx_size": "32768",
        "parallel": "4",
        "cache_type_k": "q8_0",
        "cache_type_v": "q8_0",
        "flash_attn": "on",
    }
    assert parsed.unknown_flags == []


def test_ollama_env_assignment_and_unrelated_env():
    parsed = parse_launch_command("CUDA_VISIBLE_DEVICES=0 OLLAMA_NUM_PARALLEL=4 ollama serve", SYNTAXES)
    assert parsed.engine == "ollama"
    assert parsed.settings == {"num_parallel": "4"}
    assert parsed.ignored_env == ["CUDA_VISIBLE_DEVICES"]


def test_vllm_positional_model_equals_form_underscores_and_negation():
    parsed = parse_launch_command(
        "vllm serve meta-llama/Llama-3.1-8B --max_model_len=32768 -tp 2 --no-enable-prefix-caching", SYNTAXES
    )
    assert parsed.model == "meta-llama/Llama-3.1-8B"
    assert parsed.settings == {"max_model_len": "32768", "tensor_parallel_size": "2", "enable_prefix_caching": "false"}


def test_sglang_module_launcher_and_model_flag():
    parsed = parse_launch_command("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 4", SYNTAXES)
    assert (parsed.engine, parsed.model, parsed.settings) == ("sglang", "Qwen/Qwen3-8B", {"tp_size": "4"})


def test_unknown_flags_are_reported_with_their_values():
    parsed = parse_launch_command("llama-server -c 4096 --frobnicate 3 --kv-unified", SYNTAXES)
    assert parsed.unknown_flags == ["--frobnicate", "3"]
    assert parsed.settings == {"ctx_size": "4096", "kv_unified": "true"}


def test_line_continuations_and_comments():
    parsed = parse_launch_command("llama-server \\\n  -c 8192 \\\n  -np 2  # two slots", SYNTAXES)
    assert parsed.settings == {"ctx_size": "8192", "parallel": "2"}


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("", "names no program"),
        ("llama-server -c", "-c needs a value"),
        ("llama-server -c '4096", "cannot be split"),
        ("docker run vllm/vllm-openai", "not a launcher"),
        ("OLLAMA_NUM_PARALLEL=2", "names no program"),
        ("ollama pull llama3", "ollama serve"),
    ],
)
def test_bad_commands_get_a_clear_message(command, message):
    with pytest.raises(LaunchCommandError, match=message):
        parse_launch_command(command, SYNTAXES)


@pytest.mark.parametrize(
    ("command", "english", "spanish"),
    [
        ("vllm serve m --chat-template '{{ x", "quotation mark is opened and never closed",
         "unas comillas se abren y nunca se cierran"),
        ("llama-server -m model.gguf \\", "ends with a backslash", "termina con una barra invertida"),
    ],
)
def test_unsplittable_commands_are_explained_in_the_readers_language(command, english, spanish):
    """The Spanish page showed Python's own 'No closing quotation' (issue 19 review): shlex's reasons are ours now."""
    from calculators.i18n import language

    with pytest.raises(LaunchCommandError, match=english):
        parse_launch_command(command, SYNTAXES)
    with language("es"), pytest.raises(LaunchCommandError, match=spanish) as caught:
        parse_launch_command(command, SYNTAXES)
    assert "No closing" not in str(caught.value) and "No escaped" not in str(caught.value)
