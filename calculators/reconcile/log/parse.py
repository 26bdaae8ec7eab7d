"""parse_startup_log: from pasted text to a `ParsedLog`, never raising on what a user can paste."""

from __future__ import annotations

from calculators.engines import display_name
from calculators.i18n import _, ngettext
from calculators.reconcile.log.clean import LogLine, split_lines
from calculators.reconcile.log.collect import Collector
from calculators.reconcile.log.detect import detect, line_starts, marker_patterns, reader_of
from calculators.reconcile.log.figures import Expected, ParsedLog
from calculators.reconcile.log.lines import line_reports
from calculators.units import number


def parse_startup_log(text: str) -> ParsedLog:
    """Recognise the engine of a pasted start-up log and extract its geometry, settings and memory figures.

    Never raises on user text: an empty, unknown, cut or mixed log gives a `ParsedLog` whose `notes`
    say what went wrong and whose `missing` lists what a complete log of that engine would state.
    """
    if not isinstance(text, str):
        text = ""
    lines = split_lines(text, line_starts())
    out = Collector()
    if not any(line.text for line in lines):
        out.note("empty", _("The log is empty: paste the engine's console output from its start-up."))
        return _finish(None, None, lines, out)
    detection = detect(lines)
    if detection.engine is None:
        out.note("unknown_engine", _unknown_message(len(lines)))
        return _finish(None, None, lines, out)
    if detection.rivals:
        names = ", ".join(display_name(name) for name in detection.rivals)
        out.note("several_engines", _("Lines of {names} were found too; only {display_name} was read.").format(
                                      names=names, display_name=display_name(detection.engine)))
    hardware = reader_of(detection.engine).read_log(lines, out, text)
    if not any(f.unit == "bytes" or f.unit == "tokens" for f in out.figures):
        out.note("no_figures", _("No memory figures were found: the log may stop before the engine sized its caches."))
    return _finish(detection.engine, detection.runner, lines, out, hardware)


def _unknown_message(n_lines: int) -> str:
    return ngettext(
        "No start-up line of llama.cpp, Ollama, vLLM, SGLang or MLX LM was recognised in {n_lines} line. "
        "Paste the engine's own console output from its start-up, e.g. llama.cpp's 'llama_kv_cache: size = …' "
        "lines, Ollama's 'msg=offload' line, vLLM's 'GPU KV cache size: … tokens' or SGLang's "
        "'KV Cache is allocated. #tokens: …'.",
        "No start-up line of llama.cpp, Ollama, vLLM, SGLang or MLX LM was recognised in {n_lines} lines. "
        "Paste the engine's own console output from its start-up, e.g. llama.cpp's 'llama_kv_cache: size = …' "
        "lines, Ollama's 'msg=offload' line, vLLM's 'GPU KV cache size: … tokens' or SGLang's "
        "'KV Cache is allocated. #tokens: …'.", n_lines).format(n_lines=number(n_lines))


def _missing(engine: str | None, out: Collector, geometry: dict[str, object]) -> list[Expected]:
    if engine is None:
        return []
    found_figures = {f.name for f in out.figures}
    reader = reader_of(engine)
    settings = out.runner_settings | out.settings if reader.relays else out.settings
    missing: list[Expected] = []
    for kind, alternatives in reader.expected:
        if kind == "version":
            present = out.version is not None
        elif kind == "geometry":
            present = any(geometry.get(name) is not None for name in alternatives)
        elif kind == "setting":
            present = any(name in settings for name in alternatives)
        else:
            present = any(name in found_figures for name in alternatives)
        if not present:
            missing.append(Expected(kind=kind, name=alternatives[0]))
    return missing


def _finish(
    engine: str | None, runner: str | None, lines: list[LogLine], out: Collector, hardware: list[str] | None = None
) -> ParsedLog:
    geometry = out.build_geometry()
    own, others = marker_patterns(engine, runner)
    return ParsedLog(
        engine=engine,
        runner=runner,
        version=out.version,
        logged_at=out.logged_at,
        geometry=geometry,
        settings=dict(out.settings),
        runner_settings=dict(out.runner_settings),
        figures=list(out.figures),
        devices=list(out.devices),
        hardware=list(hardware or []),
        refusal=out.refusal,
        missing=_missing(engine, out, geometry.model_dump()),
        notes=list(out.notes),
        line_count=max((line.number for line in lines), default=0),
        lines=line_reports(lines, out, own, others),
    )
