"""The wizard's recommendation as Markdown, for a design document or a terminal."""

from __future__ import annotations

import json

from calculators.i18n import N_, _
from calculators.wizard.answers import WizardAnswers
from calculators.wizard.scoring import CheckedVerdict, Recommendation
from knowledge.references import resolve_reference
from reports.compatibility import checked_verdict_text


def _as_written(value: object) -> str:
    """An answer's value as the answers file writes it (JSON: `true`, `null`, `shared-api`), in a code span:
    field names and values are the file's vocabulary, the same in every language."""
    return f"`{value}`" if isinstance(value, str) else f"`{json.dumps(value)}`"


def _answers_table(answers: WizardAnswers) -> list[str]:
    lines = ["| " + _("answer") + " | " + _("value") + " |", "|---|---|"]
    for name, value in answers.model_dump(mode="json").items():
        lines.append(f"| `{name}` | {_as_written(value)} |")
    return lines


def reason_text(reason: str, checked: CheckedVerdict | None = None) -> str:
    """A rule's reason or a caveat's text in the reader's language; one built from a compatibility verdict
    (`checked`) is worded by reports/compatibility.checked_verdict_text."""
    return checked_verdict_text(checked) if checked is not None else _(reason)


def recommendation_markdown(result: Recommendation, engine_names: dict[str, str]) -> str:
    """Ranking, score breakdown, caveats and 'what would change this answer' as one Markdown document."""
    lines = [_("# servewise engine recommendation"), ""]
    top = result.top
    if top is None:
        lines += [_("No engine meets the hard constraints of these answers."), ""]
    else:
        lines += [_("**First candidate: {engine}** (score {score}).").format(
            engine=engine_names.get(top.engine, top.engine), score=top.score), ""]
    lines += [
        _("An architecture choice, not a speed ranking: hard constraints come from each engine's documented "
          "support; points come from servewise's rules, each citing the facts it rests on. Nothing here is a "
          "measurement."),
        "",
        _("## Ranking"),
        "",
        "| {} | {} | {} | {} |".format(_("rank"), _("engine"), _("score"), _("status")),
        "|---|---|---|---|",
    ]
    for index, verdict in enumerate(result.ranking, start=1):
        status = (_("excluded:") + " " + "; ".join(_(e.reason) for e in verdict.exclusions) if verdict.excluded
                  else _("eligible"))
        lines.append(f"| {index} | {engine_names.get(verdict.engine, verdict.engine)} | {verdict.score} | {status} |")
    for verdict in result.ranking:
        lines += ["", f"## {engine_names.get(verdict.engine, verdict.engine)}", ""]
        for contribution in verdict.contributions:
            rests_on = _("rests on:")
            reason = reason_text(contribution.reason, contribution.checked)
            lines.append(f"- **{contribution.points:+d}** {reason} _({rests_on} {', '.join(contribution.rests_on)})_")
        if not verdict.contributions:
            lines.append("- " + _("no rule gave or took points"))
        for caveat in verdict.caveats:
            lines.append(f"- ⚠ {reason_text(caveat.text, caveat.checked)}")
    lines += ["", _("## What would change this answer"), ""]
    if result.changes:
        for change in result.changes:
            lines.append(
                f"- `{change.field}`: {_as_written(change.current)} → {_as_written(change.alternative)} "
                + _("puts {engine} first").format(engine=engine_names.get(change.new_top, change.new_top))
            )
    else:
        lines.append("- " + _("no single different answer changes the first candidate"))
    lines += ["", _("## Answers"), "", *_answers_table(result.answers), ""]
    return "\n".join(lines)


def _data_text(text: str, checked: CheckedVerdict | None) -> str:
    """A reason as the JSON carries it: the rule's English text, or a checked verdict's sentence as shown."""
    return checked_verdict_text(checked) if checked is not None else text


def recommendation_json(result: Recommendation) -> dict:
    """The recommendation as plain JSON-ready data (ids, scores, reasons, cited facts)."""
    return {
        "top": result.top.engine if result.top else None,
        "ranking": [
            {
                "engine": v.engine,
                "score": v.score,
                "excluded": v.excluded,
                "exclusions": [{"reason": e.reason, "rests_on": list(e.rests_on)} for e in v.exclusions],
                "contributions": [
                    {"rule": c.rule_id, "points": c.points, "reason": _data_text(c.reason, c.checked),
                     "rests_on": list(c.rests_on)}
                    for c in v.contributions
                ],
                "caveats": [{"id": c.id, "text": _data_text(c.text, c.checked)} for c in v.caveats],
            }
            for v in result.ranking
        ],
        "what_would_change": [
            {"field": c.field, "current": c.current, "alternative": c.alternative, "new_top": c.new_top}
            for c in result.changes
        ],
        "answers": result.answers.model_dump(),
    }


def engine_names(kb) -> dict[str, str]:
    """Engine id -> display name from the knowledge base."""
    return {engine.id: engine.name for engine in kb.engines}


#: What a cited feature or operating system is called (the ids after the engine in `feature:` / `os:` references).
_REFERENCE_ITEMS = {
    "api": N_("HTTP API"), "auth": N_("authentication"), "metrics": N_("metrics"), "multi_gpu": N_("several GPUs"),
    "multi_model": N_("several models"), "prefix_caching": N_("prefix caching"),
    "linux": "Linux", "macos": "macOS", "windows": "Windows",
}  # fmt: skip


def reference_words(reference: str, kb) -> str:
    """A cited fact's id (`knob:vllm/max_num_seqs`, `compat:vllm/gguf`) in the words a reader knows, as Markdown:
    the engine's and format's names, a setting in code type."""
    from reports.names import name_of

    kind, _sep, rest = reference.partition(":")
    engine, _sep, item = rest.partition("/")
    if not item:
        return f"`{reference}`"
    engine_name = name_of(kb, engine)
    if kind == "knob":
        return f"{engine_name} `{item}`"
    if kind == "compat":
        return f"{engine_name} × {name_of(kb, item)}"
    return f"{engine_name}: {_(_REFERENCE_ITEMS[item]) if item in _REFERENCE_ITEMS else item.replace('_', ' ')}"


def fact_label(reference: str, kb) -> str:
    """'fact — source (version)' for a rule's cited fact, as Markdown with a link where possible."""
    from knowledge.sources import source_url

    fact = resolve_reference(reference, {e.id: e for e in kb.engines}, kb.formats)
    source = getattr(fact, "source", None) or getattr(getattr(fact, "license", None), "source", "")
    verified = getattr(fact, "verified", None) or getattr(getattr(fact, "latest_version_read", None), "verified", None)
    version = verified.version if verified else ""
    url = source_url(source, version) if source else None
    where = f"[{source}]({url})" if url else source
    words = reference_words(reference, kb)
    return f"{words} — {where} ({version})" if source else words


def ranking_rows(result: Recommendation, names: dict[str, str]) -> list[dict]:
    """The ranking as table rows: rank, engine name (marked when excluded) and signed score ("+5").

    Three narrow columns of a Markdown table, so beside the points chart (half the page at 1024 px) the engine
    name wraps rather than pushing the score out of sight; why an engine was excluded is written in its own section
    of the page (and of the Markdown export).
    """
    return [
        {
            "#": index,
            _("engine"): _("{engine} (excluded)").format(engine=names[v.engine]) if v.excluded else names[v.engine],
            _("score"): f"{v.score:+d}",
        }
        for index, v in enumerate(result.ranking, start=1)
    ]


def recommendation_markdown_for(result: Recommendation, kb) -> str:
    """The Markdown export, with engine display names from the knowledge base."""
    return recommendation_markdown(result, engine_names(kb))
