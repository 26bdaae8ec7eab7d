"""Speculative decoding in llama.cpp, MLX LM and vLLM: what the drafter adds to memory and what changes."""

from __future__ import annotations

import pytest

from calculators.engines.llama_cpp.plan import (
    LlamaCppSettings,
    mtp_draft_architecture,
    plan_llamacpp,
    plan_llamacpp_draft,
)
from calculators.engines.mlx_lm.plan import MlxLmSettings
from calculators.engines.mlx_lm.speculative import plan_mlx_lm_speculative
from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.plan import plan_vllm
from calculators.engines.vllm.spec_decode import VllmDraft
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.hf_config import architecture_from_config_file
from tests.support.paths import HF_CONFIG_DIR

CONFIGS = HF_CONFIG_DIR
LLAMA_8B = architecture_from_config_file(CONFIGS / "Llama-3.1-8B-Instruct.json")
LLAMA_1B = architecture_from_config_file(CONFIGS / "Llama-3.2-1B.json")
EAGLE3_HEAD = architecture_from_config_file(CONFIGS / "llama3-8B-eagle3.json")
QWEN35 = architecture_from_config_file(CONFIGS / "Qwen3.5-397B-A17B.json")
QWEN3_NEXT = architecture_from_config_file(CONFIGS / "Qwen3-Next-80B-A3B-Thinking.json")
H100 = Machine(device_memory_bytes=80 << 30, gpu_id="h100-sxm-80gb")
MIB = 1 << 20


def test_llamacpp_rollback_drafting_multiplies_the_recurrent_rows():
    """common/common.h need_n_rs_seq: draft-mtp keeps --spec-draft-n-max (3) extra state rows per sequence on
    Qwen3.5 (llm_arch_supports_rs_rollback), src/llama-memory-recurrent.cpp n_rows = mem_size x (1 + n_rs_seq)."""
    base = LlamaCppSettings(ctx_size=8192, parallel=2)
    plain = plan_llamacpp(QWEN35, base)
    mtp = plan_llamacpp(QWEN35, LlamaCppSettings(ctx_size=8192, parallel=2, spec_type="draft-mtp"))
    rs = {c.name: c for c in plain.caches}["recurrent"]
    rs_mtp = {c.name: c for c in mtp.caches}["recurrent"]
    assert rs_mtp.total_bytes == 4 * rs.total_bytes
    assert {c.name: c for c in mtp.caches}["kv"] == {c.name: c for c in plain.caches}["kv"]


def test_llamacpp_no_rollback_for_qwen3_next():
    """Qwen3-Next is not in llm_arch_supports_rs_rollback: n_rs_seq is clamped to 0 (src/llama-context.cpp)."""
    s = LlamaCppSettings(ctx_size=8192, parallel=1)
    plain = plan_llamacpp(QWEN3_NEXT, s)
    mtp = plan_llamacpp(QWEN3_NEXT, s.model_copy(update={"spec_type": ("draft-mtp",)}))
    assert plain.caches == mtp.caches


def test_llamacpp_draft_context_copies_the_targets_context_with_draft_cache_types():
    s = LlamaCppSettings(ctx_size=16384, parallel=4, spec_draft_model="draft.gguf", spec_draft_type_k="q8_0",
                         spec_draft_type_v="q8_0", flash_attn="on")
    draft = plan_llamacpp_draft(LLAMA_1B, s)
    kv = draft.caches[0]
    assert (kv.cells, kv.seqs, kv.layers, kv.type_k) == (4096, 4, 16, "q8_0")
    # q8_0: 34 bytes per 32 elements; 8 KV heads x 64 per layer, K and V
    assert kv.total_bytes == 2 * 16 * 4096 * 4 * (8 * 64 // 32 * 34)


def test_llamacpp_mtp_context_caches_only_the_nextn_layers():
    draft = plan_llamacpp_draft(mtp_draft_architecture(QWEN35), LlamaCppSettings(ctx_size=8192, parallel=1))
    (kv,) = draft.caches
    assert (kv.layers, kv.cells) == (1, 8192)
    assert kv.total_bytes == 8192 * 2 * 2 * 256 * 2  # 2 KV heads x 256, K and V, f16


def test_mlx_draft_model_plan_and_what_stops():
    plan = plan_mlx_lm_speculative(LLAMA_8B, LLAMA_1B, MlxLmSettings(), Machine(device_memory_bytes=64 << 30,
                                   unified_memory=True), None, None, prompt_tokens=1000, generated_tokens=200)
    # 1000 + 200 tokens (drafts never run past the tokens left) -> buffers grown in 256-token steps to 1280
    assert plan.target.allocated_tokens == 1280 and plan.draft.allocated_tokens == 1280
    assert plan.target.kv_cache_bytes == 1280 * 32 * 8 * 128 * 2 * 2
    assert plan.draft.kv_cache_bytes == 1280 * 16 * 8 * 64 * 2 * 2
    assert not plan.batching
    assert {n.code for n in plan.notes} >= {"mlx_draft_no_batching"}


def test_mlx_refuses_a_draft_model_for_a_hybrid():
    with pytest.raises(ServewiseInputError, match="trimmable"):
        plan_mlx_lm_speculative(QWEN3_NEXT, LLAMA_1B, MlxLmSettings(), Machine(device_memory_bytes=64 << 30),
                                None, None, prompt_tokens=100)


def test_vllm_eagle3_head_shares_the_pool_and_adds_its_weights():
    """One EAGLE-3 layer with Llama 3.1 8B's KV shape joins the 32 target layers: 32/33 of the tokens."""
    base = VllmSettings(kv_cache_memory_bytes=10 << 30, max_model_len=8192)
    plain = plan_vllm(LLAMA_8B, base, H100, 16 << 30)
    spec = VllmSettings(kv_cache_memory_bytes=10 << 30, max_model_len=8192, speculative_config={
        "method": "eagle3", "model": "head", "num_speculative_tokens": 3})
    eagle = plan_vllm(LLAMA_8B, spec, H100, 16 << 30, draft=VllmDraft(arch=EAGLE3_HEAD, weights_bytes=800 * MIB))
    assert plain.num_gpu_blocks == (10 << 30) // (32 * 16 * 8 * 128 * 2 * 2)
    assert eagle.num_gpu_blocks == (10 << 30) // (33 * 16 * 8 * 128 * 2 * 2)
    assert eagle.weights_bytes == (16 << 30) + 800 * MIB
    assert eagle.num_lookahead_tokens == 3


def test_vllm_mtp_on_a_hybrid_pads_the_state_groups():
    """Qwen3-Next + MTP (num_speculative_tokens 2): 12 + 1 attention layers and 36 GDN layers; groups of 13,
    so the GDN layers form 3 groups of 12 (vLLM's padding layers); conv state keeps 3 + 2 positions."""
    settings = VllmSettings(kv_cache_memory_bytes=20 << 30, max_model_len=32768, speculative_config={
        "method": "qwen3_next_mtp", "num_speculative_tokens": 2}, enable_prefix_caching=False)
    arch = QWEN3_NEXT.__class__(**{**QWEN3_NEXT.__dict__, "mtp_layers": 1})
    plan = plan_vllm(arch, settings, Machine(device_memory_bytes=80 << 30, gpu_id="a100-sxm-80gb"), None)
    kinds = sorted((g.kind, g.layers) for g in plan.kv_cache_groups)
    assert kinds == [("full", 13), ("mamba", 12), ("mamba", 12), ("mamba", 12)]
    assert plan.mamba_state.conv_shape == (5, 8192)
    assert plan.mamba_state.blocks_per_request_per_layer == 1 + 2  # mode none: 1 + num_speculative_blocks


def test_vllm_ngram_adds_no_layers_but_widens_the_state():
    ngram = VllmSettings(kv_cache_memory_bytes=20 << 30, max_model_len=32768, speculative_config=(
        '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'))  # as typed on the command line
    plan = plan_vllm(QWEN3_NEXT, ngram, Machine(device_memory_bytes=80 << 30, gpu_id="a100-sxm-80gb"), None)
    assert sum(g.draft_layers for g in plan.kv_cache_groups) == 0
    assert plan.mamba_state.conv_shape == (3 + 4, 8192)


def test_ollama_runs_hybrids_from_config_json_one_request_at_a_time():
    """server/sched.go:507 names GGUF architectures (qwen3next, qwen35moe, nemotron_h); a catalog model's
    config.json says qwen3_next / qwen3_5_moe_text, which must get the same single slot."""
    from calculators.engines.ollama.plan import OllamaSettings, plan_ollama

    for arch in (QWEN3_NEXT, QWEN35):
        plan = plan_ollama(arch, OllamaSettings(num_parallel=4, context_length=8192),
                           Machine(device_memory_bytes=80 << 30), None)
        assert plan.effective_parallel == 1


def test_mlx_draft_model_setting_refuses_hybrids_and_says_batching_stops():
    from calculators.engines.mlx_lm.plan import plan_mlx_lm

    mac = Machine(device_memory_bytes=64 << 30, unified_memory=True)
    settings = MlxLmSettings(draft_model="mlx-community/Llama-3.2-1B-Instruct-4bit")
    plan = plan_mlx_lm(LLAMA_8B, settings, mac, None, prompt_tokens=100)
    assert plan.refusal is None and "stops batching" in {n.code: n.message for n in plan.notes}["mlx_draft_model"]
    hybrid = plan_mlx_lm(QWEN3_NEXT, settings, mac, None, prompt_tokens=100)
    assert hybrid.refusal is not None and "trimmable" in hybrid.refusal


def test_llamacpp_plan_names_the_draft_context():
    plan = plan_llamacpp(LLAMA_8B, LlamaCppSettings(ctx_size=8192, parallel=1, spec_draft_model="draft.gguf"))
    assert "draft model gets a context of its own" in {n.code: n.message for n in plan.notes}["llamacpp_draft_context"]


def test_llamacpp_draft_context_takes_the_targets_n_ctx_and_joins_the_components(tmp_path):
    """-c 0 -np auto: the target's trained context x 1 stream (unified); the draft context gets that n_ctx
    (common_speculative_init_result: cparams.n_ctx = llama_n_ctx(ctx_tgt)), not the draft's own trained one."""
    from calculators.engines.llama_cpp.plan import LlamaCppDraft
    from calculators.memory.compare import Workload, plan_without_speculation
    from reports.memory_readouts import speculation_rows

    s = LlamaCppSettings(ctx_size=0, spec_draft_model="draft.gguf", spec_draft_type_k="q8_0",
                         spec_draft_type_v="q8_0", flash_attn="on", fit=False)
    draft = LlamaCppDraft(arch=LLAMA_1B, weights_bytes=1_000_000_000)
    plan = plan_llamacpp(LLAMA_8B, s, H100, 16_000_000_000, draft=draft)
    assert plan.draft.n_ctx == plan.n_ctx == 131072 and plan.draft.n_seq == 4
    kv = plan.draft.caches[0]
    assert kv.total_bytes == 2 * 16 * 131072 * (8 * 64 // 32 * 34)
    labels = {c.label: c.bytes for c in plan.components}
    assert labels["draft context's KV on gpu0 (-md)"] == kv.total_bytes
    assert labels["draft model weights of 16 blocks on gpu0 (-md)"] == 1_000_000_000
    plain = plan_llamacpp(LLAMA_8B, s.model_copy(update={"spec_draft_model": None}), H100, 16_000_000_000)
    assert plan.used_bytes - plain.used_bytes == kv.total_bytes + 1_000_000_000
    rows = speculation_rows(plan, plain)
    assert rows[0]["used / device"] != rows[1]["used / device"]
    assert plan_without_speculation("llama-cpp", LLAMA_8B, H100, 16_000_000_000, s, Workload(4096)).draft is None


def test_llamacpp_draft_read_from_the_md_gguf_in_a_pasted_command(tmp_path):
    """`memory -- llama-server -m target.gguf -md draft.gguf`: the draft's GGUF header gives its geometry."""
    from calculators.memory.command import plan_from_command
    from knowledge import load_knowledge
    from tests.support.tiny_gguf import TinyAttentionModel

    target = TinyAttentionModel("t", "llama", 2, 32, 8, 128, 8192).write(tmp_path / "t.gguf")
    draft = TinyAttentionModel("d", "llama", 2, 32, 8, 64, 2048).write(tmp_path / "d.gguf")
    result = plan_from_command(f"llama-server -m {target} -md {draft} -c 4096 -np 2 -ctkd q8_0 -ctvd q8_0 -fa on",
                               load_knowledge())
    kv = result.plan.draft.caches[0]
    assert (kv.cells, kv.layers, kv.type_k) == (2048, 2, "q8_0")  # 4096 over 2 split streams
    assert kv.total_bytes == 2 * 2 * 2048 * 2 * (8 * 64 // 32 * 34)
    assert any(c.label.startswith("draft context's KV") for c in result.plan.components)


def test_mlx_draft_model_given_as_a_model_adds_its_weights_and_cache_to_the_comparison():
    """issue 14: `mlx_lm.server --draft-model` with the drafter given (catalog or config.json): the comparison's
    plan carries the draft's weights and its own cache (one sequence: the server stops batching), and says that a
    workload of several sequences is not held at once."""
    from calculators.engines.base import DraftModel
    from calculators.memory.compare import Workload, run_plan, why_not_held

    mac = Machine(device_memory_bytes=64 << 30, unified_memory=True)
    settings = MlxLmSettings(draft_model="meta-llama/Llama-3.2-1B", decode_concurrency=4)
    workload = Workload(context_tokens=1000, sequences=4)
    draft = DraftModel(arch=LLAMA_1B, weights_bytes=2 << 30, name="llama-3.2-1b")
    with_draft = run_plan("mlx-lm", LLAMA_8B, mac, 16 << 30, settings, workload, draft)
    plain = run_plan("mlx-lm", LLAMA_8B, mac, 16 << 30, settings.model_copy(update={"draft_model": None}), workload)
    # 1000 tokens -> 1024-token buffers; the draft: 16 layers x 8 KV heads x 64 x 2 (K, V) x 2 bytes
    draft_cache = 1024 * 16 * 8 * 64 * 2 * 2
    labels = {c.label: c.bytes for c in with_draft.components}
    assert labels["draft model weights (llama-3.2-1b)"] == 2 << 30
    assert labels["draft model cache (llama-3.2-1b)"] == draft_cache
    assert with_draft.kv_cache_bytes == 1024 * 32 * 8 * 128 * 2 * 2 + draft_cache  # one target sequence
    assert plain.kv_cache_bytes == 4 * 1024 * 32 * 8 * 128 * 2 * 2
    assert with_draft.used_bytes == (16 << 30) + (2 << 30) + with_draft.kv_cache_bytes
    assert "mlx_draft_model" not in {n.code for n in with_draft.notes}  # the 'not planned' note is gone
    assert "one request at a time" in why_not_held("mlx-lm", with_draft, workload, mac)
    # the same draft given to settings without --draft-model is not loaded
    assert run_plan("mlx-lm", LLAMA_8B, mac, 16 << 30, settings.model_copy(update={"draft_model": None}),
                    workload, draft).kv_cache_bytes == plain.kv_cache_bytes


def test_vllm_draft_model_given_as_a_model_joins_the_pool_through_the_comparison():
    from calculators.engines.base import DraftModel
    from calculators.memory.compare import Workload, run_plan

    spec = VllmSettings(kv_cache_memory_bytes=10 << 30, max_model_len=8192, speculative_config={
        "method": "draft_model", "model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 3})
    plan = run_plan("vllm", LLAMA_8B, H100, 16 << 30, spec, Workload(context_tokens=8192),
                    DraftModel(arch=LLAMA_1B, weights_bytes=2 << 30, name="llama-3.2-1b"))
    # the draft model's 16 attention layers join the target's pool, its weights the target's
    assert plan.weights_bytes == (16 << 30) + (2 << 30)
    assert sum(g.draft_layers for g in plan.kv_cache_groups) == 16


def test_llamacpp_md_draft_given_as_a_model_when_its_gguf_cannot_be_read():
    """llama-server -md names a GGUF this machine does not have: the draft given as a catalog model plans the
    draft context (the target's n_ctx 8192 x 16 layers x 8 KV heads x 64 x K+V x f16 = 256 MiB) and its weights."""
    from calculators.engines.base import DraftModel
    from calculators.memory.compare import Workload, run_plan

    settings = LlamaCppSettings(ctx_size=8192, parallel=1, spec_draft_model="Llama-3.2-1B-Q8_0.gguf")
    plan = run_plan("llama-cpp", LLAMA_8B, H100, 16 << 30, settings, Workload(context_tokens=8192),
                    DraftModel(arch=LLAMA_1B, weights_bytes=2 << 30, name="llama-3.2-1b"))
    assert plan.draft is not None and plan.draft.kv_cache_bytes == 8192 * 16 * 8 * 64 * 2 * 2
    labels = {c.label: c.bytes for c in plan.components}
    assert labels["draft context's KV on gpu0 (-md)"] == 256 * MIB
    assert labels["draft model weights of 16 blocks on gpu0 (-md)"] == 2 << 30
