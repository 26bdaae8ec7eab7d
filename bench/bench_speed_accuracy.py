"""How accurate is servewise's speed model? Median and p90 error against every public measurement gathered.

Run from the repository root:  python -m bench.bench_speed_accuracy [--quick] [--markdown] [--write PATH]

- single-stream decode / prefill: each measurement predicted by its group's fit made without it
  (leave-one-out) -- the uncalibrated, out-of-sample figure;
- held-out #4167: the Apple-silicon llama.cpp scoreboard, never fitted on (knowledge/speed_holdout_4167.yaml);
- serving sweeps: every load level predicted by the default fit through the simulator (uncalibrated),
  then calibrated on one load level and predicting the others (leave-one-load-level-out), TTFT and ITL;
  the calibration's per-sequence host overhead prior (engines whose steps process every sequence's output on
  the host) for each half of the sweeps (split by accelerator) is the candidate that did best on the other
  half, so the judged rows never chose it.

Errors are |predicted / measured - 1|. Sources: knowledge/speed_measurements.yaml (each row cites its own).
`--quick` skips the calibrated serving check (the slow part: one simulator search per load level).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from calculators.speed import accuracy
from calculators.speed.fit import default_fit
from knowledge.loader import load_knowledge
from knowledge.speed import HOLDOUT_FILE, load_speed_measurements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="skip the calibrated (leave-one-load-level-out) serving check"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print the per-class table as Markdown (for the README)"
    )
    parser.add_argument("--max-evals", type=int, default=50, help="simulator evaluations per calibration search")
    parser.add_argument(
        "--write",
        metavar="PATH",
        help="also save the summaries as JSON (the accuracy page reads bench/results/speed_accuracy.json)",
    )
    parser.add_argument("--rows", metavar="PATH", help="also save every ledger row (predicted vs measured) as JSON")
    args = parser.parse_args()
    started = time.perf_counter()
    data = load_speed_measurements()
    table = default_fit()
    memory = {g.id: g.memory_bytes for g in load_knowledge().gpus.all_gpus}
    rows = accuracy.single_stream_rows(data)
    rows += accuracy.holdout_rows(load_speed_measurements(HOLDOUT_FILE), table)
    rows += accuracy.sweep_rows(data, table, memory, calibrated=False, max_evals=args.max_evals)
    cross = None
    if not args.quick:
        cross = accuracy.cross_fitted_calibrated_rows(data, table, memory, max_evals=args.max_evals)
        rows += cross.rows
    elapsed = time.perf_counter() - started
    print(f"{len(data.points)} single-stream points, {len(data.sweeps)} serving sweeps, "
          f"{len(load_speed_measurements(HOLDOUT_FILE).points)} held-out points; {elapsed:.0f} s\n")
    if cross is not None:
        for hardware, chosen, errors in cross.choices:
            shown = ", ".join(f"{w * 1e6:g} us: {e:.1%}" for w, e in errors.items())
            print(f"per-sequence host overhead prior for the sweeps on {', '.join(hardware)}: {chosen * 1e6:g} us "
                  f"(chosen on the other half; its median errors {shown})")
        shown = ", ".join(f"{w * 1e6:g} us: {e:.1%}" for w, e in cross.overall_errors.items())
        print(f"per-sequence host overhead prior best over all sweeps (a team's own calibration uses it): "
              f"{cross.overall_best * 1e6:g} us ({shown})\n")
    if args.markdown:
        print("| check | class | metric | n | median abs error | p90 abs error |")
        print("|---|---|---|---:|---:|---:|")
        for s in accuracy.summarize(rows, by_engine=False):
            print(
                f"| {s.check} | {s.hardware_class} | {s.metric} | {s.n} | "
                f"{s.median_abs_error:.1%} | {s.p90_abs_error:.1%} |"
            )
        print()
        print("| check | engine | metric | n | median abs error | p90 abs error |")
        print("|---|---|---|---:|---:|---:|")
        for s in accuracy.summarize(rows, by_class=False):
            print(
                f"| {s.check} | {s.engine} | {s.metric} | {s.n} | "
                f"{s.median_abs_error:.1%} | {s.p90_abs_error:.1%} |"
            )
        print()
    print(f"{'check':44s} {'engine':9s} {'class':15s} {'metric':22s} {'n':>4s} {'median':>7s} {'p90':>7s}")
    for s in accuracy.summarize(rows):
        print(f"{s.check:44s} {s.engine:9s} {s.hardware_class:15s} {s.metric:22s} {s.n:4d} "
              f"{s.median_abs_error:7.1%} {s.p90_abs_error:7.1%}")
    print("\nPer class, all engines:")
    for s in accuracy.summarize(rows, by_engine=False):
        print(
            f"{s.check:44s} {s.hardware_class:15s} {s.metric:22s} {s.n:4d} "
            f"{s.median_abs_error:7.1%} {s.p90_abs_error:7.1%}"
        )
    if args.write:
        import dataclasses
        import json
        import subprocess

        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        payload = {
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "commit": commit or "unknown",
            "quick": args.quick,
            "n_points": len(data.points),
            "n_sweeps": len(data.sweeps),
            "by_class": [dataclasses.asdict(s) for s in accuracy.summarize(rows, by_engine=False)],
            "by_engine": [dataclasses.asdict(s) for s in accuracy.summarize(rows)],
            "by_engine_all_classes": [dataclasses.asdict(s) for s in accuracy.summarize(rows, by_class=False)],
            "per_sequence_prior_s": None if cross is None else {
                "candidates": list(cross.overall_errors), "overall_best": cross.overall_best,
                "cross_fitted": [{"judged_hardware": list(h), "chosen_on_other_half": w,
                                  "other_half_median_error": {str(k): v for k, v in e.items()}}
                                 for h, w, e in cross.choices],
            },
            "sources": sorted({r.source for r in rows}),
        }
        Path(args.write).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    if args.rows:
        import dataclasses
        import json

        Path(args.rows).parent.mkdir(parents=True, exist_ok=True)
        Path(args.rows).write_text(json.dumps([dataclasses.asdict(r) | {"error": r.error} for r in rows], indent=0)
                                   + "\n", encoding="utf-8")
    print("\nSources (one row per source, measurements counted):")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.source] = counts.get(r.source, 0) + 1
    for source, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {n:4d}  {source}")


if __name__ == "__main__":
    main()
