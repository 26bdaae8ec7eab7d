"""The used/skipped line report of a pasted start-up log, for the terminal and the page."""

from __future__ import annotations

from collections import Counter

from calculators.i18n import N_, _, ngettext
from calculators.reconcile.log.figures import LineReport

#: What each skip reason means, for a reader (translated where shown).
REASON_TEXT = {
    "read": N_("read"),
    "known_unused": N_("the engine's line, nothing servewise uses"),
    "other_engine": N_("another engine's line"),
    "not_engine_text": N_("not engine output (command, prose, markdown)"),
    "blank": N_("blank"),
}


#: What happened to a pasted line (the record's `outcome`), for a reader.
OUTCOME_TEXT = {"used": N_("used"), "skipped": N_("skipped"), "blank": N_("blank")}

#: The column headings of `line_rows`' records, for a reader (the records keep these English keys).
LINE_COLUMNS = {
    "line": N_("line"),
    "outcome": N_("outcome"),
    "reason": N_("reason"),
    "gave": N_("gave"),
    "stripped": N_("stripped"),
    "text": N_("text"),
}


def column_heading(key: str) -> str:
    """The reader's heading for one `line_rows` column."""
    return _(LINE_COLUMNS[key])


def reason_text(reason: str) -> str:
    """The reader's words for a skip reason."""
    return _(REASON_TEXT.get(reason, reason))


def line_counts(lines: list[LineReport]) -> dict[str, int]:
    """How many pasted lines ended up under each reason, in REASON_TEXT order."""
    counts: Counter[str] = Counter(line.reason for line in lines)
    return {reason: counts[reason] for reason in REASON_TEXT if counts[reason]}


def _skipped_count(reason: str, n: int) -> str:
    """'43 engine lines servewise does not use': a count of skipped lines with its reason, agreeing in number."""
    counted = {
        "known_unused": ngettext("{n} engine line servewise does not use", "{n} engine lines servewise does not use",
                                 n),
        "other_engine": ngettext("{n} line of another engine", "{n} lines of another engine", n),
        "not_engine_text": ngettext("{n} line that is not engine output (command, prose, markdown)",
                                    "{n} lines that are not engine output (command, prose, markdown)", n),
        "blank": ngettext("{n} blank line", "{n} blank lines", n),
    }
    return counted[reason].format(n=n) if reason in counted else f"{n} {reason_text(reason)}"


def line_summary(lines: list[LineReport]) -> str:
    """One sentence: lines read out of lines pasted, and why the others were skipped."""
    counts = line_counts(lines)
    read = counts.pop("read", 0)
    skipped = ", ".join(_skipped_count(reason, n) for reason, n in counts.items())
    text = _("{read} of {total} pasted lines read").format(read=read, total=len(lines))
    return text + (" (" + _("skipped: {reasons}").format(reasons=skipped) + ")" if skipped else "")


def line_rows(lines: list[LineReport], *, only_skipped: bool = False) -> list[dict[str, object]]:
    """One record per pasted line (number, status, reason, what it gave, what was stripped, the text)."""
    return [
        {
            "line": line.number,
            "outcome": _(OUTCOME_TEXT.get(line.status, line.status)),
            "reason": reason_text(line.reason),
            "gave": ", ".join(line.produced),
            "stripped": ", ".join(line.stripped),
            "text": line.text if line.text else line.raw,
        }
        for line in lines
        if not only_skipped or line.status != "used"
    ]


def line_report_text(lines: list[LineReport], *, limit: int = 200) -> str:
    """The per-line report as plain text for the terminal (at most `limit` lines, then a count)."""
    out = [line_summary(lines)]
    for row in line_rows(lines)[:limit]:
        gave = f" -> {row['gave']}" if row["gave"] else ""
        stripped = f" [{row['stripped']}]" if row["stripped"] else ""
        out.append(f"{row['line']:>5} {row['outcome']:<9} {row['reason']}{gave}{stripped}: {str(row['text'])[:120]}")
    if len(lines) > limit:
        out.append(_("… {n} more lines").format(n=len(lines) - limit))
    return "\n".join(out)
