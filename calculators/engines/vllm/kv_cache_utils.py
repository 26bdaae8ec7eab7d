"""KV cache groups and block arithmetic as vllm/v1/core/kv_cache_utils.py computes them: grouping, the
number of blocks, a request's blocks, "Maximum concurrency" and the estimated maximum model length."""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil

from calculators.engines.vllm.kv_cache_interface import KVCacheSpec
from calculators.errors import ServewiseInputError
from calculators.memory.plan import PlanNote
from calculators.units import GIB


@dataclass(frozen=True)
class KVCacheGroup:
    spec: KVCacheSpec | None  # None for the "uniform type" group, whose layers keep their own specs
    layers: tuple[int, ...]  # global layer indices
    layer_specs: tuple[KVCacheSpec, ...] = ()  # uniform-type group only

    @property
    def is_uniform_type(self) -> bool:
        return self.spec is None

    @property
    def block_size(self) -> int:
        return self.layer_specs[0].block_size if self.is_uniform_type else self.spec.block_size

    def page_bytes(self) -> int:
        """Page size of the group (uniform type: the sum over its layers)."""
        if self.is_uniform_type:
            return sum(s.page_bytes for s in self.layer_specs)
        return self.spec.page_bytes

    def max_memory_usage_bytes(self, max_model_len: int, in_flight: int) -> int:
        """A request's maximum bytes for this group's spec (uniform type: pages of the worst layer x page)."""
        if self.is_uniform_type:
            pages = max(ceil(s.max_memory_usage_bytes(max_model_len, in_flight) / s.page_bytes) for s in self.layer_specs)
            return pages * self.page_bytes()
        return self.spec.max_memory_usage_bytes(max_model_len, in_flight)


def is_uniform_type_specs(specs: list[KVCacheSpec]) -> bool:
    """vLLM's UniformTypeKVCacheSpecs.is_uniform_type: one block size and one attention type (and window)."""
    if len({s.block_size for s in specs}) > 1:
        return False
    first = specs[0]
    if first.kind in ("full", "mla"):
        return all(s.kind in ("full", "mla") for s in specs)
    return all(s.kind == "sliding" and s.sliding_window == first.sliding_window for s in specs)


def kv_cache_groups(specs: dict[int, KVCacheSpec]) -> list[KVCacheGroup]:
    """Split the KV layers into groups exactly as vLLM's get_kv_cache_groups does."""
    if not specs:
        return []
    values = list(specs.values())
    if all(v == values[0] for v in values):
        return [KVCacheGroup(values[0], tuple(specs))]
    if is_uniform_type_specs(values):
        return [KVCacheGroup(None, tuple(specs), tuple(values))]
    # unify_kv_cache_spec_page_size: grow the block size of layers whose page is smaller
    max_page = max(s.page_bytes for s in values)
    unified: dict[int, KVCacheSpec] = {}
    for index, spec in specs.items():
        if spec.kind == "mamba" and spec.page_bytes != max_page:
            spec = replace(spec, mamba_page_bytes=max_page)  # a state page is padded, never re-blocked
        elif spec.page_bytes != max_page:
            if max_page % spec.page_bytes:
                raise ServewiseInputError(
                    "vLLM cannot unify this model's KV page sizes (not divisible); servewise cannot plan it"
                )
            spec = replace(spec, block_size=spec.block_size * (max_page // spec.page_bytes))
        unified[index] = spec
    same_type: dict[KVCacheSpec, list[int]] = {}
    for index, spec in unified.items():
        same_type.setdefault(spec, []).append(index)
    sizes = [len(layers) for layers in same_type.values()]
    group_size = min(sizes)
    if max(sizes) < group_size * 1.5:
        group_size = max(sizes)
    groups: list[KVCacheGroup] = []
    for spec, layers in same_type.items():
        n_groups = ceil(len(layers) / group_size)
        groups.extend(KVCacheGroup(spec, tuple(layers[i::n_groups])) for i in range(n_groups))
    return groups


def project_to_stage(groups: list[KVCacheGroup], stage_layers: set[int]) -> list[KVCacheGroup]:
    """The global groups restricted to one pipeline stage's layers (vLLM's _project_kv_cache_groups_to_worker)."""
    projected = []
    for group in groups:
        keep = tuple(i for i in group.layers if i in stage_layers)
        if group.is_uniform_type:
            by_layer = dict(zip(group.layers, group.layer_specs, strict=True))
            projected.append(KVCacheGroup(None, keep, tuple(by_layer[i] for i in keep)))
        else:
            projected.append(KVCacheGroup(group.spec, keep))
    return projected


def num_groups(groups: list[KVCacheGroup]) -> int:
    return max(len(g.layers) for g in groups)


def get_num_blocks(groups: list[KVCacheGroup], available_bytes: int) -> int:
    """Blocks that fit in one worker's budget (vLLM's get_kv_cache_config_from_groups)."""
    if not groups:
        return 1  # attention-free: the block pool still keeps a null block
    if len(groups) == 1 and groups[0].is_uniform_type:
        return max(0, available_bytes // groups[0].page_bytes())
    return max(0, int(available_bytes // groups[0].page_bytes() // num_groups(groups)))


def pool_size_bytes(groups: list[KVCacheGroup], num_blocks: int) -> int:
    """Bytes of the KV tensors vLLM allocates on one worker for `num_blocks` blocks."""
    if not groups:
        return 0
    if len(groups) == 1 and groups[0].is_uniform_type:
        return groups[0].page_bytes() * num_blocks
    return num_groups(groups) * groups[0].page_bytes() * num_blocks


def request_needed_bytes(groups: list[KVCacheGroup], max_model_len: int, in_flight: int) -> int:
    """Bytes one request of max_model_len needs on one worker (vLLM's _max_memory_usage_bytes_from_groups)."""
    if not groups:
        return 0
    if len(groups) == 1 and groups[0].is_uniform_type:
        return sum(s.max_memory_usage_bytes(max_model_len, in_flight) for s in groups[0].layer_specs)
    page = groups[0].page_bytes()
    blocks = sum(ceil(g.max_memory_usage_bytes(max_model_len, in_flight) / page) for g in groups)
    return num_groups(groups) * page * blocks


def estimate_max_model_len(groups: list[KVCacheGroup], available_bytes: int, upper: int, in_flight: int) -> int:
    """Largest max_model_len whose request fits in `available_bytes` (vLLM's binary search); 0 if none."""
    if request_needed_bytes(groups, 1, in_flight) > available_bytes:
        return 0
    left, right, result = 1, upper, 1
    while left <= right:
        mid = (left + right) // 2
        if request_needed_bytes(groups, mid, in_flight) <= available_bytes:
            result, left = mid, mid + 1
        else:
            right = mid - 1
    return result


def get_max_concurrency(groups: list[KVCacheGroup], num_blocks: int, max_model_len: int, in_flight: int) -> float:
    """vLLM's get_max_concurrency_for_kv_cache_config: blocks in the pool / blocks one full request needs."""
    if not groups:
        return 0.0
    layers_per_group = num_groups(groups)
    per_request = layers_per_group * sum(g.max_memory_usage_bytes(max_model_len, in_flight) for g in groups)
    per_block = groups[0].page_bytes() * layers_per_group
    return num_blocks / ceil(per_request / per_block)


@dataclass(frozen=True)
class KvCacheCheck:
    """The max_model_len vLLM serves after its start-up check, and what it refused or noted on the way."""

    max_model_len: int
    estimated_max_model_len: int | None
    refusals: tuple[str, ...]
    notes: tuple[PlanNote, ...]


def check_enough_kv_cache_memory(
    per_stage_groups: list[list[KVCacheGroup]], available: int, max_model_len: int, in_flight: int, auto_fit: bool
) -> KvCacheCheck:
    """vLLM's auto-fit (max_model_len -1 / auto) and check_enough_kv_cache_memory, per pipeline stage: one request
    of max_model_len tokens must fit the available bytes, else vLLM refuses and names the longest that would."""
    refusals: list[str] = []
    notes: list[PlanNote] = []
    estimated_len: int | None = None
    if not per_stage_groups:
        return KvCacheCheck(max_model_len, None, (), ())
    if auto_fit:
        fitted = min(estimate_max_model_len(g, available, max_model_len, in_flight) for g in per_stage_groups)
        if fitted <= 0:
            refusals.append("Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
                            "single token. Try increasing `gpu_memory_utilization`.")
        else:
            if fitted < max_model_len:
                notes.append(PlanNote(code="vllm_auto_fit",
                                      message=f"Auto-fit max_model_len: reduced from {max_model_len} to {fitted}."))
            max_model_len = min(max_model_len, fitted)
    if available <= 0:
        refusals.append("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                        "when initializing the engine.")
    else:
        for stage_groups in per_stage_groups:
            needed = request_needed_bytes(stage_groups, max_model_len, in_flight)
            if needed > available:
                estimated_len = estimate_max_model_len(stage_groups, available, max_model_len, in_flight)
                hint = (f"Based on the available memory, the estimated maximum model length is {estimated_len}. "
                        if estimated_len > 0 else "")
                refusals.append(
                    f"To serve at least one request with the models's max seq len ({max_model_len}), "
                    f"({needed / GIB:.2f} GiB KV cache is needed, which is larger than the available KV cache "
                    f"memory ({available / GIB:.2f} GiB). {hint}Try increasing `gpu_memory_utilization` or "
                    "decreasing `max_model_len` when initializing the engine."
                )
                break
    return KvCacheCheck(max_model_len, estimated_len, tuple(refusals), tuple(notes))
