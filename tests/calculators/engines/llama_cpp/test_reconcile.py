"""llama.cpp's reconcile rules on real logs: pre-MLA DeepSeek-2 conversions and old 'repeating layers' splits."""

from __future__ import annotations

from calculators.engines.llama_cpp.reconcile import full_kv_arch
from calculators.model.architecture import LayerKind
from calculators.model.catalog import architecture_from_catalog
from calculators.reconcile.check import reconcile_log
from calculators.reconcile.log.parse import parse_startup_log
from calculators.reconcile.result import RowStatus, Rule
from tests.support.paths import LOG_DIR


def test_a_pre_mla_conversion_keeps_every_heads_k_and_v():
    arch = architecture_from_catalog("deepseek-v2-lite")
    full = full_kv_arch(arch)
    assert full is not None and not full.layers_of(LayerKind.MLA)
    layer = full.layers[0]
    assert (layer.k_elements_per_token, layer.v_elements_per_token) == (16 * 192, 16 * 128)
    assert full_kv_arch(architecture_from_catalog("llama-3.1-8b")) is None


def test_deepseek2_full_kv_is_explained_by_its_rule():
    text = (LOG_DIR / "ollama-v0.32.13-llama-server-deepseek2-mla-full-kv.log").read_text()
    result = reconcile_log(parse_startup_log(text), arch=architecture_from_catalog("deepseek-v2-lite"))
    kv = [r for r in result.rows if r.figure in ("kv_cache_bytes", "k_bytes", "v_bytes", "kv_buffer_bytes")]
    assert kv and all(r.status is RowStatus.EXPLAINED and r.rule is Rule.MLA_FULL_KV for r in kv)
    assert "PR #12801" in kv[0].explanation


def test_old_builds_offloading_repeating_layers_place_that_many_blocks():
    # llm_load_tensors era: "offloaded 1/62" was one repeating block on the GPU, the output layer on the CPU
    text = (LOG_DIR / "ollama-docker-deepseek-partial-1-of-62.log").read_text()
    result = reconcile_log(parse_startup_log(text), arch=architecture_from_catalog("deepseek-v3"))
    buffers = {r.device: r for r in result.rows if r.figure == "kv_buffer_bytes"}
    assert {d: r.printed for d, r in buffers.items()} == {"CPU": "9600.00", "CUDA0": "160.00"}
    assert all(r.rule is Rule.MLA_FULL_KV for r in buffers.values())
    assert any("repeating layers" in a for a in result.assumptions)
