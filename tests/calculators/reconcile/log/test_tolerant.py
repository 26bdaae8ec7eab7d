"""Lines as people paste them: wrapped by other programs, numbered, diffed, copied from web pages.

Real pastes of each kind are stored logs (tests/data/logs/SOURCES-2.md); the numbered, diffed and
desktop-app-prefixed variants are real lines with that wrapping added, since no stored paste has it.
"""

from __future__ import annotations

import pytest

from calculators.reconcile.log.clean import clean_line, split_lines
from calculators.reconcile.log.detect import line_starts
from calculators.reconcile.log.parse import parse_startup_log
from calculators.units import MIB
from tests.support.startup_log import one, parse

# llama.cpp PR 19408 (a Qwen3-Next run): the KV cache line as llama.cpp printed it
KV_LINE = ("llama_kv_cache: size =  768.00 MiB ( 32768 cells,  12 layers,  4/1 seqs), "
           "K (f16):  384.00 MiB, V (f16):  384.00 MiB")


@pytest.mark.parametrize(("wrapped", "stripped"), [
    (f"145: {KV_LINE}", "line number"),
    (f"  12 | {KV_LINE}", "line number"),
    (f"+{KV_LINE}", "diff marker"),
    (f"- {KV_LINE}", "diff marker"),
    (f"src/backend.rs:88 [llamacpp-backend] I {KV_LINE}", "prefix 'src/backend.rs:88 [llamacpp-backend] I'"),
    (f"{KV_LINE}<BR>", "HTML break"),
    (f"> `{KV_LINE}`", "markdown quote"),
])
def test_wrapped_engine_lines_are_read(wrapped, stripped):
    parsed = parse_startup_log(wrapped)
    assert parsed.engine == "llama-cpp"
    assert one(parsed, "kv_cache_bytes") == 768 * MIB
    assert stripped in parsed.lines[0].stripped


def test_a_phrase_inside_a_word_or_path_is_not_taken():
    for text in (f"my_{KV_LINE}", f"/var/log/{KV_LINE}", "xllama_kv_cache: size = 1.00 MiB"):
        line = clean_line(1, text, line_starts())
        assert line.text == text.strip()


def test_html_breaks_join_lines_back_into_lines():
    # a web page copy of two Ollama lines (tests/data/logs/ollama-2025-10-html-br-per-device-qwen3-30b-a3b.log)
    parsed = parse("ollama-2025-10-html-br-per-device-qwen3-30b-a3b.log")
    assert [f.device for f in parsed.figures_named("kv_buffer_bytes")] == ["CUDA0", "CPU"]
    joined = '<br>'.join(['time=2025-10-22T02:17:58.181Z level=DEBUG source=device.go:217 msg="kv cache" '
                          'device=CUDA0 size="1.9 GiB"'] * 2)
    lines = split_lines(joined, line_starts())
    assert len(lines) == 2 and {line.number for line in lines} == {1}


def test_localized_journald_months_are_removed():
    # Ollama issue 12846 (French month "oct."), issue 12692 ("10月 19")
    parsed = parse("ollama-v0.12.7-french-journal-qwen3-vl.log")
    assert one(parsed, "total_layers") == 49
    line = clean_line(1, "10月 19 15:17:54 VM9890-ubuntu ollama[89]: time=2025-10-19T15:17:54.345+08:00 level=WARN "
                         'source=server.go:540 msg="model request too large for system"', line_starts())
    assert line.program == "ollama" and line.text.startswith("time=")


def test_app_prefixes_around_llama_cpp_lines():
    # LlamaEdge's WASI-NN prefix and LM Studio's [date][LEVEL] prefix
    wasi = parse("llamacpp-wasi-nn-2025-03-print-info-prefix.log")
    assert wasi.engine == "llama-cpp" and wasi.geometry.params_total == 7_620_000_000
    lmstudio = parse("llamacpp-lmstudio-2025-12-qwen3next-debug-prefix.log")
    assert lmstudio.figure("model_file_bytes").printed == "45.08"


def test_every_line_is_reported_used_or_skipped_with_a_reason():
    parsed = parse("mlx-lm-granite-4h-benchmark-pre-post.log")
    reasons = [(line.number, line.status, line.reason) for line in parsed.lines]
    assert reasons[0][1:] == ("used", "read")  # the command line: model, -p 2048, -g 2
    assert [line.produced for line in parsed.lines if line.number in (4, 5)] == [("peak_memory_bytes",)] * 2
    assert all(line.reason == "blank" for line in parsed.lines if not line.text)
    assert len(parsed.lines) == parsed.line_count


def test_nothing_pasted_is_lost():
    text = "hello world\n" + KV_LINE + "\n<p>stray</p>\n"
    parsed = parse_startup_log(text)
    assert [line.raw for line in parsed.lines] == text.split("\n")
    assert parsed.lines[0].reason == "not_engine_text"
