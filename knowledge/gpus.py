"""Schema of the accelerator catalog (knowledge/gpus.yaml): memory, bandwidth, dense throughput, links.

Units are in the field names. Memory capacity is kept twice: as marketed ("80 GB" on the datasheet,
which for HBM/GDDR/LPDDR parts is in practice binary gigabytes) and, where someone printed it, as the
driver or framework reports it (nvidia-smi's total in MiB, CUDA's totalGlobalMem in bytes). Bandwidth
is decimal GB/s (10^9 bytes/s) as vendors quote it. Throughput is DENSE tensor TFLOPS (10^12 flop/s);
figures "with sparsity" are never stored. Apple silicon is described per chip with its memory options
and expanded into one catalog entry per (chip, memory size).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from knowledge.common import Frozen, Sourced, Unknown
from knowledge.engines import VENDOR_BACKENDS

#: How a value that does not exist on the hardware is written (e.g. FP8 tensor cores before Hopper/Ada).
NotSupported = Literal["not supported"]
NOT_SUPPORTED = "not supported"
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
#: Bytes per GiB (knowledge/ sits below calculators/, so it cannot import calculators.units).
_GIB = 2**30



def _check_slug(value: str) -> str:
    if not SLUG.match(value):
        raise ValueError(f"id {value!r} must be a lowercase slug such as 'h100-sxm-80gb'")
    return value


#: Catalog ids end up in shared URLs: lowercase words joined by hyphens.
Slug = Annotated[str, AfterValidator(_check_slug)]

#: vendor: the vendor's own page; vendor-copy: a reproduction of the vendor's sheet; third-party: weaker.
SourceQuality = Literal["vendor", "vendor-copy", "third-party"]


class ReportedMemory(Sourced):
    """Memory as software reports it for one device, e.g. nvidia-smi's 'Memory-Usage' total."""

    bytes: int = Field(gt=0, description="reported capacity converted to bytes (MiB x 2^20 for nvidia-smi)")
    printed_as: str = Field(min_length=1, description="the figure exactly as the tool printed it, e.g. '81559MiB'")
    tool: Literal["nvidia-smi", "cuda-deviceQuery", "rocm-smi"]


class Interconnect(Frozen):
    """One way a device talks to its peers or host. Bandwidth is decimal GB/s per device."""

    kind: Literal["nvlink", "nvlink-bridge", "pcie", "xgmi"]
    generation: str | Unknown = "unknown"
    bandwidth_gb_per_s: float | Unknown = Field(default="unknown", description="per device, as the vendor states it")
    bandwidth_basis: Literal["bidirectional", "per-direction"] | Unknown = "unknown"
    note: str = ""

    @field_validator("bandwidth_gb_per_s")
    @classmethod
    def _positive(cls, value: float | str) -> float | str:
        if isinstance(value, (int, float)) and value <= 0:
            raise ValueError("bandwidth must be positive (or 'unknown')")
        return value


class GpuGeneration(Sourced):
    """Which architecture a device is, in the terms engines check before choosing a kernel.

    NVIDIA: the CUDA compute capability (major.minor, 9.0 = Hopper); AMD: the gfx target (gfx942 =
    MI300X/MI325X). The formats matrix's hardware paths compare against these.
    """

    architecture: str = Field(min_length=2, description="vendor's architecture name, e.g. 'Hopper', 'CDNA 4'")
    compute_capability: float | None = Field(default=None, ge=1, le=20, description="NVIDIA only")
    gpu_arch: str | None = Field(default=None, pattern=r"^gfx[0-9a-f]+$", description="AMD gfx target")


class TensorRateRead(Sourced):
    """Where one GPU's dense BF16 tensor figure was read: the document, its version and the exact row.

    The stored figure is dense (no sparsity), BF16 with FP32 accumulate (what PyTorch, vLLM and llama.cpp run), at
    the boost clock the source states. GeForce cards run FP16 accumulate at twice and FP32 accumulate at half that
    rate, so their FP32-accumulate row is the one read. A figure servewise multiplied from cited factors (SM count x
    boost clock x flops per SM per clock) is `derived` and shows its `arithmetic`.
    """

    row: str = Field(min_length=3, description="the row or label read, as printed in the source")
    printed: str = Field(min_length=1, description="the figure(s) exactly as printed there, e.g. '71.2/142.4'")
    derived: bool = Field(default=False, description="True when servewise multiplied cited factors")
    arithmetic: str = Field(default="", description="the multiplication, each factor with where it was read")

    @model_validator(mode="after")
    def _derived_shows_its_arithmetic(self) -> TensorRateRead:
        if self.derived and not self.arithmetic:
            raise ValueError("a derived tensor rate must show its arithmetic")
        return self


class Gpu(Sourced):
    """One discrete accelerator (or one Apple silicon configuration) with the figures sizing needs."""

    id: Slug = Field(description="stable slug used in URLs, e.g. 'h100-sxm-80gb'")
    name: str = Field(min_length=2)
    vendor: Literal["nvidia", "amd", "apple"]
    memory_marketed_gb: float = Field(gt=0, description="capacity as marketed ('GB' on the datasheet)")
    memory_type: str = Field(min_length=2)
    memory_reported: ReportedMemory | Unknown = "unknown"
    memory_bandwidth_gb_per_s: float | Unknown = Field(description="decimal GB/s (10^9 bytes/s)")
    dense_bf16_tflops: float | Unknown | NotSupported = Field(description="dense BF16 tensor TFLOPS, no sparsity")
    dense_fp8_tflops: float | Unknown | NotSupported = Field(description="dense FP8 tensor TFLOPS, no sparsity")
    dense_bf16_read: TensorRateRead | None = Field(
        default=None, description="where dense_bf16_tflops was read (document, version, row); None = the entry's source"
    )
    dense_fp16_acc_tflops: float | Unknown = Field(
        default="unknown",
        description="dense FP16 tensor TFLOPS with FP16 accumulate, where it differs from dense_bf16_tflops: GeForce "
                    "cards run FP32 accumulate at half their FP16-accumulate rate (unknown elsewhere: professional and "
                    "data-centre parts publish one rate for both accumulates)",
    )
    dense_fp16_acc_read: TensorRateRead | None = Field(
        default=None, description="where dense_fp16_acc_tflops was read or how it was derived"
    )
    gpu_alu_fp16_tflops: float | Unknown = Field(
        default="unknown",
        description="FP16 TFLOPS of the shader ALUs, for GPUs without tensor units (Apple before M5): compute rate",
    )
    gpu_alu_source: str = Field(default="", description="where gpu_alu_fp16_tflops was read (the Apple chip entry)")
    interconnects: tuple[Interconnect, ...] = ()
    tdp_watts: float | Unknown | None = Field(default=None, description="board power; None = not recorded")
    unified_memory: bool = False
    generation: GpuGeneration | None = Field(default=None, description="architecture, compute capability / gfx")
    source_quality: SourceQuality
    also_read: tuple[str, ...] = Field(default=(), description="further pages the figures were checked against")
    note: str = ""

    @field_validator("memory_bandwidth_gb_per_s", "dense_bf16_tflops", "dense_fp8_tflops", "gpu_alu_fp16_tflops",
                     "dense_fp16_acc_tflops")
    @classmethod
    def _positive_number(cls, value: float | str) -> float | str:
        if isinstance(value, (int, float)) and value <= 0:
            raise ValueError("must be positive, 'unknown' or 'not supported'")
        return value

    @model_validator(mode="after")
    def _a_read_rate_has_a_figure(self) -> Gpu:
        if self.dense_bf16_read is not None and not isinstance(self.dense_bf16_tflops, (int, float)):
            raise ValueError("dense_bf16_read names where a figure was read, so dense_bf16_tflops must be a number")
        if (self.dense_fp16_acc_read is None) != (not isinstance(self.dense_fp16_acc_tflops, (int, float))):
            raise ValueError("dense_fp16_acc_tflops and dense_fp16_acc_read go together (a figure names its source)")
        return self

    @property
    def memory_bytes(self) -> int:
        """Capacity in bytes: the reported figure when known, else marketed GB read as GiB (an upper bound)."""
        if not isinstance(self.memory_reported, str):
            return self.memory_reported.bytes
        return int(self.memory_marketed_gb * _GIB)

    @property
    def backends(self) -> tuple[str, ...]:
        """Hardware backends (engines.yaml vocabulary) that drive this device, most direct first."""
        return VENDOR_BACKENDS[self.vendor]

    @property
    def memory_is_reported(self) -> bool:
        """True when `memory_bytes` comes from a tool's printout rather than the marketed size."""
        return not isinstance(self.memory_reported, str)


class AppleGpuThroughput(Sourced):
    """Peak arithmetic rate of an Apple GPU's shader ALUs for one core count (fused multiply-add = 2 flops).

    Apple GPUs before M5 have no matrix units: FP16 (and the BF16 that MLX and llama.cpp's Metal kernels
    compute in half or float) runs on the same FP32 ALUs at the same rate, so this is the compute ceiling of
    prefill on these chips. A figure computed from cited factors is `derived` and shows its `arithmetic`.
    """

    gpu_cores: int = Field(gt=0, description="GPU cores of the configuration the figure is for (the full chip)")
    fp32_tflops: float = Field(gt=0, description="dense FP32 TFLOPS of the shader ALUs")
    fp16_tflops: float = Field(gt=0, description="dense FP16 TFLOPS of the same ALUs")
    derived: bool = Field(default=False, description="True when servewise multiplied cited factors")
    arithmetic: str = Field(default="", description="the product, e.g. '76 cores x 128 ALUs x 2 x 1.398 GHz'")
    note: str = ""

    @model_validator(mode="after")
    def _derived_shows_its_arithmetic(self) -> AppleGpuThroughput:
        if self.derived and not self.arithmetic:
            raise ValueError("a derived GPU throughput must show its arithmetic")
        return self


class AppleChip(Sourced):
    """An Apple silicon chip variant: its unified-memory options share one bandwidth figure."""

    id: Slug
    name: str = Field(min_length=2)
    gpu_cores: int | Unknown = "unknown"
    memory_options_gb: tuple[int, ...] = Field(min_length=1, description="unified memory sizes sold, marketed GB")
    memory_type: str = "LPDDR"
    memory_bandwidth_gb_per_s: float | Unknown
    gpu_throughput: AppleGpuThroughput | Unknown = Field(
        default="unknown", description="shader-ALU TFLOPS of the full GPU, sourced; 'unknown' when none is"
    )
    source_quality: SourceQuality
    also_read: tuple[str, ...] = ()
    note: str = ""

    def configurations(self) -> tuple[Gpu, ...]:
        """One catalog entry per memory option, e.g. 'm4-max-40c-128gb'. No tensor TFLOPS; the ALU rate when sourced."""
        alu = self.gpu_throughput
        return tuple(
            Gpu(
                id=f"{self.id}-{size_gb}gb",
                name=f"{self.name} {size_gb}\u00a0GB",  # no-break space: the size never wraps from its unit
                vendor="apple",
                memory_marketed_gb=size_gb,
                memory_type=self.memory_type,
                memory_bandwidth_gb_per_s=self.memory_bandwidth_gb_per_s,
                dense_bf16_tflops="unknown",
                dense_fp8_tflops="unknown",
                gpu_alu_fp16_tflops=alu if isinstance(alu, str) else alu.fp16_tflops,
                gpu_alu_source="" if isinstance(alu, str) else alu.source,
                unified_memory=True,
                source=self.source,
                verified=self.verified,
                source_quality=self.source_quality,
                also_read=self.also_read,
                note=self.note,
            )
            for size_gb in self.memory_options_gb
        )


class WorkingSetObservation(Sourced):
    """A printed Metal `recommendedMaxWorkingSetSize`: how much of a Mac's RAM the GPU may use by default."""

    chip: str = Field(min_length=2)
    ram_gib: int = Field(gt=0, description="installed unified memory (marketed GB = GiB)")
    working_set_mib: float = Field(gt=0, description="the printed figure converted to MiB (2^20 bytes)")
    printed_as: str = Field(min_length=1)
    macos: str | Unknown = "unknown"

    @property
    def share(self) -> float:
        """Fraction of installed RAM the GPU may wire by default on this machine."""
        return self.working_set_mib / (self.ram_gib * 1024)

    @model_validator(mode="after")
    def _below_ram(self) -> WorkingSetObservation:
        if self.working_set_mib > self.ram_gib * 1024:
            raise ValueError("working set cannot exceed installed RAM")
        return self


class AppleWorkingSet(Frozen):
    """The GPU-usable default share on Apple silicon, as measured by others (a separate, sourced fact)."""

    explanation: str = Field(min_length=10)
    raise_with: str = Field(min_length=3, description="how an operator raises the limit")
    raise_source: str = Field(min_length=3)
    observations: tuple[WorkingSetObservation, ...] = Field(min_length=1)


class GpuCatalog(Frozen):
    """Everything in knowledge/gpus.yaml. `all_gpus` is the flat list pages and calculators pick from."""

    gpus: tuple[Gpu, ...] = Field(min_length=1)
    apple_chips: tuple[AppleChip, ...] = ()
    apple_working_set: AppleWorkingSet

    @model_validator(mode="after")
    def _unique_ids(self) -> GpuCatalog:
        seen: set[str] = set()
        for gpu in self.all_gpus:
            if gpu.id in seen:
                raise ValueError(f"duplicate GPU id {gpu.id!r}")
            seen.add(gpu.id)
        chip_ids = [chip.id for chip in self.apple_chips]
        if len(chip_ids) != len(set(chip_ids)):
            raise ValueError("duplicate Apple chip id")
        return self

    # Built once per catalog (the catalog is frozen): building the Apple configurations validates a hundred-odd
    # models, which pages used to repeat on every rerun for every lookup.
    @cached_property
    def all_gpus(self) -> tuple[Gpu, ...]:
        """Discrete GPUs followed by every Apple silicon memory configuration."""
        return self.gpus + tuple(cfg for chip in self.apple_chips for cfg in chip.configurations())

    @cached_property
    def _by_id(self) -> dict[str, Gpu]:
        return {gpu.id: gpu for gpu in self.all_gpus}

    def get(self, gpu_id: str) -> Gpu:
        """The entry with this id; KeyError names the id when it is not in the catalog."""
        try:
            return self._by_id[gpu_id]
        except KeyError:
            raise KeyError(f"no GPU with id {gpu_id!r} in knowledge/gpus.yaml") from None


__all__ = [
    "NOT_SUPPORTED",
    "AppleChip",
    "AppleGpuThroughput",
    "AppleWorkingSet",
    "Gpu",
    "GpuCatalog",
    "GpuGeneration",
    "Interconnect",
    "ReportedMemory",
    "WorkingSetObservation",
]
