"""Curated, sourced facts about inference engines, formats, GPUs and models (no streamlit)."""

from knowledge.common import KnowledgeError
from knowledge.loader import KnowledgeBase, load_knowledge

__all__ = ["KnowledgeBase", "KnowledgeError", "load_knowledge"]
