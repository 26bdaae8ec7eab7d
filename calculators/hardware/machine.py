"""The machine a plan is made for: accelerators, their memory, and host RAM for offload."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: CPU instruction-set extensions engines' CPU builds choose kernels by (vLLM: AMX MLA, fp8 KV on AVX-512,
#: float32 Mamba state on AVX-512 BF16).
CpuFeature = Literal["avx512", "avx512_bf16", "amx"]


class Machine(BaseModel):
    """Devices a model is served on. Memory in bytes per device; bandwidth in bytes per second."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device_memory_bytes: int = Field(gt=0, description="memory of one device as the engine sees it (bytes)")
    n_devices: int = Field(default=1, ge=1)
    memory_bandwidth_bytes_per_s: float | None = Field(default=None, gt=0)
    dense_bf16_flops_per_s: float | None = Field(default=None, gt=0)
    dense_fp16_acc_flops_per_s: float | None = Field(
        default=None, gt=0,
        description="dense FP16 flop/s with FP16 accumulate where it differs from the BF16 figure (GeForce cards); "
                    "None = the same")
    host_ram_bytes: int | None = Field(default=None, gt=0)
    unified_memory: bool = Field(default=False, description="Apple silicon: GPU and CPU share one pool")
    gpu_id: str | None = Field(default=None, description="catalog id when picked from knowledge/gpus.yaml")
    device_kind: Literal["gpu", "cpu"] = Field(
        default="gpu", description="what the engine runs on: 'cpu' plans an engine's CPU build in host memory")
    cpu_features: frozenset[CpuFeature] = Field(
        default=frozenset(), description="ISA extensions of the CPU when device_kind is 'cpu'")
