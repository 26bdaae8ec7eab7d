"""The used/skipped report: what every pasted line gave the reader, or why it was passed over."""

from __future__ import annotations

import re

from calculators.reconcile.log.clean import LogLine
from calculators.reconcile.log.collect import Collector
from calculators.reconcile.log.figures import LineReason, LineReport


def line_reports(
    lines: list[LogLine], out: Collector, own: re.Pattern[str] | None, others: re.Pattern[str] | None
) -> list[LineReport]:
    """One report per pasted line. `own` matches the detected engine's lines (and a relayed runner's),
    `others` the lines of every other engine."""
    gave = {number: list(names) for number, names in out.produced.items()}
    for figure in out.figures:
        gave.setdefault(figure.line, []).append(figure.name)
    by_number: dict[int, list[LogLine]] = {}
    for line in lines:
        by_number.setdefault(line.number, []).append(line)
    reports: list[LineReport] = []
    for number, parts in by_number.items():
        text = " ".join(part.text for part in parts if part.text)
        names = tuple(dict.fromkeys(gave.get(number, ())))
        reason: LineReason
        if names:
            reason = "read"
        elif not text:
            reason = "blank"
        elif own is not None and any(own.search(part.text) for part in parts if part.text):
            reason = "known_unused"
        elif others is not None and any(others.search(part.text) for part in parts if part.text):
            reason = "other_engine"
        else:
            reason = "not_engine_text"
        status = "used" if reason == "read" else "blank" if reason == "blank" else "skipped"
        stripped = tuple(dict.fromkeys(label for part in parts for label in part.stripped))
        reports.append(LineReport(number=number, status=status, reason=reason, produced=names, stripped=stripped,
                                  text=text, raw=parts[0].raw))
    return reports
