"""Wide tables: what each row is stays pinned on the left while the rest scrolls sideways."""

from __future__ import annotations

import pandas as pd
import streamlit as st


def pin_first_column(table: pd.DataFrame, column_config: dict | None = None) -> dict:
    """`column_config` for `st.dataframe(table, hide_index=True)` with the table's first column pinned.

    A table wider than the page scrolls horizontally; the pinned column (an engine, a setting, a scheme)
    keeps every row named. Existing settings of that column are kept.
    """
    config = dict(column_config or {})
    if table.columns.empty:  # an empty table has nothing to pin
        return config
    first = table.columns[0]
    config[first] = {**(config.get(first) or st.column_config.Column()), "pinned": True}
    return config
