"""Real config.json contents for tests: stored files, or the catalog's verbatim config.json fields.

Whole files are kept in tests/data/hf_configs (see SOURCES.md there). For models whose whole file
is not stored, the catalog entry holds the architecture keys of the published file, value for value.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from knowledge.loader import load_knowledge

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"

#: test name -> catalog id, for configs known through the catalog only
CATALOG_ONLY = {
    "Meta-Llama-3.1-405B": "llama-3.1-405b",
    "Qwen3-8B": "qwen3-8b",
    "Qwen3-32B": "qwen3-32b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
    "DeepSeek-V3": "deepseek-v3",
}


def load(name: str) -> dict:
    """A fresh, mutable copy of the named config."""
    if name in CATALOG_ONLY:
        return copy.deepcopy(load_knowledge().models.get(CATALOG_ONLY[name]).config)
    return json.loads((CONFIGS / f"{name}.json").read_text())
