"""SGLang's Mamba state pool against what SGLang 0.5.23 itself printed for tiny Granite-4.0-H models.

tests/data/conformance/sglang/hybrid-granite-0.5.23.json holds the start-up lines SGLang printed on this
workplace's CPU (`python -m sglang.launch_server --device cpu --attention-backend torch_native`, models built
locally with transformers from the config dicts in the file, random weights). The pool is sized and printed
before the first forward pass, which then stops on a CUDA-only conv kernel ("causal_conv1d_fn_triton"): the
figures compared here are all printed before that. With the default strategy ("auto" -> extra_buffer) the CPU
platform refuses hybrid models at argument checking; servewise's strategy rule is CUDA's (the last test).
"""

from __future__ import annotations

import json
import shlex

import pytest

from calculators.engines.sglang.plan import SglangSettings, plan_sglang
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config
from calculators.reconcile.log.parse import parse_startup_log
from tests.support.paths import DATA_DIR

RECORDS = json.loads((DATA_DIR / "conformance" / "sglang" / "hybrid-granite-0.5.23.json").read_text())
STARTED = [r for r in RECORDS if any("Mamba Cache is allocated" in line for line in r["log"])]


def _settings(command: str) -> SglangSettings:
    words = shlex.split(command)
    values: dict[str, object] = {}
    for i, word in enumerate(words):
        key = word.removeprefix("--").replace("-", "_")
        if key in ("mem_fraction_static", "max_mamba_cache_size", "max_total_tokens", "mamba_radix_cache_strategy"):
            values[key] = words[i + 1]
        elif key in ("disable_radix_cache", "disable_overlap_schedule"):
            values[key] = True
    return SglangSettings.model_validate(values)


def _figure(parsed, name):
    return next(f for f in parsed.figures if f.name == name)


@pytest.mark.parametrize("record", STARTED, ids=[r["name"] for r in STARTED])
def test_state_pool_and_request_cap_match(record):
    parsed = parse_startup_log("\n".join(record["log"]))
    plan = plan_sglang(architecture_from_config(record["model"]), _settings(record["command"]),
                       Machine(device_memory_bytes=24 << 30), 0, free_before_load_bytes=20 << 30)
    pool = plan.mamba
    assert pool.max_mamba_cache_size == _figure(parsed, "mamba_cache_slots").value
    for name, ours in (
        ("mamba_conv_state_bytes", pool.conv_state_bytes),
        ("mamba_ssm_state_bytes", pool.ssm_state_bytes),
        ("k_bytes", plan.k_bytes),
    ):
        low, high = _figure(parsed, name).interval()
        assert low <= ours <= high, name
    assert plan.max_total_num_tokens == _figure(parsed, "kv_tokens").value
    assert plan.max_running_requests == _figure(parsed, "max_running_requests").value
    assert pool.caps_running_requests


def test_the_cpu_platform_refuses_the_default_strategy():
    (record,) = [r for r in RECORDS if r["name"] == "granite-h-big-auto"]
    assert record["log"] == ["AssertionError: extra_buffer requires platform support for Mamba cache state snapshots."]
    # on CUDA (what servewise plans) "auto" resolves to extra_buffer: 3 + 2 state slots per request
    assert plan_sglang(architecture_from_config(record["model"]), _settings(record["command"]),
                       Machine(device_memory_bytes=24 << 30), 0,
                       free_before_load_bytes=20 << 30).mamba.strategy == "extra_buffer"
