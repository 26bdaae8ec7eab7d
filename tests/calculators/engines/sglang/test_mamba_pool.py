"""SGLang's recurrent-state pool for hybrid models: its size, what it leaves the KV pool, the request cap."""

from __future__ import annotations

import pytest

from calculators.engines.sglang.plan import SglangSettings, mamba_slots_per_request, plan_sglang
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config_file
from tests.support.paths import HF_CONFIG_DIR

GIB = 1 << 30
QWEN35 = architecture_from_config_file(HF_CONFIG_DIR / "Qwen3.5-397B-A17B.json")
H100_X2 = Machine(device_memory_bytes=80 * GIB, n_devices=2)


def test_state_pool_matches_the_log_of_a_qwen3_5_run():
    """kvcache-ai/ktransformers issue #1870 (SGLang, TP 2, 2026-02-27): 'Mamba Cache is allocated.
    max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB' (GB = 2^30)."""
    settings = SglangSettings(tp_size=2, max_mamba_cache_size=82, mem_fraction_static=0.9)
    pool = plan_sglang(QWEN35, settings, H100_X2, 0, free_before_load_bytes=1 << 40).mamba
    assert (pool.layers, pool.conv_shape, pool.ssm_shape) == (45, (6144, 3), (32, 128, 128))
    assert (pool.conv_dtype, pool.ssm_dtype) == ("bfloat16", "float32")
    assert f"{pool.conv_state_bytes / GIB:.2f}" == "0.13"
    assert f"{pool.ssm_state_bytes / GIB:.2f}" == "7.29"
    assert pool.bytes_per_request == 45 * (6144 * 3 * 2 + 32 * 128 * 128 * 4)


def test_ratio_sizing_splits_the_budget_and_caps_running_requests():
    settings = SglangSettings(tp_size=2, mem_fraction_static=0.9)
    plan = plan_sglang(QWEN35, settings, H100_X2, 0, free_before_load_bytes=40 * GIB)
    pool = plan.mamba
    rest = 40 * GIB - 40 * GIB * 0.1  # free x fraction (no weights here)
    budget = rest * 0.9 / 1.9  # mamba_full_memory_ratio / (1 + ratio)
    assert pool.sizing == "mamba_full_memory_ratio"
    assert pool.max_mamba_cache_size == int((budget - pool.bytes_per_request) // pool.bytes_per_request)
    # what is left goes to the KV pool: 15 full-attention layers x 1 KV head x (256 + 256) x 2 bytes per token
    left = rest - (pool.max_mamba_cache_size + 1) * pool.bytes_per_request
    assert plan.max_total_num_tokens == int(left) // (15 * 512 * 2)
    # overlap scheduler on -> extra_buffer strategy: 3 + 2 state slots per running request
    assert pool.slots_per_request == 5 and pool.strategy == "extra_buffer"
    assert plan.max_running_requests == pool.max_mamba_cache_size // 5
    assert pool.caps_running_requests


@pytest.mark.parametrize(("updates", "slots"), [
    ({"disable_radix_cache": True}, 1),
    ({"disable_overlap_schedule": True}, 3),  # auto -> no_buffer
    ({"disable_overlap_schedule": True, "page_size": 64}, 4),  # auto -> extra_buffer, one tracking slot
    ({"mamba_radix_cache_strategy": "extra_buffer_lazy"}, 4),
    ({}, 5),
])
def test_state_slots_per_request_follow_the_radix_cache_strategy(updates, slots):
    assert mamba_slots_per_request(SglangSettings(**updates))[0] == slots


def test_a_state_pool_that_cannot_hold_one_slot_refuses():
    with pytest.raises(ServewiseInputError, match="mamba"):
        plan_sglang(QWEN35, SglangSettings(tp_size=2, mem_fraction_static=0.9), H100_X2, 0,
                    free_before_load_bytes=GIB // 8)


def test_ssm_dtype_flag_halves_the_state():
    base = SglangSettings(tp_size=2, max_mamba_cache_size=10, mem_fraction_static=0.9)
    f32 = plan_sglang(QWEN35, base, H100_X2, 0, free_before_load_bytes=1 << 40).mamba
    bf16 = plan_sglang(QWEN35, base.model_copy(update={"mamba_ssm_dtype": "bfloat16"}), H100_X2, 0,
                       free_before_load_bytes=1 << 40).mamba
    assert bf16.ssm_state_bytes * 2 == f32.ssm_state_bytes
