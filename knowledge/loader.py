"""Load and validate the curated YAML files into one immutable KnowledgeBase, once per process."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError

from knowledge.common import Frozen, KnowledgeError, Verified
from knowledge.currency import check_formats_agree
from knowledge.embedding_serving import EmbeddingServingFile
from knowledge.engines import Engine, EnginesFile
from knowledge.formats import FormatsSection
from knowledge.gpus import GpuCatalog
from knowledge.models import ModelCatalog
from knowledge.prices import PricesFile
from knowledge.references import check_wizard_references
from knowledge.tool_calling import ToolCallingFile
from knowledge.wizard import WizardRules

KNOWLEDGE_DIR = Path(__file__).resolve().parent
M = TypeVar("M", bound=BaseModel)


def _describe_location(data: object, loc: tuple) -> str:
    """Turn a pydantic error location into 'entry <id>, field a.b' using the entry's id when it has one."""
    parts: list[str] = []
    node = data
    for index, key in enumerate(loc):
        if isinstance(key, int) and isinstance(node, list) and 0 <= key < len(node):
            node = node[key]
            entry_id = node.get("id") if isinstance(node, dict) else None
            parts.append(f"entry {entry_id!r}" if entry_id else f"entry #{key + 1}")
        else:
            rest = ".".join(str(k) for k in loc[index:])
            parts.append(f"field {rest!r}")
            break
    return ", ".join(parts) or "top level"


def load_yaml_file(path: Path, model: type[M]) -> M:
    """Parse one YAML file with a safe loader and validate it; errors name the file, entry and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KnowledgeError(f"{path.name}: cannot be read ({exc.strerror})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"{path.name}: not valid YAML ({exc})") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        container = data.get(next(iter(first["loc"]), None), data) if isinstance(data, dict) else data
        where = _describe_location(container, tuple(first["loc"])[1:]) if isinstance(data, dict) else "top level"
        section = first["loc"][0] if first["loc"] else ""
        raise KnowledgeError(
            f"{path.name}: {section} {where}: {first['msg']} ({exc.error_count()} problem(s) in all)"
        ) from exc


class KnowledgeBase(Frozen):
    """Every curated table, validated and cross-checked. Sections are added as their files land."""

    directory: str
    formats: FormatsSection
    gpus: GpuCatalog
    engines: tuple[Engine, ...]
    wizard: WizardRules
    models: ModelCatalog
    prices: PricesFile
    tool_calling: ToolCallingFile
    embedding_serving: EmbeddingServingFile
    versions_read: dict[str, Verified] = Field(default_factory=dict)


@functools.lru_cache(maxsize=4)
def load_knowledge(directory: str | None = None) -> KnowledgeBase:
    """Load every knowledge file from `directory` (default: this package) once per process."""
    root = Path(directory) if directory else KNOWLEDGE_DIR
    engines_file = load_yaml_file(root / "engines.yaml", EnginesFile)
    kb = KnowledgeBase(
        directory=str(root),
        formats=load_yaml_file(root / "formats.yaml", FormatsSection),
        gpus=load_yaml_file(root / "gpus.yaml", GpuCatalog),
        engines=engines_file.engines,
        versions_read=engines_file.versions_read,
        wizard=load_yaml_file(root / "wizard.yaml", WizardRules),
        models=load_yaml_file(root / "models.yaml", ModelCatalog),
        prices=load_yaml_file(root / "prices.yaml", PricesFile),
        tool_calling=load_yaml_file(root / "tool_calling.yaml", ToolCallingFile),
        embedding_serving=load_yaml_file(root / "embedding_serving.yaml", EmbeddingServingFile),
    )
    check_wizard_references(kb.wizard, kb.engines, kb.formats)
    _check_priced_gpus_exist(kb)
    _check_compatibility_entries(kb)
    check_formats_agree(kb.engines, kb.formats)
    return kb


def _check_compatibility_entries(kb: KnowledgeBase) -> None:
    """Raise KnowledgeError when tool_calling.yaml or embedding_serving.yaml names an unknown model or engine."""
    engines = {engine.id for engine in kb.engines}
    models = {model.id: model for model in kb.models.models}
    for name, section in (("tool_calling.yaml", kb.tool_calling.engines), ("embedding_serving.yaml",
                                                                           kb.embedding_serving.engines)):
        unknown = set(section) - engines
        if unknown:
            raise KnowledgeError(f"{name}: engines {sorted(unknown)} are not in engines.yaml")
    for entry in kb.tool_calling.catalog_models:
        model = models.get(entry.model)
        if model is None:
            raise KnowledgeError(f"tool_calling.yaml: catalog model {entry.model!r} is not in models.yaml")
        if model.embedding is not None:
            raise KnowledgeError(f"tool_calling.yaml: {entry.model!r} is an embedding model, not a chat model")
        if entry.template is not None and not (Path(kb.directory) / "chat_templates" / entry.template).is_file():
            raise KnowledgeError(
                f"tool_calling.yaml: {entry.model!r}: template {entry.template!r} is not in chat_templates/"
            )



def _check_priced_gpus_exist(kb: KnowledgeBase) -> None:
    """Raise KnowledgeError (naming prices.yaml and the entry) when a price names a GPU the catalog lacks."""
    known = {gpu.id for gpu in kb.gpus.gpus}
    for price in kb.prices.cloud:
        if price.gpu_id not in known:
            raise KnowledgeError(f"prices.yaml: entry {price.id!r}: gpu_id {price.gpu_id!r} is not in gpus.yaml")


__all__ = ["Frozen", "KnowledgeBase", "KnowledgeError", "load_knowledge", "load_yaml_file"]
