"""The recordings still hold: re-run mlx-lm (the pinned version, in .venv-mlx) on every case and compare.

`make test` installs .venv-mlx from requirements-mlx.txt first. Every layer's class, offset, nbytes, largest
nbytes and buffer shapes must equal the recording, and so must every refusal; the peak memory is not compared
(it varies by a few percent from process to process). After an intended engine upgrade, re-record with
`.venv-mlx/bin/python -m tests.support.mlx_conformance.runner tests/data/conformance/mlx_lm/recordings.json`.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.mlx_conformance import RECORDINGS
from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.live

MLX_PYTHON = REPO_ROOT / ".venv-mlx" / "bin" / "python"
VARYING = ("peak_memory_bytes", "printed_peak_memory_gb")  # allocator state: differs between processes


def _stable(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in VARYING}


def _record_with_mlx(module: str, out, timeout_s: int) -> dict:
    """Run `python -m module out` with the MLX venv and return the JSON it wrote (fails with a message without it)."""
    if not MLX_PYTHON.exists():
        pytest.fail(f"{MLX_PYTHON} is missing: `make .venv-mlx/.installed` (or `make test`) installs mlx-lm from "
                    "requirements-mlx.txt")
    run = subprocess.run([str(MLX_PYTHON), "-m", module, str(out)], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=timeout_s)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.timeout(1800)
def test_mlx_lm_still_allocates_what_was_recorded(tmp_path):
    fresh = _record_with_mlx("tests.support.mlx_conformance.runner", tmp_path / "recordings.json", 1700)
    recorded = json.loads(RECORDINGS.read_text())
    assert fresh["engine"] == recorded["engine"]
    assert fresh["models"] == recorded["models"]
    changed = [r["case"] for r, f in zip(recorded["results"], fresh["results"], strict=True)
               if _stable(r) != _stable(f)]
    assert not changed, f"mlx-lm no longer allocates what was recorded for {len(changed)} case(s): {changed}"


@pytest.mark.timeout(600)
def test_batch_generator_still_steps_as_recorded_and_as_simulated(tmp_path):
    """mlx-lm's BatchGenerator (mlx_lm.server's scheduler) on the batch_cases.py arrivals: the fresh trace equals the
    recording, and the simulator's steps equal both. Re-record with
    `.venv-mlx/bin/python -m tests.support.mlx_conformance.batch_trace tests/data/conformance/mlx_lm/batch_traces.json`.
    """
    from tests.support.mlx_conformance.batch_cases import BATCH_TRACES
    from tests.support.mlx_conformance.simulated import simulated_steps

    fresh = _record_with_mlx("tests.support.mlx_conformance.batch_trace", tmp_path / "batch_traces.json", 500)
    recorded = json.loads(BATCH_TRACES.read_text())
    assert fresh["engine"]["mlx-lm"] == recorded["engine"]["mlx-lm"]
    for name, case in fresh["cases"].items():
        assert case["steps"] == recorded["cases"][name]["steps"], f"{name}: mlx-lm steps differently than recorded"
        assert simulated_steps(case) == case["steps"], f"{name}: the simulator steps differently from mlx-lm"


@pytest.mark.timeout(600)
def test_speculative_decoding_still_allocates_what_was_recorded(tmp_path):
    """mlx_lm.generate with a draft model (--draft-model): both caches, layer by layer, as recorded. Re-record with
    `.venv-mlx/bin/python -m tests.support.mlx_conformance.speculative tests/data/conformance/mlx_lm/speculative.json`.
    """
    from tests.support.paths import DATA_DIR

    fresh = _record_with_mlx("tests.support.mlx_conformance.speculative", tmp_path / "speculative.json", 500)
    recorded = json.loads((DATA_DIR / "conformance" / "mlx_lm" / "speculative.json").read_text())
    assert (fresh["mlx"], fresh["mlx_lm"], fresh["models"]) == (recorded["mlx"], recorded["mlx_lm"], recorded["models"])
    assert fresh["results"] == recorded["results"]
