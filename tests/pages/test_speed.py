"""The speed & calibration page: estimate with basis and band, calibration from a pasted run, the link carries it."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from calculators.speed.calibration import decode_profile
from tests.support.page_text import page_script
from tests.support.paths import REPO_ROOT

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "speed.py")
DATA = REPO_ROOT / "tests" / "data" / "speed"


def run_page(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception, at.exception
    return at


def text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_default_estimate_states_basis_and_band():
    at = run_page()
    body = text(at)
    assert (
        "Decode, one sequence:" in body
        and "Speed basis: default fit to public measurements (vLLM on data-centre GPUs (HBM))" in body
    )
    # the accuracy table from bench/results/speed_accuracy.json, one narrow table per check (as one seven-column
    # table it scrolled sideways at 1024 px)
    accuracy = [m.value for m in at.markdown if "p90 abs error" in m.value]
    assert accuracy[0].startswith("**held out: llama.cpp #4167**")
    assert len(accuracy) == 4 and all("| check |" not in table and "| engine |" not in table for table in accuracy)
    assert "| Apple silicon (unified memory) | decode tokens/s | 11 | 4.5% | 11.8% |" in accuracy[0]


def test_pasted_run_calibrates_and_the_link_carries_the_profile():
    at = run_page({"speed_engine": "llama-cpp", "speed_gpu": "rtx-4090-24gb"})
    at.text_area(key="speed_bench_text").input((DATA / "llama_bench_readme.json").read_text()).run()
    assert not at.exception
    # predicted vs measured, its metrics in words (the ids stay in the CLI's JSON)
    assert "| decode tokens/s |" in text(at) and "| llama-bench, line 1 |" in text(at)
    assert "decode_tokens_per_s" not in text(at)
    at.button(key="speed_use_cal").click().run()
    profile = decode_profile(
        at.query_params["speed_cal"][0]
        if isinstance(at.query_params["speed_cal"], list)
        else at.query_params["speed_cal"]
    )
    assert profile.engine == "llama-cpp"
    # the profile's label (shown wherever the calibration is used) names the weights, not their id
    assert profile.label == "Llama 3.1 8B BF16, NVIDIA GeForce RTX 4090", profile.label
    assert "Speed basis: your calibration" in text(at)


def test_a_broken_calibration_link_is_explained_not_fatal():
    at = run_page({"speed_cal": "not-a-profile"})
    assert any("calibration was not used" in w.value for w in at.warning)


def test_a_calibration_for_another_engine_is_named_in_words_and_the_default_fit_used():
    from calculators.speed.calibration import CalibrationProfile, encode_profile
    from calculators.speed.model import Band

    profile = CalibrationProfile(engine="vllm", hardware_class="datacenter-hbm", label="test", memory_efficiency=0.5,
                                 decode_overhead_s=0.004, compute_efficiency=0.5, prefill_overhead_s=0.02,
                                 decode_band=Band(low=-0.05, high=0.05, median_abs=0.03, n_points=3), n_measurements=3)
    at = run_page({"speed_engine": "llama-cpp", "speed_cal": encode_profile(profile)})
    assert not at.exception
    notes = [i.value for i in at.info]
    assert any("is for vLLM on data-centre GPUs (HBM); the default fit is used here" in n for n in notes), notes
    assert not any("datacenter-hbm" in n for n in notes)


def test_unreadable_benchmark_output_says_what_failed_in_a_sentence():
    """Pasted text that is not a benchmark gave a bare lower-case fragment ("no 'Serving Benchmark Result' block ...");
    the error now says the output gave no calibration, then why, in the reader's language."""
    from tests.support.page_runs import page_in_language

    for lang, start in (("en", "No calibration from this output: "), ("es", "Esta salida no sirve para calibrar: ")):
        at = page_in_language(PAGE, lang)
        at.run()
        at.text_area(key="speed_bench_text").set_value(
            "============ Serving Benchmark Result ============\nSuccessful requests: lots\n").run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert errors and errors[0].startswith(start), errors


def _charts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith('<div class="sw-chart"><svg ')]


def test_the_estimate_has_its_decode_charts_marking_the_chosen_concurrency():
    at = run_page({"speed_concurrency": "48"})
    charts = _charts(at)
    assert len(charts) == 2
    per_sequence, together = charts
    assert "speed-per-sequence" in per_sequence and "speed-all-sequences" in together
    assert "your choice" in per_sequence and "<polygon " in per_sequence  # the marker and the shaded band
    assert "48\u00a0sequences:" in together  # a point at the user's own concurrency (not a power of two)
    assert "whether that many sequences fit in memory" in " ".join(c.value for c in at.caption)


def test_the_decode_charts_speak_spanish():
    at = AppTest.from_string(page_script(Path(PAGE), "es"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    per_sequence, together = _charts(at)
    assert "tokens/s por secuencia" in per_sequence and "tu elección" in per_sequence
    assert "todas las secuencias juntas" in together and "escala logarítmica" in together
