"""plan_mlx_lm against mlx-lm itself: every recorded run, layer by layer (cache class and nbytes, exactly).

The recordings (tests/data/conformance/mlx_lm/recordings.json) were made by tests/support/mlx_conformance/
runner.py with mlx 0.32.4 / mlx-lm 0.32.2 on Linux (CPU): tiny random-weight models of models.py, the cases
of matrix.py. This test needs no engine; test_live.py re-runs the engine and checks that the recordings still
hold. A case is exact (every layer's class, bytes after the run and largest bytes during it match), refused
(mlx-lm raised, and the plan refuses for that reason), or explained (batched runs: mlx_lm.server's
BatchKVCache holds S sequences' caches, each as large as the longest prompt's).
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from calculators.engines.mlx_lm.plan import MlxLmPlan, MlxLmSettings, plan_mlx_lm
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config
from calculators.units import GIB
from tests.support.mlx_conformance import RECORDINGS
from tests.support.mlx_conformance.matrix import CASES, case_key
from tests.support.paths import REPO_ROOT

MAC = Machine(device_memory_bytes=64 * GIB, unified_memory=True)
SETTING_KEYS = ("max_kv_size", "prefill_step_size", "kv_bits", "kv_group_size", "quantized_kv_start")
#: model types mlx-lm runs whose config.json servewise cannot read yet (issue 14 adds builders); their
#: recordings still pin which cache class each model file builds
UNPARSED: set[str] = set()
#: what mlx-lm raised -> words the plan's refusal must contain
REFUSALS = {"NotImplementedError: RotatingKVCache Quantization NYI": "RotatingKVCache Quantization NYI",
            "AttributeError: 'list' object has no attribute 'swapaxes'": "swapaxes"}


@cache
def recordings() -> dict:
    return json.loads(RECORDINGS.read_text())


def _plan(result: dict) -> MlxLmPlan | None:
    """servewise's plan for one recorded case, one sequence (None: servewise cannot read the config.json)."""
    case = result["case"]
    config = recordings()["models"][case["model"]]
    try:
        arch = architecture_from_config(config)
    except ServewiseInputError:
        assert config["model_type"] in UNPARSED, f"servewise cannot read the {case['model']} config.json"
        return None
    settings = MlxLmSettings(**{k: case[k] for k in SETTING_KEYS if k in case})
    return plan_mlx_lm(arch, settings, MAC, None, prompt_tokens=case["prompt_tokens"],
                       generated_tokens=case["generated_tokens"],
                       kv_dtype_bytes=4 if config["torch_dtype"] == "float32" else 2)


def _layers_seen(result: dict) -> list[tuple[str, int, int]]:
    """(class, nbytes after the run, largest nbytes after any update) of each layer, as recorded."""
    return [(layer["class"], layer["nbytes"], layer.get("largest_nbytes", layer["nbytes"]))
            for layer in result["layers"]]


def _layers_planned(plan: MlxLmPlan) -> list[tuple[str, int, int]]:
    return [(c.cache_class.value, c.bytes, c.peak_bytes) for c in plan.layer_caches]


def test_recordings_are_the_matrix_run_with_the_pinned_engine():
    data = recordings()
    assert [case_key(r["case"]) for r in data["results"]] == [case_key(c) for c in CASES]
    pins = dict(line.split("==") for line in (REPO_ROOT / "requirements-mlx.txt").read_text().split()
                if "==" in line)
    assert data["engine"] == {"mlx": pins["mlx[cpu]"], "mlx-lm": pins["mlx-lm"]}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case_key(c) for c in CASES])
def test_plan_matches_the_engine(index):
    result = recordings()["results"][index]
    case = result["case"]
    plan = _plan(result)
    if plan is None:
        return  # pinned by UNPARSED and by test_unparsed_model_files_build_what_models_py_says
    if result["error"]:
        assert plan.refusal is not None and REFUSALS[result["error"]] in plan.refusal
        return
    assert plan.refusal is None
    sequences = case.get("sequences", 1)
    if sequences == 1:
        assert _layers_planned(plan) == _layers_seen(result)
        offsets = {layer["offset"] for layer in result["layers"] if "offset" in layer}
        assert offsets <= {plan.retained_tokens}
    else:  # one BatchKVCache per layer, S sequences wide, every sequence as long as the longest prompt
        assert {layer["largest_nbytes"] for layer in result["layers"]} == {
            sequences * c.peak_bytes for c in plan.layer_caches}


def test_peak_memory_holds_weights_and_cache():
    # mlx_lm.generate's "Peak memory" (mx.get_peak_memory) also holds activations: servewise's part is below it
    for result in recordings()["results"]:
        if not result["error"] and result["case"].get("sequences", 1) == 1:
            cache_bytes = sum(nbytes for _, nbytes, _ in _layers_seen(result))
            assert result["weights_bytes"] + cache_bytes <= result["peak_memory_bytes"]
            assert f"{result['peak_memory_bytes'] / 1e9:.3f}" == result["printed_peak_memory_gb"]


def test_unparsed_model_files_build_what_models_py_says():
    # models.py's table for the hybrids servewise cannot read a config of yet, checked against the recordings
    expected = {"nemotron_h": ["ArraysCache", "KVCache", "ArraysCache"],  # "M-*-M-": no cache for MLP blocks
                "granitemoehybrid": ["ArraysCache", "KVCache"] * 2, "falcon_h1": ["CacheList"] * 2,
                "qwen3_5": ["ArraysCache", "KVCache"] * 2}
    seen = {r["case"]["model"]: [layer["class"] for layer in r["layers"]] for r in recordings()["results"]
            if r["case"]["model"] in expected}
    assert seen == expected
