"""Each catalog model's rope scaling is config.json's own (issue 17): compared with the stored real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge.loader import load_knowledge

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
CATALOG = load_knowledge().models

# catalog id -> stored config.json (tests/data/hf_configs/SOURCES.md says where each was read)
FILES = {
    "llama-3.1-8b": "Llama-3.1-8B-Instruct", "llama-3.1-70b": "Llama-3.1-70B-Instruct", "llama-3.2-1b": "Llama-3.2-1B",
    "llama-3.2-3b": "Llama-3.2-3B", "qwen3-next-80b-a3b": "Qwen3-Next-80B-A3B-Thinking",
    "mistral-7b-v0.3": "Mistral-7B-v0.3",
    "mistral-small-3.1-24b": "Mistral-Small-3.1-24B-Instruct-2503", "mixtral-8x7b": "Mixtral-8x7B-v0.1",
    "gemma-2-9b": "gemma-2-9b", "gemma-2-27b": "gemma-2-27b", "gemma-3-4b": "gemma-3-4b-it",
    "gemma-3-12b": "gemma-3-12b-it",
    "gemma-3-27b": "gemma-3-27b-it", "deepseek-v2-lite": "DeepSeek-V2-Lite", "bge-m3": "bge-m3",
    "jamba-1.5-mini": "AI21-Jamba-1.5-Mini",
}  # fmt: skip


def _file_rope(name: str):
    config = json.loads((CONFIGS / f"{name}.json").read_text())
    for part in (config.get("text_config") or {}, config):
        for key in ("rope_parameters", "rope_scaling"):
            if key in part:
                return part[key]
    return None


@pytest.mark.parametrize(("model_id", "file"), sorted(FILES.items()))
def test_rope_scaling_is_the_files(model_id, file):
    assert CATALOG.get(model_id).rope_scaling == _file_rope(file)


def test_entries_read_from_a_config_file_record_its_rope_scaling():
    # A config.json copy was read for these, so its rope scaling is known (None = the file has none);
    # entries typed from research notes stay "unknown" rather than guessed.
    read = [m for m in CATALOG.models if m.source.startswith(("ai-dynamo/aiconfigurator:", "mlc-ai/mlc-llm:"))]
    assert len(read) >= 15
    assert [m.id for m in read if not m.rope_scaling_known] == []


def test_long_context_models_name_their_scaling():
    assert CATALOG.get("llama-3.1-8b").rope_scaling["rope_type"] == "llama3"
    assert CATALOG.get("deepseek-v3").rope_scaling["factor"] == 40
    assert CATALOG.get("gpt-oss-20b").rope_scaling["rope_type"] == "yarn"
