"""Every stored log, reconciled with the inputs its thread gives (RECONCILE.yaml), each row's status pinned.

RECONCILE_PINS.yaml is written by `python -m bench.bench_reconcile_corpus --write-pins`; a change there is a change
in what servewise reproduces and is reviewed against docs/startup-logs.md, where every unexplained row is listed.
"""

from __future__ import annotations

import yaml

from calculators.reconcile.result import RowStatus
from reports.reconcile_shares import shares, shares_text
from tests.support.log_corpus import LOG_DIR, PINS, manifest, pins, reconcile_corpus
from tests.support.paths import REPO_ROOT

FINDINGS = REPO_ROOT / "docs" / "startup-logs.md"
_CORPUS = reconcile_corpus()


def test_every_stored_log_has_its_reconcile_inputs():
    logs = {path.name for path in LOG_DIR.glob("*.log")}
    entries = manifest()
    assert logs == set(entries)
    for name, entry in entries.items():
        assert "model" in entry, name
        assert entry["model"] or "why" in entry or name in _CORPUS[0], name


def test_every_log_is_recognised_and_reconciled_or_says_which_model_is_missing():
    results, skipped = _CORPUS
    assert set(results) | set(skipped) == set(manifest())
    for name, result in results.items():
        assert result.engine is not None, name
    for name, why in skipped.items():
        assert manifest()[name].get("why") == why, f"{name}: reconcile asked for a model the manifest gives: {why}"


def test_statuses_are_pinned():
    results, _ = _CORPUS
    pinned = yaml.safe_load(PINS.read_text(encoding="utf-8"))
    assert pins(results) == pinned


def test_every_unexplained_row_is_a_documented_finding():
    results, _ = _CORPUS
    findings = FINDINGS.read_text(encoding="utf-8")
    _, unexplained = shares(results)
    missing = sorted({item.log for item in unexplained if item.log not in findings})
    assert missing == [], "list these logs' unexplained rows in docs/startup-logs.md"


def test_the_share_table_names_every_engine_with_rows():
    results, _ = _CORPUS
    table, _ = shares(results)
    text = shares_text(table)
    for engine in ("llama-cpp", "ollama", "vllm", "sglang", "mlx-lm"):
        assert f"| {engine} |" in text
    ollama = table["ollama"]
    assert ollama.memory[RowStatus.EXACT] > 0  # the KV estimates
