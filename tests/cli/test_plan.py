"""`python -m calculators plan`: a YAML/JSON spec in, the cheapest configuration out (0), none (4), bad input (2)."""

import json
import subprocess
import sys

from tests.cli.test_memory_recommend import REPO, cli

SPEC = """\
model_id: llama-3.1-8b
engines: [vllm, llama-cpp]
hardware:
  - {gpu_id: h100-sxm-80gb}
  - {gpu_id: l40s-48gb, usd_per_gpu_hour: 1.5}
load: {users: 120, think_time_s: 60}
slo: {ttft_percentile: 95, ttft_s: 1.0, itl_percentile: 95, itl_s: 0.05}
concurrency_options: [16]
requests_per_simulation: 100
"""


def test_a_yaml_spec_prints_the_cheapest_plan_as_json(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(SPEC)
    done = cli("plan", "--spec", str(path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["load_rate_per_s"] == 2.0  # 120 users / 60 s think time
    assert data["best"]["shape"]["engine"] in {"vllm", "llama-cpp"}
    assert data["best"]["cost"]["usd_per_hour"] > 0
    assert any("120 users" in note for note in data["notes"])


def test_the_same_spec_as_json_gives_markdown(tmp_path):
    import yaml

    path = tmp_path / "plan.json"
    path.write_text(json.dumps(yaml.safe_load(SPEC)))
    done = cli("plan", "--spec", str(path))
    assert done.returncode == 0
    assert done.stdout.startswith("# servewise capacity plan")
    assert "## Rejected configurations" in done.stdout


def test_nothing_meets_an_impossible_target_exit_4_with_the_reasons(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(SPEC.replace("ttft_s: 1.0", "ttft_s: 0.001"))
    done = cli("plan", "--spec", str(path), "--json")
    assert done.returncode == 4
    data = json.loads(done.stdout)
    assert data["best"] is None
    assert any(r["stage"] == "slo" and "time to first token" in r["reason"] for r in data["rejections"])


def test_bad_specs_are_one_line_with_status_2(tmp_path):
    cases = {
        "broken.yaml": "model_id: [",
        "empty-hardware.yaml": "model_id: llama-3.1-8b\nhardware: []\n",
        "typo.yaml": SPEC.replace("think_time_s", "think_tme_s"),
        "wrong-model.yaml": SPEC.replace("llama-3.1-8b", "llama-9"),
        "not-text.yaml": b"\xff\xfe\x00",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        done = cli("plan", "--spec", str(path))
        assert done.returncode == 2, name
        assert done.stderr.startswith("servewise: ") and done.stderr.count("\n") == 1, (name, done.stderr)
    assert "think_tme_s" in cli("plan", "--spec", str(tmp_path / "typo.yaml")).stderr
    assert cli("plan", "--spec", str(tmp_path / "missing.yaml")).returncode == 2


def test_a_closed_pipe_ends_quietly(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(SPEC)
    command = f"{sys.executable} -m calculators plan --spec {path} --json | head -c 10 > /dev/null"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    # 141 when the reader closed the pipe before the plan was written; 0 when the whole plan fit in the pipe's
    # buffer first (a race between the two processes). Either way: no traceback, no message.
    assert done.returncode in (0, 141), done.stderr
    assert done.stderr == ""
