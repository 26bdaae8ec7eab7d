"""The Formats & compatibility page: default view, a selection, shared links with good and bad values (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from reports.tables import NO_BREAK_HYPHEN
from tests.support.page_runs import page_in_language

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "formats.py")


def _markdown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def test_default_view_explains_ollama_and_gguf():
    at = AppTest.from_file(PAGE).run(timeout=30)
    assert not at.exception
    assert at.title[0].value == "Formats & compatibility"
    assert [s.value for s in at.selectbox] == ["ollama", "gguf", "any"]
    text = _markdown(at)
    assert "#### Ollama × GGUF file" in text
    assert ":green-badge[native]" in text
    assert any(t.startswith("Source: [ollama/ollama:docs/import.mdx") and "v0.33.0-rc2" in t for t in text)
    assert not at.warning  # no link-fallback note without a URL value
    # the explanation of the three decisions and of Q4-vs-BF16 comparisons is on the page
    assert any("Why Q4 in one engine against BF16 in another" in t for t in text)
    # bits per weight, its derivations (folded) and GGUF file mixes (GGUF column has no member table)
    assert len(at.dataframe) == 3
    assert list(at.dataframe[0].value.columns) == ["scheme", "bits per weight", "applies to"]  # fits at 1024 px
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # the source is shown literally
    assert "Measured on meta-llama/Llama-3.1-8B; source: ggml-org/llama.cpp:tools/quantize/README.md" in captions


def test_selecting_vllm_and_gguf_explains_the_plugin():
    at = AppTest.from_file(PAGE).run(timeout=30)
    at.selectbox(key="formats_engine").select("vllm").run(timeout=30)
    at.selectbox(key="formats_format").select("gguf").run(timeout=30)
    assert not at.exception
    text = _markdown(at)
    assert "#### vLLM × GGUF file" in text
    assert ":blue-badge[via a plugin]" in text
    assert any("vllm-gguf-plugin" in t and "experimental" in t for t in text)


def test_quantization_column_lists_its_schemes():
    at = AppTest.from_file(PAGE)
    at.query_params["formats_engine"] = "mlx-lm"
    at.query_params["formats_format"] = "awq"
    at.run(timeout=30)
    assert not at.exception
    assert [s.value for s in at.selectbox] == ["mlx-lm", "awq", "any"]
    assert ":green-badge[native]" in _markdown(at)
    # A Markdown table whose long cells wrap (as a dataframe it scrolled sideways at 1024 px), titled by name
    text = _markdown(at)
    assert "**What AWQ covers**" in text
    members = next(t for t in text if "what one block or group holds" in t)
    assert f"| AWQ 4{NO_BREAK_HYPHEN}bit, group 128 | 4.1562 |" in members, members  # "4-" / "bit" never split


def test_bad_url_values_fall_back_with_a_visible_note():
    at = AppTest.from_file(PAGE)
    at.query_params["formats_engine"] = "vllmm"
    at.query_params["formats_format"] = "Q4_K_M"
    at.run(timeout=30)
    assert not at.exception
    assert [s.value for s in at.selectbox] == ["ollama", "gguf", "any"]
    notes = [w.value for w in at.warning]
    # The link's value is quoted inside a code span (ui/url_widgets.py: shown literally, never as Markdown).
    assert any("**Engine** (` formats_engine `) to ` 'vllmm' `" in n and "default" in n for n in notes)
    assert any("(` formats_format `) to ` 'Q4_K_M' `" in n and "default" in n for n in notes)
    at.run(timeout=30)  # the note stays after the widget has dropped the bad value from the URL
    assert len(at.warning) == 2


def _grid(svg: str):
    """The matrix's cells (rect with a hover title) row by row, and the framed cell's rect."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg)
    cells = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    marks = [t.text for t in root.iter(f"{ns}text") if t.get("pointer-events") == "none"]
    frame = [r for r in root.iter(f"{ns}rect") if r.get("class") == "sw-highlight"]
    return cells, marks, frame, ns


def test_heatmap_has_one_cell_per_engine_and_column_and_frames_the_selection():
    from knowledge.formats import CompatStatus
    from knowledge.loader import load_knowledge
    from reports.formats_figures import STATUS_COLOURS, compatibility_grid_svg

    formats = load_knowledge().formats
    cells, _marks, frame, ns = _grid(compatibility_grid_svg(formats, highlight=("vllm", "gguf")))
    n_cols = len(formats.columns)
    assert len(cells) == len(formats.engines) * n_cols
    row, col = [e.id for e in formats.engines].index("vllm"), [c.id for c in formats.columns].index("gguf")
    cell = cells[row * n_cols + col]
    assert cell.get("fill") == STATUS_COLOURS[CompatStatus.VIA_PLUGIN]  # coloured by its status
    assert ": via a plugin" in cell.find(f"{ns}title").text
    (framed,) = frame
    assert abs(float(framed.get("x")) - (float(cell.get("x")) - 1)) < 0.2
    assert abs(float(framed.get("y")) - (float(cell.get("y")) - 1)) < 0.2


def test_source_links():
    from knowledge.sources import source_url

    assert source_url("ollama/ollama:docs/import.mdx (Importing)") == (
        "https://github.com/ollama/ollama/blob/HEAD/docs/import.mdx"
    )
    assert source_url("https://arxiv.org/abs/2305.14314 (QLoRA)") == "https://arxiv.org/abs/2305.14314"
    assert source_url("gguf.constants.GGML_QUANT_SIZES (Q4_0)") is None


def test_secondary_engine_pair_without_a_cell_says_so():
    at = AppTest.from_file(PAGE)
    at.query_params["formats_engine"] = "tgi"
    at.query_params["formats_format"] = "mlx-affine"
    at.run(timeout=30)
    assert not at.exception
    assert any("no entry for this pair" in i.value for i in at.info)


def test_a_gpu_reads_hardware_dependent_cells_for_it():
    # SGLang v0.5.23 registers the OCP mxfp4 method on AMD only for gfx950 (layers/quantization/__init__.py).
    at = AppTest.from_file(PAGE)
    at.query_params["formats_engine"] = "sglang"
    at.query_params["formats_format"] = "mxfp4"
    at.query_params["formats_gpu"] = "mi300x-192gb"
    at.run(timeout=30)
    assert not at.exception
    text = _markdown(at)
    assert ":gray-badge[not supported]" in text
    assert any("gfx950" in w.value and "AMD Instinct MI300X" in w.value for w in at.warning)  # the GPU by name
    paths = at.dataframe[0].value  # the cell's hardware paths
    assert "ROCm (AMD)" in list(paths["backend"]) and "gfx950" in list(paths["GPU archs"])
    at.selectbox(key="formats_gpu").select("mi355x-288gb").run(timeout=30)
    assert ":green-badge[native]" in _markdown(at)
    assert not at.warning


def test_heatmap_on_one_gpu_shows_its_statuses():
    from calculators.hardware.compat import HardwareChoice, matrix_on_hardware
    from knowledge.loader import load_knowledge
    from reports.formats_figures import compatibility_grid_svg

    kb = load_knowledge()
    svg = compatibility_grid_svg(kb.formats, verdicts=matrix_on_hardware(kb, HardwareChoice(gpu_id="mi300x-192gb")))
    cells, marks, _frame, ns = _grid(svg)
    n_cols = len(kb.formats.columns)
    index = [e.id for e in kb.formats.engines].index("sglang") * n_cols + [c.id for c in kb.formats.columns].index(
        "mxfp4")
    assert ": not supported" in cells[index].find(f"{ns}title").text
    assert marks[index].endswith("*")  # marked as depending on the hardware


def test_statuses_and_layout_limits_read_as_words():
    """The English badge and heatmap hovers read "via-plugin", "convert-first", "not-supported" (the KB's ids), and
    the layout line "Accepted layouts: bit widths 4" (issue 19 review)."""
    from reports.formats_figures import STATUS_WORDS

    assert all("-" not in word for word in STATUS_WORDS.values()), STATUS_WORDS
    at = AppTest.from_file(PAGE)
    at.query_params.update({"formats_engine": "vllm", "formats_format": "awq"})
    at.run(timeout=30)
    assert not at.exception
    text = _markdown(at)
    assert any(t.startswith("Bit widths it accepts: 4") for t in text), text
    assert not any("Accepted layouts" in t or "bit widths 4" in t for t in text)


def _dataframe_heights(monkeypatch, at: AppTest) -> list[str]:
    """Each drawn dataframe's height setting ("content", "auto" when unset, or pixels), from the messages sent."""
    from streamlit.testing.v1 import local_script_runner

    sent: list = []
    parse = local_script_runner.parse_tree_from_messages

    def recording(messages):
        sent[:] = list(messages)
        return parse(messages)

    monkeypatch.setattr(local_script_runner, "parse_tree_from_messages", recording)
    at.run(timeout=30)
    heights = []
    for message in sent:
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            if element.WhichOneof("type") == "dataframe":
                spec = element.height_config.WhichOneof("height_spec")
                heights.append("auto" if spec is None else "content" if spec == "use_content" else spec)
    return heights


def test_every_table_is_as_tall_as_its_rows(monkeypatch):
    """At Streamlit's default height (ten rows) the bits-per-weight table showed its eleventh row cut in half and
    hid the rest behind a scroll bar (issue 19 review); each table is drawn at the height of its rows, on the first
    run and when replayed from the state cache."""
    at = AppTest.from_file(PAGE)
    at.query_params.update({"formats_engine": "vllm", "formats_format": "awq"})  # a cell with a hardware-paths table
    first = _dataframe_heights(monkeypatch, at)
    assert not at.exception
    assert len(first) == 4 and set(first) == {"content"}, first
    assert set(_dataframe_heights(monkeypatch, at)) == {"content"}  # a rerun replays the recorded elements


@pytest.mark.parametrize(("lang", "container", "varies", "quoted", "reason"), [
    ("en", "compressed-tensors (container of schemes)", "varies", "“Varies”",
     "bits per weight follow the scheme inside, so none is defined for the container itself"),
    ("es", "compressed-tensors (contenedor de esquemas)", "varía", "«Varía»",
     "los bits por peso dependen del esquema de dentro"),
])
def test_a_container_of_schemes_reads_varies_with_the_reason_not_none(lang, container, varies, quoted, reason):
    # Issue 19 review: compressed-tensors defines no bits per weight of its own, and the grid drew Streamlit's grey
    # "None" in the number column. It reads "varies" in both tables, with the knowledge base's reason under them.
    at = page_in_language(PAGE, lang, {"formats_engine": "vllm", "formats_format": "compressed-tensors"}).run()
    assert not at.exception
    tables = [element for element in at.dataframe if container in list(element.value.iloc[:, 0])]
    assert len(tables) == 2  # the bits-per-weight table and its derivations (folded)
    for element in tables:
        frame = element.value
        row = list(frame.iloc[:, 0]).index(container)
        bits = frame.columns[1]
        assert pd.isna(frame[bits].iloc[row])  # still a missing number underneath: the column sorts as numbers
        assert element.proto.placeholder == varies  # what the grid draws for a missing value
        # ... and the bits per weight are the only missing values, so nothing else reads "varies"
        assert frame.isna().sum().to_dict() == {column: int(column == bits) for column in frame.columns}
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert f"{quoted} " in captions and reason in captions, captions
    # the column's own member table (Markdown) says the same word
    members = next(t for t in _markdown(at) if t.startswith("|") and f"compressed{NO_BREAK_HYPHEN}tensors" in t)
    assert f"| {varies} |" in members, members


@pytest.mark.parametrize("lang", ["en", "es"])
def test_gguf_file_types_read_from_fewest_to_most_bits_per_weight(lang):
    """Issue 19 review: the file-type table listed Q2_K and IQ4_XS after Q8_0 (the knowledge base's order); a reader
    compares sizes down the table, as llama.cpp's quantize README lists them, so it runs from fewest bits up."""
    from knowledge.loader import load_knowledge

    at = page_in_language(PAGE, lang).run()
    assert not at.exception
    mixes = load_knowledge().formats.file_mixes
    table = next(e.value for e in at.dataframe if set(e.value.iloc[:, 0]) == {m.name for m in mixes})
    bits = list(table.iloc[:, 1])
    assert bits == sorted(m.measured_bits_per_weight for m in mixes), list(table.iloc[:, 0])
    assert list(table.iloc[:, 0])[:3] == ["Q2_K", "IQ4_XS", "Q4_K_S"] and list(table.iloc[:, 0])[-1] == "F16"
