"""The simulator's step trace for a batch_cases.py case, in the recorded trace's terms (no MLX needed).

Each request arrives exactly when the simulated step the case inserts it before starts: the simulation is
rerun with the requests known so far to find that step's start time (later arrivals cannot change earlier
steps). Every pass costs one second (step overhead only), so steps are far apart; times are not compared.
"""

from __future__ import annotations

from calculators.engines.mlx_lm.scheduler import MlxLmPolicy
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate_steps
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, LengthKind, RequestSet, WorkloadSpec

#: every pass one second: weights, KV and arithmetic all but free
ONE_SECOND_PASSES = StepCostModel(memory_bandwidth_bytes_per_s=1e15, flops_per_s=1e18, weights_bytes=0.0,
                                  active_params=1.0, kv_bytes_per_token=0.0, step_overhead_s=1.0)
#: KV capacity for the traces: far more than any case holds
ROOMY_KV_TOKENS = 1 << 30


def _run(policy: MlxLmPolicy, requests: list[tuple[int, int, int]], arrivals: list[float]):
    n = len(arrivals)
    reqs = RequestSet(prompt_tokens=[p for _, p, _ in requests[:n]], output_tokens=[m for _, _, m in requests[:n]],
                      prefix_tokens=[0] * n, arrival_s=list(arrivals), think_s=[0.0] * n)
    workload = WorkloadSpec(n_requests=n, arrival=ArrivalProcess.POISSON, rate_per_s=1.0,
                            prompt=LengthDistribution(kind=LengthKind.FIXED, value=1),
                            output=LengthDistribution(kind=LengthKind.FIXED, value=1))
    return simulate_steps(workload, policy, ONE_SECOND_PASSES, ROOMY_KV_TOKENS, reqs)


def simulated_steps(case: dict) -> list[dict]:
    """The simulated steps of `case` as {"decoded", "handed_over", "prefilled"} records, like the recording."""
    policy = MlxLmPolicy(decode_concurrency=case["decode_concurrency"], prompt_concurrency=case["prompt_concurrency"],
                         prefill_step_size=case["prefill_step_size"])
    requests = [tuple(r) for r in case["requests"]]
    arrivals: list[float] = []
    for j, (step, _p, _m) in enumerate(requests):
        if step == 0:
            arrivals.append(0.0)
            continue
        _result, trace = _run(policy, requests[:j], arrivals)
        if step >= len(trace):
            raise ValueError(f"request {j}: the simulation is idle before step {step}")
        arrivals.append(trace[step].start_s)
    _result, trace = _run(policy, requests, arrivals)
    return [{"decoded": list(t.decoded), "handed_over": list(t.handed_over),
             "prefilled": [list(c) for c in t.prefilled]} for t in trace]
