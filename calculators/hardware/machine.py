"""The machine a plan is made for: accelerators, their memory, and host RAM for offload."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Machine(BaseModel):
    """Devices a model is served on. Memory in bytes per device; bandwidth in bytes per second."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device_memory_bytes: int = Field(gt=0, description="memory of one device as the engine sees it (bytes)")
    n_devices: int = Field(default=1, ge=1)
    memory_bandwidth_bytes_per_s: float | None = Field(default=None, gt=0)
    dense_bf16_flops_per_s: float | None = Field(default=None, gt=0)
    host_ram_bytes: int | None = Field(default=None, gt=0)
    unified_memory: bool = Field(default=False, description="Apple silicon: GPU and CPU share one pool")
    gpu_id: str | None = Field(default=None, description="catalog id when picked from knowledge/gpus.yaml")
