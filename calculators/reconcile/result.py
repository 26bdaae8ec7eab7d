"""Result types of a reconciliation and the one rule that judges a printed figure against a prediction.

A prediction is a closed range [low, high] in the figure's base unit (bytes, tokens, ...): a point when
every input was exact, a range when an input was itself a rounded printed number (vLLM's "Available KV
cache memory: 6.51 GiB" stands for every byte count that prints that way).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from calculators.i18n import _, ngettext
from calculators.memory.plan import Result
from calculators.reconcile.log.figures import Expected, Figure, LineReport, LogNote


class RowStatus(StrEnum):
    """How a printed figure compares with servewise's prediction."""

    EXACT = "exact"  # the exact prediction rounds to what the engine printed
    EXPLAINED = "explained"  # a named rule accounts for the difference
    UNEXPLAINED = "unexplained"  # servewise's memory model and the engine disagree


class Rule(StrEnum):
    """The known reasons a prediction may differ from a printed figure (stable codes for pages)."""

    ROUNDED_INPUT = "rounded_input"  # an input was itself a rounded printed figure
    VERSION = "version"  # the engine version that printed the log used another rule
    ESTIMATE = "estimate"  # servewise estimates a figure the engine measured (profiled peaks)
    PER_RANK = "per_rank"  # with several ranks the engine keeps the smallest rank's pool
    DEVICE_SPLIT = "device_split"  # the engine shared layers out by each device's free memory, unknown here
    MAMBA_CACHE_MODE = "mamba_cache_mode"  # a hybrid's state pages per request: vLLM's 'none' vs 'align' mode
    DRAFT_LAYERS = "draft_layers"  # a speculative drafter's layers share the target's KV pool
    MLA_FULL_KV = "mla_full_kv"  # an MLA GGUF converted without the split latent tensors: full K and V per head


class Prediction(Result):
    """servewise's value for one printed figure: a range in the figure's unit and how it was obtained."""

    low: int | float
    high: int | float
    basis: str = Field(description="which plan field / rule produced it, and from which log inputs")
    rounded_inputs: tuple[str, ...] = Field(default=(), description="printed inputs whose rounding widens the range")


class Alternative(Result):
    """A known rule that predicts another value; used when the main prediction misses."""

    rule: Rule
    low: int | float
    high: int | float
    explanation: str


class ReconcileRow(Result):
    """One printed figure next to servewise's prediction."""

    figure: str = Field(description="figure name from calculators.reconcile.log.vocabulary")
    label: str = Field(description="what the figure is, in words")
    cache: str | None = None
    device: str | None = None
    line: int
    unit: str
    printed: str = Field(description="the number as the engine printed it")
    printed_unit: str
    printed_value: int | float = Field(description="the printed number in base units")
    predicted_low: int | float
    predicted_high: int | float
    difference: int | float = Field(description="servewise minus engine, in base units (0 when the ranges meet)")
    status: RowStatus
    rule: Rule | None = None
    explanation: str
    basis: str


class Reconciliation(Result):
    """The comparison of one start-up log with servewise's memory model on the same inputs."""

    engine: str | None
    engine_name: str | None
    runner: str | None = None
    version: str | None
    plan_engine: str | None = Field(default=None, description="registry id of the plan that was run")
    model_source: str | None = Field(default=None, description="where the geometry came from")
    settings_used: dict[str, object] = Field(default_factory=dict, description="validated engine settings run")
    settings_ignored: list[str] = Field(default_factory=list, description="log settings the plan does not take")
    assumptions: list[str] = Field(default_factory=list, description="inputs servewise had to choose")
    rows: list[ReconcileRow] = Field(default_factory=list)
    not_compared: list[Figure] = Field(default_factory=list, description="printed figures servewise does not predict")
    found_geometry: dict[str, object] = Field(default_factory=dict)
    found_settings: dict[str, object] = Field(default_factory=dict)
    missing: list[Expected] = Field(default_factory=list)
    log_notes: list[LogNote] = Field(default_factory=list)
    plan_notes: list[str] = Field(default_factory=list)
    refusal: str | None = Field(default=None, description="why the plan says the engine would refuse")
    lines: list[LineReport] = Field(default_factory=list, description="every pasted line: used or skipped, and why")

    def rows_with(self, status: RowStatus) -> list[ReconcileRow]:
        """The rows of one status, in log order."""
        return [row for row in self.rows if row.status is status]


def _overlap(a_low: float, a_high: float, b_low: float, b_high: float) -> bool:
    return a_low <= b_high and b_low <= a_high


def _gap(low: float, high: float, value: float) -> float:
    """Prediction minus printed value, taking the prediction's end nearest the value (0 inside the range)."""
    return min(max(value, low), high) - value


def judge(
    figure: Figure,
    label: str,
    prediction: Prediction,
    alternatives: tuple[Alternative, ...] = (),
    printed_interval: tuple[float, float] | None = None,
) -> ReconcileRow:
    """Compare one printed figure with a prediction: exact, explained by a named rule, or unexplained.

    `printed_interval` replaces the figure's own rounding interval when the figure is a sum of several
    printed numbers (each rounded on its own).
    """
    printed_low, printed_high = printed_interval or figure.interval()
    low, high = prediction.low, prediction.high
    rule: Rule | None = None
    if _overlap(low, high, printed_low, printed_high):
        if low == high or not prediction.rounded_inputs:
            status, explanation = RowStatus.EXACT, _("servewise's value rounds to what the engine printed")
        else:
            status, rule = RowStatus.EXPLAINED, Rule.ROUNDED_INPUT
            inputs = ", ".join(prediction.rounded_inputs)
            explanation = ngettext("matches within the range allowed by the rounded printed input {inputs}",
                                   "matches within the range allowed by the rounded printed inputs {inputs}",
                                   len(prediction.rounded_inputs)).format(inputs=inputs)
    else:
        match = next((alt for alt in alternatives if _overlap(alt.low, alt.high, printed_low, printed_high)), None)
        if match is not None:
            status, rule, explanation = RowStatus.EXPLAINED, match.rule, match.explanation
        else:
            status = RowStatus.UNEXPLAINED
            explanation = _("servewise's memory model and the engine disagree; no known rule accounts for it")
    difference = _gap(low, high, figure.value)
    if isinstance(difference, float) and difference.is_integer():
        difference = int(difference)
    return ReconcileRow(
        figure=figure.name,
        label=label,
        cache=figure.cache,
        device=figure.device,
        line=figure.line,
        unit=figure.unit,
        printed=figure.printed,
        printed_unit=figure.printed_unit,
        printed_value=figure.value,
        predicted_low=low,
        predicted_high=high,
        difference=difference,
        status=status,
        rule=rule,
        explanation=explanation,
        basis=prediction.basis,
    )
