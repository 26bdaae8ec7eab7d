"""llama.cpp start-up lines (llama-server, llama-cli, and the same lines relayed by Ollama).

Read against llama.cpp's own format strings (src/llama-kv-cache.cpp: `%s: size = %7.2f MiB (%6u cells,
%3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB` where the pair is n_seq_max/n_stream;
`%10s KV buffer size = %8.2f MiB`), and against the older forms still found in pasted logs
(`llama_kv_cache_init:`, `llama_kv_cache_unified:`, `KV self size`, `kv self size = … MB`). Every "MiB"
and every old "MB" is bytes / 1024 / 1024 in llama.cpp; "GiB" in print_info is bytes / 1024**3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from calculators.i18n import _
from calculators.reconcile.log.clean import LogLine
from calculators.reconcile.log.collect import Collector, to_int
from calculators.reconcile.log.commandline import looks_like_command, normalise_flash, parse_command
from calculators.units import GIB, MIB

_NUM = r"(\d+(?:\.\d+)?)"
_MEM_UNIT = r"(MiB|MB|GiB|KiB)"
_UNIT_SIZE = {"MiB": MIB, "MB": MIB, "GiB": GIB, "KiB": 1024}
_MB_BASIS = "llama.cpp printed MiB (bytes/1024/1024) under the label 'MB' before late 2023"

_BUILD = re.compile(r"^(?:build|version):\s*(\d+)\s*\(([0-9a-f]{6,40})\)")
_META = re.compile(r"^(?:print_info|llm_load_print_meta):\s+(?P<key>[A-Za-z_][\w .]*?)\s*=\s*(?P<val>.*)$")
_KV = re.compile(r"^llama_model_loader: - kv\s+\d+:\s+(?P<key>\S+)\s+(?P<type>\S+)\s+=\s*(?P<val>.*)$")
_CONTEXT = re.compile(r"^(?:llama_context|llama_new_context_with_model):\s+(?P<key>\w+)\s*=\s*(?P<val>\S+)\s*$")
_KV_INIT = re.compile(
    r"^llama_kv_cache_init:\s+kv_size = (?P<cells>\d+), offload = \d+, type_k = '(?P<tk>\w+)', "
    r"type_v = '(?P<tv>\w+)', n_layer = (?P<layers>\d+)"
)
_CREATING = re.compile(r"creating\s+(?P<which>non-SWA|SWA) KV cache, size\s*=\s*(?P<cells>\d+) cells")
_SIZE = re.compile(
    r"^(?P<who>llama_kv_cache\w*|llama_memory_recurrent\w*):\s+size\s*=\s*"
    r"(?P<size>\d+(?:\.\d+)?) (?P<unit>MiB|MB)\s*"
    r"\(\s*(?P<cells>\d+) cells,\s*(?P<layers>\d+) layers"
    r"(?:,\s*(?P<seqs>\d+)\s*(?:/\s*(?P<streams>\d+))?\s*seqs(?:\s+\d+\s+rs_seq)?)?\s*\),"
    r"\s*[KR] \((?P<tk>\w+)\):\s*(?P<k>\d+(?:\.\d+)?) (?:MiB|MB),"
    r"\s*[VS] \((?P<tv>\w+)\):\s*(?P<v>\d+(?:\.\d+)?) (?:MiB|MB)"
)
_SIZE_START = re.compile(r"^(llama_kv_cache\w*|llama_memory_recurrent\w*):\s+size\s*=")
_SELF_SIZE = re.compile(
    r"(?i)^\w+:\s+kv self size\s*=\s*(?P<size>\d+(?:\.\d+)?) (?P<unit>MiB|MB)"
    r"(?:,\s*K \((?P<tk>\w+)\):\s*(?P<k>\d+(?:\.\d+)?) (?:MiB|MB),"
    r"\s*V \((?P<tv>\w+)\):\s*(?P<v>\d+(?:\.\d+)?) (?:MiB|MB))?"
)
_BUFFER = re.compile(
    r"^(?P<who>\w+):\s+(?P<dev>\S+)\s+(?P<what>KV|RS|model|compute|output)?\s*buffer size\s*=\s*"
    r"(?P<size>\d+(?:\.\d+)?)\s*(?P<unit>MiB|MB|GiB|KiB)"
)
_COMPUTE_TOTAL = re.compile(r"compute buffer total size\s*=\s*" + _NUM + r"\s*" + _MEM_UNIT)
_MEM_REQUIRED = re.compile(r"^llm_load_tensors: mem required\s*=\s*" + _NUM + r"\s*" + _MEM_UNIT)
_VRAM_USED = re.compile(r"^llm_load_tensors: VRAM used:\s*" + _NUM + r"\s*" + _MEM_UNIT)
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
# src/llama-model.cpp load_tensors: "offloading 1 repeating layers to GPU" (older builds offloaded the output
# layer only past n_layer, so "offloaded 1/62" there means one repeating block, not the output layer)
_OFFLOADING_REPEATING = re.compile(r"offloading (\d+) repeating layers to GPU")
_CTX_TRAIN = re.compile(r"n_ctx(?:_per)?_seq \((\d+)\) [<>] n_ctx_train \((\d+)\)")
_SLOT_CTX = re.compile(r"n_ctx_slot = (\d+)")
_N_SLOTS = re.compile(r"initializing(?: slots)?, n_slots = (\d+)")
_NEW_SLOT = re.compile(
    r"id\s+(\d+) \| task -?\d+ \| new slot,? n_ctx(?:_slot)? = (\d+)|-> Slot (\d+) - max context: (\d+)"
)
_BUILD_INFO = re.compile(r"build info \|.*\bbuild=(\d+) commit=\"?([0-9a-f]{6,40})")
_FLASH_RESOLVED = re.compile(
    r"Flash Attention was auto, set to (enabled|disabled)|(enabling) flash_attn since it is required for quantized V"
)
_FIT = re.compile(r"projected to use (\d+) MiB of device memory vs\. (\d+) MiB of free device memory")
_DEVICE_FREE = re.compile(r"using device (\S+) \(([^)]*)\)(?: \([^)]*\))? - (\d+) MiB free")
_DEVICE_NAME = re.compile(r"^Device \d+: ([^,]+),")
_FULL_SWA = re.compile(r"using full-size SWA cache")

_CONTEXT_KEYS = {
    "n_seq_max": "parallel",
    "n_ctx": "ctx_size",
    "n_ctx_per_seq": "ctx_per_seq",
    "n_ctx_seq": "ctx_per_seq",
    "n_batch": "batch_size",
    "n_ubatch": "ubatch_size",
    "flash_attn": "flash_attn",
    "kv_unified": "kv_unified",
}
_META_INT_KEYS = {
    "n_layer": "n_layers",
    "n_head": "n_heads",
    "n_head_kv": "n_kv_heads",
    "n_embd_head_k": "head_dim_k",
    "n_embd_head_v": "head_dim_v",
    "n_embd": "n_embd",
    "n_swa": "sliding_window_tokens",
    "n_ctx_train": "context_train_tokens",
    "n_expert": "n_expert",
    "n_expert_used": "n_expert_used",
}
_GGUF_SUFFIX_KEYS = {
    "block_count": "n_layers",
    "attention.head_count": "n_heads",
    "attention.head_count_kv": "n_kv_heads",
    "attention.key_length": "head_dim_k",
    "attention.value_length": "head_dim_v",
    "embedding_length": "n_embd",
    "attention.sliding_window": "sliding_window_tokens",
    "context_length": "context_train_tokens",
    "expert_count": "n_expert",
    "expert_used_count": "n_expert_used",
}
_PARAM_SCALE = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}

#: How llama.cpp's own lines begin (after any prefix): used to recognise the engine and, anywhere in a
#: line, to find where llama.cpp's text starts behind another program's prefix.
LINE_STARTS = (
    r"llama_model_loader:|print_info:|llm_load_print_meta:|llm_load_tensors:|load_tensors:|llama_context:|"
    r"llama_new_context_with_model:|llama_init_from_model:|llama_context_kv_self:|llama_kv_cache|llama_memory_|"
    r"ggml_cuda_init:|ggml_init_cublas:|llama_model_load_from_file|build: \d+ \(|srv\s+\w+:|slot\s+\w+:|"
    r"main: (?:server is listening|model loaded)|sched_reserve:|common_init_from_params:|create_memory:|"
    r"graph_reserve:|load_hparams:|init: kv_size = |INFO \[\s*main\] build info"
)
#: Lines that only llama.cpp (or a program relaying it) prints; used to recognise the engine.
MARKERS = re.compile(rf"^(?:{LINE_STARTS})")


def _int_list(text: str) -> list[int] | None:
    """'[8, 8, 4]' or '8' as a list of ints, None when it is neither."""
    text = text.strip()
    if "..." in text:  # llama.cpp shortens long arrays: the per-layer values are not all there
        return None
    if text.startswith("["):
        items = [to_int(part) for part in text.strip("[]").split(",") if part.strip() and part.strip() != "..."]
        return None if not items or any(i is None for i in items) else [i for i in items if i is not None]
    value = to_int(text)
    return None if value is None else [value]


@dataclass
class LlamaCppReader:
    """Reads llama.cpp lines one by one, remembering which cache a buffer line belongs to."""

    out: Collector
    settings: dict[str, object]  # where llama-cpp keys go: `settings` or `runner_settings`
    cache: str = "kv"
    pending_cells: dict[str, tuple[int, LogLine]] = field(default_factory=dict)
    sized: set[str] = field(default_factory=set)
    slot_ids: set[int] = field(default_factory=set)
    last_slot_line: LogLine | None = None

    def feed(self, line: LogLine) -> None:
        """Extract whatever this line states."""
        text = line.text
        if not text:
            return
        for handler in (
            self._build,
            self._meta,
            self._gguf_kv,
            self._context,
            self._kv_init,
            self._creating,
            self._size,
            self._self_size,
            self._buffer,
            self._misc,
        ):
            if handler(text, line):
                return

    def finish(self) -> None:
        """Record cache sizes announced by a 'creating … cells' line whose size line never came."""
        for cache, (cells, line) in self.pending_cells.items():
            if cache not in self.sized:
                self.out.count("cells", str(cells), line, "tokens", cache=cache)
        if self.slot_ids and self.last_slot_line is not None and not any(f.name == "slots" for f in self.out.figures):
            self.out.count("slots", str(len(self.slot_ids)), self.last_slot_line, "sequences",
                           basis="counted from the 'new slot' lines (the log has no n_slots line)")

    # -- one handler per family of lines; each returns True when it consumed the line --

    def _build(self, text: str, line: LogLine) -> bool:
        match = _BUILD.match(text) or _BUILD_INFO.search(text)
        if not match:
            return False
        self.out.version = f"b{match.group(1)} ({match.group(2)})"
        return True

    def _meta(self, text: str, line: LogLine) -> bool:
        match = _META.match(text)
        if not match:
            return False
        key, value = match.group("key").strip(), match.group("val").strip()
        if key in _META_INT_KEYS:
            numbers = _int_list(value)
            if numbers:
                self._geo_numbers(_META_INT_KEYS[key], numbers)
        elif key == "arch":
            self.out.geo("architecture", value)
        elif key == "general.name":
            self.out.geo("model_name", value)
        elif key in ("file type", "model ftype"):
            self.out.geo("file_type", value)
        elif key in ("file size", "model size"):
            size = re.match(_NUM + r"\s*" + _MEM_UNIT, value)
            if size:
                self.out.add(
                    "model_file_bytes",
                    size.group(1),
                    line,
                    printed_unit=size.group(2),
                    unit_size=_UNIT_SIZE[size.group(2)],
                    basis="GGUF tensor data size as printed by llama.cpp",
                )
        elif key == "model params":
            params = re.match(_NUM + r"\s*([KMBT])", value)
            if params:
                self.out.geo("params_total", round(float(params.group(1)) * _PARAM_SCALE[params.group(2)]))
        return True

    def _geo_numbers(self, field_name: str, numbers: list[int]) -> None:
        if field_name == "n_kv_heads" and len(set(numbers)) > 1:
            self.out.geo("n_kv_heads_per_layer", tuple(numbers))
            return
        self.out.geo(field_name, numbers[0])

    def _gguf_kv(self, text: str, line: LogLine) -> bool:
        match = _KV.match(text)
        if not match:
            return False
        key, value = match.group("key"), match.group("val").strip()
        if key == "general.architecture":
            self.out.geo("architecture", value, overwrite=False)
        elif key == "general.name":
            self.out.geo("model_name", value, overwrite=False)
        elif key == "general.file_type":
            code = to_int(value)
            if code is not None:
                self.out.geo("file_type", _file_type_name(code), overwrite=False)
        else:
            arch_key = key.split(".", 1)[1] if "." in key else ""
            if arch_key in _GGUF_SUFFIX_KEYS:
                numbers = _int_list(value)
                if numbers:
                    field_name = _GGUF_SUFFIX_KEYS[arch_key]
                    if field_name not in self.out.geometry:
                        self._geo_numbers(field_name, numbers)
        return True

    def _context(self, text: str, line: LogLine) -> bool:
        match = _CONTEXT.match(text)
        if not match:
            return False
        key, value = match.group("key"), match.group("val")
        if key in _CONTEXT_KEYS:
            setting = _CONTEXT_KEYS[key]
            if setting == "flash_attn":
                self.settings[setting] = normalise_flash(value)
            elif setting == "kv_unified":
                self.settings[setting] = value.lower() in ("true", "1")
            else:
                number = to_int(value)
                if number is not None:
                    self.settings[setting] = number
        return True

    def _kv_init(self, text: str, line: LogLine) -> bool:
        match = _KV_INIT.match(text)
        if not match:
            return False
        self.settings["cache_type_k"] = match.group("tk")
        self.settings["cache_type_v"] = match.group("tv")
        self.out.count("cells", match.group("cells"), line, "tokens", cache="kv")
        self.out.count("layers", match.group("layers"), line, "layers", cache="kv")
        self.sized.add("kv")
        return True

    def _creating(self, text: str, line: LogLine) -> bool:
        match = _CREATING.search(text)
        if not match:
            if _FULL_SWA.search(text):
                self.settings["swa_full"] = True
                return True
            return False
        self.cache = "kv" if match.group("which") == "non-SWA" else "kv_swa"
        self.pending_cells[self.cache] = (int(match.group("cells")), line)
        return True

    def _size(self, text: str, line: LogLine) -> bool:
        match = _SIZE.match(text)
        if not match:
            if _SIZE_START.match(text):
                self.out.note(
                    "unparsed_line", _("a cache size line could not be read in full (cut or new format)"), line.number
                )
                return True
            return False
        recurrent = match.group("who").startswith("llama_memory_recurrent")
        cache = "recurrent" if recurrent else self.cache
        unit = match.group("unit")
        basis = _MB_BASIS if unit == "MB" else ""
        total_name = "recurrent_state_bytes" if recurrent else "kv_cache_bytes"
        self.out.add(total_name, match.group("size"), line, printed_unit=unit, unit_size=MIB, cache=cache, basis=basis)
        self.out.add(
            "k_bytes",
            match.group("k"),
            line,
            printed_unit=unit,
            unit_size=MIB,
            cache=cache,
            basis="R (conv state) bytes" if recurrent else "",
        )
        self.out.add(
            "v_bytes",
            match.group("v"),
            line,
            printed_unit=unit,
            unit_size=MIB,
            cache=cache,
            basis="S (ssm state) bytes" if recurrent else "",
        )
        self.out.count("cells", match.group("cells"), line, "sequences" if recurrent else "tokens", cache=cache)
        self.out.count("layers", match.group("layers"), line, "layers", cache=cache)
        if match.group("seqs"):
            self.out.count("seqs", match.group("seqs"), line, "sequences", cache=cache, basis="n_seq_max")
        if match.group("streams"):
            self.out.count(
                "streams",
                match.group("streams"),
                line,
                "sequences",
                cache=cache,
                basis="KV streams: 1 when the cache is unified, n_seq_max otherwise",
            )
        if not recurrent:
            self.settings.setdefault("cache_type_k", match.group("tk"))
            self.settings.setdefault("cache_type_v", match.group("tv"))
        self.sized.add(cache)
        self.cache = "kv"
        return True

    def _self_size(self, text: str, line: LogLine) -> bool:
        match = _SELF_SIZE.match(text)
        if not match:
            if re.search(r"(?i)kv self size\s*=", text):
                self.out.note(
                    "unparsed_line", _("a KV size line could not be read in full (cut or new format)"), line.number
                )
                return True
            return False
        unit = match.group("unit")
        basis = _MB_BASIS if unit == "MB" else ""
        self.out.add(
            "kv_cache_bytes", match.group("size"), line, printed_unit=unit, unit_size=MIB, cache="kv", basis=basis
        )
        if match.group("tk"):
            self.out.add("k_bytes", match.group("k"), line, printed_unit=unit, unit_size=MIB, cache="kv")
            self.out.add("v_bytes", match.group("v"), line, printed_unit=unit, unit_size=MIB, cache="kv")
            self.settings.setdefault("cache_type_k", match.group("tk"))
            self.settings.setdefault("cache_type_v", match.group("tv"))
        return True

    def _buffer(self, text: str, line: LogLine) -> bool:
        match = _BUFFER.match(text)
        if not match:
            total = _COMPUTE_TOTAL.search(text)
            if total:
                self.out.add(
                    "compute_buffer_bytes",
                    total.group(1),
                    line,
                    printed_unit=total.group(2),
                    unit_size=_UNIT_SIZE[total.group(2)],
                )
                return True
            if "buffer size" in text:
                self.out.note("unparsed_line", _("a buffer size line could not be read in full"), line.number)
                return True
            return False
        who, device, what = match.group("who"), match.group("dev"), match.group("what")
        printed, unit = match.group("size"), match.group("unit")
        if what is None and who in ("llm_load_tensors", "load_tensors"):
            what = "model"  # 2024 form: "llm_load_tensors:      CUDA0 buffer size = …"
        name = {
            "KV": "kv_buffer_bytes",
            "RS": "recurrent_buffer_bytes",
            "model": "model_buffer_bytes",
            "compute": "compute_buffer_bytes",
            "output": "output_buffer_bytes",
        }.get(what or "")
        if name is None:
            return False
        cache = self.cache if name == "kv_buffer_bytes" else ("recurrent" if name == "recurrent_buffer_bytes" else None)
        self.out.add(
            name,
            printed,
            line,
            printed_unit=unit,
            unit_size=_UNIT_SIZE[unit],
            device=device,
            cache=cache,
            basis=_MB_BASIS if unit == "MB" else "",
        )
        return True

    def _misc(self, text: str, line: LogLine) -> bool:
        if match := _OFFLOADING_REPEATING.search(text):
            self.out.count("offloaded_repeating_layers", match.group(1), line, "layers")
            return True
        if match := _OFFLOADED.search(text):
            self.out.count("offloaded_layers", match.group(1), line, "layers")
            self.out.count("total_layers", match.group(2), line, "layers")
            return True
        if match := _MEM_REQUIRED.match(text):
            self.out.add(
                "model_buffer_bytes",
                match.group(1),
                line,
                printed_unit=match.group(2),
                unit_size=MIB,
                device="CPU",
                basis="'mem required' (host part of the weights); " + _MB_BASIS,
            )
            return True
        if match := _VRAM_USED.match(text):
            self.out.add(
                "model_buffer_bytes",
                match.group(1),
                line,
                printed_unit=match.group(2),
                unit_size=MIB,
                device="GPU",
                basis="'VRAM used' (offloaded weights); " + _MB_BASIS,
            )
            return True
        if match := _CTX_TRAIN.search(text):
            self.out.geo("context_train_tokens", int(match.group(2)), overwrite=False)
            return True
        if match := _NEW_SLOT.search(text):
            slot_id, ctx = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
            self.slot_ids.add(int(slot_id))
            self.last_slot_line = line
            self.out.count("slot_ctx_tokens", ctx, line, "tokens", basis="a 'new slot' line: one slot's context")
            return True
        slots, slot_ctx = _N_SLOTS.search(text), _SLOT_CTX.search(text)
        if slots:
            self.out.count("slots", slots.group(1), line, "sequences")
        if slot_ctx:
            self.out.count("slot_ctx_tokens", slot_ctx.group(1), line, "tokens", basis="n_ctx_slot: one slot's context")
        if slots or slot_ctx:
            return True
        if match := _FLASH_RESOLVED.search(text):
            self.settings["flash_attn_resolved"] = "off" if match.group(1) == "disabled" else "on"
            return True
        if match := _FIT.search(text):
            self.out.add(
                "fit_projected_bytes",
                match.group(1),
                line,
                printed_unit="MiB",
                unit_size=MIB,
                basis="--fit: device memory llama.cpp projected before loading",
            )
            self.out.add(
                "fit_free_bytes",
                match.group(2),
                line,
                printed_unit="MiB",
                unit_size=MIB,
                basis="--fit: free device memory it saw",
            )
            return True
        if match := _DEVICE_FREE.search(text):
            self.out.add(
                "device_free_bytes",
                match.group(3),
                line,
                printed_unit="MiB",
                unit_size=MIB,
                device=match.group(1),
                basis=f"free memory of {match.group(2)} when the model loaded",
            )
            return True
        if looks_like_command(text):
            for key, value in parse_command(text).items():
                self.settings.setdefault(key, value)
            return True
        return False


def _file_type_name(code: int) -> str:
    """GGUF general.file_type code as the gguf package names it (e.g. 15 -> 'MOSTLY_Q4_K_M')."""
    try:
        from gguf import LlamaFileType

        return LlamaFileType(code).name
    except (ImportError, ValueError):
        return f"file_type {code}"


def device_names(lines: list[LogLine]) -> list[str]:
    """Accelerator names listed by the backend at start-up ('NVIDIA GeForce RTX 3090', ...)."""
    names: list[str] = []
    for line in lines:
        match = _DEVICE_NAME.match(line.text) or _DEVICE_FREE.search(line.text)
        if match:
            name = match.group(1) if match.re is _DEVICE_NAME else match.group(2)
            names.append(name.strip())
    return names


#: What a complete llama.cpp start-up log states; an item is found when any alternative is.
EXPECTED: tuple[tuple[str, tuple[str, ...]], ...] = (
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
)


def read_log(lines: list[LogLine], out: Collector, text: str = "", relay=None) -> list[str]:
    """Feed every line to the llama.cpp reader; returns the accelerator names the log lists.

    `relay(line, out) -> bool` reads the lines of an engine that relays llama.cpp's (Ollama's own); the
    llama.cpp settings then go to the runner's settings.
    """
    reader = LlamaCppReader(out=out, settings=out.settings if relay is None else out.runner_settings)  # type: ignore[arg-type]
    for line in lines:
        with out.reading(line):
            if relay is None or not relay(line, out):
                reader.feed(line)
    reader.finish()
    return device_names(lines)


def settle_settings(values: dict) -> dict:
    """-fa auto is resolved at start-up: plan with what the context was actually built with."""
    if values.get("flash_attn") == "auto" and "flash_attn_resolved" in values:
        return {**values, "flash_attn": values["flash_attn_resolved"]}
    return values


#: Setting keys this engine's log states beyond its knob keys (what llama.cpp prints beside its flags:
#: the per-slot context, the flash-attention choice -fa auto settled on, the tensor split).
LOG_ONLY_SETTING_KEYS: frozenset[str] = frozenset({"ctx_per_seq", "flash_attn_resolved", "tensor_split"})
