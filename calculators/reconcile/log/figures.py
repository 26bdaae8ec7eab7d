"""What a start-up log revealed: data only, in the shared vocabulary the memory plans use.

Names are stable so the reconciliation can look a figure up by the same name the engine plans use
(`kv_cache_bytes`, `k_bytes`, `v_bytes`, `cells`, `layers`, `seqs`, `kv_tokens`, `max_concurrency`,
`num_gpu_blocks`, `max_total_num_tokens`, `max_running_requests`, ...). Every figure keeps the text it
was read from (`printed`, `printed_unit`, `line`) so a page can quote the engine and a comparison can
tell "exact to the printed precision" from a real difference.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from calculators.memory.plan import Result
from calculators.reconcile.log.precision import ratio_interval, units_interval

FigureUnit = Literal["bytes", "tokens", "blocks", "layers", "sequences", "requests", "ratio", "count"]
SettingValue = int | float | bool | str


class Figure(Result):
    """One number the engine printed, converted to base units (bytes, tokens, ...)."""

    name: str = Field(description="stable name, e.g. 'kv_cache_bytes', 'kv_tokens', 'model_buffer_bytes'")
    value: int | float = Field(description="in `unit`: whole bytes/tokens/... for counts, a float for ratios")
    unit: FigureUnit
    printed: str = Field(description="the number exactly as printed, e.g. '4352.00' or '2,042,016'")
    printed_unit: str = Field(default="", description="unit label as printed: 'MiB', 'GiB', 'GB', 'MB', 'x', ''")
    unit_size: int | None = Field(
        default=1,
        description="base units per printed unit as the engine computes it (GiB=2**30 even where it prints 'GB'); "
        "None for ratios",
    )
    line: int = Field(description="1-based line number in the pasted text")
    device: str | None = Field(default=None, description="'CUDA0', 'CPU_Mapped', 'TP0', a worker label... or None")
    cache: str | None = Field(
        default=None, description="which cache a per-cache figure belongs to: 'kv', 'kv_swa', ..."
    )
    basis: str = Field(default="", description="what the engine means by this figure, when the name is not enough")

    def interval(self) -> tuple[int, int] | tuple[float, float]:
        """Closed range of exact values (in `unit`) that the engine would have printed this way."""
        if self.unit_size is None:
            return ratio_interval(self.printed)
        return units_interval(self.printed, self.unit_size)

    def consistent_with(self, exact: float) -> bool:
        """True when `exact` (in `unit`) rounds to what the engine printed: exact to the printed precision."""
        low, high = self.interval()
        return low <= exact <= high


class LogGeometry(Result):
    """Model geometry the log states (llama.cpp and Ollama dump GGUF metadata; vLLM/SGLang say little)."""

    architecture: str | None = None
    model_name: str | None = None
    n_layers: int | None = None
    n_heads: int | None = None
    n_kv_heads: int | None = Field(default=None, description="when every layer has the same count")
    n_kv_heads_per_layer: tuple[int, ...] | None = Field(default=None, description="when the log lists one per layer")
    head_dim_k: int | None = None
    head_dim_v: int | None = None
    n_embd: int | None = None
    sliding_window_tokens: int | None = Field(default=None, description="n_swa; 0 means no sliding window")
    context_train_tokens: int | None = None
    n_expert: int | None = None
    n_expert_used: int | None = None
    file_type: str | None = Field(default=None, description="e.g. 'Q4_K - Medium', 'MXFP4 MoE'")
    params_total: int | None = Field(default=None, description="parameters, from 'model params = 20.91 B' (rounded)")

    def known(self) -> dict[str, object]:
        """The fields the log did state."""
        return {name: value for name, value in self.model_dump().items() if value is not None}


class Expected(Result):
    """Something a log of this engine normally states, looked for and not found."""

    kind: Literal["figure", "setting", "geometry", "version"]
    name: str


class LogNote(Result):
    """A remark about the parse; `code` is stable so pages can choose their wording."""

    code: str
    message: str
    line: int | None = None


LineStatus = Literal["used", "skipped", "blank"]
LineReason = Literal["read", "known_unused", "other_engine", "not_engine_text", "blank"]


class LineReport(Result):
    """What became of one pasted line: read (and what it gave), or skipped and why."""

    number: int = Field(description="1-based line number in the pasted text")
    status: LineStatus
    reason: LineReason = Field(
        description="read: it gave the figures/settings in `produced`; known_unused: a line of the engine that "
        "states nothing servewise uses (tokenizer metadata, progress); other_engine: a line of another engine; "
        "not_engine_text: no engine phrase (a command, prose, markdown); blank: nothing but prefixes or spaces"
    )
    produced: tuple[str, ...] = Field(default=(), description="figure names, setting and geometry keys it gave")
    stripped: tuple[str, ...] = Field(default=(), description="what was removed before reading, in words")
    text: str = Field(description="the engine text read, after prefixes were removed")
    raw: str = Field(description="the line exactly as pasted")


class ParsedLog(Result):
    """Everything recognised in one pasted start-up log."""

    engine: str | None = Field(description="engine id (one of calculators.engines.ENGINE_IDS) or None")
    runner: str | None = Field(
        default=None, description="engine whose lines this engine relays (llama.cpp's for Ollama)"
    )
    version: str | None = None
    logged_at: str | None = Field(default=None, description="first date (YYYY-MM-DD) of the log's own time stamps; "
                                  "bounds the release when the log states none")
    geometry: LogGeometry = Field(default_factory=LogGeometry)
    settings: dict[str, SettingValue] = Field(default_factory=dict, description="the engine's own setting keys")
    runner_settings: dict[str, SettingValue] = Field(
        default_factory=dict, description="settings of the relayed runner, in its vocabulary (llama-cpp keys)"
    )
    figures: list[Figure] = Field(default_factory=list)
    devices: list[str] = Field(default_factory=list, description="devices that hold a buffer, in order of appearance")
    hardware: list[str] = Field(default_factory=list, description="accelerator names the log lists, e.g. 'NVIDIA A100'")
    refusal: str | None = Field(default=None, description="the engine's own words when it refused to start")
    missing: list[Expected] = Field(default_factory=list)
    notes: list[LogNote] = Field(default_factory=list)
    line_count: int = 0
    lines: list[LineReport] = Field(default_factory=list, description="every pasted line: used or skipped, and why")

    def lines_with(self, status: LineStatus) -> list[LineReport]:
        """The line reports of one status, in paste order."""
        return [line for line in self.lines if line.status == status]

    def figures_named(self, name: str, *, cache: str | None = None, device: str | None = None) -> list[Figure]:
        """All figures with this name (optionally for one cache or device), in log order."""
        return [
            f
            for f in self.figures
            if f.name == name and (cache is None or f.cache == cache) and (device is None or f.device == device)
        ]

    def figure(self, name: str, *, cache: str | None = None, device: str | None = None) -> Figure | None:
        """The last figure with this name (engines reprint on reload; the last print is the one in force)."""
        found = self.figures_named(name, cache=cache, device=device)
        return found[-1] if found else None

    def total(self, name: str, *, cache: str | None = None) -> int | None:
        """Sum of a per-device figure over devices (e.g. every CUDAn 'kv_buffer_bytes' of one cache), or None."""
        found = self.figures_named(name, cache=cache)
        return sum(int(f.value) for f in found) if found else None

    def caches(self) -> list[str]:
        """Names of the caches the log reports per-cache figures for, in order of appearance."""
        names: list[str] = []
        for f in self.figures:
            if f.cache is not None and f.cache not in names:
                names.append(f.cache)
        return names

    @property
    def recognised(self) -> bool:
        """True when the log was attributed to an engine."""
        return self.engine is not None
