"""`python -m calculators reconcile`: a table or one JSON object; bad or empty logs are one stderr line, status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli.main import main

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "tests" / "data" / "logs"


def test_json_for_a_llamacpp_log_with_its_own_geometry(capsys):
    # llama.cpp 2025-08, gpt-oss-20b on 8 NPUs: every cache figure exact (tests/calculators/reconcile/test_check.py)
    status = main(["reconcile", "--log", str(LOGS / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log"), "--json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    result = json.loads(out.out)
    assert result["engine"] == "llama-cpp" and result["plan_engine"] == "llama-cpp"
    assert {row["status"] for row in result["rows"]} == {"exact"}
    k_swa = next(r for r in result["rows"] if r["figure"] == "k_bytes" and r["cache"] == "kv_swa")
    assert k_swa["printed"] == "9.00" and k_swa["printed_unit"] == "MiB" and k_swa["predicted_low"] == 9 * 2**20
    assert {"missing", "not_compared", "found_geometry", "assumptions"} <= set(result)


def test_text_table_for_a_vllm_log_with_a_catalog_model(capsys):
    status = main(["reconcile", "--log", str(LOGS / "vllm-v0.11-enginecore-qwen3-14b.log"), "--model", "qwen3-14b"])
    out = capsys.readouterr().out
    assert status == 0
    assert "engine printed" in out and "servewise" in out
    assert "42,656\u00a0tokens" in out and "42,624 – 42,688\u00a0tokens" in out and "explained" in out


def test_settings_from_the_command_line(capsys):
    status = main(["reconcile", "--log", str(LOGS / "sglang-tp4-qwen3-235b.log"), "--model", "qwen3-235b-a22b",
                   "--set", "tp_size=4", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["settings_used"]["tp_size"] == 4
    assert [row["status"] for row in result["rows"]] == ["exact", "exact"]


def test_missing_file_empty_log_foreign_log_and_missing_model_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    foreign = tmp_path / "foreign.log"
    foreign.write_text("npm WARN deprecated something\nadded 12 packages\n")
    cases = [
        (["--log", str(tmp_path / "absent.log")], "cannot read"),
        (["--log", str(empty)], "The log is empty"),
        (["--log", str(foreign)], "No start-up line"),
        (["--log", str(LOGS / "vllm-v0.11-enginecore-qwen3-14b.log")], "config.json or pick a catalog model"),
        (["--log", str(LOGS / "vllm-v0.11-enginecore-qwen3-14b.log"), "--model", "qwen3-14b", "--set", "oops"],
         "key=value"),
        (["--log", str(LOGS / "vllm-v0.11-enginecore-qwen3-14b.log"), "--model", "no-such-model"],
         "not a catalog model id"),
    ]
    for args, message in cases:
        assert main(["reconcile", *args]) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("servewise: ") and message in err and err.count("\n") == 1, err


def test_module_entry_point_runs_the_verb():
    done = subprocess.run([sys.executable, "-m", "calculators", "reconcile", "--log",
                           str(LOGS / "llamacpp-2026-quantized-v-needs-flash.log"), "--model", "qwen2.5-7b"],
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "238.00\u00a0MiB" in done.stdout and "UNEXPLAINED" not in done.stdout
