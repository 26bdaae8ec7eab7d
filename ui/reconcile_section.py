"""The "check against your engine" section: paste a start-up log, see the engine's figures next to servewise's.

Used by pages/reconcile.py and embedded in the memory page. Nothing a user pastes is rendered as HTML or
Markdown: their text reaches the screen only through dataframes and `st.text`, or escaped.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from calculators.engines import ENGINES, display_name
from calculators.errors import ServewiseInputError
from calculators.i18n import _, ngettext
from calculators.reconcile.check import (
    parse_overrides,
    reconcile_log,
    resolve_gpu,
    resolve_model,
)
from calculators.reconcile.log.figures import ParsedLog
from calculators.reconcile.log.parse import parse_startup_log
from calculators.reconcile.result import Reconciliation, RowStatus
from knowledge import load_knowledge
from knowledge.log_help import load_log_captures
from reports.log_lines import LINE_COLUMNS, column_heading, line_rows, line_summary
from reports.names import namer
from reports.reconcile_text import (
    difference_text,
    figure_label,
    missing_kind_text,
    predicted_text,
    printed_text,
    status_text,
)
from ui import deferred, state_cache, uploads, url_widgets
from ui.command_text import show_command

NONE = "none"
MAX_LOG_BYTES = 5 * 1024 * 1024
# Cell colours of the status column (light backgrounds that keep dark text readable), by status.
STATUS_COLOUR = {RowStatus.EXACT: "#d3f4dc", RowStatus.EXPLAINED: "#fdf0c4", RowStatus.UNEXPLAINED: "#fbd5d5"}
ROW_HEIGHT_PX = 35
#: Width of the capture commands' engine picker: its longest name ("llama.cpp (llama-server)") and the arrow fit.
CAPTURE_ENGINE_WIDTH_PX = 320
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def plain(text: str) -> str:
    """`text` with every Markdown/HTML special character escaped, for st.error/st.info/st.caption."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text)


def _log_text(key_prefix: str) -> str:
    """The pasted log, or the uploaded file's text when a file was given (the file wins)."""
    pasted = st.text_area(
        _("Start-up log"),
        key=f"{key_prefix}_text",
        height=220,
        placeholder=_("Paste the engine's console output from its start-up: llama-server / Ollama, vLLM, SGLang "
        "or MLX LM. Include the lines that print memory (e.g. 'llama_kv_cache: size = …', 'Available KV cache "
        "memory', 'KV Cache is allocated')."),
    )
    upload = uploads.file_uploader(_("…or upload a log file"), key=f"{key_prefix}_file")
    if upload is None:
        return pasted or ""
    data = upload.getvalue()
    if len(data) > MAX_LOG_BYTES:
        st.warning(
            _("The file is larger than {mib}\u00a0MiB; only its first part is read.").format(mib=MAX_LOG_BYTES // 2**20)
        )
        data = data[:MAX_LOG_BYTES]
    return data.decode("utf-8", errors="replace")


def _model_inputs(kb, parsed: ParsedLog, key_prefix: str) -> tuple[str, str, str, str]:
    """(catalog model id or 'none', pasted config.json, GPU id or 'none', extra settings text)."""
    spec = ENGINES.get(parsed.engine or "")
    needs_model = not (spec and (spec.geometry_in_log or spec.not_compared_reason))
    with st.expander(_("Model, GPU and settings the log does not show"), expanded=needs_model):
        if needs_model:
            st.info(_("This engine's log does not state the model geometry: pick a catalog model or paste its "
                      "config.json."))
        col_model, col_gpu = st.columns(2)
        with col_model:
            model_id = url_widgets.selectbox(_("Catalog model"), [NONE, *kb.models.ids], key=f"{key_prefix}_model",
                                             labels=namer(kb, {NONE: _("none")}),
                                             help=_("'none' uses the geometry the log prints (llama.cpp, Ollama)"))
        with col_gpu:
            gpu_id = url_widgets.selectbox(_("GPU"), [NONE, *(g.id for g in kb.gpus.gpus)], key=f"{key_prefix}_gpu",
                                           labels=namer(kb, {NONE: _("none")}),
                                           help=_("optional: only sets engine defaults that depend on GPU memory"))
        config = st.text_area(_("…or paste the model's config.json"), key=f"{key_prefix}_config", height=100)
        extra = url_widgets.text(_("Settings the log does not print (key=value, comma separated)"),
                                 key=f"{key_prefix}_settings", max_chars=300,
                                 placeholder="tensor_parallel_size=4, kv_cache_dtype=fp8")
    return model_id, config, gpu_id, extra


def _rows_frame(result: Reconciliation) -> pd.DataFrame:
    return pd.DataFrame(
        {
            _("status"): [status_text(r.status) for r in result.rows],
            _("figure"): [figure_label(r) for r in result.rows],
            _("line"): [r.line for r in result.rows],
            _("engine printed"): [printed_text(r) for r in result.rows],
            _("servewise predicts"): [predicted_text(r) for r in result.rows],
            _("difference"): [difference_text(r) for r in result.rows],
        }
    )


def _show_found(parsed: ParsedLog, result: Reconciliation | None) -> None:
    with st.expander(_("What the log showed and what it did not")):
        found = {
            _("engine"): display_name(parsed.engine) if parsed.engine else _("not recognised"),
            _("version"): parsed.version or _("not printed"),
            **{_("geometry: {name}").format(name=k): v for k, v in parsed.geometry.known().items()},
            **{_("setting: {name}").format(name=k): v for k, v in parsed.settings.items()},
            **{_("runner setting: {name}").format(name=k): v for k, v in parsed.runner_settings.items()},
        }
        st.dataframe(pd.DataFrame({_("found"): list(found), _("value"): [str(v) for v in found.values()]}),
                     hide_index=True, width="stretch")
        if parsed.missing:
            st.dataframe(pd.DataFrame({_("not found"): [m.name for m in parsed.missing],
                                       _("kind"): [missing_kind_text(m) for m in parsed.missing]}), hide_index=True)
        if result is not None and result.not_compared:
            names = sorted({f.name for f in result.not_compared})
            st.text(_("Printed but not compared (servewise does not predict these): ") + ", ".join(names))


def _capture_help(key_prefix: str, heading: bool = True) -> None:
    """The command that captures the start-up log, for the engine and platform the reader picks."""
    captures = load_log_captures()
    engines = list(dict.fromkeys(c.engine for c in captures))
    if heading:
        st.markdown(_("**How to get the log**"))
    engine = st.selectbox(_("Engine"), engines, key=f"{key_prefix}_capture_engine", width=CAPTURE_ENGINE_WIDTH_PX,
                          format_func=namer(load_knowledge()))  # not bound to the URL: the name is only shown

    def show_captures() -> None:
        for capture in (c for c in captures if c.engine == engine):
            st.caption(_(capture.label))
            show_command(capture.command)
            if capture.note:
                st.caption(_(capture.note))

    # The commands depend on the engine picked and the reader's language only: drawn once, replayed on later runs.
    state_cache.drawn_per_input_state(f"log capture commands {engine}", show_captures)


def _show_lines(result: Reconciliation) -> None:
    """Which pasted lines were read, which were skipped and why (nothing pasted is dropped silently)."""
    if not result.lines:
        return
    with st.expander(_("Lines read and skipped: {summary}").format(summary=line_summary(result.lines))):
        only_skipped = st.toggle(_("Only the skipped lines"), value=False, key="check_log_lines_skipped")
        rows = line_rows(result.lines, only_skipped=only_skipped)
        frame = pd.DataFrame(rows, columns=list(LINE_COLUMNS)).rename(columns=column_heading)
        st.dataframe(frame, hide_index=True, width="stretch")


def render_reconcile_section(kb, key_prefix: str = "mem_log", heading: bool = True) -> Reconciliation | None:
    """Draw the section; returns the reconciliation shown (None when there was nothing to compare)."""
    if heading:  # a page of its own (the check page) says this in its introduction: it is not repeated there
        st.subheader(_("Check against your engine"))
        st.caption(_("Paste a start-up log: servewise runs its memory model on the same model and settings and puts "
                     "its numbers next to the ones your engine printed."))
    text = _log_text(key_prefix)
    # The paste box and its verdict come first, full width; how to capture a log follows below them. A visit's first
    # run opens the page empty (a log is never kept in a link): its result is the paste box, and what follows it
    # (the prompt to paste, the capture commands: a selectbox and code blocks, each with its own browser script)
    # arrives 0.5 s later (ui/deferred.py), below it, so nothing moves it down. Embedded in the memory page, whose
    # first run has already stopped above, this returns at once.
    deferred.rest_follows()
    result = _verdicts(kb, text, key_prefix)
    if text.strip():
        # Folded once a log is pasted: the reader has one, and the verdicts above are what they came for.
        with st.expander(_("How to get the log")):
            _capture_help(key_prefix, heading=False)
    else:
        _capture_help(key_prefix)
    return result


def _verdicts(kb, text: str, key_prefix: str) -> Reconciliation | None:
    """Draw what the pasted `text` gives (a prompt, a message, or the figures compared); the reconciliation shown."""
    if not text.strip():
        st.info(_("Paste or upload a start-up log to compare."))
        return None
    parsed = parse_startup_log(text)
    if not parsed.recognised:
        message = parsed.notes[0].message if parsed.notes else _("No engine was recognised in this text.")
        st.warning(plain(message))
        return None
    model_id, config, gpu_id, extra = _model_inputs(kb, parsed, key_prefix)
    try:
        arch = resolve_model(kb, hf_config_text=config, model_id=None if model_id == NONE else model_id,
                             log_model=parsed.settings.get("model"))
        machine = resolve_gpu(kb, None if gpu_id == NONE else gpu_id)
        result = reconcile_log(parsed, arch=arch, machine=machine, overrides=parse_overrides(extra))
    except ServewiseInputError as exc:
        st.error(plain(str(exc)))
        _show_found(parsed, None)
        return None
    _draw_result(result)
    _show_lines(result)
    _show_found(parsed, result)
    return result


def _draw_result(result: Reconciliation) -> None:
    counts = {status: len(result.rows_with(status)) for status in RowStatus}
    st.markdown(f"**{plain(result.engine_name or '')}**" + (f" {plain(result.version)}" if result.version else ""))
    if not result.rows:
        st.warning(_("No printed figure could be compared: the log stops before the engine sized its memory, or "
                     "it lacks the inputs listed below."))
    else:
        a, b, c = st.columns(3)
        a.metric(_("exact"), counts[RowStatus.EXACT])
        b.metric(_("explained"), counts[RowStatus.EXPLAINED])
        c.metric(_("unexplained"), counts[RowStatus.UNEXPLAINED])
        frame = _rows_frame(result)
        colours = [f"background-color: {STATUS_COLOUR[r.status]}" for r in result.rows]
        styled = frame.style.apply(lambda _column: colours, subset=[_("status")])
        st.dataframe(styled, hide_index=True, width="stretch", height=ROW_HEIGHT_PX * (len(frame) + 1) + 3)
        # Why each figure got its status is written out below the grid, where it wraps: as the grid's last column
        # it was cut off after a few words (a grid cell does not wrap), and every exact row repeated the same reason.
        if counts[RowStatus.EXACT]:
            st.text(ngettext("{count} exact figure: servewise's value rounds to what the engine printed.",
                             "{count} exact figures: servewise's value rounds to what the engine printed.",
                             counts[RowStatus.EXACT]).format(count=counts[RowStatus.EXACT]))
        for row in result.rows:
            if row.status is not RowStatus.EXACT:
                st.text(_("Line {line}, {figure} ({status}): {why}").format(
                    line=row.line, figure=figure_label(row), status=status_text(row.status), why=row.explanation))
    for line in result.assumptions:
        st.text(_("Assumed: {text}").format(text=line))
    for note in result.log_notes:
        st.text(_("Log: {text}").format(text=note.message))
    for line in result.plan_notes:
        st.text(_("Plan: {text}").format(text=line))
    if result.refusal:
        st.text(_("servewise's plan says the engine would refuse these settings: {refusal}").format(
            refusal=result.refusal))
