"""The wizard's recommendation as Markdown, for a design document or a terminal."""

from __future__ import annotations

from calculators.recommend import Recommendation
from calculators.wizard_answers import WizardAnswers


def _answers_table(answers: WizardAnswers) -> list[str]:
    lines = ["| answer | value |", "|---|---|"]
    for name, value in answers.model_dump().items():
        lines.append(f"| {name} | {value} |")
    return lines


def recommendation_markdown(result: Recommendation, engine_names: dict[str, str]) -> str:
    """Ranking, score breakdown, caveats and 'what would change this answer' as one Markdown document."""
    lines = ["# servewise engine recommendation", ""]
    top = result.top
    if top is None:
        lines += ["No engine meets the hard constraints of these answers.", ""]
    else:
        lines += [f"**First candidate: {engine_names.get(top.engine, top.engine)}** (score {top.score}).", ""]
    lines += [
        "An architecture choice, not a speed ranking: hard constraints come from each engine's documented "
        "support; points come from servewise's rules, each citing the facts it rests on. Nothing here is a "
        "measurement.",
        "",
        "## Ranking",
        "",
        "| rank | engine | score | status |",
        "|---|---|---|---|",
    ]
    for index, verdict in enumerate(result.ranking, start=1):
        status = "excluded: " + "; ".join(e.reason for e in verdict.exclusions) if verdict.excluded else "eligible"
        lines.append(f"| {index} | {engine_names.get(verdict.engine, verdict.engine)} | {verdict.score} | {status} |")
    for verdict in result.ranking:
        lines += ["", f"## {engine_names.get(verdict.engine, verdict.engine)}", ""]
        for contribution in verdict.contributions:
            lines.append(f"- **{contribution.points:+d}** {contribution.reason} _(rests on: "
                         f"{', '.join(contribution.rests_on)})_")
        if not verdict.contributions:
            lines.append("- no rule gave or took points")
        for caveat in verdict.caveats:
            lines.append(f"- ⚠ {caveat.text}")
    lines += ["", "## What would change this answer", ""]
    if result.changes:
        for change in result.changes:
            lines.append(f"- `{change.field}`: {change.current} → {change.alternative} puts "
                         f"{engine_names.get(change.new_top, change.new_top)} first")
    else:
        lines.append("- no single different answer changes the first candidate")
    lines += ["", "## Answers", "", *_answers_table(result.answers), ""]
    return "\n".join(lines)
