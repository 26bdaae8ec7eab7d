"""The README's accuracy tables are the ledger JSON the Speed page shows, row for row (issue 15: one honest claim)."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| ([^|]+) \| ([^|]+) \| ([^|]+) \| (\d+) \| ([\d.]+)% \| ([\d.]+)% \|$", re.M)


def test_every_readme_accuracy_row_is_the_ledgers_and_every_pooled_ledger_row_is_in_the_readme():
    ledger = json.loads((REPO / "bench" / "results" / "speed_accuracy.json").read_text(encoding="utf-8"))
    pooled = {(r["check"], r["hardware_class"], r["metric"]): r for r in ledger["by_class"] if r["engine"] == "all"}
    pooled |= {(r["check"], r["engine"], r["metric"]): r for r in ledger["by_engine_all_classes"]}
    rows = ROW.findall((REPO / "README.md").read_text(encoding="utf-8"))
    assert rows, "the README's accuracy tables are missing"
    shown = set()
    for check, group, metric, n, median, p90 in rows:
        key = (check.strip(), group.strip(), metric.strip())
        assert key in pooled, f"README row {key} is not in bench/results/speed_accuracy.json"
        row = pooled[key]
        assert (int(n), median, p90) == (
            row["n"], f"{row['median_abs_error'] * 100:.1f}", f"{row['p90_abs_error'] * 100:.1f}"), key
        shown.add(key)
    assert shown == set(pooled), f"ledger rows missing from the README: {sorted(set(pooled) - shown)}"
