"""No English word is left in any verb's Spanish output: each verb runs on typical inputs in both languages.

A word is an English leftover when the Spanish run prints it outside quotes and code spans, the English run of
the same command prints it too, and it is neither in what the user gave (the log, the command, the file names)
nor one of the words Spanish technical text shares with English (SHARED_WORDS: names, units and the engines' own
vocabulary). Identifiers (anything with `_`, `.`, `/`, `=`, a digit or a `-` inside) are the engines' and the
files' spellings and stay as written; so do the lines an engine printed, which servewise quotes.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import yaml

from calculators.reconcile.log.vocabulary import FIGURES
from cli.main import main
from knowledge import load_knowledge
from tests.support.paths import HF_CONFIG_DIR, LOG_DIR

#: Words a Spanish platform engineer writes as they are: product and model names, units, Spanish words that are
#: also English, and the engines' vocabulary that Spanish technical text keeps (slot, prefill, runner, pool...).
SHARED_WORDS = frozenset({
    # Spanish words that are English words too
    "no", "plan", "total", "log", "id", "ids", "json", "global", "base", "real", "error", "hardware", "host", "hosts",
    "chat", "parser", "flags",
    "benchmark", "endpoint", "endpoints", "proxy", "decide", "experimental", "builds", "multimodal",
    # names: servewise, engines, vendors, models, formats, tools
    "servewise", "ollama", "vllm", "sglang", "mlx", "lm", "llama", "cpp", "server", "cuda", "nccl", "nvidia",
    "geforce", "macos", "mac", "linux", "windows", "metal", "gguf", "mla", "flashmla", "qwen", "gemma", "mistral",
    "mixtral", "small", "mini", "instruct", "jamba", "mamba", "scout", "maverick", "kimi", "deepseek", "pixtral",
    "transformers", "transformer", "gated", "deltanet", "jinja", "hermes", "prometheus", "modal", "readme", "pr",
    "mtp", "dflash", "roofline", "kvcache", "batchkvcache", "hybridswapoolconfigurator", "hbm", "gddr", "lora",
    "api", "markdown", "commit", "fit", "working", "set", "gpu", "cpu", "ram", "tp", "np", "ngl", "kvsize",
    # units and counts as Spanish writes them
    "gib", "mib", "gb", "mb", "ms", "bits", "bytes", "byte", "tokens", "token", "kv", "ttft",
    # engine vocabulary kept in Spanish text
    "slot", "slots", "prefill", "prompt", "prompts", "pool", "runner", "batching", "backends", "dtype", "pooling",
    "rope", "embedding", "embeddings", "flash", "attention", "null", "true", "false", "draft",
    # settings, cache names and modes as the engines spell them: llama.cpp's `parallel` and its `recurrent` cache,
    # sentence-transformers' `mean` pooling
    "parallel", "recurrent", "mean",
})

#: Quotes, code spans and Markdown links: a link's text is the title of the page it cites, in that page's language.
_QUOTED = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\[[^\]]*\]\([^)\s]*\)")


def _words(text: str) -> set[str]:
    """Lower-case words of `text` outside quotes and code spans; identifiers and numbers are not words."""
    found = set()
    for line in text.splitlines():
        for token in _QUOTED.sub(" ", line).split():
            if token.startswith("-"):  # a flag, as typed
                continue
            token = token.strip("(),;:.[]|*—–-")
            if re.fullmatch(r"[A-Za-z]{2,}", token):
                found.add(token.lower())
    return found


def english_leftovers(spanish: str, english: str, given: str) -> set[str]:
    """Words the Spanish output shares with the English one that the user did not give and Spanish does not share."""
    return (_words(spanish) & _words(english)) - _words(given) - SHARED_WORDS


def _run(args: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.suppress(SystemExit):
        main(args)  # SystemExit: --help, argparse errors
    return out.getvalue() + err.getvalue()


def _leftovers(args: list[str], given: str = "") -> dict[str, list[str]]:
    """Per leftover word, the Spanish lines that print it."""
    spanish = _run(["--lang", "es", *args])
    # the log vocabulary's figure names ('cells', 'streams') are identifiers, as --json and --lines print them
    found = english_leftovers(spanish, _run(args), " ".join([given, *args, *FIGURES]))
    return {word: [line for line in spanish.splitlines()
                   if re.search(rf"\b{word}\b", _QUOTED.sub(" ", line), re.IGNORECASE)][:2] for word in sorted(found)}


@pytest.fixture(autouse=True)
def no_locale(monkeypatch):
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)


def test_the_check_finds_an_english_word_and_passes_spanish_and_what_was_given():
    english = "not found in the log: setting max_model_len, figure weights_bytes\nengine: vLLM"
    spanish = "no encontrado en el log: setting max_model_len, cifra weights_bytes\nmotor: vLLM"
    assert english_leftovers(spanish, english, "") == {"setting"}
    assert not english_leftovers(spanish.replace("setting", "ajuste"), english, "")
    # an engine's own line quoted in the Spanish text, or a word of the log the user pasted, is not a leftover
    assert not english_leftovers("leído de 'offloading 24 repeating layers'", "read from 'offloading 24 repeating "
                                 "layers'", "")
    assert not english_leftovers("geometría: repeating", "geometry: repeating", "offloading 24 repeating layers")


_COMMANDS = {
    "llama-server": ["llama-server", "-c", "32768", "-np", "4", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"],
    "ollama": ["OLLAMA_NUM_PARALLEL=4", "ollama", "serve"],
    "vllm": ["vllm", "serve", "m", "--max-model-len", "32768", "--gpu-memory-utilization", "0.9"],
    "sglang": ["python", "-m", "sglang.launch_server", "--model-path", "m", "--mem-fraction-static", "0.85",
               "--tp", "4"],
    "mlx_lm": ["mlx_lm.server", "--model", "m", "--kv-bits", "8"],
}


def _memory_args(model: str, engine: str) -> list[str]:
    where = (["--prompt-tokens", "4096", "--generated-tokens", "256", "--sequences", "2"] if engine == "mlx_lm"
             else ["--gpu", "h100-sxm-80gb"])
    return ["memory", "--model", model, *where, "--", *_COMMANDS[engine]]


@pytest.mark.parametrize("engine", list(_COMMANDS))
def test_memory_plans_of_every_engine_have_no_english_left(engine):
    leftovers = {}
    for model in ("llama-3.1-8b", "qwen3-next-80b-a3b", "gpt-oss-20b", "deepseek-v2-lite", "gemma-3-27b"):
        leftovers.update(_leftovers(_memory_args(model, engine)))
    assert not leftovers, leftovers


def test_every_catalog_model_note_is_spanish():
    """The catalog's notes on each model (knowledge/models.yaml) reach every plan of that model."""
    leftovers = {}
    for model in load_knowledge().models.ids:
        leftovers.update(_leftovers(["memory", "--model", model, "--gpu", "h100-sxm-80gb", "--", *_COMMANDS["vllm"]]))
    assert not leftovers, leftovers


def test_reconcile_of_every_stored_log_has_no_english_left():
    """Every log of tests/data/logs with the inputs RECONCILE.yaml gives it: frame, rows, explanations, notes."""
    entries = yaml.safe_load((LOG_DIR / "RECONCILE.yaml").read_text(encoding="utf-8"))["logs"]
    leftovers = {}
    for path in sorted(LOG_DIR.glob("*.log")):
        entry = entries.get(path.name, {})
        args = ["reconcile", "--log", str(path)]
        if model := entry.get("model"):
            args += ["--hf-config", str(HF_CONFIG_DIR / model)] if model.endswith(".json") else ["--model", model]
        args += [f"--set={key}={value}" for key, value in (entry.get("set") or {}).items()]
        found = _leftovers(args, path.read_text(encoding="utf-8"))
        leftovers.update({f"{path.name}: {word}": lines for word, lines in found.items()})
    assert not leftovers, leftovers


def test_reconcile_line_report_has_no_english_left():
    path = LOG_DIR / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log"
    found = _leftovers(["reconcile", "--lines", "--log", str(path)], path.read_text(encoding="utf-8"))
    assert not found, found


@pytest.mark.parametrize("args", [
    ["plan", "--spec", "examples/plan.yaml"],
    ["recommend", "--answers", "examples/answers.json"],
    ["speed", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--prompt-tokens", "2048", "--",
     "vllm", "serve", "m", "--max-num-seqs", "64"],
    ["speed", "--model", "qwen3-8b", "--gpu", "rtx-4090-24gb", "--", "llama-server", "-np", "4"],
    ["speed", "--model", "qwen3-8b", "--", "mlx_lm.server", "--model", "m"],
    ["check", "tools", "--model", "qwen3-8b", "--engines", "vllm,sglang"],
    ["check", "tools", "--template", "knowledge/chat_templates/Qwen-Qwen3-0.6B.jinja", "--",
     "vllm", "serve", "Qwen/Qwen3-0.6B", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
    ["check", "embeddings", "--st-dir", "tests/data/sentence_transformers/stella_en_1.5B_v5", "--",
     "llama-server", "-m", "stella_en_1.5B_v5.gguf", "--embeddings"],
], ids=lambda args: "-".join(args[:2]))
def test_other_verbs_have_no_english_left(args):
    found = _leftovers(args)
    assert not found, found


def test_calibrate_and_its_profile_have_no_english_left(tmp_path):
    profile = tmp_path / "profile.json"
    calibrate = ["calibrate", "--bench", "tests/data/speed/vllm_save_result_qwen25vl3b.json", "--log",
                 "tests/data/logs/vllm-v0.11-enginecore-qwen3-14b.log", "--model", "qwen2.5-7b", "--gpu",
                 "h100-sxm-80gb", "--output", str(profile), "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
    assert not (found := _leftovers(calibrate)), found
    speed = ["speed", "--model", "qwen2.5-7b", "--gpu", "h100-sxm-80gb", "--calibration", str(profile), "--",
             "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
    assert not (found := _leftovers(speed)), found


@pytest.mark.parametrize("args", [
    ["memory", "--model", "llama-3.1-8b", "--", "llama-server", "-np", "0"],
    ["memory", "--model", "no-such-model", "--", "vllm", "serve", "m"],
    ["reconcile", "--log", str(LOG_DIR / "RECONCILE.yaml")],
    ["plan", "--spec", "examples/answers.json"],
    ["recommend", "--answers", "examples/plan.yaml"],
    ["speed", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--", "vllm", "serve", "m", "--max-num-seqs", "x"],
], ids=lambda args: args[0] + "-" + args[-1])
def test_errors_have_no_english_left(args):
    found = _leftovers(args)
    assert not found, found
