"""The speed & calibration page: estimate with basis and band, calibration from a pasted run, the link carries it."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from calculators.speed.calibration import decode_profile
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
    assert "| decode_tokens_per_s |" in text(at)
    at.button(key="speed_use_cal").click().run()
    profile = decode_profile(
        at.query_params["speed_cal"][0]
        if isinstance(at.query_params["speed_cal"], list)
        else at.query_params["speed_cal"]
    )
    assert profile.engine == "llama-cpp"
    assert "Speed basis: your calibration" in text(at)


def test_a_broken_calibration_link_is_explained_not_fatal():
    at = run_page({"speed_cal": "not-a-profile"})
    assert any("calibration was not used" in w.value for w in at.warning)
