"""The names people read for catalog slugs: engines, GPUs and Apple chips, models, formats and quantizations.

Slugs (`h100-sxm-80gb`, `llama-3.1-8b`, `mlx-lm`, `q4_k_m`) stay the values in URLs, JSON and the CLI's
arguments; every selectbox, table and chart a person reads shows the name from the knowledge base instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from calculators.engines import ENGINES
from calculators.i18n import _
from calculators.units import compact
from knowledge.loader import KnowledgeBase, load_knowledge


@lru_cache(maxsize=4)
def _names_in(directory: str) -> dict[str, str]:
    kb = load_knowledge(directory)
    names: dict[str, str] = {engine.id: engine.name for engine in kb.engines}
    names.update({engine_id: engine.display_name for engine_id, engine in ENGINES.items()})
    names.update({gpu.id: gpu.name for gpu in kb.gpus.all_gpus})
    names.update({model.id: model.name for model in kb.models.models})
    for group in (kb.formats.file_formats, kb.formats.quantizations, kb.formats.file_mixes, kb.formats.columns):
        for entry in group:
            names.setdefault(entry.id, entry.name)
    return names


def name_of(kb: KnowledgeBase, slug: str) -> str:
    """The name people know `slug` by (an engine, GPU, model, format or quantization), or the slug itself.

    Names are the same in every language except a few formats' glosses ("compressed-tensors (container of
    schemes)"), which the catalog translates (babel.cfg extracts knowledge/formats.yaml's names).
    """
    return _(_names_in(kb.directory).get(slug, slug))


def namer(kb: KnowledgeBase, extra: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """`name_of` bound to `kb`, with `extra` names for a widget's own choices ("custom", "none")."""
    names = {**_names_in(kb.directory), **(extra or {})}
    return lambda slug: _(names.get(slug, str(slug)))


def names_by_slug(kb: KnowledgeBase) -> dict[str, str]:
    """Every catalog slug (engines, GPUs, models, formats, quantizations) -> its name in the reader's language."""
    return {slug: _(name) for slug, name in _names_in(kb.directory).items()}


def weight_scheme_namer(kb: KnowledgeBase) -> Callable[[str], str]:
    """What a weight-precision dropdown shows for each scheme id: the name, and for a GGUF file type the words that
    tell it from the tensor type of the same name ("Q2_K GGUF file, 3.16 bits/weight measured" beside "Q2_K", every
    weight in Q2_K blocks)."""
    names = namer(kb)
    mixes = {mix.id: mix for mix in kb.formats.file_mixes}

    def label(scheme_id: str) -> str:
        mix = mixes.get(scheme_id)
        if mix is None:
            return names(scheme_id)
        return _("{name} GGUF file, {bits} bits/weight measured").format(
            name=names(scheme_id), bits=compact(mix.measured_bits_per_weight, 2))

    return label
