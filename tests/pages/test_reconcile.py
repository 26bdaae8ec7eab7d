"""The "Check against your engine" page: paste a real log, see the comparison; bad pastes get a message (AppTest)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.command_text import command_markdown

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "reconcile.py")
LOGS = ROOT / "tests" / "data" / "logs"


def _page() -> AppTest:
    at = AppTest.from_file(PAGE).run(timeout=30)
    assert not at.exception
    return at


def _paste(at: AppTest, text: str) -> AppTest:
    at.text_area(key="log_text").set_value(text)
    return at.run(timeout=30)


def test_empty_page_asks_for_a_log():
    at = _page()
    assert at.title[0].value == "Check against your engine"
    assert any("Paste or upload a start-up log" in i.value for i in at.info)
    assert not at.dataframe


def test_the_page_says_what_it_does_once():
    """The check page's introduction was followed by the memory page's caption for the same section, saying it
    again in other words (issue 19 review); the memory page keeps its heading and caption."""
    at = _page()
    assert not [c.value for c in at.caption if c.value.startswith("Paste a start-up log: servewise runs")]
    memory = AppTest.from_file(str(ROOT / "pages" / "memory.py"), default_timeout=120).run()
    assert any(c.value.startswith("Paste a start-up log: servewise runs") for c in memory.caption)


def test_llamacpp_log_with_its_own_geometry_is_exact():
    # llama.cpp master of 2025-08 on 8 Ascend NPUs, gpt-oss-20b (tests/data/logs/SOURCES.md): every cache figure
    at = _paste(_page(), (LOGS / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log").read_text())
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table.columns[:6]) == ["status", "figure", "line", "engine printed", "servewise predicts", "difference"]
    assert set(table["status"]) == {"exact"}
    assert "K size (sliding-window KV cache)" in list(table["figure"])
    row = table[table["figure"] == "K+V size (KV cache)"].iloc[0]
    assert row["engine printed"] == "3072.00\u00a0MiB" and row["servewise predicts"] == "3072.00\u00a0MiB"
    assert [m.value for m in at.metric] == ["24", "0", "0"]


def test_vllm_log_needs_a_model_then_compares():
    # LMCache issue 1739 (vLLM, Qwen3-14B): "Available KV cache memory: 6.51 GiB", "GPU KV cache size: 42,656 tokens"
    at = _paste(_page(), (LOGS / "vllm-v0.11-enginecore-qwen3-14b.log").read_text())
    assert any("does not state the model geometry" in e.value for e in at.error)
    at.selectbox(key="log_model").set_value("qwen3-14b")
    at.run(timeout=30)
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    tokens = table[table["figure"] == "KV cache size in tokens"].iloc[0]
    assert tokens["engine printed"] == "42,656\u00a0tokens"
    assert tokens["servewise predicts"] == "42,624 – 42,688\u00a0tokens"
    assert tokens["status"] == "explained"
    assert "why" not in table.columns  # written out below the grid, where it wraps
    why = [t.value for t in at.text if t.value.startswith("Line ") and "KV cache size in tokens (explained)" in t.value]
    assert why and "rounded printed input" in why[0], [t.value for t in at.text]


def test_foreign_text_gets_a_clear_message():
    at = _paste(_page(), "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'foo'\n")
    assert not at.exception
    shown = [w.value.replace("\\", "") for w in at.warning]  # the message is shown escaped (no Markdown)
    assert any("No start-up line of llama.cpp, Ollama, vLLM, SGLang or MLX LM" in text for text in shown)
    assert not at.dataframe


def test_blank_paste_is_treated_as_empty():
    at = _paste(_page(), "   \n\n  ")
    assert any("Paste or upload" in i.value for i in at.info)


def test_pasted_markup_is_not_rendered():
    # An unknown setting named with markup comes back in the error, escaped, never as HTML
    at = _paste(_page(), (LOGS / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log").read_text())
    at.text_input(key="log_settings").set_value("<b>bold</b>=1")
    at.run(timeout=30)
    assert not at.exception
    message = at.error[0].value
    assert "<b>" not in message and "\\<b\\>" in message


def test_mlx_and_ollama_logs_show_what_was_found_without_crashing():
    for name in ("mlx-lm-generate-peak-memory.log", "ollama-v0.5-offload-4gpu-partial.log",
                 "sglang-server-args-llama31.log"):
        at = _paste(_page(), (LOGS / name).read_text())
        assert not at.exception, name
        assert any("What the log showed" in e.label for e in at.expander), name


def test_capture_commands_sit_next_to_the_paste_box():
    at = _page()
    assert at.selectbox(key="log_capture_engine").value == "ollama"
    assert any(m.value == command_markdown("journalctl -u ollama --no-pager --follow --pager-end") for m in at.markdown)
    at.selectbox(key="log_capture_engine").set_value("vllm")
    at.run(timeout=30)
    assert any(m.value.startswith("` vllm ` ` serve ` ") for m in at.markdown)


def test_ollama_estimate_with_a_catalog_model_compares_kv_and_the_layer_split():
    # Ollama issue 10810 (qwen3:235b on 5 GPUs): "memory.required.kv=752.0 MiB", "layers.split=13,13,13,13,13"
    at = _paste(_page(), (LOGS / "ollama-2025-05-qwen3-235b-offload-5-gpus.log").read_text())
    at.selectbox(key="log_model").set_value("qwen3-235b-a22b")
    at.text_input(key="log_settings").set_value("context_length=4096")
    at.run(timeout=30)
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    kv = table[table["figure"] == "Ollama's KV estimate (memory.required.kv)"].iloc[0]
    assert kv["status"] == "exact" and kv["engine printed"] == "752.0\u00a0MiB"
    split = table[table["figure"].str.startswith("layers Ollama planned for this GPU")]
    assert len(split) == 5 and set(split["status"]) == {"exact"}


def test_every_pasted_line_is_listed_as_read_or_skipped():
    # mlx-lm PR 525; any catalog model will do here: only the line report is checked
    at = _paste(_page(), (LOGS / "mlx-lm-granite-4h-benchmark-pre-post.log").read_text())
    at.selectbox(key="log_model").set_value("qwen3-8b")
    at.run(timeout=30)
    assert any(e.label.startswith("Lines read and skipped: 3 of 6 pasted lines read") for e in at.expander)
    lines = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert list(lines["line"]) == [1, 2, 3, 4, 5, 6]
    assert "prefix 'Pre:'" in list(lines["stripped"])


def test_spanish_figures_name_the_kv_cache_and_the_reasons_are_written_out():
    """The typical shared log in Spanish (issue 19 review): the figure names said "caché kv" (the cache's internal
    name) and the "por qué" column was cut off after a few words; the cache reads "caché KV" and each reason is a
    line of text below the grid, where it wraps."""
    from bench.typical_states import RECONCILE_LOG
    from tests.support.page_text import page_script

    at = AppTest.from_string(page_script(Path(PAGE), "es"), default_timeout=60).run()
    at = _paste(at, RECONCILE_LOG.read_text())
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    figures = list(table["cifra"])
    assert "tamaño de K+V (caché KV)" in figures, figures
    assert not [f for f in figures if "caché kv" in f]
    assert "por qué" not in table.columns
    texts = [t.value for t in at.text]
    exact = len(table)
    assert f"{exact} cifras exactas: el valor de servewise redondea a lo que imprimió el motor." in texts, texts
