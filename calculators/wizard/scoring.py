"""Rank engines for a team's answers: hard constraints from engine facts first, then transparent scoring.

Nothing here names a winner. Exclusions come from what the knowledge base says each engine supports
(hardware, operating system, weight format); points come from the scoring rules in
knowledge/wizard.yaml, each of which cites the engine facts it rests on. The result carries every
contribution so a page can show the breakdown, plus the single answer changes that would change the
top choice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from calculators.engines import ENGINE_IDS
from calculators.hardware.compat import HardwareChoice, format_verdict
from calculators.i18n import _
from calculators.wizard.answers import WizardAnswers
from calculators.wizard.explain import render_fact_text
from calculators.wizard.fit_check import FitCheck, check_fit


def condition_matches(when: Mapping[str, Any], answers: WizardAnswers) -> bool:
    """True when every clause of `when` holds for `answers`.

    A clause value may be a scalar (equality), a list (membership), or a mapping with `min`/`max`
    (inclusive numeric bounds).
    """
    for field_name, expected in when.items():
        actual = getattr(answers, field_name)
        if isinstance(expected, Mapping):
            if actual is None:
                return False
            if "min" in expected and actual < expected["min"]:
                return False
            if "max" in expected and actual > expected["max"]:
                return False
        elif isinstance(expected, list | tuple):
            if actual not in expected:
                return False
        elif actual != expected:
            return False
    return True


@dataclass(frozen=True)
class CheckedVerdict:
    """What a rule built from a compatibility check's verdict says, as data; reports/compatibility.py words it.

    `checked` is what the check looked at ("tool calls" or "embeddings"), `explanation` the verdict's sentence in
    knowledge/wizard.yaml `compatibility_effects` (English, translated where shown), `flags` each launch flag that
    fixes it with its value ("--tool-call-parser llama3_json"; empty when none does).
    """

    model: str
    checked: str
    explanation: str
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoringRule:
    """Points per engine when a condition holds, with the reason in plain words and what it rests on.

    A rule built from a compatibility check carries the check's verdict as `checked` (its reason is then the
    verdict's explanation alone): reports/wizard.reason_text words either kind."""

    id: str
    when: Mapping[str, Any]
    points: Mapping[str, int]
    reason: str
    rests_on: tuple[str, ...] = ()
    checked: CheckedVerdict | None = None


@dataclass(frozen=True)
class CaveatRule:
    """A warning attached to some engines when a condition holds (`checked`: as for ScoringRule)."""

    id: str
    when: Mapping[str, Any]
    engines: tuple[str, ...]
    text: str
    rests_on: tuple[str, ...] = ()
    checked: CheckedVerdict | None = None


@dataclass(frozen=True)
class Exclusion:
    """Why an engine cannot serve these answers at all (a hard constraint)."""

    reason: str
    rests_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contribution:
    """Points one rule gave one engine (`checked`: the compatibility verdict the rule was built from, if any)."""

    rule_id: str
    points: int
    reason: str
    rests_on: tuple[str, ...]
    checked: CheckedVerdict | None = None


@dataclass(frozen=True)
class EngineVerdict:
    """One engine's place in the ranking with everything that put it there."""

    engine: str
    score: int
    exclusions: tuple[Exclusion, ...]
    contributions: tuple[Contribution, ...]
    caveats: tuple[CaveatRule, ...]

    @property
    def excluded(self) -> bool:
        """True when a hard constraint rules the engine out."""
        return bool(self.exclusions)


@dataclass(frozen=True)
class AnswerChange:
    """A single different answer that would put another engine on top."""

    field: str
    current: Any
    alternative: Any
    new_top: str


@dataclass(frozen=True)
class Recommendation:
    """Ranked engines (eligible first, by score) and what would change the answer.

    `answers` are the answers the ranking used: when the team left "fits one card" unknown but named a
    catalog model and GPU, it holds the derived answer and `fit_check` the figures behind it.
    """

    answers: WizardAnswers
    ranking: tuple[EngineVerdict, ...]
    changes: tuple[AnswerChange, ...] = field(default_factory=tuple)
    fit_check: FitCheck | None = None

    @property
    def top(self) -> EngineVerdict | None:
        """The best eligible engine, or None when every engine is excluded."""
        eligible = [v for v in self.ranking if not v.excluded]
        return eligible[0] if eligible else None


def rank_engines(
    answers: WizardAnswers,
    engines: Sequence[str],
    rules: Iterable[ScoringRule],
    caveats: Iterable[CaveatRule],
    constraint_check: Callable[[WizardAnswers, str], Iterable[Exclusion]],
) -> tuple[EngineVerdict, ...]:
    """Score every engine: exclusions from `constraint_check(answers, engine)`, points from matching rules.

    Ties keep the order of `engines` (the knowledge base's order), so the ranking is deterministic.
    """
    rules = tuple(rules)
    caveats = tuple(caveats)
    matched = [rule for rule in rules if condition_matches(rule.when, answers)]
    matched_caveats = [c for c in caveats if condition_matches(c.when, answers)]
    verdicts = []
    for engine in engines:
        contributions = tuple(
            Contribution(rule.id, rule.points[engine], rule.reason, rule.rests_on, rule.checked)
            for rule in matched
            if rule.points.get(engine, 0) != 0
        )
        verdicts.append(
            EngineVerdict(
                engine=engine,
                score=sum(c.points for c in contributions),
                exclusions=tuple(constraint_check(answers, engine)),
                contributions=contributions,
                caveats=tuple(c for c in matched_caveats if engine in c.engines),
            )
        )
    order = {engine: index for index, engine in enumerate(engines)}
    return tuple(sorted(verdicts, key=lambda v: (v.excluded, -v.score, order[v.engine])))


#: Answer fields explored for "what would change this answer", with the alternatives tried.
SENSITIVITY_ALTERNATIVES: dict[str, tuple[Any, ...]] = {
    "use": ("occasional-local", "local-dev", "shared-api", "public-multitenant", "batch", "embeddings"),
    "hardware": ("nvidia", "amd", "intel", "apple", "cpu"),
    "os": ("linux", "macos", "windows"),
    "weight_format": ("any", "gguf", "safetensors", "awq", "gptq", "fp8", "mlx"),
    "concurrent_users": (1, 4, 16, 64, 256),
    "prompt_length": ("short", "long"),
    "shared_prefixes": (False, True),
    "tool_calling": (False, True),
    "slo_metrics": (False, True),
    "multi_model": (False, True),
    "lora": (False, True),
    "hosts": (1, 2),
    "ops_skill": ("low", "medium", "high"),
    "fits_one_card": ("yes", "no"),
}


def answer_changes(
    answers: WizardAnswers, top: str | None, rank: Callable[[WizardAnswers], str | None]
) -> tuple[AnswerChange, ...]:
    """Single-answer changes that would put a different engine on top (`rank(answers) -> top engine id`).

    Alternatives that make the answers contradictory are skipped: they are not real options.
    """
    changes = []
    for field_name, alternatives in SENSITIVITY_ALTERNATIVES.items():
        current = getattr(answers, field_name)
        for alternative in alternatives:
            if alternative == current:
                continue
            try:
                changed = answers.model_copy(update={field_name: alternative})
                changed = WizardAnswers.model_validate(changed.model_dump())
            except ValueError:
                continue
            new_top = rank(changed)
            if new_top is not None and new_top != top:
                changes.append(AnswerChange(field_name, current, alternative, new_top))
    return tuple(changes)


# --- The wizard over the knowledge base ---------------------------------------------------------

#: Wizard weight-format answers -> formats-matrix columns that decide whether an engine can load them.
WEIGHT_FORMAT_COLUMNS: dict[str, tuple[str, ...]] = {
    "any": (),
    "gguf": ("gguf",),
    "safetensors": ("safetensors", "float"),
    "awq": ("awq",),
    "gptq": ("gptq",),
    "fp8": ("fp8",),
    "mxfp4": ("mxfp4",),
    "nvfp4": ("nvfp4",),
    "mlx": ("mlx-safetensors",),
}
#: The engines the wizard ranks: every engine servewise models.
WIZARD_ENGINES = ENGINE_IDS


#: What a person reads for the wizard's hardware and operating-system answers (translated where shown).
_VENDOR_WORDS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple", "cpu": "CPU"}
_OS_WORDS = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}


def _support_statuses(kb, answers: WizardAnswers, engine) -> list[tuple[str, str, str, str, str]]:
    """(what id, what in words, status, note, fact reference) for the team's hardware, OS and weight format on
    one engine; the note is the knowledge base's, in the reader's language."""
    os_item = next((s for s in engine.operating_systems.items if s.id == answers.os), None)
    vendor = _VENDOR_WORDS.get(answers.hardware, answers.hardware)
    statuses = [
        (f"{answers.hardware} hardware", _("{vendor} hardware").format(vendor=vendor),
         engine.vendor_status(answers.hardware), "", f"engine:{engine.id}"),
        (f"{answers.os}", _OS_WORDS.get(answers.os, answers.os), engine.operating_systems.status_of(answers.os),
         _(os_item.note) if os_item and os_item.note else "", f"engine:{engine.id}"),
    ]
    choice = HardwareChoice(vendor=answers.hardware, gpu_id=answers.gpu_id)
    for column in WEIGHT_FORMAT_COLUMNS[answers.weight_format]:
        if kb.formats.cell(engine.id, column) is None:
            continue
        verdict = format_verdict(kb, engine.id, column, choice)
        matrix_column = kb.formats.column(column)
        column_name = _(matrix_column.name) if matrix_column is not None else column
        statuses.append((f"{column} weights", _("{format} weights").format(format=column_name), verdict.status,
                         _verdict_note(verdict, answers.gpu_id), f"compat:{engine.id}/{column}"))
    return statuses


def _verdict_note(verdict, gpu_id: str | None) -> str:
    """The cell's note, led by the hardware limit that decided it (compute capability, GPU arch, backend)."""
    on = gpu_id or _("this hardware")
    if verdict.refused_by == "compute-capability":
        lead = _("needs compute capability {need} or newer; {gpu} has {have}").format(
            need=verdict.required_compute_capability, gpu=on, have=verdict.actual_compute_capability
        )
    elif verdict.refused_by == "gpu-arch":
        lead = _("only on {archs}; not on {gpu}").format(archs=", ".join(verdict.required_gpu_archs), gpu=on)
    elif verdict.refused_by == "backend" and verdict.hardware_dependent:
        lead = _("no path for this hardware's backend")
    elif verdict.path is not None and verdict.path.kernel:
        lead = _("on this hardware: {kernel}").format(kernel=verdict.path.kernel)
    else:
        return _(verdict.note)
    return f"{lead}; {_(verdict.note)}"


def _support_verdicts(kb, answers: WizardAnswers) -> tuple[dict[str, list[Exclusion]], tuple[ScoringRule, ...]]:
    """Hard exclusions and status penalties from what engines.yaml and the formats matrix say they support.

    A status the wizard's `support_status_effects` marks `exclude` rules the engine out; other statuses
    (experimental, via a plugin, convert first, unknown) cost the points the table gives, with the reason.
    """
    effects = {effect.status: effect for effect in kb.wizard.support_status_effects}
    exclusions: dict[str, list[Exclusion]] = {engine_id: [] for engine_id in WIZARD_ENGINES}
    rules = []
    for engine in kb.engines:
        if engine.id not in exclusions:
            continue
        for what, what_text, status, note, reference in _support_statuses(kb, answers, engine):
            effect = effects[status]
            detail = f" ({note})" if note else ""
            if effect.exclude:
                exclusions[engine.id].append(Exclusion(f"{engine.name} · {what_text}: {_(effect.explanation)}{detail}",
                                                       (reference,)))
            elif effect.points:
                rules.append(ScoringRule(id=f"support-{engine.id}-{what.replace(' ', '-')}", when={},
                                         points={engine.id: effect.points},
                                         reason=f"{what_text}: {_(effect.explanation)}{detail}",
                                         rests_on=(reference,)))
    return exclusions, tuple(rules)


def _rules_from_kb(kb) -> tuple[tuple[ScoringRule, ...], tuple[CaveatRule, ...]]:
    """The wizard's rules and caveats with their texts rendered from the facts they cite, in the reader's language."""
    rules = tuple(ScoringRule(r.id, r.when, r.points, render_fact_text(r.reason, r.says, kb), r.rests_on)
                  for r in kb.wizard.rules)
    caveats = tuple(CaveatRule(c.id, c.when, c.engines, render_fact_text(c.text, c.says, kb), c.rests_on)
                    for c in kb.wizard.caveats)
    return rules, caveats


def derive_fit(answers: WizardAnswers, kb) -> FitCheck | None:
    """The fit check for the answers' catalog model on one of their GPUs (None when either is missing)."""
    from calculators.hardware.catalog import machine_for_gpu_id
    from calculators.model.catalog import architecture_from_catalog

    if answers.model_id is None or answers.gpu_id is None:
        return None
    arch = architecture_from_catalog(answers.model_id, kb)
    machine = machine_for_gpu_id(kb, answers.gpu_id)
    return check_fit(kb, arch, machine, answers.weight_format)


def recommend(answers: WizardAnswers, kb) -> Recommendation:
    """Rank the five primary engines for `answers` from the knowledge base's facts and wizard rules.

    "fits one card" left unknown is derived from the memory model when a catalog model and GPU are named.
    """
    fit = derive_fit(answers, kb) if answers.fits_one_card == "unknown" else None
    if fit is not None:
        answers = answers.model_copy(update={"fits_one_card": "yes" if fit.fits else "no"})
    from calculators.wizard.compatibility import compatibility_rules, model_verdicts  # imports ScoringRule

    base_rules, caveats = _rules_from_kb(kb)
    verdicts = model_verdicts(answers.model_id, WIZARD_ENGINES, kb)

    def ranking_for(candidate: WizardAnswers) -> tuple[EngineVerdict, ...]:
        exclusions, support_rules = _support_verdicts(kb, candidate)
        checked, checked_caveats = compatibility_rules(candidate, verdicts, kb)
        return rank_engines(candidate, WIZARD_ENGINES, base_rules + support_rules + checked,
                            caveats + checked_caveats, lambda _, engine: exclusions[engine])

    def top_of(candidate: WizardAnswers) -> str | None:
        eligible = [v for v in ranking_for(candidate) if not v.excluded]
        return eligible[0].engine if eligible else None

    ranking = ranking_for(answers)
    top = next((v.engine for v in ranking if not v.excluded), None)
    return Recommendation(
        answers=answers, ranking=ranking, changes=answer_changes(answers, top, top_of), fit_check=fit
    )
