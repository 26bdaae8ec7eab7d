"""Draw knowledge-base facts so that every value sits next to its source link and the version it was read at."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calculators.i18n import _
from ui.tables import pin_first_column

SOURCE_LINK_TEXT = r"https?://.*/([^/]+)$"
ROW_PX = 35  # st.dataframe's row height
FACT_COLUMNS = 3  # engines per row of fact columns: wider columns keep flags and prose readable


def show_table(frame: pd.DataFrame) -> None:
    """A wide sourced table sized to show every row, with the source as a link labelled by its file name.

    Column names are the tables' English keys; they are shown in the reader's language.
    """
    height = ROW_PX * (len(frame) + 1) + 3
    shown = frame.rename(columns=lambda column: _(str(column)))
    source = _("Source")
    links = {source: st.column_config.LinkColumn(source, display_text=SOURCE_LINK_TEXT)}
    st.dataframe(shown, hide_index=True, height=height, column_config=pin_first_column(shown, links))


def markdown_escaped(text: str) -> str:
    """Text shown literally in Markdown (flags, paths with * and _, dollar signs)."""
    for char in "\\*_$[]<>|`":
        text = text.replace(char, "\\" + char)
    return text


def show_facts(frame: pd.DataFrame) -> None:
    """Long-format facts side by side, one column per engine; every value followed by its source and version."""
    names = list(dict.fromkeys(frame["Engine"]))
    per_row = max(1, min(FACT_COLUMNS, len(names)))  # two engines share the width, not two thirds of it
    for first in range(0, len(names), per_row):
        row_names = names[first : first + per_row]
        for column, name in zip(st.columns(per_row), row_names, strict=False):
            lines = []
            for row in frame[frame["Engine"] == name].to_dict("records"):
                link = row["Source"]
                label = link.rstrip("/").rsplit("/", 1)[-1] if link else _("no source")
                where = f"[{markdown_escaped(label)}]({link})" if link.startswith("http") else markdown_escaped(label)
                version = short_version(row["Version read"])
                what, value = markdown_escaped(row["What"]), markdown_escaped(row["Value"])
                lines.append(f"- **{what}**: {value} :gray[— {where} · {version}]")
            column.markdown(f"#### {name}\n" + "\n".join(lines))


def short_version(version: str) -> str:
    """A 40-character commit shortened to 10 characters for display; tags and releases as they are."""
    is_commit = len(version) == 40 and all(c in "0123456789abcdef" for c in version)
    return version[:10] if is_commit else version
