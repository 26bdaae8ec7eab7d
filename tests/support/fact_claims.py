"""Find the facts a text states (support statuses, defaults, flags, numbers) and check them against the KB.

Two questions, for the tests of wizard rules and of memory/simulator notes:
- `literal_facts(template, kb)`: does a template type a fact itself (a status word, a digit, a flag, an
  environment variable, a knob name, "defaults to X") instead of a placeholder rendered from the KB?
- `contradictions(text, kb, rests_on)`: does a rendered text state something the facts it cites (and the
  KB) say otherwise: a status claimed for an engine whose cell says another, a default that differs from
  the knob's, a flag or variable engines.yaml does not spell, a number no cited fact holds?
"""

from __future__ import annotations

import json
import re

from calculators.engines import ENGINE_IDS, display_name
from calculators.wizard.explain import default_phrase
from knowledge.references import resolve_reference

#: Words that claim a support status, per status of engines.yaml and the formats matrix.
STATUS_CLAIMS: dict[str, re.Pattern] = {
    "native": re.compile(r"\bnative(ly)?\b", re.I),
    "experimental": re.compile(r"\bexperimental\b", re.I),
    "via-plugin": re.compile(r"\bplug-?ins?\b", re.I),
    "convert-first": re.compile(r"\bconver(t|ts|ted|sion)\b", re.I),
    "not-supported": re.compile(r"\b(missing|not supported|unsupported|no support|cannot load)\b", re.I),
}
#: "elsewhere", "other engines": a claim about every engine the text does not name.
OTHERS = re.compile(r"\b(elsewhere|other engines|the others)\b", re.I)
FLAG = re.compile(r"(?<![\w.\-/}])(--?[a-zA-Z][a-zA-Z0-9-]*)")  # "{n}-token" is not a flag
ENV = re.compile(r"\b([A-Z][A-Z0-9]+_[A-Z0-9_]+)\b")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w])")
LITERAL_DEFAULT = re.compile(r"\bdefaults?\s+(to|of|is|=)\s+(?!\{)|\b(on|off|enabled|disabled) by default\b", re.I)
DEFAULT_AFTER = r"[^;`]*?\bdefaults?\b(?:\s+(?:to|of|is)\b)?[\s,:(]*(?P<value>`[^`]+`|[^\s,;:)]+)"


def _engine_records(kb) -> list:
    return [e for e in kb.engines if e.id in ENGINE_IDS]


_SPELLINGS: dict[int, tuple] = {}


def kb_spellings(kb) -> tuple[frozenset[str], frozenset[str], dict[str, list]]:
    """Every flag and environment variable engines.yaml spells, and knob spelling -> knobs (read once per KB)."""
    if id(kb) not in _SPELLINGS:
        _SPELLINGS[id(kb)] = _read_spellings(kb)
    return _SPELLINGS[id(kb)]


def _read_spellings(kb) -> tuple[frozenset[str], frozenset[str], dict[str, list]]:
    flags: set[str] = set()
    env: set[str] = set()
    knobs: dict[str, list] = {}

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, key if "flag" in key else k)  # a tool's `flags: {input_len: -p}` are flags too
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            if "flag" in key and value.startswith("-"):
                flags.add(value)
            if key == "env" or key.endswith("_env"):
                env.add(value)

    for engine in kb.engines:
        walk(engine.model_dump())
        for knob in engine.knobs:
            flags.update(knob.all_flags)
            env.update(knob.env)
            for spelling in {knob.name, knob.key, *knob.all_flags, *knob.env, *filter(None, [knob.api_option])}:
                knobs.setdefault(spelling, []).append(knob)
    return frozenset(flags), frozenset(env), knobs


def _names(engine_id: str) -> tuple[str, ...]:
    full = display_name(engine_id)
    return tuple({full, full.split(" (")[0]})


def _named(clause: str) -> set[str]:
    return {e for e in ENGINE_IDS if any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", clause) for n in _names(e))}


def _clauses(text: str) -> list[str]:
    return [c for c in re.split(r";|\.(?=\s|$)", text) if c.strip()]


def literal_facts(template: str, kb) -> list[str]:
    """The facts a template types itself rather than rendering from the KB (placeholders are ignored)."""
    prose = re.sub(r"\{[^}]*\}", "", template)
    problems = [f"literal number {m!r}" for m in NUMBER.findall(prose)]
    problems += [f"literal flag {m!r}" for m in FLAG.findall(prose)]
    problems += [f"literal environment variable {m!r}" for m in ENV.findall(prose)]
    problems += [
        f"literal {status} claim {m.group(0)!r}" for status, p in STATUS_CLAIMS.items() for m in p.finditer(prose)
    ]
    problems += [f"literal default {m.group(0)!r}" for m in LITERAL_DEFAULT.finditer(template)]
    _, _, knobs = kb_spellings(kb)
    problems += [f"literal knob name {s!r}" for s in knobs if ("_" in s or s.startswith("-"))
                 and re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", prose)]
    return sorted(set(problems))


def _status_problems(text: str, kb, rests_on: tuple[str, ...]) -> list[str]:
    columns = sorted({r.partition("/")[2] for r in rests_on if r.startswith("compat:")})
    named_anywhere = _named(text)
    problems = []
    for clause in _clauses(text):
        claimed = {status for status, pattern in STATUS_CLAIMS.items() if pattern.search(clause)}
        if not claimed:
            continue
        subjects = _named(clause)
        if not subjects and OTHERS.search(clause):
            subjects = {e for e in ENGINE_IDS if e not in named_anywhere}
        if not columns:
            problems.append(f"states a support status ({sorted(claimed)}) but cites no compatibility cell: {clause!r}")
            continue
        for engine_id in sorted(subjects):
            for column in columns:
                cell = kb.formats.cell(engine_id, column)
                if cell is not None and cell.status not in claimed:
                    problems.append(f"says {display_name(engine_id)} x {column} is {sorted(claimed)} but the matrix "
                                    f"says {cell.status}: {clause.strip()!r}")
    return problems


def _default_problems(text: str, kb, rests_on: tuple[str, ...]) -> list[str]:
    _, _, knobs = kb_spellings(kb)
    cited = {id(resolve_reference(r, {e.id: e for e in kb.engines}, kb.formats)) for r in rests_on
             if r.startswith("knob:")}
    problems = []
    for spelling, candidates in knobs.items():
        # a plain word (`model`, `host`) is a knob only in code quotes; `max_num_seqs`, `-c`, `OLLAMA_X` always
        tick = "`?" if re.search(r"[_\-A-Z]", spelling) else "`"
        pattern = rf"(?<![\w-]){tick}{re.escape(spelling)}{tick}(?![\w-])" + DEFAULT_AFTER
        for match in re.finditer(pattern, text):
            said = match.group("value").strip("`.")
            preferred = [k for k in candidates if id(k) in cited] or candidates
            if rests_on and not any(id(k) in cited for k in candidates):
                problems.append(f"quotes a default for {spelling!r} without citing its knob")
            if not any(said == default_phrase(k.default).strip("`") for k in preferred):
                wanted = sorted({default_phrase(k.default).strip("`") for k in preferred})
                problems.append(f"says {spelling!r} defaults to {said!r}; engines.yaml says {wanted}")
    return problems


def contradictions(text: str, kb, rests_on: tuple[str, ...] = ()) -> list[str]:
    """What a rendered text states against the KB: statuses, defaults, flags, variables, numbers (empty = none).

    `rests_on` are the fact references the text cites; numbers must occur in one of those facts (with no
    references, numbers are not checked) and status claims are checked against the cited matrix columns.
    """
    flags, env, _ = kb_spellings(kb)
    problems = _status_problems(text, kb, rests_on) + _default_problems(text, kb, rests_on)
    problems += [f"flag {f!r} is not spelled in engines.yaml" for f in FLAG.findall(text) if f not in flags]
    problems += [f"environment variable {v!r} is not in engines.yaml" for v in ENV.findall(text) if v not in env]
    if rests_on:
        by_id = {e.id: e for e in kb.engines}
        facts = " ".join(
            json.dumps(resolve_reference(r, by_id, kb.formats).model_dump(mode="json"))
            if hasattr(resolve_reference(r, by_id, kb.formats), "model_dump")
            else str(r)
            for r in rests_on
        )
        problems += [f"number {n!r} is in none of the facts cited ({', '.join(rests_on)})"
                     for n in NUMBER.findall(text) if not re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", facts)]
    return problems
