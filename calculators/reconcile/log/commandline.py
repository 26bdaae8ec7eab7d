"""Settings read from a llama-server / Ollama runner command line echoed into the log."""

from __future__ import annotations

import shlex

from calculators.reconcile.log.figures import SettingValue

# llama-server flag -> shared llama-cpp setting key (COMMON.md vocabulary).
_VALUE_FLAGS: dict[str, str] = {
    "-c": "ctx_size",
    "--ctx-size": "ctx_size",
    "-np": "parallel",
    "--parallel": "parallel",
    "-ctk": "cache_type_k",
    "--cache-type-k": "cache_type_k",
    "-ctv": "cache_type_v",
    "--cache-type-v": "cache_type_v",
    "-ngl": "n_gpu_layers",
    "--gpu-layers": "n_gpu_layers",
    "--n-gpu-layers": "n_gpu_layers",
    "-b": "batch_size",
    "--batch-size": "batch_size",
    "-ub": "ubatch_size",
    "--ubatch-size": "ubatch_size",
    "--cache-reuse": "cache_reuse",
    "--cache-ram": "cache_ram",
    "-ts": "tensor_split",
    "--tensor-split": "tensor_split",
    "--kv-cache-type": "cache_type_k",  # Ollama's old runner flag sets both K and V
}
_SWITCHES: dict[str, str] = {
    "-kvu": "kv_unified",
    "--kv-unified": "kv_unified",
    "--swa-full": "swa_full",
    "-cb": "cont_batching",
    "--cont-batching": "cont_batching",
    "--metrics": "metrics",
}
_FLASH = {"-fa", "--flash-attn"}
_FLASH_VALUES = {"on", "off", "auto", "true", "false", "1", "0", "enabled", "disabled"}


def _typed(value: str) -> SettingValue:
    try:
        return int(value)
    except ValueError:
        return value


def looks_like_command(text: str) -> bool:
    """True when a log line echoes a llama-server / llama-cli / Ollama runner command with flags."""
    lowered = text.lower()
    has_program = any(p in lowered for p in ("llama-server", "llama-cli", " runner ", "llama_server", "ollama runner"))
    return has_program and (" --" in text or " -c " in text)


def parse_command(command: str) -> dict[str, SettingValue]:
    """llama-cpp setting keys from a command line; unknown flags are ignored, bad quoting is tolerated."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    settings: dict[str, SettingValue] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        flag, _unused, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        nxt = inline or (tokens[i + 1] if i + 1 < len(tokens) else "")
        if flag in _VALUE_FLAGS and nxt:
            key = _VALUE_FLAGS[flag]
            settings[key] = _typed(nxt)
            if flag == "--kv-cache-type":
                settings["cache_type_v"] = _typed(nxt)
            i += 1 if inline else 2
            continue
        if flag in _SWITCHES:
            settings[_SWITCHES[flag]] = True
        elif flag in _FLASH:
            if nxt.lower() in _FLASH_VALUES:
                settings["flash_attn"] = normalise_flash(nxt)
                i += 1 if inline else 2
                continue
            settings["flash_attn"] = "on"
        i += 1
    return settings


def normalise_flash(value: str) -> str:
    """Flash-attention state as 'on' / 'off' / 'auto' whatever spelling the engine printed."""
    lowered = value.strip().strip("'\"").lower()
    if lowered in {"1", "true", "on", "enabled", "yes"}:
        return "on"
    if lowered in {"0", "false", "off", "disabled", "no"}:
        return "off"
    return lowered
