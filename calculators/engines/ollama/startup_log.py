"""Ollama's own start-up lines (slog), on top of the llama.cpp lines its runner relays.

Ollama prints sizes with format.HumanBytes2 (ollama/ollama:format/bytes.go, read at v0.33.0-rc2):
"%.1f GiB" / "%.1f MiB" with 1024-based units, "N B" below 1 KiB. Its `msg=offload` line is Ollama's
own *prediction* (memory.required.*, memory.weights.*, memory.graph.*; printed by llm/memory.go until
commit f560bd07 of 2025-11-11, whose comments say layers.model counts the output layer), so those figures carry an
`estimate_` prefix: they are what Ollama expected, not what was allocated. The allocation is in the
relayed llama.cpp lines or, for Ollama's own engine, in `msg="model weights"` / `"kv cache"` /
`"compute graph"` lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from calculators.engines.llama_cpp.startup_log import read_log as read_llamacpp_log
from calculators.i18n import _
from calculators.reconcile.log import slog
from calculators.reconcile.log.clean import LogLine
from calculators.reconcile.log.collect import Collector, to_int
from calculators.reconcile.log.commandline import looks_like_command, normalise_flash, parse_command

_VERSION = re.compile(
    r"\(version ([0-9][\w.+-]*)\)|/assets/(\d+\.\d+\.\d+[\w.-]*)/|"
    r"[/\\]ollama[/\\]v?(\d+\.\d+\.\d+[\w.-]*)[/\\]bin[/\\]|"
    r"^ollama version is (\d+\.\d+\.\d+[\w.-]*)"
)
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")

# memory.* key of msg=offload -> figure name (all are Ollama's own estimates)
_ESTIMATES = {
    "memory.required.full": "estimate_required_full_bytes",
    "memory.required.partial": "estimate_required_partial_bytes",
    "memory.required.kv": "estimate_kv_bytes",
    "memory.weights.total": "estimate_weights_bytes",
    "memory.weights.repeating": "estimate_weights_repeating_bytes",
    "memory.weights.nonrepeating": "estimate_weights_nonrepeating_bytes",
    "memory.graph.full": "estimate_graph_full_bytes",
    "memory.graph.partial": "estimate_graph_partial_bytes",
    "projector.weights": "estimate_projector_weights_bytes",
    "projector.graph": "estimate_projector_graph_bytes",
    "memory.gpu_overhead": "gpu_overhead_bytes",
}
_PER_DEVICE = {
    "memory.available": "device_available_bytes",
    "memory.required.allocations": "estimate_allocation_bytes",
}
_ALLOCATIONS = {
    "model weights": "model_buffer_bytes",
    "kv cache": "kv_buffer_bytes",
    "compute graph": "compute_buffer_bytes",
}

_ENV_MAP = re.compile(r'env="?map\[(.*)\]"?$')
_ENV_ITEM = re.compile(r"(OLLAMA_\w+):(\[[^\]]*\]|\S*)")
# OLLAMA_* variable -> shared ollama setting key (COMMON.md vocabulary) and how to read its value
_ENV_KEYS: dict[str, tuple[str, type]] = {
    "OLLAMA_NUM_PARALLEL": ("num_parallel", int),
    "OLLAMA_CONTEXT_LENGTH": ("context_length", int),
    "OLLAMA_KV_CACHE_TYPE": ("kv_cache_type", str),
    "OLLAMA_FLASH_ATTENTION": ("flash_attention", bool),
    "OLLAMA_MAX_LOADED_MODELS": ("max_loaded_models", int),
    "OLLAMA_MAX_QUEUE": ("max_queue", int),
    "OLLAMA_KEEP_ALIVE": ("keep_alive", str),
    "OLLAMA_HOST": ("host", str),
    "OLLAMA_GPU_OVERHEAD": ("gpu_overhead", int),
}

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?=T)")
#: How Ollama's own lines begin: Go slog text (the time may be cut off by the paste), its server banner.
LINE_STARTS = (
    r"time=\S+ level=\w+ |level=(?:INFO|WARN|WARNING|DEBUG|ERROR|TRACE) source=\S+ msg=|Listening on |"
    r"ollama version is "
)
#: Lines only Ollama prints.
MARKERS = re.compile(
    r"(?:^(?:time=\S+ )?level=\w+ source=[\w./-]+\.go:\d+ msg=|^\[GIN\] |ollama runner|starting llama server|"
    r"starting llama-server|"
    r"Listening on .*\(version |msg=offload|OLLAMA_|server config env=)"
)


def _add_size(out: Collector, name: str, value: str, line: LogLine, device: str | None = None, basis: str = "") -> None:
    parsed = slog.size(value)
    if parsed:
        printed, unit, unit_size = parsed
        out.add(name, printed, line, printed_unit=unit, unit_size=unit_size, device=device, basis=basis)


def read_ollama_line(line: LogLine, out: Collector) -> bool:
    """Extract what one of Ollama's own lines states; False when the line is not one of them."""
    text = line.text
    if match := _VERSION.search(text):
        out.version = next(group for group in match.groups() if group)
    if "server config" in text and (env := _ENV_MAP.search(text)):
        _server_config(env.group(1), out)
        return True
    if not slog.is_slog(text):
        return bool(match)
    kv = slog.pairs(text)
    msg = kv.get("msg", "")
    if out.logged_at is None and (stamp := _DATE.match(kv.get("time", ""))):
        out.logged_at = stamp.group(0)
    if msg == "offload" or msg.startswith("offload to "):  # "offload to cuda" before v0.5.x
        if "library" not in kv and msg != "offload":
            kv["library"] = msg.removeprefix("offload to ")
        _offload(kv, line, out)
    elif msg in ("starting llama server", "starting llama-server") and "cmd" in kv:
        runner = parse_command(kv["cmd"])
        for key, value in runner.items():
            out.runner_settings.setdefault(key, value)
        _ollama_settings_from_runner(runner, out)
        _context_from_llama_server(runner, line, out)  # the old runner's --ctx-size is num_ctx x parallel too
    elif msg in _ALLOCATIONS and "size" in kv:
        device = kv.get("device") or kv.get("buffer") or kv.get("backend")
        _add_size(out, _ALLOCATIONS[msg], kv["size"], line, device=device, basis="allocated by Ollama's engine")
    elif msg == "total memory" and "size" in kv:
        _add_size(out, "total_allocated_bytes", kv["size"], line, basis="sum Ollama's engine reports")
    elif msg == "system memory":
        _add_size(out, "host_total_bytes", kv.get("total", ""), line)
        _add_size(out, "host_free_bytes", kv.get("free", ""), line)
    elif msg == "load" and "request" in kv:
        _load_request(kv["request"], out)
    elif msg == "gpu memory":
        device = kv.get("id")
        for key, name in (("available", "device_available_bytes"), ("free", "device_free_bytes")):
            if key in kv:
                _add_size(out, name, kv[key], line, device=device, basis=f"'{key}' Ollama saw on this GPU")
    elif msg == "loading model" and (n := to_int(kv.get("model layers", ""))) is not None:
        out.count("total_layers", str(n), line, "layers", basis='"model layers" (Ollama\'s count, output included)')
    elif msg == "enabling flash attention":
        out.settings["flash_attention"] = True
    elif msg == "kv cache type not supported by model":
        out.note("kv_cache_type_ignored", _("Ollama ignored the requested KV cache type for this model"), line.number)
    elif match := _OFFLOADED.search(msg):
        out.count("offloaded_layers", match.group(1), line, "layers")
        out.count("total_layers", match.group(2), line, "layers")
    elif msg == "" and "architecture" in kv:
        out.geo("architecture", kv["architecture"], overwrite=False)
        if kv.get("file_type"):
            out.geo("file_type", kv["file_type"], overwrite=False)
    elif looks_like_command(text):
        for key, value in parse_command(text).items():
            out.runner_settings.setdefault(key, value)
    return True


_LOAD_FIELD = re.compile(r"(Parallel|BatchSize|FlashAttention|KvSize|KvCacheType|GPULayers):(\S*)")


def _load_request(request: str, out: Collector) -> None:
    """Ollama's runner load request (`msg=load request="{… Parallel:8 … KvSize:262144 KvCacheType:q8_0 …}"`).

    KvSize is num_ctx x num_parallel (ollama/ollama:llm/server.go, `KvSize: opts.NumCtx * numParallel`, read
    before commit 9db4bdba), so the per-request context is KvSize / Parallel.
    """
    fields = dict(_LOAD_FIELD.findall(request))
    parallel = to_int(fields.get("Parallel", ""))
    kv_size = to_int(fields.get("KvSize", ""))
    if parallel:
        out.settings["num_parallel"] = parallel
        out.runner_settings["parallel"] = parallel
    if kv_size:
        out.runner_settings["ctx_size"] = kv_size
        if parallel and kv_size % parallel == 0:
            out.settings["context_length"] = kv_size // parallel
    if fields.get("KvCacheType"):
        out.settings["kv_cache_type"] = fields["KvCacheType"]
    if "FlashAttention" in fields:
        out.settings["flash_attention"] = normalise_flash(fields["FlashAttention"]) == "on"
    if (layers := to_int(fields.get("GPULayers", "").split("[", 1)[0])) is not None:
        out.settings["num_gpu"] = layers
    if (batch := to_int(fields.get("BatchSize", ""))) is not None:
        out.runner_settings["batch_size"] = batch


def _server_config(env: str, out: Collector) -> None:
    """Ollama's OLLAMA_* settings as its server printed them; empty values mean "not set"."""
    for variable, raw in _ENV_ITEM.findall(env):
        if variable not in _ENV_KEYS or raw == "":
            continue
        key, kind = _ENV_KEYS[variable]
        if kind is bool:
            out.settings[key] = raw.lower() in ("true", "1")
        elif kind is int:
            if (number := to_int(raw)) is not None:
                out.settings[key] = number
        else:
            out.settings[key] = raw


def _offload(kv: dict[str, str], line: LogLine, out: Collector) -> None:
    library = kv.get("library")
    if library:
        out.settings.setdefault("library", library)
    if (n := to_int(kv.get("layers.model", ""))) is not None:
        out.count("total_layers", str(n), line, "layers", basis="layers.model (Ollama's count, output layer included)")
    if (n := to_int(kv.get("layers.offload", ""))) is not None:
        out.count("estimate_offload_layers", str(n), line, "layers", basis="layers Ollama planned to put on GPUs")
    split = kv.get("layers.split", "").strip("[]")
    if split:
        for index, part in enumerate(split.split(",")):
            if (n := to_int(part)) is not None:
                out.count("estimate_split_layers", str(n), line, "layers", device=f"{library or 'gpu'}{index}",
                          basis="layers.split: layers Ollama planned for this GPU")
    requested = to_int(kv.get("layers.requested", ""))
    if requested is not None and requested >= 0:
        out.settings["num_gpu"] = requested
    for key, name in _ESTIMATES.items():
        if key in kv:
            _add_size(out, name, kv[key], line, basis="Ollama's own prediction (msg=offload)")
    for key, name in _PER_DEVICE.items():
        for index, (printed, unit, unit_size) in enumerate(slog.size_list(kv.get(key, ""))):
            out.add(
                name,
                printed,
                line,
                printed_unit=unit,
                unit_size=unit_size,
                device=f"{library or 'gpu'}{index}",
                basis="Ollama's own prediction (msg=offload)" if name.startswith("estimate_") else "",
            )


def _context_from_llama_server(runner: Mapping[str, object], line: LogLine, out: Collector) -> None:
    """Ollama (v0.30+) starts llama-server with `-c num_ctx*num_parallel -np num_parallel`
    (ollama/ollama:llm/llama_server.go, read at v0.33.0-rc2), and its older runner with `--ctx-size
    num_ctx*parallel --parallel N` (server/sched.go before v0.11.5), so the per-request context is the
    command's context divided by its parallel count."""
    ctx, parallel = runner.get("ctx_size"), runner.get("parallel")
    if isinstance(ctx, int) and isinstance(parallel, int) and parallel > 0 and ctx % parallel == 0:
        out.settings["context_length"] = ctx // parallel
        out.note("context_length_derived", _("context_length is the runner's context divided by its parallel count"),
                 line.number)


def _ollama_settings_from_runner(runner: Mapping[str, object], out: Collector) -> None:
    """Ollama's own knobs as far as the runner command shows them (llama-cpp keys stay in runner_settings)."""
    if isinstance(runner.get("parallel"), int):
        out.settings["num_parallel"] = runner["parallel"]  # type: ignore[assignment]
    if isinstance(runner.get("n_gpu_layers"), int):
        out.settings["num_gpu"] = runner["n_gpu_layers"]  # type: ignore[assignment]
    if "flash_attn" in runner:
        out.settings["flash_attention"] = normalise_flash(str(runner["flash_attn"])) == "on"
    if isinstance(runner.get("cache_type_k"), str):
        out.settings["kv_cache_type"] = runner["cache_type_k"]  # type: ignore[assignment]


#: What a complete Ollama start-up log states (its own lines and its runner's); any alternative counts.
EXPECTED: tuple[tuple[str, tuple[str, ...]], ...] = (
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
)


def read_log(lines: list[LogLine], out: Collector, text: str = "") -> list[str]:
    """Ollama's own lines, then the llama.cpp lines its runner relays (into the runner's settings)."""
    return read_llamacpp_log(lines, out, text, relay=read_ollama_line)


#: Setting keys this engine's log states beyond its knob keys (the GPU library Ollama's scheduler reports).
LOG_ONLY_SETTING_KEYS: frozenset[str] = frozenset({"library"})
