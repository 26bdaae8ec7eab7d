"""parse_startup_log: from pasted text to a `ParsedLog`, never raising on what a user can paste."""

from __future__ import annotations

import re

from calculators.engines.llama_cpp.startup_log import LlamaCppReader, device_names
from calculators.engines.mlx_lm.startup_log import read_mlx_line
from calculators.engines.ollama.startup_log import read_ollama_line
from calculators.engines.sglang.startup_log import read_sglang_line
from calculators.engines.vllm.startup_log import read_vllm_line
from calculators.reconcile.log.clean import LogLine, split_lines
from calculators.reconcile.log.collect import Collector
from calculators.reconcile.log.detect import ENGINE_NAMES, detect
from calculators.reconcile.log.figures import Expected, ParsedLog

#: What a complete start-up log of each engine states; an item is found when any alternative is.
_LLAMA_EXPECTED: list[tuple[str, tuple[str, ...]]] = [
    ("version", ("version",)),
    ("geometry", ("n_layers",)),
    ("geometry", ("n_kv_heads", "n_kv_heads_per_layer")),
    ("geometry", ("head_dim_k",)),
    ("geometry", ("head_dim_v",)),
    ("geometry", ("context_train_tokens",)),
    ("setting", ("ctx_size",)),
    ("setting", ("parallel",)),
    ("setting", ("cache_type_k",)),
    ("setting", ("cache_type_v",)),
    ("setting", ("flash_attn",)),
    ("figure", ("kv_cache_bytes",)),
    ("figure", ("k_bytes",)),
    ("figure", ("v_bytes",)),
    ("figure", ("cells",)),
    ("figure", ("offloaded_layers",)),
    ("figure", ("model_buffer_bytes",)),
    ("figure", ("compute_buffer_bytes",)),
]
_EXPECTED: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "llama-cpp": _LLAMA_EXPECTED,
    "ollama": [
        ("version", ("version",)),
        ("geometry", ("n_layers",)),
        ("geometry", ("n_kv_heads", "n_kv_heads_per_layer")),
        ("geometry", ("head_dim_k",)),
        ("geometry", ("head_dim_v",)),
        ("setting", ("num_parallel",)),
        ("setting", ("context_length", "ctx_size")),
        ("setting", ("flash_attention", "flash_attn")),
        ("figure", ("offloaded_layers",)),
        ("figure", ("model_buffer_bytes",)),
        ("figure", ("kv_cache_bytes", "kv_buffer_bytes")),
        ("figure", ("compute_buffer_bytes",)),
    ],
    "vllm": [
        ("version", ("version",)),
        ("setting", ("max_model_len",)),
        ("setting", ("gpu_memory_utilization",)),
        ("setting", ("tensor_parallel_size",)),
        ("setting", ("kv_cache_dtype",)),
        ("setting", ("block_size",)),
        ("figure", ("weights_bytes",)),
        ("figure", ("available_kv_cache_bytes",)),
        ("figure", ("kv_tokens", "num_gpu_blocks")),
        ("figure", ("max_concurrency",)),
    ],
    "sglang": [
        ("setting", ("mem_fraction_static",)),
        ("setting", ("tp_size",)),
        ("setting", ("context_length",)),
        ("setting", ("page_size",)),
        ("figure", ("weights_bytes",)),
        ("figure", ("kv_tokens",)),
        ("figure", ("k_bytes", "kv_cache_bytes")),
        ("figure", ("max_total_num_tokens",)),
        ("figure", ("max_running_requests",)),
    ],
    "mlx-lm": [("figure", ("peak_memory_bytes",))],
}
_SGLANG_AUTO_KEYS = (
    "mem_fraction_static",
    "max_running_requests",
    "max_total_tokens",
    "chunked_prefill_size",
    "context_length",
)
_DUMP_START = re.compile(r"LLM engine \(v[^)]+\) with config:|server_args=ServerArgs\(")
_DUMP_END = re.compile(r"[)}]\s*$")


def parse_startup_log(text: str) -> ParsedLog:
    """Recognise the engine of a pasted start-up log and extract its geometry, settings and memory figures.

    Never raises on user text: an empty, unknown, cut or mixed log gives a `ParsedLog` whose `notes`
    say what went wrong and whose `missing` lists what a complete log of that engine would state.
    """
    if not isinstance(text, str):
        text = ""
    lines = split_lines(text)
    out = Collector()
    if not any(line.text for line in lines):
        out.note("empty", "The log is empty: paste the engine's console output from its start-up.")
        return _finish(None, None, lines, out)
    detection = detect(lines)
    if detection.engine is None:
        out.note("unknown_engine", _unknown_message(len(lines)))
        return _finish(None, None, lines, out)
    if detection.rivals:
        names = ", ".join(ENGINE_NAMES[name] for name in detection.rivals)
        out.note("several_engines", f"Lines of {names} were found too; only {ENGINE_NAMES[detection.engine]} was read.")
    hardware = _read(detection.engine, lines, out)
    if detection.engine == "sglang":
        _mark_sglang_auto(text, out)
    if not any(f.unit == "bytes" or f.unit == "tokens" for f in out.figures):
        out.note("no_figures", "No memory figures were found: the log may stop before the engine sized its caches.")
    return _finish(detection.engine, detection.runner, lines, out, hardware)


def _read(engine: str, lines: list[LogLine], out: Collector) -> list[str]:
    """Feed every line to the engine's reader(s); returns the accelerator names the log lists."""
    if engine in ("llama-cpp", "ollama"):
        target = out.settings if engine == "llama-cpp" else out.runner_settings
        reader = LlamaCppReader(out=out, settings=target)  # type: ignore[arg-type]
        for line in lines:
            if engine == "ollama" and read_ollama_line(line, out):
                continue
            reader.feed(line)
        reader.finish()
        return device_names(lines)
    for index, line in enumerate(lines):
        if engine == "vllm":
            read_vllm_line(line, out, _continuation(lines, index))
        elif engine == "sglang":
            read_sglang_line(line, out, _continuation(lines, index))
        elif engine == "mlx-lm":
            read_mlx_line(line, out)
    return []


def _continuation(lines: list[LogLine], index: int, limit: int = 4) -> str:
    """Text of lines that a paste wrapped off the end of a long config dump (joined without spaces)."""
    line = lines[index]
    if not _DUMP_START.search(line.text) or _DUMP_END.search(line.text):
        return ""
    parts: list[str] = []
    for follower in lines[index + 1 : index + 1 + limit]:
        if follower.device or follower.program or not follower.text or " " in follower.text[:1]:
            break
        if re.match(r"^(?:INFO|WARNING|ERROR|DEBUG)\b|^\[?\d{4}-\d{2}-\d{2}", follower.text):
            break
        parts.append(follower.text)
        if _DUMP_END.search(follower.text):
            break
    return "".join(parts)


def _mark_sglang_auto(text: str, out: Collector) -> None:
    """SGLang prints None for knobs it sizes itself; say 'auto' rather than pretend they are absent."""
    for key in _SGLANG_AUTO_KEYS:
        if key not in out.settings and re.search(rf"[ (,]{key}=None\b", text):
            out.settings[key] = "auto"


def _unknown_message(n_lines: int) -> str:
    return (
        f"No start-up line of llama.cpp, Ollama, vLLM, SGLang or MLX LM was recognised in {n_lines} line(s). "
        "Paste the engine's own console output from its start-up, e.g. llama.cpp's 'llama_kv_cache: size = …' "
        "lines, Ollama's 'msg=offload' line, vLLM's 'GPU KV cache size: … tokens' or SGLang's "
        "'KV Cache is allocated. #tokens: …'."
    )


def _missing(engine: str | None, out: Collector, geometry: dict[str, object]) -> list[Expected]:
    if engine is None:
        return []
    found_figures = {f.name for f in out.figures}
    settings = out.runner_settings | out.settings if engine == "ollama" else out.settings
    missing: list[Expected] = []
    for kind, alternatives in _EXPECTED[engine]:
        if kind == "version":
            present = out.version is not None
        elif kind == "geometry":
            present = any(geometry.get(name) is not None for name in alternatives)
        elif kind == "setting":
            present = any(name in settings for name in alternatives)
        else:
            present = any(name in found_figures for name in alternatives)
        if not present:
            missing.append(Expected(kind=kind, name=alternatives[0]))  # type: ignore[arg-type]
    return missing


def _finish(
    engine: str | None, runner: str | None, lines: list[LogLine], out: Collector, hardware: list[str] | None = None
) -> ParsedLog:
    geometry = out.build_geometry()
    return ParsedLog(
        engine=engine,
        runner=runner,
        version=out.version,
        geometry=geometry,
        settings=dict(out.settings),
        runner_settings=dict(out.runner_settings),
        figures=list(out.figures),
        devices=list(out.devices),
        hardware=list(hardware or []),
        refusal=out.refusal,
        missing=_missing(engine, out, geometry.model_dump()),
        notes=list(out.notes),
        line_count=len(lines),
    )
