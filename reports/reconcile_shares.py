"""Per engine, how many printed figures servewise reproduces: exact, explained by a named rule, unexplained.

The data is built from reconciliations (one per stored log); the text is for the bench script and the
README's findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from calculators.reconcile.result import Reconciliation, RowStatus
from reports.numbers import percent, with_unit


@dataclass
class EngineShare:
    """Counts of compared rows for one engine (memory figures: rows in bytes; all: every compared row)."""

    engine: str
    logs: int = 0
    logs_with_rows: int = 0
    memory: dict[RowStatus, int] = field(default_factory=lambda: dict.fromkeys(RowStatus, 0))
    all_rows: dict[RowStatus, int] = field(default_factory=lambda: dict.fromkeys(RowStatus, 0))
    not_compared: int = 0

    def share(self, counts: dict[RowStatus, int]) -> float | None:
        """Fraction of rows that are exact or explained (None when nothing was compared)."""
        total = sum(counts.values())
        return None if total == 0 else (counts[RowStatus.EXACT] + counts[RowStatus.EXPLAINED]) / total


@dataclass(frozen=True)
class UnexplainedRow:
    """One unexplained row, for the findings list."""

    log: str
    line: int
    label: str
    printed: str
    explanation: str


def shares(results: dict[str, Reconciliation]) -> tuple[dict[str, EngineShare], list[UnexplainedRow]]:
    """Per engine counts over every log's reconciliation (keyed by log file name), and the unexplained rows."""
    table: dict[str, EngineShare] = {}
    unexplained: list[UnexplainedRow] = []
    for name, result in sorted(results.items()):
        engine = result.engine or "unknown"
        entry = table.setdefault(engine, EngineShare(engine))
        entry.logs += 1
        entry.logs_with_rows += bool(result.rows)
        entry.not_compared += len(result.not_compared)
        for row in result.rows:
            entry.all_rows[row.status] += 1
            if row.unit == "bytes":
                entry.memory[row.status] += 1
            if row.status is RowStatus.UNEXPLAINED:
                printed = with_unit(row.printed, row.printed_unit).strip()
                unexplained.append(UnexplainedRow(name, row.line, row.label, printed, row.explanation))
    return table, unexplained


def _counts(counts: dict[RowStatus, int]) -> str:
    return " / ".join(str(counts[status]) for status in (RowStatus.EXACT, RowStatus.EXPLAINED, RowStatus.UNEXPLAINED))


def _percent(value: float | None) -> str:
    return "–" if value is None else percent(value)


def shares_text(table: dict[str, EngineShare]) -> str:
    """A Markdown table: per engine, logs, memory figures exact / explained / unexplained and the share."""
    lines = ["| engine | logs (with rows) | memory figures exact / explained / unexplained | share exact+explained "
             "| all rows exact / explained / unexplained | share | printed, not compared |",
             "|---|---|---|---|---|---|---|"]
    for entry in table.values():
        m, a = entry.memory, entry.all_rows
        lines.append(
            f"| {entry.engine} | {entry.logs} ({entry.logs_with_rows}) | "
            f"{_counts(m)} | {_percent(entry.share(m))} | {_counts(a)} | {_percent(entry.share(a))} | "
            f"{entry.not_compared} |")
    return "\n".join(lines)
