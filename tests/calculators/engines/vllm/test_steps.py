"""The vLLM pool arithmetic shown on the memory page, step by step, for a hybrid model."""

from __future__ import annotations

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.plan import plan_vllm
from calculators.engines.vllm.steps import pool_steps
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config_file
from reports.pool_steps_text import pool_steps_markdown
from tests.support.paths import HF_CONFIG_DIR

QWEN3_NEXT = architecture_from_config_file(HF_CONFIG_DIR / "Qwen3-Next-80B-A3B-Thinking.json")


def test_qwen3_next_on_h100_step_by_step():
    """Hand-checked from vLLM v0.33.0's rules (vllm_mamba.py docstring): bf16 GDN state 3 x 8192 x 2 +
    32 x 128 x 128 x 2 = 1,097,728 bytes; FlashInfer GDN on Hopper aligns blocks to 64: 64 x ceil(1,097,728 /
    (64 x 2,048)) = 576 tokens, page 1,179,648; 12 attention + 36 GDN layers -> 4 groups of 12; 20 GiB //
    (12 x 1,179,648) = 1,517 blocks; a 32,768-token request: ceil(32768 / 576) = 57 attention blocks + 3 groups
    x (2 + 1 checkpoint) state blocks = 66."""
    plan = plan_vllm(QWEN3_NEXT, VllmSettings(kv_cache_memory_bytes=20 << 30, max_model_len=32768),
                     Machine(device_memory_bytes=80 << 30, gpu_id="h100-sxm-80gb"), None)
    steps = {s.code: s.result for s in pool_steps(plan)}
    assert steps["state_bytes"] == 1_097_728
    assert steps["block_size"] == 576 and steps["padded_page"] == 1_179_648
    assert steps["groups"] == 4 and steps["num_blocks"] == 1517 and steps["blocks_per_request"] == 66
    assert plan.kv_tokens == int(1517 / 66 * 32768) == steps["kv_tokens"]
    lines = pool_steps_markdown(pool_steps(plan))
    assert any("1,097,728\u00a0bytes" in line for line in lines)
    assert any("66" in line and "state blocks" in line for line in lines)
    from calculators.i18n import language

    with language("es"):  # the same arithmetic for a Spanish reader: its words and its digits
        spanish = pool_steps_markdown(pool_steps(plan))
    assert any("1.097.728\u00a0bytes" in line and "capa recurrente" in line for line in spanish)
    assert any(line.startswith("Bloques: ") and "**1.517**" in line for line in spanish)


def test_off_hopper_the_block_is_only_16_aligned():
    """Without FlashInfer's GDN prefill (A100): 16 x ceil(1,097,728 / (16 x 2,048)) = 544 tokens, no checkpoint
    block: 3 groups x 2 state blocks per request."""
    plan = plan_vllm(QWEN3_NEXT, VllmSettings(kv_cache_memory_bytes=20 << 30, max_model_len=32768),
                     Machine(device_memory_bytes=80 << 30, gpu_id="a100-sxm-80gb"), None)
    assert plan.block_size == 544
    assert plan.mamba_state.blocks_per_request_per_layer == 2
