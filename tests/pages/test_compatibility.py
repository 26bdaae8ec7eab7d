"""The tool-call and embedding page: default view, a shared link with a launch command, bad input."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.support.page_runs import page_in_language

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "compatibility.py")


def run_page(**query):
    at = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_default_view_gives_verdicts_for_every_engine_and_the_ingestion_cost():
    at = run_page()
    tools, embeddings = at.dataframe[0].value, at.dataframe[1].value
    assert list(tools["Engine"]) == ["ollama", "llama-cpp", "vllm", "sglang", "mlx-lm"]
    assert dict(zip(tools["Engine"], tools["Verdict"], strict=True))["vllm"] == "needs flags"
    assert "--enable-auto-tool-choice --tool-call-parser hermes" in set(tools["Flags to add"])
    assert dict(zip(embeddings["Engine"], embeddings["Verdict"], strict=True))["mlx-lm"] == "no embeddings endpoint"
    labels = [m.label for m in at.metric]
    assert "Chat TTFT p99 (s), shared" in labels
    ttft_p99 = next(m for m in at.metric if m.label == "Chat TTFT p99 (s), shared")
    assert ttft_p99.delta.startswith("+")  # the bursts slow chat down


def test_a_link_with_a_launch_command_checks_that_engine():
    at = run_page(cmp_tool_model="llama-3.1-8b", cmp_tool_engines=["vllm"],
                  cmp_tool_cmd="vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-auto-tool-choice "
                               "--tool-call-parser llama3_json",
                  cmp_emb_model="bge-m3", cmp_emb_engines=["llama-cpp"],
                  cmp_emb_cmd="llama-server -m bge-m3.gguf --embeddings -ub 8192 -b 8192")
    tools, embeddings = at.dataframe[0].value, at.dataframe[1].value
    assert list(tools["Verdict"]) == ["works"]
    assert list(embeddings["Verdict"]) == ["vectors will match"]


def test_an_unknown_launcher_is_an_error_message_not_a_traceback():
    at = run_page(cmp_tool_cmd="tgi-launcher --model x")
    assert any("not a launcher servewise knows" in e.value for e in at.error)
    assert len(at.dataframe) == 1  # the embeddings section still draws


def test_the_ingestion_simulation_runs_once_per_input_state_and_language(monkeypatch):
    import ui.compatibility_view as view

    calls = []
    real = view.ingestion_tradeoff
    monkeypatch.setattr(view, "ingestion_tradeoff", lambda *a, **k: calls.append(a) or real(*a, **k))
    view.ingestion_run.clear()
    at = run_page(cmp_ing_rate="4")
    at.run()
    at.text_input(key="cmp_tool_cmd").input("vllm serve x").run()  # another tab's input: the simulation is reused
    assert not at.exception
    assert len(calls) == 1
    at.number_input(key="cmp_ing_rate").set_value(6.0).run()
    assert len(calls) == 2
    spanish = page_in_language(PAGE, "es", {"cmp_ing_rate": "4"}).run()
    assert not spanish.exception, spanish.exception
    assert len(calls) == 3  # the same state for a Spanish reader is computed (and captioned) in Spanish
    assert any(c.value.startswith("Base: ") for c in spanish.caption)
