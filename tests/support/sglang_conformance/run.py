"""Start SGLang once per case and record what it printed about memory (run with the SGLang venv's python).

`python -m tests.support.sglang_conformance.run --record OUT.json [--only NAME] [--models DIR]`: for each case,
write the tiny model, start `python -m sglang.launch_server` on the CPU device, wait for the
`max_total_num_tokens=` line (or the process's end), keep every memory line and the server_args it ran with,
then stop the server.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.sglang_conformance.cases import BASE_FLAGS, CASES
from tests.support.tiny_hf import write_tiny_model

KEEP = re.compile(r"avail mem=|KV Cache is allocated|max_total_num_tokens=|Memory pool end|mem usage=|"
                  r"SWA|swa|capped|Error|error:|page_size|Mamba Cache|SERVEWISE")
ARGS_KEPT = ("mem_fraction_static", "max_running_requests", "max_total_tokens", "chunked_prefill_size",
             "max_prefill_tokens", "context_length", "page_size", "kv_cache_dtype", "dtype", "device",
             "attention_backend", "swa_full_tokens_ratio", "disable_radix_cache", "cuda_graph_max_bs",
             "disable_hybrid_swa_memory", "tp_size")


def _strip(line: str) -> str:
    return re.sub(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\] ", "", line.rstrip())


def run_case(case: dict, models: Path, port: int, timeout_s: float = 600) -> dict:
    folder = write_tiny_model(case["model"], models, case["weights_dtype"])
    command = [sys.executable, str(Path(__file__).with_name("serve.py")), "--model-path", str(folder), *BASE_FLAGS,
               "--host", "127.0.0.1", "--port", str(port), *case["flags"]]
    env = {k: v for k, v in os.environ.items() if k != "SGLANG_USE_CPU_ENGINE"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    kept: list[str] = []
    tail: list[str] = []  # the last lines, kept when SGLang stops before its pool summary (the traceback)
    server_args: dict = {}
    start = time.monotonic()
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = _strip(raw)
        tail = [*tail[-11:], line[:600]]
        if line.startswith("server_args="):
            try:
                full = ast.literal_eval(line.removeprefix("server_args="))
                server_args = {k: full.get(k) for k in ARGS_KEPT}
            except (ValueError, SyntaxError):
                server_args = {"unparsed": line[:2000]}
        elif KEEP.search(line) and "UserWarning" not in line:
            kept.append(line[:600])
        if "max_total_num_tokens=" in line or time.monotonic() - start > timeout_s:
            break
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    import sglang
    import torch
    shown = " ".join(["python -m sglang.launch_server --model-path MODEL", *BASE_FLAGS, *case["flags"]])
    return {"name": case["name"], "model_name": case["model_name"], "model": case["model"],
            "weights_dtype": case["weights_dtype"], "command": shown, "server_args": server_args,
            "engine_version": {"sglang": sglang.__version__, "torch": torch.__version__ + " (CPU run)"},
            "log": kept, "start_s": round(time.monotonic() - start, 1),
            **({} if any("max_total_num_tokens=" in line for line in kept) else {"tail": tail})}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--only", action="append")
    parser.add_argument("--models", type=Path, default=Path("/tmp/servewise-sglang-models"))
    args = parser.parse_args()
    out = json.loads(args.record.read_text()) if args.record.exists() else []
    done = {r["name"] for r in out}
    for i, case in enumerate(CASES):
        if (args.only and case["name"] not in args.only) or (not args.only and case["name"] in done):
            continue
        record = run_case(case, args.models, 32000 + i)
        out = [r for r in out if r["name"] != case["name"]] + [record]
        args.record.write_text(json.dumps(out, indent=1) + "\n")
        print(case["name"], record["start_s"], "s", *record["log"][-3:], sep="\n  ", flush=True)


if __name__ == "__main__":
    main()
