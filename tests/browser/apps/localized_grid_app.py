"""One Spanish dataframe built by reports.tables.localized_frame, its two columns equally wide so a test can click
the second column's header (the grid is a canvas: its headers have no boxes of their own)."""

import pandas as pd
import streamlit as st

from calculators.i18n import set_language
from reports.tables import localized_frame

set_language("es")
frame = pd.DataFrame({"motor": ["a", "b", "c", "d"], "valor": [1234.5, 9.25, 100000.0, 25.0]})
st.dataframe(localized_frame(frame, decimals={"valor": 2}), hide_index=True, key="grid",
             column_config={name: st.column_config.Column(width=200) for name in frame.columns})
