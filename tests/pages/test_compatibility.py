"""The tool-call and embedding page: default view, a shared link with a launch command, bad input."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.support.markdown_tables import markdown_tables
from tests.support.page_runs import page_in_language

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "compatibility.py")


def run_page(**query):
    at = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def verdict_tables(at: AppTest) -> list:
    """The tool-call and embedding verdict tables (Markdown tables on the page), in page order."""
    return markdown_tables([m.value for m in at.markdown])


def test_default_view_gives_verdicts_for_every_engine_and_the_ingestion_cost():
    at = run_page()
    tools, embeddings = verdict_tables(at)[:2]
    # engines by their names, never their ids (the ids stay in the link)
    assert list(tools["Engine"]) == ["Ollama", "llama.cpp (llama-server)", "vLLM", "SGLang", "MLX LM"]
    assert dict(zip(tools["Engine"], tools["Verdict"], strict=True))["vLLM"] == "needs flags"
    # flags as code spans, each with its value: drawn whole (never broken after a hyphen at 1024 px) and copied as
    # one piece of the command
    assert "add: `--enable-auto-tool-choice` `--tool-call-parser hermes`" in set(tools["Flags to add or remove"])
    assert dict(zip(embeddings["Engine"], embeddings["Verdict"], strict=True))["MLX LM"] == "no embeddings endpoint"
    # engines that build their parser from the chat template say so in words, not by a made-up parser id
    parsers = dict(zip(tools["Engine"], tools["Parser"], strict=True))
    assert parsers["Ollama"] == "built from the GGUF's chat template"
    assert parsers["llama.cpp (llama-server)"] == "built from the Jinja chat template"
    assert parsers["vLLM"] == "-"  # the parser it needs is in the flag beside it, not said twice (fits at 1024 px)
    assert [e.label for e in at.expander][:2] == ["Ollama: works", "llama.cpp (llama-server): works"]
    assert "cmp_tool_engines" not in at.query_params  # defaults stay out of the link
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
    tools, embeddings = verdict_tables(at)[:2]
    assert list(tools["Verdict"]) == ["works"]
    assert list(embeddings["Verdict"]) == ["vectors will match"]


def test_an_unknown_launcher_is_an_error_message_not_a_traceback():
    at = run_page(cmp_tool_cmd="tgi-launcher --model x")
    assert any("not a launcher servewise knows" in e.value for e in at.error)
    assert len(verdict_tables(at)) == 1  # the embeddings section still draws


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


def test_the_model_source_reads_as_words_and_the_link_keeps_its_id():
    at = run_page(cmp_tool_src="template")
    control = at.get("button_group")[0]
    assert control.key == "cmp_tool_src" and control.options == ["the catalog", "a pasted template"]
    assert control.value == "template" and at.query_params["cmp_tool_src"] == "template"
    assert any(w.label.startswith("Chat template") for w in at.text_area)
    control.set_value("catalog").run()
    assert "cmp_tool_src" not in at.query_params  # the default stays out of the link; never a label in it


def test_the_markdown_downloads_are_written_in_the_readers_language(monkeypatch):
    """Streamlit renders a download's callable after the page's run, outside its language: both Markdown exports now
    carry the reader's language with them (the Spanish page's came out in English)."""
    from tests.support.page_runs import page_in_language, record_download_callbacks

    callbacks = record_download_callbacks(monkeypatch)
    at = page_in_language(PAGE, "es", {
        "cmp_tool_model": "llama-3.1-8b", "cmp_tool_engines": ["vllm"],
        "cmp_tool_cmd": "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-auto-tool-choice "
                        "--tool-call-parser llama3_json",
        "cmp_emb_model": "bge-m3", "cmp_emb_engines": ["llama-cpp"],
        "cmp_emb_cmd": "llama-server -m bge-m3.gguf --embeddings -ub 8192 -b 8192"}).run()
    assert not at.exception
    assert callbacks["tool_checks_markdown"]().startswith("| motor | veredicto |")
    assert callbacks["embedding_checks_markdown"]().startswith("| motor |")


def test_each_download_button_says_what_it_downloads():
    """The tool-call and embedding sections offered two buttons reading only "Markdown" and "JSON" (issue 19
    review), where every other page says "Download the plan (Markdown)"."""
    from tests.support.page_runs import page_in_language

    for lang, label in (("en", "Download the verdicts ({})"), ("es", "Descargar los veredictos ({})")):
        at = page_in_language(PAGE, lang, {"cmp_emb_model": "bge-m3", "cmp_emb_engines": ["llama-cpp"]}).run()
        assert not at.exception
        labels = [button.proto.label for button in at.get("download_button")]
        # two per section (tool calls, embeddings)
        assert sorted(labels) == sorted(label.format(kind) for kind in ("Markdown", "JSON") * 2), labels


def test_a_command_from_a_link_is_quoted_in_an_error_never_drawn_as_markdown():
    """A link whose launch command was "![img](https://host/t.png) ..." made the error quote it as Markdown, so the
    page fetched an image from that host (issue 19 review); the error now shows it literally, and says what failed."""
    for key in ("cmp_tool_cmd", "cmp_emb_cmd"):
        at = AppTest.from_file(PAGE, default_timeout=60)
        at.query_params[key] = "![img](https://evil.example/t.png) [click](https://evil.example) --x"
        at.run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert errors and all("](https" not in e for e in errors), errors
        assert any(e.startswith("Cannot check: ") and "is not a launcher" in e for e in errors), errors


def test_a_flag_and_its_value_are_one_code_span_in_spanish_and_in_the_download(monkeypatch):
    """The verdicts read "añadir: `--tool-call-parser` hermes": the value sat outside the code span, so the flag
    and its value did not copy as one piece of the command."""
    from tests.support.page_runs import record_download_callbacks

    callbacks = record_download_callbacks(monkeypatch)
    at = page_in_language(PAGE, "es", {"cmp_tool_model": "llama-3.1-8b", "cmp_tool_engines": ["vllm"]}).run()
    assert not at.exception
    cells = {cell for table in verdict_tables(at)[:1] for cell in table.iloc[:, -1]}
    assert "añadir: `--enable-auto-tool-choice` `--tool-call-parser llama3_json`" in cells, cells
    assert "| `--enable-auto-tool-choice` `--tool-call-parser llama3_json` |" in callbacks["tool_checks_markdown"]()
