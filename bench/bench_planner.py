"""Print how long the capacity planner's default search takes (target: under 10 s on a 2-core machine).

The default search is the one the planner page opens with (`calculators.planner.default_spec`). Each
figure is the best of three runs: CPU seconds of this process and wall seconds (other processes on a
shared machine inflate the wall time).
"""

import time

from calculators.planner import default_spec, plan_capacity
from knowledge.loader import load_knowledge

BUDGET_S = 10.0


def main() -> None:
    kb = load_knowledge()
    spec = default_spec()
    best_cpu, best_wall, result = float("inf"), float("inf"), None
    for _ in range(3):
        cpu, wall = time.process_time(), time.perf_counter()
        result = plan_capacity(spec, kb)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    assert result is not None
    verdict = "ok" if best_wall < BUDGET_S else "OVER"
    print(f"planner default search: {best_wall:.2f} s wall, {best_cpu:.2f} s CPU (budget {BUDGET_S:.0f} s: {verdict}); "
          f"{result.n_simulations} simulations, {len(result.candidates)} candidates, {len(result.rejections)} rejected")
    if result.best is not None and result.best.cost is not None:
        best = result.best
        print(f"  cheapest: {best.shape.engine} on {best.replicas} x {best.shape.gpus_per_instance} "
              f"{best.shape.gpu_id}, ${best.cost.usd_per_hour:.2f}/h")


if __name__ == "__main__":
    main()
