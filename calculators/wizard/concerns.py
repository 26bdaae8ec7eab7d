"""Which concern each wizard rule speaks to (use, hardware, model and format, workload, operations), and each
engine's points summed per concern: the data of the wizard's "points by concern" chart.

A rule's concern is the wizard step its condition reads (the first answer in its `when`), so a new rule is
grouped without a field of its own and the grouping cannot drift from the questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calculators.i18n import N_
from calculators.wizard.scoring import EngineVerdict

#: The wizard's five steps, in order, with the words shown for each (translated where shown).
CONCERNS: dict[str, str] = {
    "use": N_("Use"),
    "hardware": N_("Hardware"),
    "model": N_("Model and format"),
    "workload": N_("Workload"),
    "operations": N_("Operations"),
}

_ANSWER_CONCERN: dict[str, str] = {
    "use": "use",
    **dict.fromkeys(("hardware", "os", "gpu_id", "n_gpus", "nvlink", "apple_memory_gb", "host_ram_gb", "hosts"),
                    "hardware"),
    **dict.fromkeys(("model_id", "weight_format", "fits_one_card"), "model"),
    **dict.fromkeys(("concurrent_users", "prompt_length", "output_length", "shared_prefixes", "tool_calling",
                     "structured_output", "languages", "arrival"), "workload"),
    **dict.fromkeys(("slo_metrics", "exposure", "multi_model", "lora", "cancellation", "on_prem", "ops_skill"),
                    "operations"),
}


def answer_concern(answer: str) -> str | None:
    """The concern (wizard step) of one answer field, or None for a field servewise does not know."""
    return _ANSWER_CONCERN.get(answer)


def rule_concern(when: Mapping[str, Any]) -> str:
    """The concern of a rule whose condition is `when` (the first answer it reads)."""
    for answer in when:
        if answer in _ANSWER_CONCERN:
            return _ANSWER_CONCERN[answer]
    return "workload"


def points_by_concern(verdicts: Sequence[EngineVerdict], rules: Sequence[Any]) -> dict[str, dict[str, int]]:
    """engine -> concern -> points (every concern present, 0 when no rule of it gave points)."""
    concern_of = {rule.id: rule_concern(rule.when) for rule in rules}
    table: dict[str, dict[str, int]] = {}
    for verdict in verdicts:
        row = dict.fromkeys(CONCERNS, 0)
        for contribution in verdict.contributions:
            # Rules not in wizard.yaml are support-status rules: how an engine supports the weights on that hardware.
            row[concern_of.get(contribution.rule_id, "model")] += contribution.points
        table[verdict.engine] = row
    return table
