"""Schema of the public speed measurements the speed model is fitted to and checked against.

Two files share this schema:

- `speed_measurements.yaml`: every measurement the default speed model is fitted to (single-stream
  decode and prefill rates, serving sweeps at several load levels);
- `speed_holdout_4167.yaml`: the Apple-silicon llama.cpp scoreboard (ggml-org/llama.cpp discussion
  #4167), reserved for checking. Nothing in calculators/speed fits or tunes on it; only the accuracy
  ledger (bench/bench_speed_accuracy.py) reads it, to report held-out error.

Units are in the field names: bytes, tokens, tokens per second, milliseconds, decimal GB/s (10^9
bytes/s), dense TFLOPS (10^12 flop/s). Each hardware entry, model artefact and measurement names its
source; `via` says where a value was read when it was not read on its original page (a transcription).
"""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from knowledge.common import Frozen, KnowledgeError, Sourced, Unknown
from knowledge.gpus import Slug

SPEED_DIR = Path(__file__).resolve().parent
FIT_FILE = "speed_measurements.yaml"
HOLDOUT_FILE = "speed_holdout_4167.yaml"

#: The four hardware classes the speed model keeps separate parameters for.
HardwareClass = Literal["consumer-gddr", "datacenter-hbm", "apple-unified", "cpu"]
HARDWARE_CLASSES: tuple[str, ...] = ("consumer-gddr", "datacenter-hbm", "apple-unified", "cpu")

#: Model artefact ids keep the model's own spelling of sizes and quant names: "llama-3.1-8b-q4_k_m".
ArtefactId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]

#: What a single-stream point measured. Rates are tokens per second; times are milliseconds.
PointMetric = Literal["decode_tokens_per_s", "prefill_tokens_per_s", "tpot_ms", "ttft_ms"]


class SpeedHardware(Sourced):
    """One accelerator (or CPU memory system) a measurement ran on, with the figures the model needs."""

    id: Slug = Field(description="catalog id from knowledge/gpus.yaml when `in_catalog`, else a local slug")
    name: str = Field(min_length=2)
    hardware_class: HardwareClass
    in_catalog: bool = Field(description="True when `id` is an entry of knowledge/gpus.yaml")
    memory_bandwidth_gb_per_s: float = Field(gt=0, description="peak (marketed or theoretical) decimal GB/s")
    dense_fp16_tflops: float | Unknown = Field(default="unknown", description="dense 16-bit tensor TFLOPS")
    dense_fp16_acc_tflops: float | Unknown = Field(
        default="unknown",
        description="dense FP16 tensor TFLOPS with FP16 accumulate where it differs from dense_fp16_tflops (GeForce "
                    "cards; the catalog's figure when in_catalog)",
    )
    memory_bytes: int | None = Field(
        default=None, gt=0, description="device memory (marketed GB read as GiB); None = see the catalog or unknown"
    )
    note: str = ""


class SpeedModelArtefact(Sourced):
    """One model at one precision/quantization: what a forward pass reads and computes."""

    id: ArtefactId
    name: str = Field(min_length=2)
    weights_bytes: int = Field(gt=0, description="bytes of all weights as stored (file or checkpoint)")
    embedding_bytes_not_read: int = Field(
        default=0,
        ge=0,
        description="input-embedding bytes a decode step does not stream (untied embeddings: one row is read)",
    )
    params_active: int = Field(gt=0, description="parameters used per token (MoE: active only)")
    n_layers: int = Field(gt=0)
    attention_q_dim: int = Field(gt=0, description="query heads x head dim (attention FLOPs per context token)")
    kv_bytes_per_token: int = Field(gt=0, description="K+V bytes per token at the measured cache type")
    weights_quantized: bool | None = Field(
        default=None,
        description="block-quantized weights (Q4_0, Q4_K...: llama.cpp's quantized mat-vec path) or 16-bit ones; "
                    "None = not recorded (only the kernel-launch count of a graph-less step needs it)",
    )
    note: str = ""

    @property
    def weights_read_bytes(self) -> int:
        """Bytes a decode step streams: all weights except the input-embedding table."""
        return self.weights_bytes - self.embedding_bytes_not_read

    @model_validator(mode="after")
    def _embedding_below_weights(self) -> SpeedModelArtefact:
        if self.embedding_bytes_not_read >= self.weights_bytes:
            raise ValueError("embedding_bytes_not_read must be below weights_bytes")
        return self


class SpeedPoint(Frozen):
    """One single-stream (batch 1 unless `batch` says otherwise) measurement."""

    id: str = Field(min_length=3)
    engine: Literal["llama-cpp", "ollama", "vllm", "sglang", "mlx-lm"]
    engine_version: str = Field(min_length=1)
    backend: str = Field(default="", description="e.g. CUDA, ROCm, Vulkan, Metal, CPU")
    hardware: Slug
    model: ArtefactId
    metric: PointMetric
    value: float = Field(gt=0)
    statistic: Literal["mean", "median"] = "mean"
    batch: int = Field(default=1, ge=1)
    context_tokens: int = Field(default=0, ge=0, description="tokens already in the KV cache while decoding")
    prompt_tokens: int = Field(default=0, ge=0, description="prompt length for prefill / TTFT points")
    source: str = Field(min_length=3)
    via: str = Field(default="", description="where the value was read, when not on the original page")
    measured: str = Field(default="unknown", description="date or version of the measurement as published")
    graph_replay: bool | None = Field(
        default=None,
        description="whether the measured build replays a captured GPU graph for each decode step (CUDA graphs); "
                    "False: the host launches every kernel of every token (the file says which source dates the "
                    "build); "
                    "None: not established",
    )
    note: str = ""

    @model_validator(mode="after")
    def _prompt_for_prefill(self) -> SpeedPoint:
        if self.metric in ("prefill_tokens_per_s", "ttft_ms") and self.prompt_tokens <= 0:
            raise ValueError(f"{self.metric} needs prompt_tokens")
        return self


class SweepLevel(Frozen):
    """One load level of a serving sweep: medians (and p99 where published) in milliseconds."""

    load: float = Field(gt=0, description="requests per second (open loop) or concurrent clients (closed loop)")
    ttft_ms_p50: float | None = Field(default=None, gt=0)
    ttft_ms_p99: float | None = Field(default=None, gt=0)
    itl_ms_p50: float | None = Field(default=None, gt=0, description="inter-token latency or TPOT median")
    output_tokens_per_s: float | None = Field(default=None, gt=0)


class LengthShape(Frozen):
    """Token lengths of a sweep's requests: fixed, or lognormal by median and sigma, capped."""

    kind: Literal["fixed", "lognormal"]
    value: int = Field(default=0, ge=0)
    median: float = Field(default=0, ge=0)
    sigma: float = Field(default=0, ge=0)
    cap: int | None = Field(default=None, ge=1)


class SpeedSweep(Frozen):
    """A serving benchmark at several load levels on one engine, model and accelerator."""

    id: str = Field(min_length=3)
    engine: Literal["vllm", "sglang", "llama-cpp", "ollama", "mlx-lm"]
    engine_version: str
    hardware: Slug
    model: ArtefactId
    arrival: Literal["poisson", "closed"]
    n_requests: int = Field(ge=1)
    prompt: LengthShape
    prompt_lengths: tuple[int, ...] = Field(
        default=(),
        description="prompt tokens of the run's requests in the order it sent them, when its dataset is published "
        "(replaces `prompt`); request i of every load level has prompt_lengths[i]",
    )
    output: LengthShape
    passes_per_level: int = Field(
        default=1, ge=1, description="times the run sent the same requests at each load level, one pass after the "
        "other on one engine instance, pooling every pass's latencies into the level's percentiles (levels run in "
        "the listed order on that instance)",
    )
    arrival_seed: int | None = Field(
        default=None, description="open loop: the run's inter-arrival times are reproducible, drawn from one "
        "random.Random(arrival_seed) stream, n_requests expovariate(load) draws per pass, passes then levels in "
        "order; None: unknown draws",
    )
    itl_kind: Literal["itl", "tpot"] = Field(description="which per-token latency `itl_ms_p50` holds")
    policy: dict[str, int | bool] = Field(
        default_factory=dict, description="scheduler settings of the run, as fields of the engine's simulator policy"
    )
    levels: tuple[SweepLevel, ...] = Field(min_length=2)
    source: str = Field(min_length=3)
    via: str = ""
    measured: str = "unknown"
    note: str = ""


class SpeedMeasurementSet(Frozen):
    """One measurements file: hardware, model artefacts, single-stream points and serving sweeps."""

    verified_on: dt.date
    purpose: Literal["fit", "holdout"]
    hardware: tuple[SpeedHardware, ...]
    models: tuple[SpeedModelArtefact, ...]
    points: tuple[SpeedPoint, ...] = ()
    sweeps: tuple[SpeedSweep, ...] = ()

    @model_validator(mode="after")
    def _references(self) -> SpeedMeasurementSet:
        for kind, items in (
            ("hardware", self.hardware),
            ("models", self.models),
            ("points", self.points),
            ("sweeps", self.sweeps),
        ):
            ids = [item.id for item in items]
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            if duplicates:
                raise ValueError(f"duplicate {kind} ids: {', '.join(duplicates)}")
        hardware = {h.id for h in self.hardware}
        models = {m.id for m in self.models}
        listed: tuple[SpeedPoint | SpeedSweep, ...] = (*self.points, *self.sweeps)
        for item in listed:
            if item.hardware not in hardware:
                raise ValueError(f"{item.id}: hardware {item.hardware!r} is not listed under hardware")
            if item.model not in models:
                raise ValueError(f"{item.id}: model {item.model!r} is not listed under models")
        return self

    def hardware_by_id(self) -> dict[str, SpeedHardware]:
        """Hardware entries keyed by id."""
        return {h.id: h for h in self.hardware}

    def models_by_id(self) -> dict[str, SpeedModelArtefact]:
        """Model artefacts keyed by id."""
        return {m.id: m for m in self.models}


@functools.lru_cache(maxsize=4)
def load_speed_measurements(name: str = FIT_FILE, directory: str | None = None) -> SpeedMeasurementSet:
    """Load and validate one speed-measurement file (default: the fit set), once per process."""
    from knowledge.loader import load_yaml_file

    path = (Path(directory) if directory else SPEED_DIR) / name
    data = load_yaml_file(path, SpeedMeasurementSet)
    expected = "holdout" if name == HOLDOUT_FILE else "fit"
    if data.purpose != expected:
        raise KnowledgeError(f"{name}: purpose is {data.purpose!r}, expected {expected!r}")
    return data


__all__ = [
    "FIT_FILE",
    "HARDWARE_CLASSES",
    "HOLDOUT_FILE",
    "HardwareClass",
    "LengthShape",
    "SpeedHardware",
    "SpeedMeasurementSet",
    "SpeedModelArtefact",
    "SpeedPoint",
    "SpeedSweep",
    "SweepLevel",
    "load_speed_measurements",
]
