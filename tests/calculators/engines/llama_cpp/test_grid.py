"""The vectorised grid agrees with plan_llamacpp cell by cell, and a 200 x 200 grid takes milliseconds."""

from __future__ import annotations

import dataclasses
import time

import pytest

from calculators.engines.llama_cpp.grid import llamacpp_cache_bytes_grid
from calculators.engines.llama_cpp.plan import FlashAttn, LlamaCppSettings, plan_llamacpp
from calculators.errors import ServewiseInputError
from calculators.model.architecture import LayerGeometry, LayerKind
from tests.support.model_geometries import DEEPSEEK_V2_LITE, GEMMA3_27B, LLAMA3_8B
from tests.support.tiny_gguf import TinyJambaModel

CONTEXTS = [0, 1, 300, 4096, 10000, 33333, 131072]
PARALLELS = [1, 2, 3, 4, 7, 16]
JAMBA = TinyJambaModel("jamba-like", 4, (2,), 8, 8, 128, 16, 4, 64).architecture()
MISTRAL_V01 = dataclasses.replace(
    LLAMA3_8B,
    family="llama",
    layers=(
        LayerGeometry(kind=LayerKind.SLIDING, n_kv_heads=8, head_dim_k=128, head_dim_v=128, sliding_window_tokens=4096),
    )
    * 32,
)


@pytest.mark.parametrize("arch", [LLAMA3_8B, GEMMA3_27B, DEEPSEEK_V2_LITE, JAMBA, MISTRAL_V01], ids=lambda a: a.name)
@pytest.mark.parametrize(
    "settings",
    [
        LlamaCppSettings(),
        LlamaCppSettings(kv_unified=True, cache_type_k="q8_0", cache_type_v="q8_0"),
        LlamaCppSettings(fit=False, swa_full=True, ubatch_size=128, cache_type_k="q4_0", flash_attn=FlashAttn.OFF),
        LlamaCppSettings(batch_size=256, cache_type_v="q5_1"),
    ],
    ids=["defaults", "kvu-q8", "nofit-swafull-ub128", "b256-q5_1"],
)
def test_grid_matches_plan_cell_by_cell(arch, settings):
    grid = llamacpp_cache_bytes_grid(arch, CONTEXTS, PARALLELS, settings)
    for i, ctx in enumerate(CONTEXTS):
        for j, parallel in enumerate(PARALLELS):
            plan = plan_llamacpp(arch, settings.model_copy(update={"ctx_size": ctx, "parallel": parallel}))
            assert grid[i, j] == sum(c.total_bytes for c in plan.caches), (ctx, parallel)


def test_grid_of_200_by_200_is_fast():
    start = time.perf_counter()
    grid = llamacpp_cache_bytes_grid(GEMMA3_27B, range(256, 256 * 201, 256), range(1, 201))
    elapsed = time.perf_counter() - start
    assert grid.shape == (200, 200)
    assert elapsed < 0.5


def test_grid_rejects_bad_counts():
    with pytest.raises(ServewiseInputError):
        llamacpp_cache_bytes_grid(LLAMA3_8B, [4096], [0])
