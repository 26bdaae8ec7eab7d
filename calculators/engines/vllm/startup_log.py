"""vLLM start-up lines, across the V0 and V1 engines.

Units as vLLM computes them (read in vLLM's source through the code index): "Loading model weights
took %.4f GB" divides by float(2**30) although it prints "GB"; the later "Model loading took … GiB"
and every "GiB" figure are 2**30 too. Token counts are printed with thousands separators since the
V1 engine ("GPU KV cache size: 2,042,016 tokens").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from calculators.i18n import _
from calculators.reconcile.log import pydump
from calculators.reconcile.log.clean import LogLine, continuation
from calculators.reconcile.log.collect import Collector
from calculators.units import GIB

_N = r"(\d[\d,]*(?:\.\d+)?)"
_GIB_BASIS = "vLLM divides by 2**30 although it prints 'GB'"

_VERSION = re.compile(
    r"Initializing an? (?:V\d )?LLM engine \(v([^)]+)\) with config|vLLM API server version ([\w.+-]+)"
)
_CONFIG = re.compile(r"Initializing an? (?:V\d )?LLM engine \(v[^)]+\) with config:")
_NON_DEFAULT = re.compile(r"non-default args: (\{.*)$")
_WEIGHTS = re.compile(r"(?:Loading model weights|Model loading) took " + _N + r"\s*(GiB|GB)")
_AVAILABLE_KV = re.compile(r"Available KV cache memory: " + _N + r"\s*(GiB|GB)")
_KV_TOKENS = re.compile(r"GPU KV cache size: " + _N + r" tokens")
_BLOCKS = re.compile(r"# (GPU|CPU) blocks: (\d+)")
_GPU_BLOCKS_BARE = re.compile(r"^GPU blocks: (\d+), # CPU blocks: (\d+)")
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _N + r" tokens per request: " + _N + r"\s*x")
_MAX_LEN = re.compile(r"Using max model len (\d+)")
_BATCHED = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")
_PROFILE_ONE_LINE = re.compile(r"Memory profiling results: (.*)$")
_PROFILE_PAIR = re.compile(r"(\w+)=" + _N + r"(GiB|GB)?")
_CAN_USE = re.compile(
    r"total_gpu_memory \(" + _N + r"(GiB)\) x gpu_memory_utilization \(" + _N + r"\) = " + _N + r"(GiB)"
)
_SUMMARY = re.compile(
    r"model weights take " + _N + r"(GiB); non_torch_memory takes " + _N + r"(GiB); PyTorch activation peak memory "
    r"takes " + _N + r"(GiB); the rest of the memory reserved for KV Cache is " + _N + r"(GiB)"
)
_TABLE = re.compile(
    r"^(total_gpu_memory|gpu_memory_utilization|the current vLLM instance can use|model weights take|non_torch_memory|"
    r"PyTorch activation peak memory|available_kv_cache_memory)\s+" + _N + r"\s*(GiB)?\s*$"
)
_TOO_LONG = re.compile(
    r"The model's max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache "
    r"\((\d+)\)"
)
_NOT_ENOUGH = re.compile(
    r"max seq len \((\d+)\), \(" + _N + r" (GiB) KV cache is needed, which is larger than the available KV cache "
    r"memory \(" + _N + r" (GiB)\)"
)

_KEY_WORDS = re.compile(
    r"GPU KV cache size|Available KV cache memory|Maximum concurrency for|# GPU blocks|took [\d.]+ G"
)

_ESTIMATED_LEN = re.compile(r"estimated maximum model length is (\d+)")
# vllm/platforms/interface.py _align_hybrid_block_size; vllm/model_executor/models/config.py (v0.33.0)
_HYBRID_BLOCK = re.compile(r"Setting attention block size to (\d+) tokens to ensure that attention page size")
_MAMBA_PADDING = re.compile(r"Padding mamba page size by (\d+(?:\.\d+)?)% to ensure")
_MAMBA_SSM_DTYPE = re.compile(r"Updating mamba_ssm_cache_dtype to '(\w+)'")
_SPECULATIVE = re.compile(r"speculative_config=SpeculativeConfig\(method='([\w-]+)'.*?num_spec_tokens=(\d+)")

_TABLE_NAMES = {
    "total_gpu_memory": "device_total_bytes",
    "the current vLLM instance can use": "requested_memory_bytes",
    "model weights take": "weights_bytes",
    "non_torch_memory": "non_torch_bytes",
    "PyTorch activation peak memory": "activation_peak_bytes",
    "available_kv_cache_memory": "available_kv_cache_bytes",
}
_ONE_LINE_NAMES = {
    "total_gpu_memory": "device_total_bytes",
    "initial_memory_usage": "initial_used_bytes",
    "peak_torch_memory": "peak_torch_bytes",
    "memory_usage_post_profile": "post_profile_used_bytes",
    "non_torch_memory": "non_torch_bytes",
    "kv_cache_size": "available_kv_cache_bytes",
}
# vLLM config/arg names -> shared vllm setting keys
_SETTING_KEYS = {
    "max_seq_len": "max_model_len",
    "max_model_len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size",
    "data_parallel_size": "data_parallel_size",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "block_size": "block_size",
    "kv_cache_dtype": "kv_cache_dtype",
    "kv_cache_memory_bytes": "kv_cache_memory_bytes",
    "enable_prefix_caching": "enable_prefix_caching",
    "enable_chunked_prefill": "enable_chunked_prefill",
    "chunked_prefill_enabled": "enable_chunked_prefill",
    "cpu_offload_gb": "cpu_offload_gb",
    "quantization": "quantization",
    "dtype": "dtype",
    "model": "model",
    "tensor_parallel": "tensor_parallel_size",
}

#: Lines only vLLM prints.
#: How vLLM's logger lines begin, so a paste's own prefix in front of them can be removed.
LINE_STARTS = (
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}|\((?:APIServer|EngineCore\w*|VllmWorker\w*)"
)
MARKERS = re.compile(
    r"(?:LLM engine \(v|GPU KV cache size:|# GPU blocks:|Maximum concurrency for [\d,]+ tokens per request|"
    r"Available KV cache memory:|Memory profiling|model weights take|Loading model weights took|Model loading took|"
    r"non-default args: \{|vllm|kv_cache_utils\.py|gpu_worker\.py|EngineCore|VllmWorker|Using max model len|"
    r"larger than the available KV cache memory|tokens that can be stored in KV cache|Padding mamba page size)"
)


def _gib(out: Collector, name: str, printed: str, unit: str, line: LogLine, basis: str = "") -> None:
    if unit == "GB":
        basis = f"{basis}; {_GIB_BASIS}" if basis else _GIB_BASIS
    out.add(name, printed, line, printed_unit=unit or "GiB", unit_size=GIB, device=line.device, basis=basis)


def settings_from(values: Mapping[str, object], out: Collector, *, overwrite: bool) -> None:
    """Copy known vLLM settings from a parsed dump into the shared vocabulary (None = left to vLLM)."""
    for key, value in values.items():
        name = _SETTING_KEYS.get(key)
        if name is None or value is None or (isinstance(value, str) and value == ""):
            continue
        if overwrite or name not in out.settings:
            out.settings[name] = value  # type: ignore[assignment]


def read_vllm_line(line: LogLine, out: Collector, continuation: str = "") -> bool:
    """Extract what one vLLM line states (`continuation` holds wrapped follow-on text of a config dump)."""
    text = line.text
    if match := _VERSION.search(text):
        out.version = out.version or match.group(1) or match.group(2)
    if match := _SPECULATIVE.search(text):
        # The engine line's SpeculativeConfig repr: kept as the JSON text --speculative-config takes.
        out.settings.setdefault("speculative_config", json.dumps(
            {"method": match.group(1), "num_speculative_tokens": int(match.group(2))}))
    if _CONFIG.search(text):
        settings_from(pydump.assignments(text + continuation), out, overwrite=False)
        return True
    if match := _NON_DEFAULT.search(text):
        settings_from(pydump.dict_items(match.group(1)), out, overwrite=True)
        return True
    for handler in (_figures, _hybrid, _profile, _refusals):
        if handler(text, line, out):
            return True
    if _KEY_WORDS.search(text):
        out.note("unparsed_line", _("a vLLM memory line could not be read in full (cut or new format)"), line.number)
    return False


def _figures(text: str, line: LogLine, out: Collector) -> bool:
    if match := _WEIGHTS.search(text):
        _gib(out, "weights_bytes", match.group(1), match.group(2), line, "memory the weights took while loading")
        return True
    if match := _AVAILABLE_KV.search(text):
        _gib(out, "available_kv_cache_bytes", match.group(1), match.group(2), line)
        return True
    if match := _KV_TOKENS.search(text):
        out.count("kv_tokens", match.group(1), line, "tokens", device=line.device, basis="KV cache capacity")
        return True
    if match := _GPU_BLOCKS_BARE.match(text):
        out.count("num_gpu_blocks", match.group(1), line, "blocks", device=line.device)
        out.count("num_cpu_blocks", match.group(2), line, "blocks", device=line.device)
        return True
    if blocks := _BLOCKS.findall(text):
        for where, number in blocks:
            out.count(f"num_{where.lower()}_blocks", number, line, "blocks", device=line.device)
        return True
    if match := _CONCURRENCY.search(text):
        out.count(
            "concurrency_request_tokens",
            match.group(1),
            line,
            "tokens",
            device=line.device,
            basis="request length the ratio is for",
        )
        out.add(
            "max_concurrency",
            match.group(2),
            line,
            unit="ratio",
            printed_unit="x",
            unit_size=None,
            device=line.device,
            basis="KV capacity / tokens per request",
        )
        return True
    if match := _MAX_LEN.search(text):
        out.settings["max_model_len"] = int(match.group(1))
        return True
    if match := _BATCHED.search(text):
        out.settings.setdefault("max_num_batched_tokens", int(match.group(1)))
        out.settings.setdefault("enable_chunked_prefill", True)
        return True
    return False


def _hybrid(text: str, line: LogLine, out: Collector) -> bool:
    """Hybrid (Mamba / linear-attention) models: the raised block size and the state page's padding."""
    if match := _HYBRID_BLOCK.search(text):
        out.count("hybrid_block_size", match.group(1), line, "tokens",
                  basis="attention block raised for the state page")
        out.settings.setdefault("block_size", int(match.group(1)))
        return True
    if match := _MAMBA_PADDING.search(text):
        out.add("mamba_page_padding_percent", match.group(1), line, unit="ratio", printed_unit="%", unit_size=None,
                basis="Mamba page padded to the attention page")
        return True
    if match := _MAMBA_SSM_DTYPE.search(text):
        out.settings.setdefault("mamba_ssm_cache_dtype", match.group(1))
        return True
    return False


def _profile(text: str, line: LogLine, out: Collector) -> bool:
    if match := _PROFILE_ONE_LINE.search(text):
        for key, number, unit in _PROFILE_PAIR.findall(match.group(1)):
            if key == "gpu_memory_utilization":
                out.settings["gpu_memory_utilization"] = float(number)
            elif key in _ONE_LINE_NAMES:
                _gib(out, _ONE_LINE_NAMES[key], number, unit, line)
        return True
    if match := _CAN_USE.search(text):
        _gib(out, "device_total_bytes", match.group(1), "GiB", line)
        out.settings["gpu_memory_utilization"] = float(match.group(3))
        _gib(out, "requested_memory_bytes", match.group(4), "GiB", line, "total x gpu_memory_utilization")
        return True
    if match := _SUMMARY.search(text):
        for index, name in enumerate(
            ("weights_bytes", "non_torch_bytes", "activation_peak_bytes", "available_kv_cache_bytes")
        ):
            _gib(out, name, match.group(2 * index + 1), "GiB", line)
        return True
    if match := _TABLE.match(text):
        key, number = match.group(1), match.group(2)
        if key == "gpu_memory_utilization":
            out.settings["gpu_memory_utilization"] = float(number)
        else:
            _gib(out, _TABLE_NAMES[key], number, "GiB", line)
        return True
    return False


def _refusals(text: str, line: LogLine, out: Collector) -> bool:
    if match := _TOO_LONG.search(text):
        out.refusal = text
        out.count("kv_tokens", match.group(2), line, "tokens", device=line.device, basis="KV cache capacity (refusal)")
        out.settings.setdefault("max_model_len", int(match.group(1)))
        return True
    if match := _NOT_ENOUGH.search(text):
        out.refusal = text
        if estimate := _ESTIMATED_LEN.search(text):
            out.count("estimated_max_model_len", estimate.group(1), line, "tokens", device=line.device)
        _gib(out, "kv_needed_bytes", match.group(2), "GiB", line, "KV one max-length request needs")
        _gib(out, "available_kv_cache_bytes", match.group(4), "GiB", line)
        out.settings.setdefault("max_model_len", int(match.group(1)))
        return True
    return False


#: What a complete vLLM start-up log states; an item is found when any alternative is.
EXPECTED: tuple[tuple[str, tuple[str, ...]], ...] = (
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
)
#: The config dump vLLM prints at start-up (a paste may wrap it over several lines).
DUMP_START = re.compile(r"LLM engine \(v[^)]+\) with config:")


def read_log(lines: list[LogLine], out: Collector, text: str = "") -> list[str]:
    """Feed every line (with a wrapped config dump rejoined) to the vLLM reader."""
    for index, line in enumerate(lines):
        with out.reading(line):
            read_vllm_line(line, out, continuation(lines, index, DUMP_START))
    return []


#: Setting keys this engine's log states beyond its knob keys (the model's dtype and repo vLLM's config dump names).
LOG_ONLY_SETTING_KEYS: frozenset[str] = frozenset({"dtype", "model"})
