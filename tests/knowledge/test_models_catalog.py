"""The model catalog: valid, sourced, and every stated parameter count recomputed from its config fields.

Tolerance: half the unit the publisher rounded to (`total_precision`: 1 for keras-hub's exact
counts, 10^9 for "70B", 10^7 for "1.23B"), plus 1 % of the stated figure for counting conventions
that differ without any field being wrong (bge-m3's pooler, a vision tower inside a "24B"). A
mistyped hidden size, layer count or expert count moves the total by far more than that (see
`test_a_mistyped_field_is_caught`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from calculators.errors import ServewiseInputError
from calculators.model.architecture import LayerKind
from calculators.model.catalog import architecture_from_catalog
from calculators.model.params import count_parameters
from knowledge.common import KnowledgeError
from knowledge.loader import KNOWLEDGE_DIR, load_knowledge, load_yaml_file
from knowledge.models import CatalogModel, ModelCatalog

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
CATALOG = load_knowledge().models
REQUIRED = {
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
    "qwen2.5-7b", "qwen2.5-32b", "qwen2.5-72b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
    "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen3-next-80b-a3b", "mistral-7b-v0.3", "mistral-small-3.1-24b",
    "mixtral-8x7b", "gemma-2-9b", "gemma-2-27b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b",
    "gpt-oss-20b", "gpt-oss-120b", "deepseek-v3", "deepseek-v2-lite", "phi-4", "bge-m3", "qwen3-embedding-0.6b",
    # issue 17: open models of 2025-2026 (configs from ai-dynamo/aiconfigurator model_configs @095f58a5)
    "qwen3-coder-480b-a35b", "qwen3.5-27b", "qwen3.5-35b-a3b", "qwen3.5-122b-a10b", "qwen3.5-397b-a17b",
    "qwen3.6-35b-a3b",
    "llama-4-scout-17b-16e", "llama-4-maverick-17b-128e", "minimax-m2.5", "kimi-k2.5", "gemma-4-31b", "glm-5",
    # issue 14: hybrid families with a readable public config.json
    "nemotron-h-56b", "falcon-h1-0.5b",
}  # fmt: skip


def _within_stated(computed: int, stated: int, precision: int) -> bool:
    return abs(computed - stated) <= precision / 2 + 0.01 * stated


def _active_as_stated(model: CatalogModel) -> int:
    counts = count_parameters(model.config)
    if model.params.active_basis == "without_input_embedding":
        return counts.active - counts.embedding
    if model.params.active_basis == "without_embedding_and_head":
        return counts.active - counts.embedding - counts.output_head
    return counts.active


def test_catalog_has_the_required_models():
    assert set(CATALOG.ids) >= REQUIRED
    assert len(CATALOG.models) >= 25


@pytest.mark.parametrize("model", CATALOG.models, ids=lambda m: m.id)
def test_stated_total_matches_recomputed(model):
    computed = architecture_from_catalog(model.id).params_total
    assert _within_stated(computed, model.params.total, model.params.total_precision), (
        f"{model.id}: recomputed {computed:,} vs stated {model.params.total:,}"
    )


@pytest.mark.parametrize("model", [m for m in CATALOG.models if m.params.active], ids=lambda m: m.id)
def test_stated_active_matches_recomputed(model):
    computed = _active_as_stated(model)
    assert _within_stated(computed, model.params.active, model.params.active_precision or 1), (
        f"{model.id}: recomputed active {computed:,} vs stated {model.params.active:,}"
    )


@pytest.mark.parametrize("model", CATALOG.models, ids=lambda m: m.id)
def test_every_fact_is_sourced_and_context_agrees(model):
    assert model.source and model.verified.version and model.params.source
    arch = architecture_from_catalog(model.id)
    assert arch.max_context_tokens == model.native_context_tokens
    assert arch.is_embedding_model == (model.embedding is not None or arch.family == "xlm-roberta")
    assert arch.source == f"catalog:{model.id}"


@pytest.mark.parametrize(
    ("model_id", "file"),
    [
        ("llama-3.1-8b", "Llama-3.1-8B-Instruct"),
        ("llama-3.1-70b", "Llama-3.1-70B-Instruct"),
        ("llama-3.2-1b", "Llama-3.2-1B"),
        ("qwen3-next-80b-a3b", "Qwen3-Next-80B-A3B-Thinking"),
        ("mixtral-8x7b", "Mixtral-8x7B-v0.1"),
        ("gemma-2-9b", "gemma-2-9b"),
        ("gemma-3-27b", "gemma-3-27b-it"),
        ("deepseek-v2-lite", "DeepSeek-V2-Lite"),
        ("mistral-small-3.1-24b", "Mistral-Small-3.1-24B-Instruct-2503"),
        ("jamba-1.5-mini", "AI21-Jamba-1.5-Mini"),
        ("qwen3.5-397b-a17b", "Qwen3.5-397B-A17B"),
        ("nemotron-h-56b", "Nemotron-H-56B-Base-8K"),
        ("falcon-h1-0.5b", "Falcon-H1-0.5B-Instruct"),
    ],
)
def test_catalog_config_values_are_the_real_files_values(model_id, file):
    real = json.loads((CONFIGS / f"{file}.json").read_text())
    stored = CATALOG.get(model_id).config

    def same(sub: dict, full: dict) -> None:
        for key, value in sub.items():
            if isinstance(value, dict):
                same(value, full[key])
            else:
                assert full[key] == value, (model_id, key)

    same(stored, real)


def test_embedding_models_carry_pooling_and_dimension():
    bge = CATALOG.get("bge-m3").embedding
    assert (bge.pooling, bge.output_dimension, bge.max_input_tokens) == ("cls", 1024, 8192)
    qwen = CATALOG.get("qwen3-embedding-0.6b").embedding
    assert (qwen.pooling, qwen.output_dimension) == ("last_token", 1024)
    assert architecture_from_catalog("qwen3-embedding-0.6b").is_embedding_model


def test_catalog_geometry_spot_checks():
    assert len(architecture_from_catalog("gemma-3-27b").layers_of(LayerKind.FULL)) == 10
    assert len(architecture_from_catalog("qwen3-next-80b-a3b").layers_of(LayerKind.RECURRENT)) == 36
    assert architecture_from_catalog("deepseek-v2-lite").layers[0].kv_lora_rank == 512
    assert architecture_from_catalog("mistral-small-3.1-24b").layers[0].head_dim_k == 128
    nemotron = architecture_from_catalog("nemotron-h-56b")
    assert (len(nemotron.layers_of(LayerKind.RECURRENT)), len(nemotron.layers_of(LayerKind.FULL))) == (54, 10)
    falcon = architecture_from_catalog("falcon-h1-0.5b").layers
    assert all(layer.kind is LayerKind.FULL and layer.recurrent for layer in falcon) and len(falcon) == 36


def test_unknown_catalog_id_suggests_close_ones():
    with pytest.raises(ServewiseInputError, match="llama-3.1-8b"):
        architecture_from_catalog("llama-3.1-8")


def test_a_mistyped_field_is_caught():
    model = CATALOG.get("qwen3-32b")
    for key, wrong in (("intermediate_size", 52600), ("num_hidden_layers", 46), ("hidden_size", 4096)):
        config = {**model.config, key: wrong}
        total = count_parameters(config).total
        assert not _within_stated(total, model.params.total, model.params.total_precision), key


def test_broken_yaml_names_file_entry_and_field(tmp_path):
    data = yaml.safe_load((KNOWLEDGE_DIR / "models.yaml").read_text())
    del data["models"][2]["hf_repo"]
    broken = tmp_path / "models.yaml"
    broken.write_text(yaml.safe_dump(data))
    with pytest.raises(KnowledgeError) as err:
        load_yaml_file(broken, ModelCatalog)
    message = str(err.value)
    assert "models.yaml" in message and "llama-3.1-405b" in message and "hf_repo" in message


def test_duplicate_ids_are_refused(tmp_path):
    data = yaml.safe_load((KNOWLEDGE_DIR / "models.yaml").read_text())
    data["models"].append(data["models"][0])
    broken = tmp_path / "models.yaml"
    broken.write_text(yaml.safe_dump(data))
    with pytest.raises(KnowledgeError, match="appears twice"):
        load_yaml_file(broken, ModelCatalog)


# Differences from keras-hub's exact counts that are conventions, not wrong fields (see test_params.py).
KNOWN_EXACT_DIFFERENCES = {
    "gemma-3-4b": 64 * 2560,  # keras keeps 262,144 of Gemma 3's 262,208 vocabulary rows
    "gemma-3-12b": 64 * 3840,
    "gemma-3-27b": 64 * 5376,
    "bge-m3": 1024 * 1024 + 1024 + 3 * 1024,  # keras's port has no pooler and three fewer 1024-vectors
}


@pytest.mark.parametrize("model", [m for m in CATALOG.models if m.params.total_precision == 1], ids=lambda m: m.id)
def test_exact_stated_counts_match_to_the_parameter(model):
    # This confirms the config fields typed from research notes (Qwen2.5 32B/72B, Qwen3-14B,
    # Qwen3-Embedding-0.6B) as well as the copied files: one wrong field would break the equality.
    difference = count_parameters(model.config).total - model.params.total
    assert difference == KNOWN_EXACT_DIFFERENCES.get(model.id, 0)
