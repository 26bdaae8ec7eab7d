"""Start-up logs of hybrid and speculative runs reconcile: the printed tokens, concurrency and state sizes."""

from __future__ import annotations

from calculators.model.hf_config import architecture_from_config, architecture_from_config_file
from calculators.reconcile.check import reconcile_log
from calculators.reconcile.log.parse import parse_startup_log
from calculators.reconcile.result import RowStatus, Rule
from tests.support.paths import HF_CONFIG_DIR, LOG_DIR

LOGS = LOG_DIR
CONFIGS = HF_CONFIG_DIR

# Qwen3.6-35B-A3B's text geometry (the Qwen3.5-35B-A3B layout: 40 layers, full attention every 4th, 2 KV heads
# of 256; Gated DeltaNet with 16 key / 32 value heads of 128; mamba_ssm_dtype float32), as public copies of its
# text_config give it.
QWEN36_35B = {
    "model_type": "qwen3_5_moe_text", "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
    "num_key_value_heads": 2, "head_dim": 256, "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
    "linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_num_value_heads": 32,
    "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32", "num_experts": 256, "num_experts_per_tok": 8,
    "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "vocab_size": 248320,
    "max_position_embeddings": 262144, "tie_word_embeddings": False, "mtp_num_hidden_layers": 1,
}


def _rows(result):
    return {row.label: row for row in result.rows}


def test_vllm_hybrid_log_tokens_and_concurrency():
    """noonghunna/club-3090 issue #612 (vLLM v0.24.0, RTX 5090, fp8 KV, prefix caching): 5.98 GiB available,
    'GPU KV cache size: 567,978 tokens', 4.33x for 131,072-token requests. servewise: the float32 GDN state
    (49,152 + 2,097,152 bytes) raises the block to 2,096 tokens (131 x 16, no padding); 10 attention + 30 GDN
    layers form 4 groups of 10; 299 blocks; a request holds 63 attention + 3 x 2 state blocks: 299 / 69."""
    parsed = parse_startup_log((LOGS / "vllm-v0.24-qwen36-nvfp4-fp8-kv-5090.log").read_text())
    result = reconcile_log(parsed, arch=architecture_from_config(QWEN36_35B))
    rows = _rows(result)
    tokens, concurrency = rows["KV cache size in tokens"], rows["maximum concurrency"]
    # the only slack is the printed budget's rounding (5.98 GiB +- 0.005): 298 or 299 blocks
    assert tokens.status is RowStatus.EXPLAINED and tokens.rule is Rule.ROUNDED_INPUT
    assert tokens.predicted_high == 567_978
    assert concurrency.status is RowStatus.EXPLAINED and concurrency.predicted_high == 299 / 69
    assert "Setting attention block size to 2096 tokens" in " ".join(result.plan_notes)


def test_vllm_hybrid_log_without_the_state_would_be_off():
    """The same log with the recurrent layers left out of the pool (servewise before issue 14) misses."""
    parsed = parse_startup_log((LOGS / "vllm-v0.24-qwen36-nvfp4-fp8-kv-5090.log").read_text())
    result = reconcile_log(parsed, arch=architecture_from_config(QWEN36_35B))
    row = _rows(result)["KV cache size in tokens"]
    attention_only = int(5.98 * 2**30) // (10 * 2 * 512 * 1)  # 10 layers x 2 heads x (256 + 256) x fp8
    assert attention_only > 1.1 * row.predicted_high


def test_sglang_hybrid_log_state_pool_is_exact():
    """kvcache-ai/ktransformers issue #1870 (SGLang, TP 2): the Mamba pool of a Qwen3.5 MoE model; its
    conv and temporal state sizes follow from max_mamba_cache_size 82 and the Qwen3.5-397B-A17B geometry."""
    parsed = parse_startup_log((LOGS / "sglang-2026-02-qwen35-hybrid-gdn-mamba-cache-tp2.log").read_text())
    arch = architecture_from_config_file(CONFIGS / "Qwen3.5-397B-A17B.json")
    result = reconcile_log(parsed, arch=arch, overrides={"tp_size": 2})
    rows = _rows(result)
    conv = rows["Mamba conv state for 82 + 1 slots"]
    ssm = rows["Mamba temporal (SSM) state for 82 + 1 slots"]
    assert conv.status is RowStatus.EXACT and ssm.status is RowStatus.EXACT
    assert rows["K size for 580364\u00a0tokens"].status is RowStatus.EXACT


def test_a_hybrid_rule_is_named():
    assert Rule.MAMBA_CACHE_MODE.value == "mamba_cache_mode" and Rule.DRAFT_LAYERS.value == "draft_layers"
