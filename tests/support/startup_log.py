"""Shared helpers for the start-up log tests: load a stored real log and pick figures from a parse."""

from __future__ import annotations

from calculators.reconcile.log.figures import ParsedLog
from calculators.reconcile.log.parse import parse_startup_log
from tests.support.paths import LOG_DIR


def parse(name: str) -> ParsedLog:
    """Parse one stored real log (see tests/data/logs/SOURCES.md for where each was printed)."""
    return parse_startup_log((LOG_DIR / name).read_text(encoding="utf-8"))


def values(parsed: ParsedLog, name: str, **where: str) -> list[int | float]:
    """Values of every figure with this name (optionally one cache/device), in log order."""
    return [f.value for f in parsed.figures_named(name, **where)]


def one(parsed: ParsedLog, name: str, **where: str) -> int | float:
    """The value of the only figure with this name; fails when there are none or several."""
    found = values(parsed, name, **where)
    assert len(found) == 1, f"{name} {where}: expected one figure, found {found}"
    return found[0]
