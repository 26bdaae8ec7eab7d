"""The Operations page: default view, a shared link, a bad link value, and the plan's exports."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.support.page_runs import page_in_language

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "operations.py")


def run_page(**query):
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def markdown_text(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_default_shows_sections_with_sources_and_a_plan():
    at = run_page()
    assert at.multiselect(key="ops_engines").value == ["vllm", "llama-cpp"]
    text = markdown_text(at)
    for heading in ("Endpoints", "What differs in practice", "Engine metrics", "Steps these defaults call for",
                    "Commands per engine"):  # fmt: skip
        assert any(heading in h.value for h in at.subheader), heading
    assert "github.com/vllm-project/vllm/blob/v0.33.0/" in text
    assert any("access boundary" in i.value for i in at.info)
    assert any("vllm bench serve" in c.value for c in at.code)
    assert not at.error


def test_shared_link_selects_engines_and_plan_parameters():
    at = run_page(ops_engines=["sglang", "mlx-lm"], ops_rates="3", ops_clients="8, 64", ops_model="qwen3-8b")
    assert at.multiselect(key="ops_engines").value == ["sglang", "mlx-lm"]
    sglang = next(code.value for code in at.code if "sglang.bench_serving" in code.value)
    assert "--request-rate 3" in sglang and "--max-concurrency 64" in sglang and "Qwen/Qwen3-8B" in sglang
    assert any("MLX LM** lacks" in w.value for w in at.warning)


def test_bad_link_value_gets_a_note_and_bad_rates_an_error():
    at = run_page(ops_engines=["vllm", "triton"], ops_rates="0")
    notes = " ".join(w.value for w in at.warning)
    assert "ops_engines" in notes and "triton" in notes
    assert any("positive" in e.value and "arrival rate" in e.value for e in at.error)


def test_bad_rates_are_explained_in_the_readers_language():
    """The Spanish error said "escribe cada arrival rate como un número" (issue 19 review): the list's name was
    passed to the check in English."""
    for query, spanish in (({"ops_rates": "abc"}, "escribe cada tasa de llegadas como un número"),
                           ({"ops_clients": "x"}, "escribe cada límite de clientes como un número")):
        at = page_in_language(PAGE, "es", query).run()
        errors = " ".join(e.value for e in at.error)
        assert spanish in errors and "arrival rate" not in errors and "client cap" not in errors, errors


def test_no_engine_selected_explains_instead_of_failing():
    at = run_page(ops_engines="")
    assert any("Pick at least one engine" in i.value for i in at.info)
    assert any("at least one engine" in e.value for e in at.error)


def test_plan_exports_are_offered_in_three_formats():
    at = run_page(ops_engines="vllm")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Download plan (Markdown)", "Download plan (YAML)", "Download plan (JSON)"]
