"""Renderings of speed estimates, calibrations and the accuracy ledger (Markdown text and JSON data)."""

from __future__ import annotations

import math

from calculators.engines import display_name
from calculators.i18n import N_, _, ngettext, translated_word
from calculators.planner.readout import UsersReadout
from calculators.speed.accuracy import Summary
from calculators.speed.calibrate import CalibrationResult
from calculators.speed.model import HARDWARE_CLASS_NAMES, Band, Prediction, SpeedBasis, group_name
from calculators.speed.predict import SpeedEstimate
from reports.numbers import compact, number, percent, quantity, signed_percent, significant, with_unit
from reports.tables import markdown_table


def basis_line(basis: SpeedBasis) -> str:
    """One sentence naming the parameters a prediction used."""
    if basis.kind == "calibration":
        text = _("Speed basis: your calibration ({group}).").format(group=group_name(basis.group))
    else:
        text = _("Speed basis: default fit to public measurements ({group}).").format(group=group_name(basis.group))
    flops = _(basis.flops_note) if basis.flops_note else ""
    return f"{text} {_sentence(basis.note)} {flops}".strip().replace("  ", " ")


def _sentence(note: str) -> str:
    """A basis note as a sentence of its own (capital first letter, full stop), since it follows one."""
    if not note:
        return note
    note = note[0].upper() + note[1:]
    return note if note.endswith((".", ")")) else note + "."


def _band(p: Prediction, unit: str, scale: float = 1.0, digits: int = 1) -> str:
    """'value unit (low–high)' in the reader's digits."""
    value, low, high = (number(x * scale, digits) for x in (p.value, p.low, p.high))
    return f"{with_unit(value, unit)} ({low}–{high})"


def speed_estimate_text(est: SpeedEstimate) -> str:
    """The `speed` verb's human-readable answer."""
    lines = [
        _("Decode, one sequence: {value}").format(value=_band(est.decode_tokens_per_s_batch1, "tokens/s")),
        ngettext("Decode, {n} concurrent sequence: {value} in all, {per} each",
                 "Decode, {n} concurrent sequences: {value} in all, {per} each", est.concurrency).format(
            n=number(est.concurrency), value=_band(est.decode_tokens_per_s_at_concurrency, "tokens/s"),
            per=_band(est.per_sequence_tokens_per_s_at_concurrency, "tokens/s")),
    ]
    if est.prefill_tokens_per_s is not None and est.ttft_s is not None:
        lines.append(_("Prefill: {value}").format(value=_band(est.prefill_tokens_per_s, "tokens/s", digits=0)))
        lines.append(_("Time to first token for {n} prompt tokens (idle server): {value}").format(
            n=number(est.prompt_tokens), value=_band(est.ttft_s, "ms", 1000.0, 0)))
    else:
        lines.append(
            _(
                "Prefill and time to first token: unknown (the accelerator's flop/s are not in the catalog; "
                "calibrate with a run)."
            )
        )
    lines.append(basis_line(est.basis))
    if est.basis.kind == "calibration":
        lines.append(
            _(
                "Bands are the 10th-90th percentile of the calibration's errors on the run it was fitted on, "
                "usually smaller than its error at other loads; confirm with the Operations page's benchmark plan."
            )
        )
    else:
        lines.append(
            _(
                "Bands are the 10th-90th percentile of the fit's leave-one-out errors; "
                "confirm with the Operations page's benchmark plan."
            )
        )
    return "\n".join(lines)


def speed_estimate_json(est: SpeedEstimate) -> dict:
    """The `speed` verb's JSON answer (rates in tokens/s, times in s)."""
    data = est.model_dump(mode="json")
    data["decode_tokens_per_s"] = est.decode_tokens_per_s_batch1.value
    data["prefill_tokens_per_s_value"] = est.prefill_tokens_per_s.value if est.prefill_tokens_per_s else None
    data["ttft_s_value"] = est.ttft_s.value if est.ttft_s else None
    return data


def calibration_text(result: CalibrationResult) -> str:
    """Predicted against measured for every imported point, then the fitted parameters."""
    p = result.profile
    lines = [
        "| " + " | ".join((_("run"), _("metric"), _("measured"), _("predicted"), _("error"))) + " |",
        "|---|---|---:|---:|---:|",
    ]
    for c in result.comparisons:
        scale, unit = (1000.0, "ms") if c.unit == "s" else (1.0, c.unit)
        lines.append(
            f"| {c.label} | {_shown(c.metric)} | {quantity(c.measured * scale, unit, 2)} | "
            f"{quantity(c.predicted * scale, unit, 2)} | {signed_percent(c.error, 1)} |"
        )
    lines += [
        "",
        _(
            "Memory efficiency {m}, decode overhead {d} ms/step, "
            "compute efficiency {c}, request overhead {r}\u00a0ms."
        ).format(
            m=number(p.memory_efficiency, 2), d=number(p.decode_overhead_s * 1000, 2), c=number(p.compute_efficiency,
                2),
            r=number(p.prefill_overhead_s * 1000, 1),
        ),
    ]
    lines += list(result.notes)
    if result.skipped:
        lines.append(ngettext("{n} line not used", "{n} lines not used", len(result.skipped)).format(
            n=number(len(result.skipped))) + ":")
        lines += [f"- {line.source + ': ' if line.source else ''}"
                  + _("line {n} ({reason}): {text}").format(n=number(line.line_no), reason=line.reason, text=line.text)
                  for line in result.skipped]
    return "\n".join(lines)


#: The accuracy ledger's row for every engine pooled (its word, translated where shown).
ALL_ENGINES = N_("all")
#: What people read for the ledger's ids (the JSON and the bench keep the ids); translated where shown.
LEDGER_WORDS: dict[str, str] = {
    **HARDWARE_CLASS_NAMES,
    "decode_tokens_per_s": N_("decode tokens/s"),
    "prefill_tokens_per_s": N_("prefill tokens/s"),
    "itl_p50_s": N_("median inter-token latency"),
    "ttft_p50_s": N_("median time to first token"),
    "itl_p50": N_("median inter-token latency"),  # a calibration's comparisons (calculators/speed/calibrate.py)
    "ttft_p50": N_("median time to first token"),
    "single-stream (leave-one-out)": N_("single stream (leave-one-out)"),
    "held-out #4167": N_("held out: llama.cpp #4167"),
    "serving uncalibrated": N_("serving, uncalibrated"),
    "serving calibrated (one level -> others)": N_("serving, calibrated on one load level"),
}


def _shown(word: str) -> str:
    return translated_word(LEDGER_WORDS, word)


#: The accuracy table's error columns (their headers, translated where shown).
ERROR_COLUMNS = (N_("median abs error"), N_("p90 abs error"))


def ledger_rows(summaries: list[Summary]) -> list[dict[str, object]]:
    """The accuracy table as rows (column name -> value): median and p90 absolute error per class, written as
    percentages."""
    header = (_("check"), _("engine"), _("class"), _("metric"), "n", *(_(column) for column in ERROR_COLUMNS))
    return [
        dict(zip(header, (_shown(s.check), _(ALL_ENGINES) if s.engine == ALL_ENGINES else display_name(s.engine),
                          _shown(s.hardware_class), _shown(s.metric), s.n, percent(s.median_abs_error, 1),
                          percent(s.p90_abs_error, 1)), strict=True))
        for s in summaries
    ]


def ledger_markdown(summaries: list[Summary]) -> str:
    """The accuracy table (README and the accuracy section): median and p90 absolute error per class."""
    rows = ledger_rows(summaries)
    header = list(rows[0]) if rows else []
    lines = ["| " + " | ".join(header) + " |", "|---|---|---|---|---:|---:|---:|"]
    lines += ["| " + " | ".join(str(value) for value in row.values()) + " |" for row in rows]
    return "\n".join(lines)


def ledger_sections(summaries: list[Summary]) -> list[tuple[str, str]]:
    """The accuracy table split by check, for a page: (check as people read it, its Markdown table) in the
    ledger's order. Each table drops the check column, and the engine column when every row is all engines.

    As one seven-column table it scrolled sideways at 1024 px and the error columns were out of sight."""
    rows = ledger_rows(summaries)
    check, engine = _("check"), _("engine")
    sections: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        sections.setdefault(str(row[check]), []).append(row)
    tables = []
    for title, group in sections.items():
        dropped = {check} | ({engine} if all(row[engine] == _(ALL_ENGINES) for row in group) else set())
        tables.append((title, markdown_table([{k: v for k, v in row.items() if k not in dropped} for row in group])))
    return tables


def band_source(basis: SpeedBasis, band: Band) -> str:
    """Where a band's errors come from and how many there are: the default fit's leave-one-out errors, or the
    errors a calibration left on the team's own run (in-sample: the run it was fitted on)."""
    n = band.n_points
    if basis.kind == "calibration":
        return ngettext("errors on your own run, {n} measurement", "errors on your own run, {n} measurements",
                        n).format(n=number(n))
    return ngettext("leave-one-out, {n} measurement", "leave-one-out, {n} measurements", n).format(n=number(n))


def decode_band_text(basis: SpeedBasis, band: Band) -> str:
    """'Decode step band -18% to +12% (leave-one-out, 54 measurements)' in the reader's words ('-18\u00a0%' in
    Spanish: reports.numbers.signed_percent)."""
    return _("Decode step band {low} to {high} ({source})").format(
        low=signed_percent(band.low), high=signed_percent(band.high), source=band_source(basis, band))


def step_basis_lines(step_costs) -> list[str]:
    """One line per simulated engine: where its step times come from and how far the fit's errors spread."""
    return [
        _("{engine}: {basis} {band}; request handling ({ms}\u00a0ms) is added to each simulated TTFT.").format(
            engine=display_name(item.engine),
            basis=basis_line(item.basis),
            band=decode_band_text(item.basis, item.params.decode_band),
            ms=number(item.cost.request_overhead_s * 1000),
        )
        for item in step_costs
    ]


def ttft_models_line() -> str:
    """One line where a speed estimate's first-token time and the simulation's meet: where they agree and why they
    part (pages that show both, or one of them next to the other's page)."""
    return _("A lone request on an idle server gets the same time to first token from the speed estimate and from "
             "the simulation (both add up one step cost per prefill chunk); the simulation adds what the estimate "
             "leaves out: queueing, other requests' decodes sharing each step, and tensor-parallel all-reduce.")


def users_readout_line(engine_name: str, readout: UsersReadout) -> str:
    """One Markdown bullet for the 'how many users' readout: the users (or why not), then the speed basis the
    simulated step times used and its decode band, so the figure says how far to trust it."""
    if readout.users is not None:
        text = f"**{engine_name}**: " + _("about **{users} users** ({rate}\u00a0requests/s)").format(
            users=number(readout.users), rate=significant(readout.rate_per_s))
    else:
        text = _("**{engine}**: not estimated: {reason}").format(engine=engine_name, reason=readout.reason)
    if readout.basis is None or readout.decode_band is None:
        return text + ". " + _("Step times from the roofline's stated default efficiencies (this engine has no "
                               "speed model), with no error band.")
    return f"{text}. {basis_line(readout.basis)} {decode_band_text(readout.basis, readout.decode_band)}."


def users_missed_target_line(readouts: list[UsersReadout]) -> str | None:
    """One Markdown line when no engine gets a users figure because even a trickle missed the target: the simulated
    first token and inter-token latency at that trickle (range over the engines, against the target) and the
    first-token target that the best engine's trickle meets (rounded up to 0.1 s; seconds). None otherwise."""
    missed = [r for r in readouts if r.trickle_ttft_s is not None and r.trickle_itl_s is not None]
    if not missed or any(r.users is not None for r in readouts):
        return None
    slo = missed[0].slo
    ttfts = [r.trickle_ttft_s for r in missed if r.trickle_ttft_s is not None]
    itls = [r.trickle_itl_s for r in missed if r.trickle_itl_s is not None]
    text = _("No engine here meets the target even at a trickle of requests: the simulation's p{pct} first token of a "
             "{prompt}-token prompt takes {low}–{high} s (target {ttft} s) and its p{itl_pct} inter-token "
             "latency is {itl_low}–{itl_high} ms (target {itl} ms).").format(
        pct=compact(slo.ttft_percentile, 2), prompt=number(missed[0].prompt_tokens),
        low=number(min(ttfts), 2), high=number(max(ttfts), 2), ttft=compact(slo.ttft_s, 3),
        itl_pct=compact(slo.itl_percentile, 2), itl_low=number(min(itls) * 1000, 0),
        itl_high=number(max(itls) * 1000, 0), itl=compact(slo.itl_s * 1000, 3))
    within_itl = [r for r in missed if r.trickle_itl_s is not None and r.trickle_itl_s <= slo.itl_s]
    if within_itl:
        best = min(within_itl, key=lambda r: r.trickle_ttft_s or 0.0)
        needed = math.ceil((best.trickle_ttft_s or 0.0) * 10) / 10
        text += " " + _("A first-token target of {needed} s would give {engine} an answer (the capacity planner "
                        "takes your own target).").format(needed=number(needed, 1), engine=display_name(best.engine))
    return text


def speed_readout_line(engine_name: str, estimate: SpeedEstimate | str) -> str:
    """One Markdown bullet for the memory page: decode at batch 1 and at the plan's concurrency, TTFT, basis."""
    if isinstance(estimate, str):
        return _("**{engine}**: not estimated: {reason}").format(engine=engine_name, reason=estimate)
    text = _("**{engine}**: {one} for one sequence; {all} in all at {n} sequences").format(
        engine=engine_name, one=_band(estimate.decode_tokens_per_s_batch1, "tokens/s"),
        all=_band(estimate.decode_tokens_per_s_at_concurrency, "tokens/s", digits=0), n=estimate.concurrency)
    if estimate.ttft_s is not None:
        text += _("; first token of a {n}-token prompt in {value}").format(
            n=number(estimate.prompt_tokens), value=_band(estimate.ttft_s, "ms", 1000.0, 0))
    return f"{text}. {basis_line(estimate.basis)}"
