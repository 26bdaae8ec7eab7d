"""Print how long the simulator takes for 10,000 requests per engine (target: under 1 s each).

Each figure is the best of three runs, in CPU seconds of this process (wall time is printed too;
on a shared 2-core machine other processes inflate it).
"""

import time

from calculators.simulator.engines import SIMULATED_ENGINES, default_policy
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import LengthDistribution, WorkloadSpec, draw_requests

# An 8B BF16 model on an RTX 4090-class card (1008 GB/s, 165 TFLOPS): the numbers only set the pace.
COST = StepCostModel(
    memory_bandwidth_bytes_per_s=1008e9, flops_per_s=165e12, weights_bytes=16e9, active_params=8e9,
    kv_bytes_per_token=131_072,
)
KV_CAPACITY_TOKENS = 60_000
N_REQUESTS = 10_000


def main() -> None:
    for rate in (1.0, 5.0):
        workload = WorkloadSpec(
            n_requests=N_REQUESTS, rate_per_s=rate,
            prompt=LengthDistribution(kind="lognormal", median=500, sigma=0.8),
            output=LengthDistribution(kind="lognormal", median=200, sigma=0.8),
            shared_prefix_fraction=0.3, cancel_after_s=60.0,
        )
        requests = draw_requests(workload)
        for engine in SIMULATED_ENGINES:
            cpu_s, wall_s = [], []
            for _ in range(3):
                start_cpu, start_wall = time.process_time(), time.perf_counter()
                result = simulate(workload, default_policy(engine), COST, KV_CAPACITY_TOKENS, requests=requests)
                cpu_s.append(time.process_time() - start_cpu)
                wall_s.append(time.perf_counter() - start_wall)
            print(
                f"{engine:10s} rate {rate:4.1f}/s  {N_REQUESTS} requests in {min(cpu_s):.3f} s CPU "
                f"({min(wall_s):.3f} s wall; "
                f"{result.diagnostics.n_steps} engine steps, binding: {result.diagnostics.binding.value})"
            )


if __name__ == "__main__":
    main()
