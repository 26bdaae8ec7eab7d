"""Each benchmark reader on real published outputs (tests/data/speed/SOURCES.md) and on garbled input."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.errors import ServewiseInputError
from calculators.speed.imports.read import detect_format, read_benchmark

DATA = Path(__file__).resolve().parents[2] / "data" / "speed"


def text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_vllm_save_result_json():
    # figures as printed in the saved result (SOURCES.md: vllm-ascend tutorial note)
    result = read_benchmark(text("vllm_save_result_qwen25vl3b.json"))
    assert result.tool == "vllm-bench-serve"
    (run,) = result.runs
    assert run.load_kind == "rate" and run.load == 1.0
    assert run.n_requests == 199
    assert run.ttft_ms_p50 == pytest.approx(98.944, abs=1e-3)
    assert run.itl_ms_p50 == pytest.approx(34.341, abs=1e-3)
    assert run.tpot_ms_p50 == pytest.approx(34.450, abs=1e-3)
    assert run.prompt_tokens == pytest.approx(39800 / 199)


def test_vllm_console_block():
    # vllm PR #18566 description: Median TTFT 9459.70, Median ITL 25.44, 1000 requests, rate inf
    result = read_benchmark(text("vllm_console_pr18566.txt"))
    (run,) = result.runs
    assert run.ttft_ms_p50 == 9459.70 and run.itl_ms_p50 == 25.44 and run.tpot_ms_p50 == 48.84
    assert run.load_kind == "concurrency" and run.load == 1000  # all at once: the load is the request count
    assert any("Mean TTFT" in s.text for s in result.skipped)  # unread lines are kept, not dropped


def test_sglang_jsonl_line():
    # sglang issue #12389: max_concurrency 16, TTFT reported as 0.0 (bug in that run) -> not used
    result = read_benchmark(text("sglang_issue12389.jsonl"))
    assert result.tool == "sglang-bench-serving"
    (run,) = result.runs
    assert run.engine == "sglang" and run.load_kind == "concurrency" and run.load == 16
    assert run.ttft_ms_p50 is None and run.itl_ms_p50 is None
    assert run.tpot_ms_p50 == pytest.approx(4.8304, abs=1e-4)


def test_sglang_console_block():
    result = read_benchmark(text("sglang_console_deepseek_ocr.txt"))
    assert result.tool == "sglang-bench-serving"
    (run,) = result.runs
    assert run.engine == "sglang" and run.load == 1
    assert (run.ttft_ms_p50, run.itl_ms_p50, run.tpot_ms_p50) == (20.89, 1.51, 1.52)


def test_sglang_jsonl_keeps_bad_lines():
    good = text("sglang_issue12389.jsonl").strip()
    result = read_benchmark(good + "\n{broken json\n" + good + "\n", "sglang-jsonl")
    assert len(result.runs) == 2
    (bad,) = result.skipped
    assert bad.line_no == 2 and bad.text == "{broken json" and "line 2" in bad.reason


def test_guidellm_report():
    # GuideLLM v0.7.3's report layout; values from GuideLLM's sample data (tests/data/speed/SOURCES.md)
    result = read_benchmark(text("guidellm_v073_report.json"))
    synchronous, constant, throughput = result.runs
    assert synchronous.load_kind == "concurrency" and synchronous.load == 1
    assert synchronous.ttft_ms_p50 == pytest.approx(23.874998092651367)
    assert synchronous.itl_ms_p50 == pytest.approx(8.788176945277623)
    assert synchronous.ttft_ms_p99 == pytest.approx(34.74783897399902)
    assert constant.load_kind == "rate" and constant.load == pytest.approx(20.752070927855794)
    assert constant.ttft_ms_p50 == pytest.approx(48.3551025390625)
    assert constant.itl_ms_p50 == pytest.approx(26.769569941929408)
    assert throughput.load is None  # "as many as the server takes": no load level to simulate


def test_llama_bench_json():
    # README example: pp512 7100.002165 t/s, tg128 118.881588 t/s on an RTX 4080
    result = read_benchmark(text("llama_bench_readme.json"))
    pp, tg = result.runs
    assert pp.prefill_tokens_per_s == pytest.approx(7100.002165) and pp.prompt_tokens == 512
    assert tg.decode_tokens_per_s == pytest.approx(118.881588) and tg.output_tokens == 128
    assert tg.hardware_label == "NVIDIA GeForce RTX 4080"


def test_llama_bench_markdown_with_depth():
    result = read_benchmark(text("llama_bench_readme_depth.md"))
    rates = [(r.prefill_tokens_per_s, r.decode_tokens_per_s, r.context_tokens) for r in result.runs]
    assert rates == [(7340.20, None, 0), (None, 120.60, 0), (6425.91, None, 512), (None, 116.71, 512)]
    assert result.skipped[0].text.startswith("$ ./llama-bench")


def test_llama_bench_markdown_keeps_device_lines():
    result = read_benchmark(text("llama_bench_pr6017.md"))
    assert [r.prompt_tokens for r in result.runs] == [512, 1024, 2048]
    assert len(result.skipped) == 4 and "Device 0" in result.skipped[3].text


def test_ollama_final_and_stream():
    # docs/api.md: eval_count 259 in 4232710000 ns -> 61.19 tokens/s; prompt 26 in 130079000 ns
    (run,) = read_benchmark(text("ollama_generate_final.json")).runs
    assert run.decode_tokens_per_s == pytest.approx(259 / 4.23271)
    assert run.prefill_tokens_per_s == pytest.approx(26 / 0.130079)
    assert run.ttft_ms_p50 == pytest.approx(130.079)
    streamed = read_benchmark(text("ollama_generate_stream.ndjson"))
    assert len(streamed.runs) == 1 and streamed.skipped[0].line_no == 1 and "partial" in streamed.skipped[0].reason


def test_mlx_benchmark_averages():
    (run,) = read_benchmark(text("mlx_lm_benchmark_pr396.txt")).runs
    assert run.decode_tokens_per_s == 205.099 and run.prefill_tokens_per_s == 2902.166
    assert run.prompt_tokens == 2048 and run.output_tokens == 128
    (run,) = read_benchmark(text("mlx_lm_benchmark_pr1010.txt")).runs
    assert run.decode_tokens_per_s == 18.859


def test_mlx_generate_two_blocks():
    pre, post = read_benchmark(text("mlx_lm_generate_pr1122.txt")).runs
    assert (pre.decode_tokens_per_s, post.decode_tokens_per_s) == (41.312, 72.733)
    assert pre.prompt_tokens == 1929 and pre.ttft_ms_p50 == pytest.approx(1929 / 767.674 * 1000)


@pytest.mark.parametrize(
    ("garbled", "fmt", "expected"),
    [
        ("", None, "empty"),
        ("hello world", None, "does not recognise"),
        ('{"median_ttft_ms": "fast"}', "vllm-json", "'median_ttft_ms' should be a number"),
        ('{"median_ttft_ms": 10, "completed": 0}', "vllm-json", "finished no request"),
        (
            '{"benchmarks": [{"metrics": {"time_to_first_token_ms": 3}}]}',
            "guidellm-json",
            "metrics.time_to_first_token_ms should be an object",
        ),
        ('[{"n_prompt": 512, "n_gen": 0}]', "llama-bench-json", "'avg_ts' is missing"),
        ("| model | test | t/s |\n| x | pp512 | fast |", "llama-bench-markdown", "no row with a pp/tg test"),
        ('{"eval_count": 10, "eval_duration": 0}', "ollama-json", "must be positive"),
        ("Averages: prompt_tps=1.0", "mlx-lm-benchmark", "generation_tps"),
        ("Prompt: 5 tokens, 10.0 tokens-per-sec", "mlx-lm-generate", "Generation: N tokens"),
        ('{"median_ttft_ms": 1', "vllm-json", "line 1, column"),
    ],
)
def test_garbled_input_names_the_problem(garbled, fmt, expected):
    with pytest.raises(ServewiseInputError, match=None) as info:
        read_benchmark(garbled, fmt)
    assert expected in str(info.value)


def test_detect_each_format():
    names = {
        "vllm_save_result_qwen25vl3b.json": "vllm-json",
        "sglang_issue12389.jsonl": "sglang-jsonl",
        "vllm_console_pr18566.txt": "serving-console",
        "guidellm_v073_report.json": "guidellm-json",
        "llama_bench_readme.json": "llama-bench-json",
        "llama_bench_readme_depth.md": "llama-bench-markdown",
        "ollama_generate_stream.ndjson": "ollama-json",
        "mlx_lm_benchmark_pr396.txt": "mlx-lm-benchmark",
        "mlx_lm_generate_pr1122.txt": "mlx-lm-generate",
    }
    assert {name: detect_format(text(name)) for name in names} == names


@pytest.mark.parametrize("cut", [400, 900])
def test_a_json_output_cut_short_says_where_not_format_unknown(cut):
    """A save-result JSON pasted half (a terminal's scroll-back, a cut link) is named as broken JSON with the place
    it breaks, not as a format servewise does not read."""
    text = (DATA / "vllm_save_result_qwen25vl3b.json").read_text()[:cut]
    with pytest.raises(ServewiseInputError) as info:
        read_benchmark(text)
    assert "cut short" in str(info.value) and "line 1, column" in str(info.value)
    assert "does not recognise" not in str(info.value)


def test_calibrating_on_several_files_keeps_every_unused_line_with_its_file():
    """Nothing pasted is lost on the CLI either: lines no reader used come back in the result, with their file."""
    from calculators.i18n import language
    from calculators.speed.command import SpeedInputs, calibrate_from_texts
    from calculators.speed.model import Accelerator, ModelShape
    from reports.speed_text import calibration_text

    good = (DATA / "sglang_issue12389.jsonl").read_text().strip()
    mixed = f'{good}\n{{"broken": \ngarbage line\n'
    inputs = SpeedInputs("sglang", ModelShape(weights_read_bytes=2e9, params_active=1e9, n_layers=16,
                                              attention_q_dim=2048, kv_bytes_per_token=32768),
                         Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=3.35e12,
                                     flops_per_s=989e12), 16, ())
    result = calibrate_from_texts(inputs, [mixed, good], None, None, "x", sources=["a.jsonl", "b.jsonl"])
    assert [(s.source, s.line_no, s.text) for s in result.skipped] == [
        ("a.jsonl", 2, '{"broken": '), ("a.jsonl", 3, "garbage line")]
    text = calibration_text(result)
    assert "2 lines not used:" in text and "- a.jsonl: line 3 (" in text and "): garbage line" in text
    with language("es"):
        assert "- a.jsonl: línea 3 (" in calibration_text(result)
