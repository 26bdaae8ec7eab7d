"""plan_mlx_lm_speculative against mlx-lm itself: both caches of recorded `--draft-model` runs, layer by layer.

The recordings (tests/data/conformance/mlx_lm/speculative.json) were made by
tests/support/mlx_conformance/speculative.py with mlx 0.32.4 / mlx-lm 0.32.2 on Linux (CPU): tiny random-weight
models of models.py, a target and a draft of the same vocabulary, through mlx_lm.generate's
`generate(..., draft_model=...)`. A cache grown after a speculative trim ends at the offset it grew from plus
256-token steps, so a layer may hold fewer slots than the plan's 256-rounded prompt + generated tokens, never
a step more; a hybrid target is refused as mlx-lm refuses it.
"""

from __future__ import annotations

import json

import pytest

from calculators.engines.mlx_lm.plan import MlxLmSettings
from calculators.engines.mlx_lm.speculative import plan_mlx_lm_speculative
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config
from calculators.units import GIB
from tests.support.paths import DATA_DIR

RECORDING = json.loads((DATA_DIR / "conformance" / "mlx_lm" / "speculative.json").read_text())
MAC = Machine(device_memory_bytes=64 * GIB, unified_memory=True)
STEP = 256  # mlx_lm/models/cache.py KVCache.step


def _arch(name: str):
    return architecture_from_config(RECORDING["models"][name])


@pytest.mark.parametrize("result", RECORDING["results"], ids=lambda r: f"{r['case']['model']}+{r['case']['draft']}")
def test_both_caches_are_planned_within_one_step_of_what_mlx_lm_held(result):
    case = result["case"]
    kwargs = {"prompt_tokens": case["prompt_tokens"], "generated_tokens": case["generated_tokens"],
              "num_draft_tokens": case["num_draft_tokens"]}
    if result["error"]:
        assert "trimmable" in result["error"]
        with pytest.raises(ServewiseInputError, match="trimmable"):
            plan_mlx_lm_speculative(_arch(case["model"]), _arch(case["draft"]), MlxLmSettings(), MAC, None, None,
                                    **kwargs)
        return
    plan = plan_mlx_lm_speculative(_arch(case["model"]), _arch(case["draft"]), MlxLmSettings(), MAC, None, None,
                                   **kwargs)
    for planned, recorded in ((plan.target, result["target_layers"]), (plan.draft, result["draft_layers"])):
        assert len(planned.layer_caches) == len(recorded)
        for layer, seen in zip(planned.layer_caches, recorded, strict=True):
            per_token = layer.k_bytes_per_token + layer.v_bytes_per_token
            assert seen["class"] == "KVCache"
            assert 0 <= layer.bytes - seen["nbytes"] < STEP * per_token, (layer.layer, layer.bytes, seen["nbytes"])


def test_the_recorded_runs_pin_where_the_plan_is_exact_and_where_a_trim_shortened_a_buffer():
    """1000 + 200 tokens: the draft's buffers are the planned 1,280 slots, the target's 1,277 (it grew by 256 from
    offset 1,021 after a trim); 300 + 20 and 250 + 3 tokens (drafts capped at the tokens left): 512 and 256 slots,
    exactly as planned."""
    slots = [([c["keys"][0][2] for c in r["target_layers"]], [c["keys"][0][2] for c in r["draft_layers"]])
             for r in RECORDING["results"] if not r["error"]]
    assert slots == [([1277] * 3, [1280] * 3), ([512] * 3, [512] * 3), ([256] * 3, [256] * 3)]
