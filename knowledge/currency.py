"""How current each engine's facts are, and whether engines.yaml and formats.yaml say the same thing.

A fact is attributed to an engine when its (first) source is that engine's repository
(`vllm-project/vllm:path`, or a github.com / raw.githubusercontent.com URL into it). Its
`verified.version` is then compared with the version engines.yaml says the KB read for that engine
(`versions_read`): release tags compare as versions, commits compare by prefix, and anything else
(a docs branch such as `main`, "code index") cannot be ordered and is reported as such.
"""

from __future__ import annotations

import re
from typing import Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel

from knowledge.common import Frozen, KnowledgeError, Verified

#: The repository each primary engine's facts are read from.
ENGINE_REPOSITORIES: dict[str, str] = {
    "vllm-project/vllm": "vllm",
    "sgl-project/sglang": "sglang",
    "ggml-org/llama.cpp": "llama-cpp",
    "ollama/ollama": "ollama",
    "ml-explore/mlx-lm": "mlx-lm",
}

Currency = Literal["current", "older", "newer", "unordered"]

_REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+):")
_GITHUB_URL = re.compile(r"^https?://(?:github\.com|raw\.githubusercontent\.com)/(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/")
_RELEASE = re.compile(r"^v?(?P<v>\d+(?:\.\d+)+(?:-?rc\d+)?)(?![\w.])")
_COMMIT = re.compile(r"^(?P<c>[0-9a-f]{7,40})(?![\w.])")


class FactRead(Frozen):
    """One sourced fact attributed to an engine, with how its version compares to the KB's newest read."""

    engine: str
    where: str
    source: str
    verified: Verified
    currency: Currency


class EngineCurrency(Frozen):
    """Per engine: the newest version the KB read, the oldest version a fact still rests on, and the laggards.

    The Engines page shows it as "read at `oldest_read`; the KB's newest read is `newest_read`".
    """

    engine: str
    newest_read: str
    oldest_read: str
    facts: int
    older: tuple[FactRead, ...] = ()
    unordered: tuple[FactRead, ...] = ()

    @property
    def up_to_date(self) -> bool:
        """True when no fact attributed to the engine was read at an older version than the newest read."""
        return not self.older


class Disagreement(Frozen):
    """engines.yaml and formats.yaml give different statuses for the same engine and format."""

    engine: str
    target: str
    engines_status: str
    formats_status: str


def repository_of(source: str) -> str | None:
    """`owner/repo` of the first source in a `source` string, or None for docs sites and package pages."""
    first = source.split(";")[0].strip()
    match = _REPO_PATH.match(first) or _GITHUB_URL.match(first)
    return match["repo"] if match else None


def compare_versions(fact_version: str, read_version: str) -> Currency:
    """Whether `fact_version` is the read version, older, newer, or not comparable with it.

    Release tags ("v0.33.0", "0.32.0 (d78bf58e)", "v0.33.0-rc2") compare as PEP 440 versions; a commit
    prefix compares equal to a commit it abbreviates; everything else is "unordered".
    """
    fact_release, read_release = _release(fact_version), _release(read_version)
    if fact_release is not None and read_release is not None:
        if fact_release == read_release:
            return "current"
        return "older" if fact_release < read_release else "newer"
    fact_commit, read_commit = _COMMIT.match(fact_version.strip()), _COMMIT.match(read_version.strip())
    if fact_commit and read_commit:
        a, b = fact_commit["c"], read_commit["c"]
        return "current" if a.startswith(b) or b.startswith(a) else "unordered"
    return "unordered"


def _release(version: str) -> Version | None:
    match = _RELEASE.match(version.strip())
    if match is None:
        return None
    try:
        return Version(match["v"])
    except InvalidVersion:
        return None


def _sourced(node: object, where: str):
    """Yield (where, source, verified) for every record under `node` that names its own source."""
    if isinstance(node, BaseModel):
        source = getattr(node, "source", None)
        verified = getattr(node, "verified", None)
        if isinstance(source, str) and isinstance(verified, Verified):
            yield where, source, verified
        for name in type(node).model_fields:
            yield from _sourced(getattr(node, name), f"{where}.{name}")
    elif isinstance(node, (tuple, list)):
        for index, item in enumerate(node):
            label = getattr(item, "id", None) or getattr(item, "key", None) or index
            yield from _sourced(item, f"{where}[{label}]")


def engine_facts(kb) -> tuple[FactRead, ...]:
    """Every fact in engines.yaml and formats.yaml whose source is a primary engine's repository."""
    facts = []
    records = [(f"engines.yaml {engine.id}", engine) for engine in kb.engines]
    records += [(f"formats.yaml cell {c.engine}/{c.target}", c) for c in kb.formats.cells]
    records += [(f"formats.yaml quantization {q.id}", q) for q in kb.formats.quantizations]
    records += [(f"formats.yaml file format {f.id}", f) for f in kb.formats.file_formats]
    records += [(f"formats.yaml file mix {m.id}", m) for m in kb.formats.file_mixes]
    for label, record in records:
        for where, source, verified in _sourced(record, label):
            engine_id = ENGINE_REPOSITORIES.get(repository_of(source) or "")
            read = kb.versions_read.get(engine_id) if engine_id else None
            if read is None:
                continue
            facts.append(FactRead(engine=engine_id, where=where, source=source, verified=verified,
                                  currency=compare_versions(verified.version, read.version)))
    return tuple(facts)


def engine_currency(kb) -> tuple[EngineCurrency, ...]:
    """For each engine the KB records a read version for: how current its facts are (see EngineCurrency)."""
    facts = engine_facts(kb)
    result = []
    for engine_id, read in kb.versions_read.items():
        mine = [f for f in facts if f.engine == engine_id]
        older = tuple(f for f in mine if f.currency == "older")
        oldest = min((f.verified.version for f in older), key=lambda v: _release(v) or Version("0"),
                     default=read.version)
        result.append(EngineCurrency(
            engine=engine_id, newest_read=read.version, oldest_read=oldest, facts=len(mine), older=older,
            unordered=tuple(f for f in mine if f.currency == "unordered"),
        ))
    return tuple(result)


def format_disagreements(engines, formats) -> tuple[Disagreement, ...]:
    """Every engine x format on which engines.yaml's `formats` list and the formats matrix disagree."""
    found = []
    for engine in engines:
        if engine.formats is None:
            continue
        for item in engine.formats.items:
            cell = formats.cell(engine.id, item.id)
            if cell is not None and cell.status != item.status:
                found.append(Disagreement(engine=engine.id, target=item.id, engines_status=item.status,
                                          formats_status=cell.status.value))
    return tuple(found)


def check_formats_agree(engines, formats) -> None:
    """Raise KnowledgeError naming both files and the first engine x format they disagree on."""
    for d in format_disagreements(engines, formats):
        raise KnowledgeError(
            f"engines.yaml and formats.yaml disagree on {d.engine}/{d.target}: engines.yaml says "
            f"{d.engines_status!r}, the formats matrix says {d.formats_status!r}"
        )


__all__ = [
    "ENGINE_REPOSITORIES",
    "Disagreement",
    "EngineCurrency",
    "FactRead",
    "check_formats_agree",
    "compare_versions",
    "engine_currency",
    "engine_facts",
    "format_disagreements",
    "repository_of",
]
