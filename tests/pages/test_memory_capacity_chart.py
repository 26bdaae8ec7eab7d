"""The memory page's capacity chart agrees with its Capacity table at the reader's own context (AppTest).

The chart's line used to be drawn through a geometric grid of contexts (512, ~1.5k, ~4.7k, ~14k, ~43k, 128k) that
skipped the workload's context, so at the "your context" mark it read another figure than the table's "most
sequences at N tokens" (for vLLM at 32k: ~30 on the line, 26 in the table). The chart now has a point there.
"""

from __future__ import annotations

import re

import pytest

from bench.typical_states import TYPICAL_STATES
from reports.tables import NO_BREAK_HYPHEN
from tests.support.page_runs import page_in_language

CURVE_SEQUENCES_LIMIT = 256  # pages/memory.py: the chart is capped there (its caption says so); the table is not
#: (start of the table's "most sequences at {n} tokens" header, the chart's unit for sequences) per language
LABELS = {"en": ("most sequences at", "sequences"), "es": ("máximo de secuencias a", "secuencias")}

def _whole(text: str) -> int:
    """An integer as the page formats it in either language (thousands separators dropped)."""
    return int(re.sub(r"\D", "", text))

def _table_figures(markdowns: list[str], header_start: str) -> dict[str, int]:
    """Engine -> the Capacity table's most sequences at the workload's context (engines shown as '—' left out)."""
    table = next(m for m in markdowns if m.lstrip().startswith("|") and header_start in m)
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.strip().splitlines()]
    column = next(i for i, cell in enumerate(rows[0]) if cell.startswith(header_start))
    # the table joins "llama-server" with a no-break hyphen (reports/tables.py); the chart's hover text does not
    return {row[0].replace(NO_BREAK_HYPHEN, "-"): _whole(row[column]) for row in rows[2:] if row[column] != "—"}

def _chart_points(markdowns: list[str], sequences_word: str) -> dict[tuple[str, int], int]:
    """(engine, context tokens) -> the chart's sequences at that point, read from each point's hover text (a
    number and its unit are joined by a no-break space)."""
    svg = next(m for m in markdowns if "capacity-curves" in m)
    # a point lying on other lines' points gives their figures after its own ("; vLLM: 26 sequences"), and a point
    # at the chart's cap has a note in brackets at the end
    tips = re.findall(r"<title>([^<]+?) · ([^<]+?)\s+tokens:\s+([^<;]+?)\s+" + sequences_word
                      + r"(?:; [^<(]*)?(?: \([^<]*\))?</title>", svg)
    return {(engine, _whole(context)): _whole(count) for engine, context, count in tips}

TYPICAL = TYPICAL_STATES["memory.py"].query

@pytest.mark.parametrize(("context", "lang"), [
    (TYPICAL["mem_ctx"], "en"), (TYPICAL["mem_ctx"], "es"), ("32768", "en"), ("3000", "es"),
])
def test_the_chart_at_your_context_reads_the_capacity_tables_figure(context, lang):
    at = page_in_language("pages/memory.py", lang, {**TYPICAL, "mem_ctx": context})
    at.run()
    assert not at.exception, at.exception
    markdowns = [str(m.value) for m in at.markdown]
    header_start, sequences_word = LABELS[lang]
    table = _table_figures(markdowns, header_start)
    points = _chart_points(markdowns, sequences_word)
    assert len(table) >= 3, table  # Ollama, llama.cpp, vLLM, SGLang on two H100s (MLX LM: Apple only)
    for engine, most in table.items():
        assert points.get((engine, int(context))) == min(most, CURVE_SEQUENCES_LIMIT), (engine, most, points)


#: The hover note of a point at the chart's cap and the legend's entry for such points, per language.
CAPPED = {"en": ("the chart stops at 256: at least this many fit", "at the cap (256): at least this many"),
          "es": ("el gráfico se detiene en 256: caben al menos estas", "en el tope (256): al menos estas")}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_points_at_the_cap_are_open_and_say_at_least_on_hover_and_in_the_legend(lang):
    """On the typical link's two H100s, short contexts hold more than 256 sequences: those points are the chart's
    cap, not the answer (the Capacity table's search goes to 4096). They are drawn open and their hover says so;
    points below the cap are not."""
    at = page_in_language("pages/memory.py", lang, TYPICAL)
    at.run()
    assert not at.exception, at.exception
    svg = next(str(m.value) for m in at.markdown if "capacity-curves" in str(m.value))
    note, legend = CAPPED[lang]
    circles = re.findall(r'<circle [^>]*?(fill="[^"]+")[^>]*><title>([^<]+)</title>', svg)
    capped = [tip for fill, tip in circles if fill == 'fill="#fff"']
    assert capped and all(tip.endswith(f"({note})") and "256\u00a0" in tip for tip in capped), capped
    below = [tip for fill, tip in circles if fill != 'fill="#fff"']
    assert below and not any(note in tip for tip in below), below
    assert f">{legend}</text>" in svg
