"""Read back the Markdown tables a page draws (reports/tables.py), so AppTest tests can check their cells."""

from __future__ import annotations

import pandas as pd

from reports.tables import NO_BREAK_HYPHEN


def _cells(line: str) -> list[str]:
    """The cells of one table row, unescaped, with the no-break hyphens reports/tables.py joins words with read as
    the hyphens a person sees ("llama.cpp (llama-server)")."""
    inner = line.strip()[1:-1].replace(NO_BREAK_HYPHEN, "-")
    cells, current, escaped = [], "", False
    for char in inner:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += char
    cells.append(current.strip())
    return cells


def parse_markdown_table(text: str) -> pd.DataFrame:
    """The first Markdown table in `text` as a DataFrame of strings (header row = columns)."""
    lines = [line for line in text.splitlines() if line.strip().startswith("|")]
    if len(lines) < 2:
        raise ValueError(f"no Markdown table in {text[:200]!r}")
    header = _cells(lines[0])
    rows = [_cells(line) for line in lines[2:]]
    return pd.DataFrame(rows, columns=header)


def table_text(value: str) -> str | None:
    """The Markdown table a Markdown element's `value` draws (also inside ui/markup.show_wide_table's box)."""
    text = value.strip()
    if text.startswith('<div class="sw-wide-table') and text.endswith("</div></div>"):
        text = text[text.index(">") + 1:-len("</div>")].strip()  # the scrolling box
        text = text[text.index(">") + 1:-len("</div>")].strip()  # the box's width holder
    return text if text.startswith("|") else None


def markdown_tables(markdown_values: list[str]) -> list[pd.DataFrame]:
    """Every Markdown table among a page's Markdown elements, in page order."""
    return [parse_markdown_table(text) for value in markdown_values if (text := table_text(value)) is not None]
