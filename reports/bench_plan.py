"""The benchmark plan as Markdown (to paste in a design document) and as JSON/YAML data (to drive scripts)."""

from __future__ import annotations

import shlex

import yaml

from calculators.i18n import _
from calculators.operations.bench_plan import BenchPlan, Command, EngineSection
from knowledge.sources import source_url
from reports.engines_tables import kb_word
from reports.json_text import json_document, plain_spaces
from reports.numbers import compact, number, percent
from reports.shell import continued_command


def command_line(command: Command) -> str:
    """One shell-ready line for a command (arguments quoted where the shell needs it)."""
    return shlex.join(command.argv)


def command_block(command: Command) -> str:
    """A command over several lines: the program, then one `--flag value` pair per continued line."""
    return continued_command(command.argv, head_length=command.program_length)


def engine_script(section: EngineSection) -> str:
    """Every command of one engine as a shell script body, each run preceded by a comment naming it."""
    blocks = [f"# {command.run_id} ({command.tool})\n{command_block(command)}" for command in section.commands]
    return "\n\n".join(blocks)


def _parameters_table(plan: BenchPlan) -> list[str]:
    request = plan.request
    rows = [
        (_("model"), f"{plan.model_name} (`{plan.hf_repo}`)"),
        (_("hardware"), plan.gpu_name),
        (_("engines"), ", ".join(section.name for section in plan.engines)),
        (_("arrival rates (requests/s, open loop)"), "; ".join(compact(rate) for rate in request.request_rates_per_s)),
        (_("client caps (requests in flight)"), ", ".join(str(count) for count in request.client_counts)),
        (_("requests per run"), number(request.num_prompts)),
        (_("warm-up requests"), number(request.warmup_requests)),
        (_("seed"), str(request.seed)),
        (_("shared prefix in the warm-prefix phase"),
         _("{share} of each prompt").format(share=percent(request.prefix_share))),
        (_("languages"), ", ".join(request.languages)),
        (_("tool calls"), _("yes") if request.tool_calls else _("no")),
    ]
    header = "| " + _("parameter") + " | " + _("value") + " |"
    return [header, "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]


def _workloads_table(plan: BenchPlan) -> list[str]:
    seen = {run.workload.id: run.workload for run in plan.runs}
    header = (_("workload"), _("input tokens"), _("output tokens"), _("shared prefix tokens (warm-prefix)"))
    lines = ["| " + " | ".join(header) + " |", "|---|---|---|---|"]
    lines += [f"| {w.id} | {number(w.input_tokens)} | {number(w.output_tokens)} | {number(w.prefix_tokens)} |"
              for w in seen.values()]
    return lines


def _engine_markdown(section: EngineSection) -> list[str]:
    source_word = _("source")
    lines = ["", f"### {section.name}", "", _("Base URL: `{url}`.").format(url=section.base_url)]
    if section.load_tool_note:
        note = section.load_tool_note
        url = source_url(note.source, note.version) or note.source
        lines.append(_("Load tool: **{tool}** (the engine's own).").format(tool=note.tool)
                     + f" {note.why} [{source_word}]({url}) ({note.version})")
    else:
        lines.append(_("No open-loop serving load tool of its own: use the generic recipe below."))
    for warning in section.warnings:
        lines.append(f"- ⚠ {warning}")
    if section.tool_call_setup:
        lines.append(f"- {section.tool_call_setup}")
    if section.metrics_to_scrape:
        scraped = ", ".join(f"`{name}`" for name in section.metrics_to_scrape)
        lines.append("- " + _("Scrape during every run: ") + scraped)
    else:
        lines.append("- " + _("The engine exports no latency metrics: the client's measurements are all there is."))
    for note in section.other_tools:
        url = source_url(note.source, note.version) or note.source
        lines.append("- " + _("Also ships **{tool}** ({kind}):").format(tool=note.tool, kind=kb_word(note.kind))
                     + f" {note.why} [{source_word}]({url}) ({note.version})")
    if section.generic_recipe:
        lines += ["", _("Generic OpenAI-compatible recipe:"), ""]
        lines += [f"{index}. {step}" for index, step in enumerate(section.generic_recipe, start=1)]
    lines += ["", "```sh", engine_script(section), "```"]
    return lines


def plan_markdown(plan: BenchPlan) -> str:
    """The whole plan as one Markdown document."""
    lines = [
        _("# servewise benchmark plan"),
        "",
        _("A plan to measure on your own hardware, not a measurement. Every engine gets the same workload "
          "parameters; only the flag spellings differ."),
        "",
        _("## Parameters"),
        "",
        *_parameters_table(plan),
        "",
        _("## Workloads"),
        "",
        *_workloads_table(plan),
        "",
        _("## Phases"),
        "",
    ]
    lines += [f"- **{phase}**: {plan.phase_purpose[phase]}" for phase in plan.phases]
    lines += ["", _("## Notes"), ""]
    lines += [f"- {note}" for note in plan.notes]
    lines += ["", _("## Record with every result"), "", "| " + _("what") + " | " + _("why") + " |", "|---|---|"]
    lines += [f"| {item.item} | {item.why} |" for item in plan.record]
    lines += ["", _("## Commands per engine")]
    for section in plan.engines:
        lines += _engine_markdown(section)
    lines.append("")
    return "\n".join(lines)


def plan_data(plan: BenchPlan) -> dict:
    """The plan as plain JSON-ready data (the same fields as the pydantic model)."""
    return plan.model_dump(mode="json")


def plan_json(plan: BenchPlan) -> str:
    """The plan as indented JSON text."""
    return json_document(plan_data(plan), indent=2, ensure_ascii=False)


def plan_yaml(plan: BenchPlan) -> str:
    """The plan as YAML text (block style, keys in model order)."""
    # libyaml's emitter when the wheel has it (it does on the supported platforms): ~10x faster, same output
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    # a file for programs, like the JSON: plain spaces in its texts (reports/json_text.py)
    return yaml.dump(plain_spaces(plan_data(plan)), Dumper=dumper, sort_keys=False, allow_unicode=True, width=120)


__all__ = ["command_block", "command_line", "engine_script", "plan_data", "plan_json", "plan_markdown", "plan_yaml"]
