"""Reconcile every stored start-up log and print, per engine, the share of printed figures servewise reproduces.

    python -m bench.bench_reconcile_corpus              # the table, logs without a model, every unexplained row
    python -m bench.bench_reconcile_corpus --write-pins # also rewrite tests/data/logs/RECONCILE_PINS.yaml

Inputs per log (model, settings the thread states) come from tests/data/logs/RECONCILE.yaml.
"""

from __future__ import annotations

import argparse

from reports.reconcile_shares import shares, shares_text
from tests.support.log_corpus import reconcile_corpus, write_pins


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write-pins", action="store_true", help="rewrite tests/data/logs/RECONCILE_PINS.yaml")
    args = parser.parse_args()
    results, skipped = reconcile_corpus()
    table, unexplained = shares(results)
    print(shares_text(table))
    print(f"\n{len(results)} logs reconciled; {len(skipped)} need a model the catalog lacks or the thread does not "
          "name:")
    for name, why in sorted(skipped.items()):
        print(f"- {name}: {why}")
    print(f"\n{len(unexplained)} unexplained rows:")
    for item in unexplained:
        print(f"- {item.log} line {item.line}, {item.label} ({item.printed}): {item.explanation}")
    if args.write_pins:
        write_pins(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
