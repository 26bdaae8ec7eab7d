"""Result types every engine's memory plan returns: data only, formatting is the page's job.

Bytes are integers; `*_bytes` fields are per device unless the field says otherwise. An engine-specific plan
subclasses `MemoryPlan` and adds the figures that engine prints in its own vocabulary.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Result(BaseModel):
    """Frozen base for calculator results."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class CacheAllocation(Result):
    """One cache buffer as the engine allocates it (llama.cpp prints one line per such cache)."""

    name: str = Field(description="e.g. 'kv', 'kv_swa', 'recurrent', 'kv_mla'")
    layers: int
    cells: int = Field(description="token slots (KV) or sequence slots (recurrent) in the buffer")
    seqs: int = Field(description="sequences (streams) the buffer is shared by")
    type_k: str
    type_v: str
    k_bytes: int
    v_bytes: int

    @property
    def total_bytes(self) -> int:
        """K plus V bytes of this cache."""
        return self.k_bytes + self.v_bytes


class ComponentKind(StrEnum):
    """What a slice of device memory is used for."""

    WEIGHTS = "weights"
    KV_CACHE = "kv_cache"
    RECURRENT_STATE = "recurrent_state"
    ACTIVATIONS = "activations"  # engine workspace / compute buffers / profiled peak
    RUNTIME = "runtime"  # CUDA context, non-torch memory, graphs, allocator slack
    RESERVED = "reserved"  # deliberately left unused by the engine's memory fraction
    FREE = "free"


class MemoryComponent(Result):
    """One slice of a device's memory with where the figure comes from and whether it is exact."""

    kind: ComponentKind
    label: str
    bytes: int
    exact: bool = Field(description="True when the engine's own arithmetic gives exactly this figure")
    basis: str = Field(default="", description="source or rule the figure rests on")


class PlanNote(Result):
    """A warning or explanation attached to a plan; `code` is stable so pages can pick their wording."""

    code: str
    message: str


class MemoryPlan(Result):
    """What one engine allocates for one model, workload and machine, per device."""

    engine: str
    kv_bytes_per_token: int = Field(description="bytes per retained token summed over KV-holding layers, as allocated")
    kv_cache_bytes: int = Field(
        description="KV/latent cache bytes as the engine reports them: per rank for vLLM and SGLang (one rank "
        "planned), the total over devices for llama.cpp/Ollama (split in the plan's per-device list)"
    )
    weights_bytes: int | None = Field(description="weight bytes per device; None when unknown")
    caches: list[CacheAllocation] = Field(default_factory=list)
    components: list[MemoryComponent] = Field(default_factory=list)
    device_capacity_bytes: int | None = None
    refusal: str | None = Field(default=None, description="why the engine would refuse to start, in its own terms")
    notes: list[PlanNote] = Field(default_factory=list)

    @property
    def used_bytes(self) -> int:
        """Sum of all non-free components per device."""
        return sum(c.bytes for c in self.components if c.kind is not ComponentKind.FREE)

    def accelerator_loads_bytes(self) -> list[int]:
        """KV + weight bytes on each accelerator, for plans that split the model over devices (empty otherwise:
        such a plan describes one device, whose load is `used_bytes`)."""
        return []
