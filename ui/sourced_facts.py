"""Draw knowledge-base facts so that every value sits next to its source link and the version it was read at."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calculators.i18n import _
from reports.tables import literal_markdown, literal_with_flags, markdown_table, source_link

FACT_COLUMNS = 3  # engines per row of fact columns: wider columns keep flags and prose readable


def show_table(frame: pd.DataFrame) -> None:
    """A sourced table of one row per engine as Markdown (values shown literally), drawn sideways: one column per
    engine, one row per field; the source a link labelled by its file name.

    Markdown, not a dataframe: these tables are read, not sorted, and a shared link shows them without the
    browser loading the dataframe grid's scripts first. Sideways because a row per engine had ten columns that
    ran ~550 px past the page at 1024 px (~140 px at 1440 px), rows tall with empty cells; engines as columns is
    also how the Engines page compares them. Field names are the tables' English keys, shown in the reader's
    language.
    """
    records = frame.to_dict("records")
    key = str(frame.columns[0])  # "Engine"
    engines = [str(record[key]) for record in records]
    rows = []
    for column in frame.columns[1:]:
        row = {"": _(str(column))}
        for engine, record in zip(engines, records, strict=True):
            value = record[column]
            row[engine] = source_link(value) if column == "Source" else value
        rows.append(row)
    st.markdown(markdown_table(rows, literal=True))




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
                where = f"[{literal_markdown(label)}]({link})" if link.startswith("http") else literal_markdown(label)
                version = short_version(row["Version read"])
                what, value = literal_markdown(row["What"]), literal_with_flags(row["Value"])
                lines.append(f"- **{what}**: {value} :gray[— {where} · {version}]")
            column.markdown(f"#### {name}\n" + "\n".join(lines))


def short_version(version: str) -> str:
    """A 40-character commit shortened to 10 characters for display; tags and releases as they are."""
    is_commit = len(version) == 40 and all(c in "0123456789abcdef" for c in version)
    return version[:10] if is_commit else version
