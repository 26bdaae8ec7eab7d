"""Repeated prompts (a benchmark sending its requests again) on engines with a shared prefix cache: worked by hand."""

import pytest

from calculators.engines.sglang.scheduler import SglangPolicy
from calculators.engines.vllm.scheduler import VllmPolicy
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import RequestSet, WorkloadSpec

# Weights stream in 0.01 s a step; compute is 2e-4 s a token: a prefill of N tokens takes max(0.01, 2e-4 N) s.
COST = StepCostModel(memory_bandwidth_bytes_per_s=1e12, flops_per_s=1e14, weights_bytes=1e10, active_params=1e10,
                     kv_bytes_per_token=0, memory_efficiency=1.0, compute_efficiency=1.0)


def one_at_a_time(prompts: list[int], keys: list[int] | None, output: int = 2) -> RequestSet:
    """Requests 10 s apart (each has finished before the next arrives)."""
    n = len(prompts)
    return RequestSet(prompt_tokens=prompts, output_tokens=[output] * n, prefix_tokens=[0] * n,
                      arrival_s=[10.0 * k for k in range(n)], think_s=[0.0] * n, prompt_keys=keys)


def test_a_repeated_prompt_reuses_its_cached_blocks_up_to_one_token_short():
    # 1000 prompt tokens: the first send prefills all of them (0.2 s); the repeat finds them cached in whole
    # 16-token blocks, at most 999 tokens (the last is computed again for its logits): 992 cached, 8 computed,
    # a 0.01 s step.
    requests = one_at_a_time([1000, 1000], keys=[7, 7])
    result = simulate(WorkloadSpec(n_requests=2), VllmPolicy(), COST, 100_000, requests=requests)
    first, again = result.records
    assert first.ttft_s == pytest.approx(0.2) and first.prefix_hit_tokens == 0
    assert again.prefix_hit_tokens == 992
    assert again.ttft_s == pytest.approx(0.01)
    # SGLang's radix cache keeps single tokens (page size 1): 999 cached
    sglang = simulate(WorkloadSpec(n_requests=2), SglangPolicy(), COST, 100_000, requests=requests)
    assert sglang.records[1].prefix_hit_tokens == 999


@pytest.mark.parametrize("policy, keys", [(VllmPolicy(), None), (VllmPolicy(enable_prefix_caching=False), [7, 7]),
                                          (VllmPolicy(), [7, 8])])
def test_without_a_prefix_cache_or_a_matching_key_the_repeat_prefills_again(policy, keys):
    result = simulate(WorkloadSpec(n_requests=2), policy, COST, 100_000,
                      requests=one_at_a_time([1000, 1000], keys=keys))
    assert [r.ttft_s for r in result.records] == pytest.approx([0.2, 0.2])
    assert [r.prefix_hit_tokens for r in result.records] == [0, 0]


def test_the_least_recently_freed_prompt_is_evicted_first_tail_before_head():
    # Prompts A, B, C (1000 tokens, 2 out) then A and C again, in a pool of 2500 tokens; a running sequence also
    # holds half a block of waste (7.5 tokens). Freed, A and B keep 1002 tokens each. C's admission takes
    # 1000 + 7.5: the cache may keep 1492.5, so A, least recently freed, loses its tail down to 490; when C
    # finishes (1001 + 7.5 held) A keeps 489. A again: 480 of them in whole blocks. C, freed last, is whole: 992.
    requests = one_at_a_time([1000, 1000, 1000, 1000, 1000], keys=[0, 1, 2, 0, 2])
    result = simulate(WorkloadSpec(n_requests=5), VllmPolicy(), COST, 2500, requests=requests)
    assert [r.prefix_hit_tokens for r in result.records] == [0, 0, 0, 480, 992]
