"""A reconciliation as text: each prediction shown in the unit and precision the engine printed."""

from __future__ import annotations

import re

from calculators.i18n import N_, _, ngettext
from calculators.reconcile.log.figures import Expected
from calculators.reconcile.log.precision import printed_decimals
from calculators.reconcile.result import ReconcileRow, Reconciliation, RowStatus
from reports.numbers import with_unit

#: A row's status as the reader sees it (the terminal and the page; JSON keeps the status value).
STATUS_LABEL = {
    RowStatus.EXACT: N_("exact"),
    RowStatus.EXPLAINED: N_("explained"),
    RowStatus.UNEXPLAINED: N_("UNEXPLAINED"),
}

#: What a thing the log did not state is, in the reader's words.
MISSING_KIND = {
    "figure": N_("figure"),
    "setting": N_("setting"),
    "geometry": N_("geometry"),
    "version": N_("version"),
}


def status_text(status: RowStatus) -> str:
    """A row's status in the reader's language."""
    return _(STATUS_LABEL[status])


def missing_kind_text(expected: Expected) -> str:
    """What kind of thing the log did not state (figure, setting, geometry, version), in the reader's words."""
    return _(MISSING_KIND[expected.kind])


def missing_text(expected: Expected) -> str:
    """One thing the log did not state: its kind in the reader's words, then its name (the kind alone when the
    name only repeats it, as for the engine's version)."""
    kind = missing_kind_text(expected)
    return kind if expected.name == expected.kind else f"{kind} {expected.name}"


_CATALOG_SOURCE = re.compile(r"catalog:(\S+)(.*)")


def model_source_text(source: str) -> str:
    """Where a reconciliation's geometry came from, for the reader: a catalog model by its id, else the file,
    repository or log it was read from, as given."""
    match = _CATALOG_SOURCE.fullmatch(source)
    if match is None:
        return source
    return _("catalog {catalog_id}").format(catalog_id=match.group(1)) + match.group(2)


def in_printed_unit(row: ReconcileRow, value: int | float) -> str:
    """`value` (base units) written as the engine writes this figure: same unit, same decimals."""
    decimals = printed_decimals(row.printed)
    size = _unit_size(row)
    number = value / size if size else value
    grouping = "," if "," in row.printed else ""
    return f"{number:{grouping}.{decimals}f}"


def _unit_size(row: ReconcileRow) -> float:
    """Base units per printed unit, recovered from the printed number and its value in base units."""
    try:
        printed = float(row.printed.replace(",", ""))
    except ValueError:
        return 1
    if row.unit == "ratio" or printed == 0:
        return 1
    return row.printed_value / printed


def _count_unit(unit: str, count: int) -> str:
    """A count's unit in the reader's language, singular or plural for `count`."""
    words = {
        "bytes": ngettext("byte", "bytes", count),
        "tokens": ngettext("token", "tokens", count),
        "blocks": ngettext("block", "blocks", count),
        "layers": ngettext("layer", "layers", count),
        "sequences": ngettext("sequence", "sequences", count),
        "requests": ngettext("request", "requests", count),
    }
    return words.get(unit, unit)


def _unit_label(row: ReconcileRow, value: int | float | None = None) -> str:
    """The printed unit as the engine printed it ('MiB', 'x'), or, when the engine printed a bare number, the
    count's unit in the reader's words ('tokens', 'capas'; singular for 1), also where the engine wrote the word
    ('12 layers'): the number stays as printed, the word is the reader's."""
    if row.unit in ("ratio", "count"):
        return row.printed_unit
    if row.printed_unit and row.printed_unit.lower().rstrip("s") != row.unit.rstrip("s"):
        return row.printed_unit
    return _count_unit(row.unit, 1 if value == 1 else 2)


def printed_text(row: ReconcileRow) -> str:
    """What the engine printed, with its unit."""
    return with_unit(row.printed, _unit_label(row, row.printed_value)).strip()


def predicted_text(row: ReconcileRow) -> str:
    """servewise's prediction in the printed unit: one value, or 'low – high' when the inputs were rounded."""
    low, high = in_printed_unit(row, row.predicted_low), in_printed_unit(row, row.predicted_high)
    text = low if low == high else f"{low} – {high}"
    single = row.predicted_low if row.predicted_low == row.predicted_high else None
    return with_unit(text, _unit_label(row, single)).strip()


def difference_text(row: ReconcileRow) -> str:
    """servewise minus engine in the printed unit, signed ('0' when they meet)."""
    if row.difference == 0:
        return "0"
    signed = f"{'+' if row.difference > 0 else ''}{in_printed_unit(row, row.difference)}"
    return with_unit(signed, _unit_label(row)).strip()


def figure_label(row: ReconcileRow) -> str:
    """The figure's label with its device when it names one (a worker's process id is left out)."""
    return f"{row.label} [{row.device}]" if row.device and "pid=" not in row.device else row.label


def reconcile_text(result: Reconciliation) -> str:
    """Lines for the terminal: what was read, the comparison table, and what was not found or compared."""
    lines = [
        _("engine: {name}").format(name=result.engine_name or _("not recognised"))
        + (f" {result.version}" if result.version else ""),
    ]
    if result.plan_engine and result.plan_engine != result.engine:
        lines.append(_("plan run: {engine} (the runner this engine launched)").format(engine=result.plan_engine))
    if result.model_source:
        lines.append(_("model geometry: {source}").format(source=model_source_text(result.model_source)))
    if result.settings_used:
        lines.append(_("settings:") + " " + ", ".join(f"{k}={v}" for k, v in result.settings_used.items()))
    lines += [_("assumed: {text}").format(text=text) for text in result.assumptions]
    if result.rows:
        table = [(_("figure"), _("line"), _("engine printed"), "servewise", _("difference"), _("status"))]
        table += [(figure_label(r), str(r.line), printed_text(r), predicted_text(r),
                   difference_text(r), status_text(r.status)) for r in result.rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        lines.append("")
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                  for row in table]
        explained = [r for r in result.rows if r.status.value != "exact"]
        if explained:
            lines.append("")
            lines += [_("line {line} {label}: {status} — {why}").format(
                line=r.line, label=r.label, status=status_text(r.status), why=r.explanation) for r in explained]
    else:
        lines.append(_("no figure could be compared"))
    if result.not_compared:
        names = sorted({f.name for f in result.not_compared})
        lines.append(_("printed but not compared: {names}").format(names=", ".join(names)))
    if result.missing:
        lines.append(_("not found in the log:") + " " + ", ".join(missing_text(m) for m in result.missing))
    if result.lines:
        from reports.log_lines import line_summary

        lines.append(_("lines: {summary}").format(summary=line_summary(result.lines)))
    lines += [_("note: {text}").format(text=n.message) for n in result.log_notes]
    lines += [_("plan note: {text}").format(text=text) for text in result.plan_notes]
    if result.refusal:
        lines.append(_("the plan says the engine would refuse: {why}").format(why=result.refusal))
    return "\n".join(lines)
