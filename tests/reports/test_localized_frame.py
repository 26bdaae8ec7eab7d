"""A dataframe a reader sorts shows its numbers in the reader's language and keeps them numbers underneath."""

from __future__ import annotations

import pandas as pd

from calculators.i18n import language
from reports.tables import localized_frame


def _shown(styler) -> list[list[str]]:
    """The display text of every body cell, as the grid draws it."""
    text = styler.hide(axis="index").to_string(delimiter="\t")
    return [line.split("\t") for line in text.splitlines()[1:]]


def test_spanish_cells_read_spanish_and_stay_numbers():
    frame = pd.DataFrame({"engine": ["a", "b"], "tokens": [4096, 12], "p50 (s)": [0.1264, None],
                          "error": [0.125, 0.04], "ok": [True, False]})
    with language("es"):
        styler = localized_frame(frame, percents=["error"])
        shown = _shown(styler)
    assert shown[0][:4] == ["a", "4.096", "0,1264", "12,5\u00a0%"]
    assert shown[1][:4] == ["b", "12", "", "4,0\u00a0%"]
    # the grid sorts by the data under the display text: still numbers, unchanged
    assert styler.data["tokens"].tolist() == [4096, 12] and styler.data["error"].dtype.kind == "f"


def test_english_cells_read_english_and_money_keeps_its_cents():
    frame = pd.DataFrame({"rate": [1234.5, 0.25], "US$ per hour": [3.2, 1.95]})
    assert _shown(localized_frame(frame, decimals={"US$ per hour": 2})) == [["1,234.5", "3.20"], ["0.25", "1.95"]]
