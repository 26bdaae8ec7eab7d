"""plan_sglang against SGLang itself: what SGLang 0.5.23 printed on this workplace's CPU, case by case.

tests/data/conformance/sglang/conformance-0.5.23.json was written by tests/support/sglang_conformance/run.py
(`python -m sglang.launch_server --device cpu --attention-backend torch_native`, tiny random-weight models
built locally from the config dicts in the file). Each record holds the case (config dict, weights dtype, the
command), the server_args SGLang resolved, and every memory line it printed, plus the exact free-memory
readings SGLang sized its pool from (serve.py prints them: on the CPU device SGLang reads the host's available
memory, utils/common.py get_free_cpu_memory, and prints it only to 2 decimals).

The plan is fed those readings (free before loading, free when the pool is sized) and the host memory SGLang
takes as the device's (get_cpu_memory_capacity), and must give exactly SGLang's token pool, request cap,
context, chunk size and page alignment; the K and V sizes to the printed two decimals (GB = 2^30); every
refusal SGLang gave.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from calculators.engines.sglang.plan import SglangSettings, plan_sglang
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config
from calculators.units import GIB, MIB
from tests.support.paths import DATA_DIR

RECORDS = json.loads((DATA_DIR / "conformance" / "sglang" / "conformance-0.5.23.json").read_text())
STARTED = [r for r in RECORDS if any("max_total_num_tokens=" in line for line in r["log"])]
# stopped by something other than memory, before the pool was sized: the line of SGLang's traceback that says why
NOT_RUN = {"deepseek-v2-mla-frac0.03": "assert rope_scaling is not None",  # CPU rope for DeepSeek wants YaRN
           }
REFUSED = [r for r in RECORDS if r not in STARTED and r["name"] not in NOT_RUN]

_FLAG_KEYS = ("mem_fraction_static", "max_running_requests", "max_total_tokens", "chunked_prefill_size",
              "context_length", "page_size", "kv_cache_dtype", "dtype", "swa_full_tokens_ratio")
_POOL = re.compile(r"#tokens: (\d+), K size: ([\d.]+) GB, V size: ([\d.]+) GB")
_MLA_POOL = re.compile(r"#tokens: (\d+), KV size: ([\d.]+) GB")  # MLA: one latent buffer per layer
_SUMMARY = re.compile(r"max_total_num_tokens=(\d+), chunked_prefill_size=(-?\d+), max_prefill_tokens=(\d+), "
                      r"max_running_requests=(\d+), context_len=(\d+)")
_FREE = re.compile(r"SERVEWISE free_cpu_memory_bytes=(\d+) callers=(\S+)")
_CAPACITY = re.compile(r"SERVEWISE cpu_memory_capacity_mib=([\d.]+)")


def settings_of(record: dict) -> SglangSettings:
    """The SglangSettings of the recorded command's flags (what a pasted command gives servewise)."""
    words = shlex.split(record["command"])
    values = {}
    for i, word in enumerate(words):
        key = word.removeprefix("--").replace("-", "_")
        if word.startswith("--") and key in _FLAG_KEYS:
            values[key] = words[i + 1]
    return SglangSettings.model_validate(values)


def readings(record: dict) -> tuple[int, int]:
    """(free before loading, free when the pool is sized), bytes, as SGLang read them.

    distributed/bootstrap.py measure_pre_model_load_memory keeps its second reading; the pool budget reads
    again in mem_cache/kv_cache_configurator.py _profile_available_bytes.
    """
    free = [(int(m[1]), m[2]) for line in record["log"] if (m := _FREE.search(line))]
    before = [value for value, callers in free if "measure_pre_model_load_memory" in callers][1]
    (after,) = [value for value, callers in free if "_profile_available_bytes" in callers]
    return before, after


def machine_of(record: dict) -> Machine:
    """The host as SGLang's CPU device sees it: get_cpu_memory_capacity's MiB (RAM per NUMA node)."""
    (mib,) = {float(m[1]) for line in record["log"] if (m := _CAPACITY.search(line))}
    return Machine(device_memory_bytes=int(mib * MIB), device_kind="cpu")


def plan_of(record: dict):
    before, after = readings(record)
    return plan_sglang(architecture_from_config(record["model"]), settings_of(record), machine_of(record), 0,
                       free_before_load_bytes=before, free_after_load_bytes=after)


def _gb(value_bytes: int) -> str:
    return f"{value_bytes / GIB:.2f}"


def test_the_recordings_are_of_the_pinned_engine():
    assert {r["engine_version"]["sglang"] for r in RECORDS} == {"0.5.23"}
    assert len(STARTED) >= 5


@pytest.mark.parametrize("record", STARTED, ids=[r["name"] for r in STARTED])
def test_pool_and_caps_match_exactly(record):
    plan = plan_of(record)
    (pool,) = [m for line in record["log"] if (m := _POOL.search(line) or _MLA_POOL.search(line))]
    (summary,) = [m for line in record["log"] if (m := _SUMMARY.search(line))]
    tokens, chunk, max_prefill, running, context = (int(x) for x in summary.groups())
    assert plan.max_total_num_tokens == int(pool[1]) == tokens
    assert plan.max_running_requests == running
    assert plan.context_len == context
    assert plan.chunked_prefill_size == chunk
    assert SglangSettings().max_prefill_tokens == max_prefill
    assert plan.page_size == record["server_args"]["page_size"]
    if pool.re is _MLA_POOL:
        assert (_gb(plan.k_bytes), plan.v_bytes) == (pool[2], 0)
    else:
        assert (_gb(plan.k_bytes), _gb(plan.v_bytes)) == (pool[2], pool[3])
    assert plan.refusal is None


def _refusal(record: dict) -> str:
    """The last error line SGLang printed (the exception's message, without its type)."""
    (line,) = [line for line in record["log"] if re.match(r"^\w+Error: ", line)][-1:]
    return line.split(": ", 1)[1]


@pytest.mark.parametrize("record", REFUSED, ids=[r["name"] for r in REFUSED])
def test_refusals_match(record):
    if record["server_args"]:  # refused after loading: the plan is fed the readings it was refused on
        plan = plan_of(record)
    else:  # refused while checking the arguments, before reading any memory
        plan = plan_sglang(architecture_from_config(record["model"]), settings_of(record),
                           Machine(device_memory_bytes=24105 * MIB, device_kind="cpu"), 0)
    assert plan.refusal is not None and _refusal(record) in plan.refusal


@pytest.mark.parametrize("name", sorted(NOT_RUN))
def test_cases_that_could_not_run_stopped_where_recorded(name):
    (record,) = [r for r in RECORDS if r["name"] == name]
    assert record not in STARTED and any(NOT_RUN[name] in line for line in record["tail"])


def test_the_automatic_fraction_on_cpu_is_close_and_said_to_be_unmodelled():
    (record,) = [r for r in RECORDS if r["name"] == "llama-gqa-auto-fraction-mtt10000"]
    plan = plan_of(record)
    assert plan.mem_fraction_static_is_auto and record["server_args"]["mem_fraction_static"] == 0.716
    assert plan.mem_fraction_static == 0.715  # 512 + 4096 x 1.5 + 128 + 48 x 2 MiB reserved: the CUDA rule
    assert "sglang_cpu_auto_fraction" in {note.code for note in plan.notes}
