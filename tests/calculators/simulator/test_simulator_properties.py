"""Properties every run must keep, whatever the engine, knobs and workload."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators.engines.llama_cpp.scheduler import LlamaCppPolicy
from calculators.engines.ollama.scheduler import OllamaPolicy
from calculators.engines.sglang.scheduler import SglangPolicy
from calculators.engines.vllm.scheduler import VllmPolicy
from calculators.simulator.policy import StaticBatchPolicy
from calculators.simulator.results import RequestStatus
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, WorkloadSpec

COST = StepCostModel(
    memory_bandwidth_bytes_per_s=1e12, flops_per_s=1e14, weights_bytes=5e9, active_params=5e9, kv_bytes_per_token=1e5
)

lengths = st.one_of(
    st.builds(LengthDistribution, kind=st.just("fixed"), value=st.integers(1, 600)),
    st.builds(LengthDistribution, kind=st.just("uniform"), low=st.integers(1, 50), high=st.integers(50, 600)),
    st.builds(LengthDistribution, kind=st.just("lognormal"), median=st.floats(5, 300), sigma=st.floats(0, 1.5)),
)
policies = st.one_of(
    st.builds(OllamaPolicy, num_parallel=st.integers(1, 4), context_length=st.sampled_from([512, 1024, 4096]),
              num_batch=st.sampled_from([64, 512]), max_queue=st.integers(0, 20),
              max_queue_applies_to_slot_wait=st.booleans()),
    st.builds(LlamaCppPolicy, ctx_size=st.sampled_from([2048, 8192]), parallel=st.integers(1, 4),
              batch_size=st.sampled_from([128, 2048]), cache_prompt=st.booleans()),
    st.builds(VllmPolicy, max_num_seqs=st.integers(1, 16), max_num_batched_tokens=st.sampled_from([16, 64, 2048]),
              block_size=st.sampled_from([1, 16]), enable_chunked_prefill=st.booleans(),
              enable_prefix_caching=st.booleans()),
    st.builds(SglangPolicy, max_running_requests=st.integers(1, 16), chunked_prefill_size=st.sampled_from([64, 4096]),
              disable_radix_cache=st.booleans(), init_new_token_ratio=st.floats(0, 1)),
    st.builds(StaticBatchPolicy, batch_size=st.integers(1, 8)),
)
workloads = st.builds(
    WorkloadSpec,
    n_requests=st.integers(1, 40),
    arrival=st.sampled_from(list(ArrivalProcess)),
    rate_per_s=st.floats(0.5, 200),
    n_clients=st.integers(1, 10),
    think_time_s=st.sampled_from([0.0, 0.05, 1.0]),
    prompt=lengths,
    output=lengths,
    shared_prefix_fraction=st.sampled_from([0.0, 0.5, 1.0]),
    prefix_warm=st.booleans(),
    cancel_after_s=st.one_of(st.none(), st.floats(0.01, 5)),
    seed=st.integers(0, 10_000),
)
kv_capacities = st.integers(700, 20_000)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads, policy=policies, kv=kv_capacities)
def test_conservation_and_no_time_travel(workload, policy, kv):
    result = simulate(workload, policy, COST, kv_capacity_tokens=kv)
    records = result.records
    assert len(records) == workload.n_requests
    s = result.summary
    assert s.n_finished + s.n_rejected + s.n_cancelled == workload.n_requests
    for r in records:
        assert r.status in set(RequestStatus)
        assert r.end_s >= r.arrival_s - 1e-12
        if r.admit_s is not None:
            assert r.admit_s >= r.arrival_s - 1e-12
        if r.first_token_s is not None:
            assert r.admit_s is not None and r.first_token_s >= r.admit_s - 1e-12
            assert r.end_s >= r.first_token_s - 1e-12
        if r.status is RequestStatus.FINISHED:
            assert r.first_token_s is not None
            assert r.generated_tokens == r.output_tokens or r.truncated
        if r.status is RequestStatus.REJECTED:
            assert r.reject_reason is not None and r.admit_s is None
        if r.status is RequestStatus.CANCELLED:
            assert r.first_token_s is None
            assert r.end_s == pytest.approx(r.arrival_s + workload.cancel_after_s)
    spec = policy.scheduler_spec(kv)
    assert result.diagnostics.peak_active <= spec.max_running
    if spec.kv_layout == "pool":
        assert result.diagnostics.peak_kv_used_tokens <= kv + 1e-6
    assert result.timeseries.queued[-1] == 0 and result.timeseries.active[-1] == 0


@settings(max_examples=30, deadline=None)
@given(workload=workloads, policy=policies, kv=kv_capacities)
def test_same_seed_same_result(workload, policy, kv):
    first = simulate(workload, policy, COST, kv_capacity_tokens=kv)
    second = simulate(workload, policy, COST, kv_capacity_tokens=kv)
    assert first.records == second.records
    assert first.timeseries == second.timeseries


@settings(max_examples=200, deadline=None)
@given(
    steps=st.integers(1, 3000),
    n=st.integers(1, 500),
    kv0=st.floats(0, 1e6),
    kvb=st.sampled_from([0.0, 1e3, 1e5, 1e6]),
    overhead=st.sampled_from([0.0, 1e-3]),
)
def test_decode_span_closed_form_matches_step_sum(steps, n, kv0, kvb, overhead):
    cost = COST.model_copy(update={"kv_bytes_per_token": kvb, "step_overhead_s": overhead})
    naive = sum(cost.step_seconds(n, kv0 + n * j) for j in range(steps))
    assert cost.decode_span_seconds(steps, n, kv0) == pytest.approx(naive, rel=1e-9)
