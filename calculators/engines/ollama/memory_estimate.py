"""Ollama's own memory prediction of v0.1–v0.12.10: the `msg=offload` line's KV, layer split and totals.

Until commit f560bd07 (2025-11-05, first release v0.12.11) Ollama decided how many layers to offload
from a prediction of its own, printed as `msg=offload` (`msg="offload to cuda"` in older releases):
fs/ggml/ggml.go `GraphSize` sizes the KV cache layer by layer and llm/memory.go `estimateGPULayers`
fills the GPUs with layers from the last one down. Both read in ollama/ollama at tag v0.12.10, with the
older variants noted where they differ (tags v0.5.7, v0.6.6, v0.11.0, v0.11.5), read 2026-12-01.

This module mirrors that arithmetic; it is a model of the prediction, not of what llama.cpp later
allocated. Sizes in bytes, contexts and batches in tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from calculators.i18n import _
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.units import MIB

#: fs/ggml/ggml.go kvCacheBytesPerElement: bytes per cached element by OLLAMA_KV_CACHE_TYPE.
KV_BYTES_PER_ELEMENT = {"q8_0": 1.0, "q4_0": 0.5, "f32": 4.0}
DEFAULT_KV_BYTES_PER_ELEMENT = 2.0  # f16, and any type Ollama does not know
#: ml/device.go MinimumMemory: memory Ollama keeps free on each GPU (Metal 512 MiB, others 457 MiB).
MINIMUM_MEMORY_BYTES = {"metal": 512 * MIB}
DEFAULT_MINIMUM_MEMORY_BYTES = 457 * MIB
GEMMA3_GLOBAL_EVERY = 6  # ggml.go: every 6th gemma3 layer is global, the others slide
GPTOSS_SLIDING_TOKENS = 4096  # ggml.go: even gpt-oss layers are sized for 4096 tokens per sequence + batch
# Releases that introduced a rule (tag where it first appears): older ones sized every layer for the context.
GEMMA3_RULE_SINCE = (0, 6, 6)
GPTOSS_RULE_SINCE = (0, 11, 0)
BACKWARD_FILL_SINCE = (0, 7, 0)  # 0478d440: blocks placed from the last one down
# 033cec23 (v0.6.1): memory.weights.total/.repeating stop counting each block's share of the KV cache; before it
# "total" was the sum of blocks + KV and "repeating" that sum minus the output layer
WEIGHTS_WITHOUT_KV_SINCE = (0, 6, 1)
#: The day each change was committed to main (commit dates): a log time-stamped before it ran older code.
WEIGHTS_WITHOUT_KV_COMMITTED = "2025-03-13"
BACKWARD_FILL_COMMITTED = "2025-05-13"
ESTIMATE_REMOVED_IN = (0, 12, 11)  # f560bd07: no msg=offload line from this release on

Version = tuple[int, int, int]


@dataclass(frozen=True)
class EstimatorEra:
    """Which variant of estimateGPULayers printed a msg=offload line, and how that was decided."""

    weights_include_kv: bool  # memory.weights.* count the KV (before v0.6.1)
    forward: bool  # blocks placed from the first one up (before v0.7.0)
    reason: str


def estimator_era(version: Version | None, logged_at: str | None) -> EstimatorEra:
    """From the stated release, else from the log's own date (a log dated before a change ran older code)."""
    if version is not None:
        return EstimatorEra(version < WEIGHTS_WITHOUT_KV_SINCE, version < BACKWARD_FILL_SINCE,
                            _("Ollama {version} as the log states").format(version=".".join(map(str, version))))
    if logged_at is None:
        return EstimatorEra(False, False, _("no release or date in the log: read as v0.12.10"))
    old_weights = logged_at < WEIGHTS_WITHOUT_KV_COMMITTED
    forward = logged_at < BACKWARD_FILL_COMMITTED
    if old_weights:
        reason = _("the log is dated {logged_at}, before commit 033cec23 ({committed}): memory.weights.* still "
                   "count the KV and blocks are placed first-up").format(logged_at=logged_at,
                                                                         committed=WEIGHTS_WITHOUT_KV_COMMITTED)
    elif forward:
        reason = _("the log is dated {logged_at}, before commit 0478d440 ({committed}): blocks first-up").format(
            logged_at=logged_at, committed=BACKWARD_FILL_COMMITTED)
    else:
        reason = _("the log is dated {logged_at}: read as v0.12.10").format(logged_at=logged_at)
    return EstimatorEra(old_weights, forward, reason)


def parse_version(text: str | None) -> Version | None:
    """'0.12.7' / 'v0.5.4-rc1' -> (0, 12, 7); None when the text is not a release number."""
    if not text:
        return None
    parts = text.strip().lstrip("v").split("-", 1)[0].split("+", 1)[0].split(".")
    try:
        numbers = [int(part) for part in parts[:3]]
    except ValueError:
        return None
    while len(numbers) < 3:
        numbers.append(0)
    return numbers[0], numbers[1], numbers[2]


@dataclass(frozen=True)
class KvEstimate:
    """Ollama's predicted KV cache, one entry per block (bytes), and the rule that sized it."""

    per_layer_bytes: tuple[int, ...]
    rule: str

    @property
    def total_bytes(self) -> int:
        """memory.required.kv: the sum over blocks."""
        return sum(self.per_layer_bytes)


def _family(arch: ModelArchitecture) -> str:
    return arch.family.lower().replace("-", "_")


def kv_estimate(
    arch: ModelArchitecture,
    *,
    ctx_tokens: int,
    num_parallel: int,
    batch_tokens: int,
    kv_cache_type: str = "",
    version: Version | None = None,
) -> KvEstimate:
    """GraphSize's `kv` (bytes per block) for the runner's whole context `ctx_tokens` (num_ctx x parallel).

    Attention layers: ctx x (key_length + value_length) x KV heads x bytes per element. Gemma 3's
    sliding layers (every layer but each 6th, from v0.6.6) and gpt-oss's even layers (from v0.11.0) are
    sized for parallel x window + batch instead. Recurrent layers: their state in f32, once.
    `version` None means the last release that printed the estimate.
    """
    per_element = KV_BYTES_PER_ELEMENT.get(kv_cache_type.lower(), DEFAULT_KV_BYTES_PER_ELEMENT)
    family = _family(arch)
    at_least = (lambda since: version is None or version >= since)  # noqa: E731
    rule = "every attention layer sized for the whole context"
    sizes: list[int] = []
    for index, layer in enumerate(arch.layers):
        if layer.kind is LayerKind.RECURRENT:
            sizes.append((layer.recurrent_conv_elements + layer.recurrent_state_elements) * 4)
            continue
        per_token = (layer.head_dim_k + layer.head_dim_v) * layer.n_kv_heads
        tokens = ctx_tokens
        if family.startswith("gemma3") and at_least(GEMMA3_RULE_SINCE) and (index + 1) % GEMMA3_GLOBAL_EVERY:
            window = layer.sliding_window_tokens or 0
            tokens = num_parallel * window + batch_tokens
            rule = "gemma3: every 6th layer global, the others parallel x sliding window + batch"
        elif family in ("gpt_oss", "gptoss") and at_least(GPTOSS_RULE_SINCE) and index % 2 == 0:
            tokens = num_parallel * GPTOSS_SLIDING_TOKENS + batch_tokens
            rule = "gpt-oss: even layers parallel x 4096 + batch, odd layers the whole context"
        sizes.append(int(float(tokens * per_token) * per_element))
    return KvEstimate(per_layer_bytes=tuple(sizes), rule=rule)


@dataclass(frozen=True)
class LayerEstimate:
    """estimateGPULayers' verdict: layers offloaded, per-GPU layers and allocations, required totals (bytes)."""

    layers: int  # layers.offload (output layer included when it fits)
    split: tuple[int, ...]  # layers.split, per GPU
    allocations: tuple[int, ...]  # memory.required.allocations, per GPU
    required_partial_bytes: int  # memory.required.partial
    required_full_bytes: int  # memory.required.full
    fully_loaded: bool


def _place(
    size: int, index: int, with_space: list[int], free: Sequence[int], allocations: list[int], split: list[int],
    reserved: int, drop: bool = False,
) -> bool:
    """One step of estimateGPULayers' round robin: put `size` on the GPU `index` lands on among those with
    space, trying fewer GPUs until one fits; for repeating layers a GPU it does not fit on is dropped."""
    for j in range(len(with_space), 0, -1):
        g = with_space[index % j]
        if free[g] > reserved + allocations[g] + size:
            allocations[g] += size
            split[g] += 1
            return True
        if drop:
            with_space.pop(index % j)
    return False


def layer_estimate(
    *,
    kv_per_layer: tuple[int, ...],
    layer_weight_bytes: tuple[int, ...],
    output_bytes: int,
    graph_partial_bytes: int,
    graph_full_bytes: int,
    gpu_free_bytes: tuple[int, ...],
    library: str = "cuda",
    overhead_bytes: int = 0,
    num_gpu: int = -1,
    projector_weights_bytes: int = 0,
    projector_graph_bytes: int = 0,
    projector_in_engine: bool = True,
    forward: bool = False,
) -> LayerEstimate:
    """llm/memory.go estimateGPULayers at v0.12.10: fill the GPUs with blocks from the last one down.

    `layer_weight_bytes` are the blocks' weights (blk.N), `output_bytes` the output and norm tensors,
    `gpu_free_bytes` the free memory of each GPU Ollama listed (memory.available). The projector counts
    with the last layer for Ollama's own engine (`projector_in_engine`) and on GPU 0 otherwise. Before
    v0.7.0 (commit 0478d440) the blocks were placed from the first one up (`forward`).
    """
    n_blocks = len(layer_weight_bytes)
    minimum = MINIMUM_MEMORY_BYTES.get(library.lower(), DEFAULT_MINIMUM_MEMORY_BYTES)
    graph_partial, graph_full = graph_partial_bytes, graph_full_bytes
    if library.lower() == "metal":
        graph_partial = graph_full
    elif len(gpu_free_bytes) > 1:
        graph_full = graph_partial
    graph = max(graph_partial, graph_full)
    gpu_zero = 0 if projector_in_engine else projector_weights_bytes
    first_layer = (layer_weight_bytes[0] if n_blocks else 0) + (kv_per_layer[0] if kv_per_layer else 0)
    allocations = [0] * len(gpu_free_bytes)
    split = [0] * len(gpu_free_bytes)
    with_space: list[int] = []
    for i, free in enumerate(gpu_free_bytes):
        zero = gpu_zero if not with_space else 0
        if free < overhead_bytes + zero + graph + minimum + 2 * first_layer:
            continue
        with_space.append(i)
        allocations[i] += minimum + first_layer  # the graph is added once partial vs full is known
    overflow = 0
    if with_space:
        allocations[with_space[0]] += gpu_zero
    else:
        overflow += gpu_zero
    count = 0
    for i in range(n_blocks) if forward else range(n_blocks - 1, -1, -1):
        size = layer_weight_bytes[i] + (kv_per_layer[i] if i < len(kv_per_layer) else 0)
        if num_gpu >= 0 and count >= num_gpu:
            overflow += size
            continue
        if _place(size, i, with_space, gpu_free_bytes, allocations, split, overhead_bytes + graph, drop=True):
            count += 1
        if not with_space:
            overflow += size
    fully = count >= n_blocks
    last = output_bytes + (projector_weights_bytes + projector_graph_bytes if projector_in_engine else 0)
    if last > 0:
        fits = num_gpu < 0 or count < num_gpu
        if fits and _place(last, count, with_space, gpu_free_bytes, allocations, split, overhead_bytes + graph):
            count += 1
        if count < n_blocks + 1:
            fully = False
            overflow += last
    for i in range(len(allocations)):
        if split[i] > 0:
            allocations[i] += graph_full if fully else graph_partial
    partial = sum(allocations)
    if count == 0:  # nothing offloaded: memory.required.partial is printed as 0 B
        return LayerEstimate(0, tuple(split), tuple(allocations), 0, partial + overflow, False)
    return LayerEstimate(count, tuple(split), tuple(allocations), partial, partial + overflow, fully)
