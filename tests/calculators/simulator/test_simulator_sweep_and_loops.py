"""The arrival-rate sweep, and how a closed-loop client hides the queue open-loop demand builds."""

import pytest

from calculators.engines.ollama.scheduler import OllamaPolicy
from calculators.engines.vllm.scheduler import VllmPolicy
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.sweep import sweep_arrival_rates
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, WorkloadSpec

# 0.01 s per decode step; prefill 2e-4 s per token (see test_simulator_hand_checked.py)
COST = StepCostModel(
    memory_bandwidth_bytes_per_s=1e12, flops_per_s=1e14, weights_bytes=1e10, active_params=1e10,
    kv_bytes_per_token=0, memory_efficiency=1.0, compute_efficiency=1.0,
)
FIXED = dict(prompt=LengthDistribution(kind="fixed", value=100), output=LengthDistribution(kind="fixed", value=50))


def test_closed_loop_caps_the_queue_that_open_loop_demand_builds():
    # one Ollama slot serves a request in 0.02 + 49 x 0.01 = 0.51 s, about 1.96 requests/s
    closed = simulate(
        WorkloadSpec(n_requests=200, arrival=ArrivalProcess.CLOSED, n_clients=4, **FIXED), OllamaPolicy(), COST
    )
    achieved_rps = closed.summary.throughput_rps
    assert achieved_rps == pytest.approx(1 / 0.51, rel=0.02)
    assert max(closed.timeseries.queued) <= 3  # never more than the other clients
    # the same demand offered open loop at 10 % above what the server sustains keeps growing a queue
    open_loop = simulate(WorkloadSpec(n_requests=200, rate_per_s=achieved_rps * 1.1, **FIXED), OllamaPolicy(), COST)
    assert max(open_loop.timeseries.queued) > 3 * max(closed.timeseries.queued)
    assert open_loop.summary.queue.p99 > 3 * closed.summary.queue.p99
    assert any(note.code == "closed_loop" for note in closed.notes)


def test_sweep_shows_saturation():
    workload = WorkloadSpec(n_requests=150, **FIXED)
    engines = {"ollama": (OllamaPolicy(), None), "vllm": (VllmPolicy(), 50_000)}
    points = sweep_arrival_rates(workload, engines, COST, [0.5, 1.0, 8.0, 32.0])
    assert [(p.engine, p.rate_per_s) for p in points[:2]] == [("ollama", 0.5), ("vllm", 0.5)]
    by_engine = {e: [p for p in points if p.engine == e] for e in engines}
    # at 0.5 requests/s both keep up; at 32/s the single Ollama slot saturates near 1.96 requests/s
    for low in (by_engine["ollama"][0], by_engine["vllm"][0]):
        assert low.throughput_rps == pytest.approx(0.5, rel=0.25)
    assert by_engine["ollama"][-1].throughput_rps == pytest.approx(1 / 0.51, rel=0.05)
    assert by_engine["vllm"][-1].throughput_rps > 5 * by_engine["ollama"][-1].throughput_rps
    assert by_engine["ollama"][-1].p99_ttft_s > 10 * by_engine["ollama"][0].p99_ttft_s


def test_open_loop_twin_replays_the_closed_loop_rate():
    from calculators.errors import ServewiseInputError
    from calculators.simulator.loops import open_loop_twin

    closed_spec = WorkloadSpec(n_requests=100, arrival=ArrivalProcess.CLOSED, n_clients=3, **FIXED)
    closed = simulate(closed_spec, OllamaPolicy(), COST)
    twin = open_loop_twin(closed_spec, closed)
    assert twin.arrival is ArrivalProcess.POISSON
    assert twin.rate_per_s == pytest.approx(100 / closed.summary.duration_s)
    assert twin.prompt == closed_spec.prompt and twin.n_requests == 100
    with pytest.raises(ServewiseInputError, match="closed-loop"):
        open_loop_twin(twin, closed)
