"""Ollama's own prediction (msg=offload, v0.1–v0.12.10) recomputed: KV estimate, layer split, totals.

Figures pinned here were printed by real Ollama runs (tests/data/logs/SOURCES-2.md and SOURCES.md).
"""

from __future__ import annotations

import pytest

from calculators.engines.ollama.memory_estimate import estimator_era, kv_estimate, layer_estimate
from calculators.model.catalog import architecture_from_catalog
from calculators.reconcile.check import reconcile_log
from calculators.reconcile.result import RowStatus
from tests.support.startup_log import parse

MIB = 1024**2
GIB = 1024**3


def rows(log: str, model: str, **overrides):
    result = reconcile_log(parse(log), arch=architecture_from_catalog(model), overrides=overrides or None)
    return {(r.figure, r.device): r for r in result.rows}, result


@pytest.mark.parametrize(("log", "model", "overrides", "printed_mib"), [
    # gpt-oss-120b, KvSize:8192: even layers 4096 + 512 tokens, odd layers 8192 -> "450.0 MiB"
    ("ollama-2025-09-gptoss-120b-rocm-estimate-and-allocations.log", "gpt-oss-120b", {}, 450.0),
    # gemma3 12B, --ctx-size 8192: 8 global layers x 8192 + 40 sliding x (1024 + 512) -> "992.0 MiB"
    ("ollama-2025-08-offload-projector-ctx-8192.log", "gemma-3-12b", {}, 992.0),
    # llama3:70b, --ctx-size 2048: 80 layers x 8 KV heads x 256 x 2 bytes x 2048 -> "640.0 MiB"
    ("ollama-v0.2-offload-to-rocm-43-of-81.log", "llama-3.1-70b", {}, 640.0),
    # qwen3:235b, num_ctx 4096 (not in the excerpt; the default of Ollama 0.6.7+) -> "752.0 MiB"
    ("ollama-2025-05-qwen3-235b-offload-5-gpus.log", "qwen3-235b-a22b", {"context_length": 4096}, 752.0),
    # gemma3 12B, --ctx-size 8192 --parallel 2: sliding layers 2 x 1024 + 512 -> "1.3 GiB"
    ("ollama-v0.9-cpu-offload-journal-quoted.log", "gemma-3-12b", {}, 1.3 * 1024),
])
def test_kv_estimate_is_exact(log, model, overrides, printed_mib):
    found, _ = rows(log, model, **overrides)
    row = found[("estimate_kv_bytes", None)]
    assert row.status is RowStatus.EXACT
    assert abs(row.printed_value - printed_mib * MIB) < 0.06 * GIB


def test_layer_split_over_five_gpus():
    # Ollama issue 10810: "layers.offload=65 layers.split=13,13,13,13,13" with memory.available 23.2 GiB each
    found, _ = rows("ollama-2025-05-qwen3-235b-offload-5-gpus.log", "qwen3-235b-a22b", context_length=4096)
    assert found[("estimate_offload_layers", None)].status is RowStatus.EXACT
    for index in range(5):
        assert found[("estimate_split_layers", f"cuda{index}")].status is RowStatus.EXACT
    assert found[("total_layers", None)].status is RowStatus.EXACT  # layers.model=95: 94 blocks + output
    # GPU 0's 22.0 GiB (the others 22.2) is not explained by an even spread of the blocks
    assert found[("estimate_allocation_bytes", "cuda0")].status is RowStatus.UNEXPLAINED


def test_gptoss_estimate_and_allocations_agree():
    # The same journal prints the estimate ("memory.required.kv=450.0 MiB", "required.full=62.4 GiB") and the
    # engine's allocation ("kv cache" device=ROCm0 size="450.0 MiB")
    found, result = rows("ollama-2025-09-gptoss-120b-rocm-estimate-and-allocations.log", "gpt-oss-120b")
    assert found[("kv_buffer_bytes", None)].status is RowStatus.EXACT
    assert found[("estimate_offload_layers", None)].status is RowStatus.EXACT  # 37 of 37
    assert found[("estimate_required_full_bytes", None)].status is RowStatus.EXPLAINED  # rounded 0.1 GiB inputs
    assert not result.rows_with(RowStatus.UNEXPLAINED)


def test_uneven_blocks_are_the_stated_reason_when_the_split_differs():
    # DeepSeek-R1 671B, "layers.offload=5" of 62: its first 3 blocks are dense (smaller)
    found, _ = rows("ollama-2025-01-docker-offload-to-cuda-5-of-62.log", "deepseek-v3", context_length=2048)
    assert found[("estimate_kv_bytes", None)].status is RowStatus.EXACT  # "9.5 GiB"
    layers = found[("estimate_offload_layers", None)]
    assert layers.status is RowStatus.UNEXPLAINED and "first 3 blocks are dense" in layers.explanation


def test_a_log_without_the_context_says_how_to_give_it():
    _, result = rows("ollama-2025-05-qwen3-235b-offload-5-gpus.log", "qwen3-235b-a22b")
    assert any("context_length" in note for note in result.plan_notes)
    assert not any(r.figure == "estimate_kv_bytes" for r in result.rows)


def test_estimator_rules_by_version():
    arch = architecture_from_catalog("gemma-3-12b")
    before = kv_estimate(arch, ctx_tokens=8192, num_parallel=1, batch_tokens=512, version=(0, 6, 5))
    after = kv_estimate(arch, ctx_tokens=8192, num_parallel=1, batch_tokens=512, version=(0, 6, 6))
    assert before.total_bytes == 48 * 8192 * 8192  # every layer for the whole context before v0.6.6
    assert after.total_bytes == 992 * MIB


def test_layer_fill_leaves_room_for_the_graph_and_minimum():
    one_layer = 1 * GIB
    estimate = layer_estimate(kv_per_layer=(0,) * 4, layer_weight_bytes=(one_layer,) * 4, output_bytes=0,
                              graph_partial_bytes=GIB, graph_full_bytes=GIB, gpu_free_bytes=(4 * GIB,))
    # 4 GiB free: 457 MiB minimum + the first block reserved + 1 GiB graph leave room for 1 more block
    assert estimate.layers == 1 and not estimate.fully_loaded


def test_the_estimator_variant_comes_from_the_release_or_else_the_logs_date():
    assert estimator_era((0, 6, 0), None).weights_include_kv  # memory.weights.* counted the KV until v0.6.1
    assert not estimator_era((0, 6, 1), None).weights_include_kv
    assert estimator_era((0, 6, 8), None).forward and not estimator_era((0, 7, 0), None).forward
    old = estimator_era(None, "2024-07-24")  # a log dated before both commits ran the old code
    assert old.weights_include_kv and old.forward and "033cec23" in old.reason
    between = estimator_era(None, "2025-04-01")
    assert not between.weights_include_kv and between.forward
    late = estimator_era(None, "2025-05-22")
    assert not late.weights_include_kv and not late.forward
