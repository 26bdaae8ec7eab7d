"""MLX LM prints little about memory: mlx_lm.generate's summary and mlx_lm.benchmark's trials.

Its "GB" is 10**9 bytes (ml-explore/mlx-lm:mlx_lm/generate.py divides mx.get_peak_memory() by 1e9,
read at commit d78bf58e, version 0.32.0); so is the server's "Prompt Cache: … GB".
"""

from __future__ import annotations

import re

from calculators.reconcile.log.clean import LogLine
from calculators.reconcile.log.collect import Collector
from calculators.units import GB

_PEAK = re.compile(r"^(?:\[batch_generate\] )?Peak memory: (\d+(?:\.\d+)?) GB")
_CACHE_MEMORY = re.compile(r"^Cache memory: (\d+(?:\.\d+)?) GB")
_PROMPT = re.compile(r"^Prompt: (\d+) tokens, (\d+(?:\.\d+)?) tokens-per-sec")
_GENERATION = re.compile(r"^Generation: (\d+) tokens, (\d+(?:\.\d+)?) tokens-per-sec")
_AVERAGES = re.compile(r"^Averages: .*peak_memory=(\d+(?:\.\d+)?)")
_PROMPT_CACHE = re.compile(r"Prompt Cache: (\d+) sequences, (\d+(?:\.\d+)?) GB")
_SERVER = re.compile(r"Starting httpd at (\S+) on port (\d+)")
_TIMING = re.compile(r"^Timing with prompt_tokens=(\d+) and generation_tokens=(\d+)")
_COMMAND = re.compile(r"\bmlx_lm[._](generate|benchmark|server|chat)\b(.*)$")
_FLAG = re.compile(r"(?:^|\s)(--model|-m|-p|--prompt-tokens|-g|--generation-tokens|-b|--batch-size|--max-kv-size|"
                   r"--kv-bits|--max-tokens)(?:\s+|=)(\S+)")
_FLAG_KEYS = {"--model": "model", "-m": "model", "-p": "prompt_tokens", "--prompt-tokens": "prompt_tokens",
              "-g": "generation_tokens", "--generation-tokens": "generation_tokens", "-b": "batch_size",
              "--batch-size": "batch_size", "--max-kv-size": "max_kv_size", "--kv-bits": "kv_bits",
              "--max-tokens": "max_tokens"}
_BASIS = "MLX LM divides by 10**9"

#: How MLX LM's own lines begin (mlx_lm.generate's summary, mlx_lm.benchmark's trials).
LINE_STARTS = (
    r"Peak memory: \d|Cache memory: \d|Prompt: \d+ tokens|Generation: \d+ tokens|Averages: |Trial \d+: |"
    r"\[batch_generate\] "
)
#: Lines only MLX LM prints.
MARKERS = re.compile(
    r"(?:tokens-per-sec|^Peak memory: [\d.]+ GB|peak_memory=|mlx_lm|mlx-lm|Starting httpd at|"
    r"Prompt Cache: \d+ sequences)"
)


def read_mlx_line(line: LogLine, out: Collector) -> bool:
    """Extract what one MLX LM line states."""
    text = line.text
    if match := _PEAK.match(text):
        out.add("peak_memory_bytes", match.group(1), line, printed_unit="GB", unit_size=GB, basis=_BASIS)
    elif match := _CACHE_MEMORY.match(text):
        out.add("cache_memory_bytes", match.group(1), line, printed_unit="GB", unit_size=GB, basis=_BASIS)
    elif match := _AVERAGES.match(text):
        out.add(
            "peak_memory_bytes",
            match.group(1),
            line,
            printed_unit="GB",
            unit_size=GB,
            basis=f"average over benchmark trials; {_BASIS}",
        )
    elif match := _PROMPT.match(text):
        out.count("prompt_tokens", match.group(1), line, "tokens")
    elif match := _GENERATION.match(text):
        out.count("generation_tokens", match.group(1), line, "tokens")
    elif match := _PROMPT_CACHE.search(text):
        out.count("prompt_cache_sequences", match.group(1), line, "sequences")
        out.add("prompt_cache_bytes", match.group(2), line, printed_unit="GB", unit_size=GB, basis=_BASIS)
    elif match := _TIMING.match(text):
        out.count("prompt_tokens", match.group(1), line, "tokens", basis="mlx_lm.benchmark prompt length")
        out.count("generation_tokens", match.group(2), line, "tokens", basis="mlx_lm.benchmark generation length")
    elif match := _COMMAND.search(text):
        out.settings.setdefault("program", f"mlx_lm.{match.group(1)}")
        for flag, value in _FLAG.findall(match.group(2)):
            key = _FLAG_KEYS[flag]
            if key in ("prompt_tokens", "generation_tokens") and value.isdigit():
                out.count(key, value, line, "tokens", basis=f"{flag} on the command line")
            elif key == "batch_size" and value.isdigit():
                out.count("batch_sequences", value, line, "sequences", basis=f"{flag} on the command line")
            else:
                out.settings[key] = int(value) if value.isdigit() else value
    elif match := _SERVER.search(text):
        out.settings["host"] = match.group(1)
        out.settings["port"] = int(match.group(2))
    else:
        return False
    return True


#: What a complete MLX LM log states.
EXPECTED: tuple[tuple[str, tuple[str, ...]], ...] = (("figure", ("peak_memory_bytes",)),)


def read_log(lines: list[LogLine], out: Collector, text: str = "") -> list[str]:
    """Feed every line to the MLX LM reader."""
    for line in lines:
        with out.reading(line):
            read_mlx_line(line, out)
    return []


#: Setting keys this engine's log states beyond its knob keys (the model and program its command line names).
LOG_ONLY_SETTING_KEYS: frozenset[str] = frozenset({"model", "program", "max_tokens", "weights_scheme"})
