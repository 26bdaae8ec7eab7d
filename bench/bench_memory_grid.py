"""Time of a 200 x 200 capacity grid (200 context lengths x up to 200 sequences) for each engine.

Prints, per engine, the milliseconds and the number of plans the search evaluated to fill the grid, i.e. the
most concurrent sequences (capped at 200) at each of 200 context lengths; the target is well under 1 s.
Run with `.venv/bin/python -m bench.bench_memory_grid`.
"""

from __future__ import annotations

import time
from pathlib import Path

from calculators.engines import ENGINE_IDS
from calculators.hardware.catalog import machine_for_gpu
from calculators.memory.capacity import capacity_curve, context_grid
from calculators.memory.compare import ComparisonInputs, Workload
from calculators.model.catalog import architecture_from_catalog
from calculators.units import GIB
from knowledge.loader import load_knowledge

REPO = Path(__file__).resolve().parents[1]

GRID = 200
BUDGET_MS = 1000.0
def main() -> int:
    """Fill the grid for every engine on an H100 (and MLX LM on a 128 GB M4 Max) and print the timings."""
    kb = load_knowledge()
    arch = architecture_from_catalog("llama-3.1-8b", kb)
    weights_bytes = 16 * GIB
    machines = {
        "h100-sxm-80gb": machine_for_gpu(kb.gpus.get("h100-sxm-80gb")),
        "m4-max-40c-128gb": machine_for_gpu(kb.gpus.get("m4-max-40c-128gb"),
                                            working_set=kb.gpus.apple_working_set),
    }
    contexts = context_grid(arch.max_context_tokens, GRID, min_tokens=256)
    print(f"{GRID} contexts x up to {GRID} sequences, {arch.name}, budget {BUDGET_MS:.0f} ms per engine")
    for engine in ENGINE_IDS:
        machine_id = "m4-max-40c-128gb" if engine == "mlx-lm" else "h100-sxm-80gb"
        inputs = ComparisonInputs(arch, machines[machine_id], weights_bytes)
        start = time.perf_counter()
        curve = capacity_curve(inputs, engine, Workload(8192, 1), contexts, sequences_limit=GRID)
        elapsed_ms = (time.perf_counter() - start) * 1000
        if curve.reason:
            print(f"{engine:<10} not run: {curve.reason}")
            continue
        verdict = "ok" if elapsed_ms < BUDGET_MS else "OVER BUDGET"
        print(f"{engine:<10} {machine_id:<17} {elapsed_ms:7.1f} ms  {curve.plans_evaluated:5d} plans  "
              f"{curve.max_sequences[0]} seqs at {contexts[0]} tokens, {curve.max_sequences[-1]} at "
              f"{contexts[-1]}  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
