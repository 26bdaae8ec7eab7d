"""The capacity planner page: a shared link reproduces the plan; bad links and impossible targets are explained."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "planner.py")
#: A small search keeps each test run short: two engines, two GPUs, one concurrency setting.
SMALL = {"plan_engines": ["vllm", "llama-cpp"], "plan_gpus": ["h100-sxm-80gb", "l4-24gb"], "plan_conc": ["16"]}


def run_page(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    for key, value in {**SMALL, **(query or {})}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_shared_link_reproduces_the_plan_with_its_cost_and_commands():
    at = run_page({"plan_rate": "3", "plan_ttft": "0.8"})
    assert not at.error
    headline = at.success[0].value
    assert "Cheapest:" in headline and "/h" in headline and "3\u00a0requests/s" in headline
    # Engines as columns, one row per figure (as one row per engine it scrolled sideways at 1024 px).
    winners = next(m.value for m in at.markdown if "US\\$ per hour" in m.value)
    header = winners.splitlines()[0]
    assert ("| vLLM |" in header or "| llama.cpp (llama-server) |" in header), header
    assert "| GPU |" in winners and "| weights | BF16 |" in winners  # names, not slugs (bf16)
    assert "\\$" in winners and "$" not in winners.replace("\\$", "")  # not read as LaTeX
    code = at.code[0].value
    assert code.startswith(("vllm serve", "llama-server"))
    assert any("Why this configuration" in m.value or "Replicas:" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 2


def test_the_cost_line_is_not_read_as_math_in_spanish():
    """Issue 19: 'Coste: 1 GPU × 1,95 US$/GPU-hora = 1,95 US$/h' showed as LaTeX italics (text between two "$")."""
    from tests.support.page_text import page_script

    at = AppTest.from_string(page_script(Path(PAGE), "es"), default_timeout=180)
    for key, value in {**SMALL, "plan_rate": "3", "plan_ttft": "0.8"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    cost = next(m.value for m in at.markdown if "Coste" in m.value)
    assert "$" in cost and cost.count("$") == cost.count("\\$"), cost


def test_users_and_think_time_are_planned_as_a_rate_and_said_so():
    at = run_page({"plan_load": "users", "plan_users": "600", "plan_think": "120"})
    assert "at 5\u00a0requests/s" in at.success[0].value
    assert any("600 users" in m.value for m in at.markdown)


def test_an_impossible_target_is_a_warning_with_every_rejection_listed():
    at = run_page({"plan_ttft": "0.001"})
    assert at.warning and "No configuration meets this target" in at.warning[0].value
    rejected = at.dataframe[-1].value
    assert (rejected["stage"] == "latency target").any()  # the stage in words (the JSON keeps "slo")


def test_a_bad_link_value_gets_a_note_and_the_default():
    at = run_page({"plan_rate": "lots", "plan_model": "gpt-17"})
    notes = " ".join(w.value for w in at.warning)
    assert "plan_rate" in notes and "plan_model" in notes
    assert at.success, "the defaults still give a plan"


def test_on_premises_costs_use_the_typed_purchase_price_and_tariff():
    at = run_page({"plan_basis": "on-premises", "plan_buy": "20000", "plan_months": "36", "plan_kwh": "0.2"})
    assert not at.error
    assert "your purchase price" in " ".join(m.value for m in at.markdown)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_cost_line_names_its_source_as_a_link(lang):
    """Issue 19 review: the cost line ended in a bare URL (https://techbytes.app/posts/...); the source is a link
    that reads the page's title (knowledge/prices.yaml source_title), in both languages."""
    from tests.support.page_text import page_script

    at = AppTest.from_string(page_script(Path(PAGE), lang), default_timeout=180)
    for key, value in {**SMALL, "plan_rate": "3", "plan_ttft": "0.8"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    cost = next(m.value for m in at.markdown if ("Cost:" if lang == "en" else "Coste:") in m.value)
    url = "https://techbytes.app/posts/serverless-gpu-pricing-matrix-modal-replicate-lambda-2026/"
    link = re.search(r"\[([^\]]+)\]\((https://[^)\s]+)\)", cost)
    assert link is not None, cost
    assert link.group(2) == url and "Serverless GPU Pricing Matrix" in link.group(1), cost
    assert cost.count("https://") == 1, cost  # the address only inside the link, not shown bare
