"""Parameter counts recomputed from real config.json files.

Exact figures are keras-hub's own counts of its ports of these checkpoints (keras-team/keras-hub
`keras_hub/src/models/*/*_presets.py`, "params", commit 71453d08, read 2026-11-30): a count that
agrees to the parameter means every projection, norm and bias of the family is accounted for.
"""

from __future__ import annotations

import pytest

from calculators.errors import ConfigFieldMissing, ServewiseInputError
from calculators.model.params import count_parameters
from tests.support.real_configs import load


def counts(name: str):
    return count_parameters(load(name))


@pytest.mark.parametrize(
    ("name", "keras_params"),
    [
        ("Llama-3.1-8B-Instruct", 8_030_261_248),  # llama3_presets.py llama3.1_instruct_8b
        ("Mistral-7B-v0.3", 7_248_023_552),  # mistral_presets.py mistral_0.3_7b_en
        ("Mistral-Small-3.1-24B-Instruct-2503", 23_572_403_200),  # magistral_small_2506_en: same language model
        ("Mixtral-8x7B-v0.1", 46_702_792_704),  # mixtral_presets.py mixtral_8_7b_en
        ("Phi-3.5-mini-instruct", 3_821_079_552),  # phi3_presets.py phi3_mini_128k_instruct_en: same geometry
        ("Qwen2-7B", 7_615_616_512),  # qwen_presets.py qwen2.5_math_7b_en: same geometry
        ("Qwen3-0.6B", 596_049_920),  # qwen3_presets.py qwen3_0.6b_en
        ("Qwen3-1.7B", 1_720_574_976),  # qwen3_1.7b_en
        ("Qwen3-8B", 8_190_735_360),  # qwen3_presets.py qwen3_8b_en
        ("Qwen3-32B", 32_762_123_264),  # qwen3_32b_en
        ("Qwen3-30B-A3B", 30_532_122_624),  # qwen3_moe_presets.py qwen3_moe_30b_a3b_en
        ("Qwen3-235B-A22B", 235_093_634_560),  # qwen3_moe_235b_a22b_en
        ("gemma-2-9b", 9_241_705_984),  # gemma_presets.py gemma2_9b_en
        ("gemma-2-27b", 27_227_128_320),  # gemma2_27b_en
        ("gpt-oss-20b", 20_914_757_184),  # gpt_oss_presets.py gpt_oss_20b_en
        ("gpt-oss-120b", 116_829_156_672),  # gpt_oss_120b_en
    ],
)
def test_total_matches_keras_hub_exactly(name, keras_params):
    assert counts(name).total == keras_params


@pytest.mark.parametrize(
    ("name", "keras_text_params", "hidden"),
    [
        ("gemma-3-4b-it", 3_880_099_328, 2560),
        ("gemma-3-12b-it", 11_765_788_416, 3840),
        ("gemma-3-27b-it", 27_009_002_240, 5376),
    ],
)
def test_gemma3_text_count_differs_from_keras_only_by_its_shorter_vocabulary(name, keras_text_params, hidden):
    # keras-hub's gemma3_*_text presets keep 262,144 tokens; transformers' Gemma3TextConfig has 262,208.
    c = counts(name)
    assert c.total - keras_text_params == (262_208 - 262_144) * hidden
    assert c.excludes == ("vision tower and projector",)


def test_bge_m3_is_keras_count_plus_pooler():
    # keras-hub's bge_m3 (566,702,080) has no pooler (1024 x 1024 + 1024); the checkpoint does.
    c = counts("bge-m3")
    assert c.total == 567_754_752
    assert c.total - 566_702_080 - (1024 * 1024 + 1024) == 3 * 1024  # keras also drops three 1024-vectors


def test_tied_embeddings_have_no_separate_head():
    c = counts("Llama-3.2-1B")
    assert c.output_head == 0
    assert c.total == 1_235_814_400  # Meta's card: 1.23B


def test_moe_active_is_total_minus_idle_experts():
    mixtral = counts("Mixtral-8x7B-v0.1")
    expert = 3 * 4096 * 14336
    assert mixtral.total - mixtral.active == 32 * (8 - 2) * expert
    assert mixtral.active == 12_879_925_248  # Mistral AI: 12.9B per token


def test_gpt_oss_active_without_embedding_matches_openai():
    # OpenAI's card: 3.6B and 5.1B active; its figure leaves the embedding lookup out.
    for name, stated in (("gpt-oss-20b", 3.6e9), ("gpt-oss-120b", 5.1e9)):
        c = counts(name)
        assert c.active - c.embedding == pytest.approx(stated, rel=0.01)


def test_deepseek_v3_671b_37b():
    c = counts("DeepSeek-V3")
    assert c.total == 671_026_419_200  # card: 671B (the 14B MTP module is outside num_hidden_layers)
    assert c.active == 37_552_297_472  # card: 37B activated


def test_qwen3_next_hybrid_counts():
    c = counts("Qwen3-Next-80B-A3B-Thinking")
    assert c.total == 79_674_391_296  # card: 80B
    assert c.active == 3_874_929_408


def test_jamba_counts():
    c = counts("AI21-Jamba-1.5-Mini")
    assert (c.total, c.active) == (51_570_323_328, 12_110_311_296)  # card: 52B total, 12B active


def test_missing_field_in_count():
    cfg = load("Mixtral-8x7B-v0.1")
    del cfg["intermediate_size"]
    with pytest.raises(ConfigFieldMissing, match="intermediate_size"):
        count_parameters(cfg)


def test_unknown_family_cannot_be_counted():
    with pytest.raises(ServewiseInputError, match="rwkv7"):
        count_parameters({"model_type": "rwkv7"})
