"""SGLang start-up lines.

SGLang prints "GB" but divides by 2**30 (python/sglang/srt/mem_cache/memory_pool.py: `GB = 1024 * 1024 *
1024`, read at commit 000ccdba; its get_available_gpu_memory returns free / (1 << 30)), so every SGLang
"GB" figure here has unit_size 2**30 and says so in its basis.
"""

from __future__ import annotations

import re

from calculators.i18n import _
from calculators.reconcile.log import pydump
from calculators.reconcile.log.clean import LogLine, continuation
from calculators.reconcile.log.collect import Collector
from calculators.units import GIB

_N = r"(\d+(?:\.\d+)?)"
_GIB_BASIS = "SGLang divides by 2**30 although it prints 'GB'"

_SERVER_ARGS = re.compile(r"server_args=ServerArgs\((.*)$")
_WEIGHT_BEGIN = re.compile(r"Load weight begin\. avail mem=" + _N + r" GB")
_WEIGHT_END = re.compile(r"Load weight end\..*?avail mem=" + _N + r" GB, mem usage=" + _N + r" GB")
_KV_ALLOC = re.compile(
    r"KV Cache is allocated\.(?: dtype: (?P<dtype>[\w.]+),)? #tokens: (?P<tokens>\d+), "
    r"(?:K(?: size)?:? (?P<k>[\d.]+) ?GB, V(?: size)?:? (?P<v>[\d.]+) ?GB|KV size: (?P<kv>[\d.]+) ?GB)"
)
# mem_cache/memory_pool.py MambaPool (v0.5.23): sizes of the conv and temporal state tensors, in GB = 2**30
_MAMBA_ALLOC = re.compile(
    r"Mamba Cache is allocated\. max_mamba_cache_size: (?P<size>\d+), conv_state size: (?P<conv>[\d.]+) ?GB, "
    r"ssm_state size: (?P<ssm>[\d.]+) ?GB"
)
_POOL_END = re.compile(r"Memory pool end\. avail mem=" + _N + r" GB")
_GRAPH_END = re.compile(r"Capture (?:cuda|npu) graph end\..*?mem usage=" + _N + r" GB\. avail mem=" + _N + r" GB")
_SUMMARY_KEYS = re.compile(
    r"(max_total_num_tokens|chunked_prefill_size|max_prefill_tokens|max_running_requests|"
    r"context_len)=(-?\d+)"
)
_AVAILABLE = re.compile(r"available_gpu_mem=" + _N + r" GB")
_REDUCED_FRACTION = re.compile(r"Automatically reduce --mem-fraction-static to " + _N)
_VERSION = re.compile(r"sglang(?:==| version:? v?)(\d+\.\d+\.\d+[\w.]*)", re.IGNORECASE)

_SETTING_KEYS = {
    "mem_fraction_static": "mem_fraction_static",
    "max_running_requests": "max_running_requests",
    "max_total_tokens": "max_total_tokens",
    "chunked_prefill_size": "chunked_prefill_size",
    "max_prefill_tokens": "max_prefill_tokens",
    "context_length": "context_length",
    "tp_size": "tp_size",
    "dp_size": "dp_size",
    "pp_size": "pp_size",
    "page_size": "page_size",
    "kv_cache_dtype": "kv_cache_dtype",
    "disable_radix_cache": "disable_radix_cache",
    "enable_metrics": "enable_metrics",
    "dtype": "dtype",
    "quantization": "quantization",
    "model_path": "model",
    "cpu_offload_gb": "cpu_offload_gb",
}
_SUMMARY_UNITS = {
    "max_total_num_tokens": "tokens",
    "chunked_prefill_size": "tokens",
    "max_prefill_tokens": "tokens",
    "max_running_requests": "requests",
    "context_len": "tokens",
}

#: Lines only SGLang prints.
#: How SGLang's logger lines begin.
LINE_STARTS = r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?(?: (?:DP|TP|PP|EP)\d+[^\]]*)?\] "
MARKERS = re.compile(
    r"(?:server_args=ServerArgs\(|KV Cache is allocated\. |Mamba Cache is allocated\. |"
    r"Load weight (?:begin|end)\.|max_total_num_tokens=|"
    r"Capture (?:cuda|npu) graph (?:begin|end)|Memory pool end\.|fired up and ready to roll|sglang|"
    r"--mem-fraction-static)"
)


def _gib(out: Collector, name: str, printed: str, line: LogLine, basis: str = "") -> None:
    out.add(
        name,
        printed,
        line,
        printed_unit="GB",
        unit_size=GIB,
        device=line.device,
        basis=f"{basis}; {_GIB_BASIS}" if basis else _GIB_BASIS,
    )


def read_sglang_line(line: LogLine, out: Collector, continuation: str = "") -> bool:
    """Extract what one SGLang line states (`continuation` holds wrapped follow-on text of the args dump)."""
    text = line.text
    if match := _VERSION.search(text):
        out.version = out.version or match.group(1)
    if match := _SERVER_ARGS.search(text):
        for key, value in pydump.assignments(match.group(1) + continuation).items():
            name = _SETTING_KEYS.get(key)
            if name and value is not None and name not in out.settings:
                out.settings[name] = value
        return True
    if match := _REDUCED_FRACTION.search(text):
        out.settings["mem_fraction_static"] = float(match.group(1))
        out.note("mem_fraction_reduced", _("SGLang lowered mem_fraction_static to {group} itself").format(
                                           group=match.group(1)), line.number)
        return True
    if match := _WEIGHT_BEGIN.search(text):
        _gib(out, "avail_before_weights_bytes", match.group(1), line, "free device memory before loading weights")
        return True
    if match := _WEIGHT_END.search(text):
        _gib(out, "avail_after_weights_bytes", match.group(1), line, "free device memory after loading weights")
        _gib(out, "weights_bytes", match.group(2), line, "memory the weights took while loading")
        return True
    if match := _KV_ALLOC.search(text):
        out.count(
            "kv_tokens", match.group("tokens"), line, "tokens", device=line.device, basis="#tokens of the KV pool"
        )
        if match.group("k") is not None:
            _gib(out, "k_bytes", match.group("k"), line)
            _gib(out, "v_bytes", match.group("v"), line)
        else:
            _gib(out, "k_bytes", match.group("kv"), line, "MLA: one 'KV size' (latent + rope key), no separate V")
        if match.group("dtype"):
            out.settings.setdefault("kv_cache_dtype_resolved", match.group("dtype").removeprefix("torch."))
        return True
    if match := _MAMBA_ALLOC.search(text):
        out.count("mamba_cache_slots", match.group("size"), line, "sequences", device=line.device,
                  basis="max_mamba_cache_size (the pool holds one more padding slot)")
        _gib(out, "mamba_conv_state_bytes", match.group("conv"), line, "conv state of every Mamba layer and slot")
        _gib(out, "mamba_ssm_state_bytes", match.group("ssm"), line, "temporal state of every Mamba layer and slot")
        return True
    if match := _POOL_END.search(text):
        _gib(out, "avail_after_pool_bytes", match.group(1), line, "free device memory after the KV pool")
        return True
    if match := _GRAPH_END.search(text):
        _gib(out, "cuda_graph_bytes", match.group(1), line, "memory the graph capture took")
        _gib(out, "avail_after_graphs_bytes", match.group(2), line)
        return True
    if "KV Cache is allocated" in text:
        out.note("unparsed_line", _("an SGLang KV cache line could not be read in full (cut or new format)"),
                 line.number)
        return True
    summary = _SUMMARY_KEYS.findall(text)
    if summary and "max_total_num_tokens" in text:
        for key, number in summary:
            out.count(key, number, line, _SUMMARY_UNITS[key], device=line.device)  # type: ignore[arg-type]
        if match := _AVAILABLE.search(text):
            _gib(out, "available_gpu_mem_bytes", match.group(1), line, "free device memory once serving starts")
        return True
    return False


#: What a complete SGLang start-up log states; an item is found when any alternative is.
EXPECTED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("setting", ("mem_fraction_static",)),
    ("setting", ("tp_size",)),
    ("setting", ("context_length",)),
    ("setting", ("page_size",)),
    ("figure", ("weights_bytes",)),
    ("figure", ("kv_tokens",)),
    ("figure", ("k_bytes", "kv_cache_bytes")),
    ("figure", ("max_total_num_tokens",)),
    ("figure", ("max_running_requests",)),
)
#: The server_args dump SGLang prints at start-up (a paste may wrap it over several lines).
DUMP_START = re.compile(r"server_args=ServerArgs\(")
#: Knobs SGLang sizes itself when left unset (it prints None for them).
AUTO_KEYS = (
    "mem_fraction_static",
    "max_running_requests",
    "max_total_tokens",
    "chunked_prefill_size",
    "context_length",
)


def read_log(lines: list[LogLine], out: Collector, text: str = "") -> list[str]:
    """Feed every line (with a wrapped server_args dump rejoined) to the SGLang reader."""
    for index, line in enumerate(lines):
        with out.reading(line):
            read_sglang_line(line, out, continuation(lines, index, DUMP_START))
    _mark_auto(text, out)
    return []


def _mark_auto(text: str, out: Collector) -> None:
    """SGLang prints None for knobs it sizes itself; say 'auto' rather than pretend they are absent."""
    for key in AUTO_KEYS:
        if key not in out.settings and re.search(rf"[ (,]{key}=None\b", text):
            out.settings[key] = "auto"


#: Setting keys this engine's log states beyond its knob keys (server_args fields SGLang dumps
#: that the knob table does not list, and the KV dtype it resolved).
LOG_ONLY_SETTING_KEYS: frozenset[str] = frozenset(
    {"cpu_offload_gb", "dtype", "kv_cache_dtype_resolved", "max_prefill_tokens", "model", "pp_size", "quantization"}
)
