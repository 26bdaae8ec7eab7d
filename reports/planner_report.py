"""The capacity planner's answer as Markdown (for a design document) and as JSON data (for scripts)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

import pandas as pd
from pydantic import BaseModel

from calculators.i18n import N_, _, ngettext, translated_word
from calculators.planner.search import Candidate, PlannerResult
from calculators.planner.spec import HOURS_PER_MONTH
from reports.numbers import compact, dollars, number, percent, significant
from reports.tables import literal_markdown


def _name(names: Mapping[str, str], slug: str) -> str:
    return names.get(slug, slug)


def _money(value: float | None) -> str:
    return "—" if value is None else dollars(value)


def _price_source(best: Candidate) -> str:
    """Whose price it is and when, with the page it was read from as a link named by its title (Markdown)."""
    assert best.cost is not None
    cost = best.cost
    if not cost.price_source_url:
        return cost.price_source
    title = cost.price_source_title or cost.price_source_url
    return f"{cost.price_source}; [{literal_markdown(title)}]({cost.price_source_url})"


def _configuration(c: Candidate, engines: Mapping[str, str], gpus: Mapping[str, str],
                   schemes: Mapping[str, str] | None = None) -> str:
    return _("{replicas} × {per} {gpu}, {weights}, KV {kv}, {knob} {n}").format(
        replicas=c.replicas or "—", per=c.shape.gpus_per_instance,
        gpu=_name(gpus, c.shape.gpu_id), weights=_name(schemes or {}, c.shape.weights), kv=c.shape.kv_cache_type,
        knob=c.concurrency_setting, n=c.concurrency)


SECTIONS = ("summary", "winners", "why", "assumptions", "rejections")


def winners_table(result: PlannerResult, engines: Mapping[str, str], gpus: Mapping[str, str],
                  schemes: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Each engine's cheapest configuration meeting the target, engines as columns (cheapest first) and one row
    per figure: GPU, instances, weights, KV cache, concurrency setting, best rate, users, costs (US$).

    As one row per engine, the configuration sentence and six figures ran ~650 px past the page at 1024 px and
    the costs were out of sight; sideways, the four or five engines fit, each figure is named once.
    """
    best = result.best.shape.engine if result.best is not None else None
    winners = sorted(result.best_by_engine.items(), key=lambda item: (
        item[1].cost.usd_per_hour if item[1].cost else float("inf"), item[0] != best))  # the headline's first
    with_users = result.spec.load.users is not None
    columns: dict[str, list[str]] = {}
    for engine, c in winners:
        assert c.cost is not None
        values = {
            _("GPU"): _name(gpus, c.shape.gpu_id),
            _("instances × GPUs each"): f"{number(c.replicas or 0)} × {number(c.shape.gpus_per_instance)}",
            _("weights"): _name(schemes or {}, c.shape.weights),
            _("KV cache"): c.shape.kv_cache_type,
            _("concurrency"): number(c.concurrency),  # each engine's setting: concurrency_settings_line
            _("best rate per instance (req/s)"): significant(c.max_rate_per_instance),
            **({_("users per instance"): number(round(c.users_per_instance or 0.0))} if with_users else {}),
            _("US$ per hour"): _money(c.cost.usd_per_hour), _("US$ per month"): _money(c.cost.usd_per_month),
            _("US$ per million output tokens"): _money(c.cost.usd_per_million_output_tokens),
        }
        columns[_name(engines, engine)] = list(values.values())
    index = list(values) if winners else []
    return pd.DataFrame(columns, index=index)


def concurrency_settings_line(result: PlannerResult, engines: Mapping[str, str]) -> str:
    """Which setting carries each winner's concurrency, as Markdown ("`max_num_seqs` (vLLM)"): in the table's
    cells the longest (`max_running_requests`, which cannot wrap) pushed it past the page at 1024 px."""
    settings = [f"`{c.concurrency_setting}` ({_name(engines, engine)})"
                for engine, c in result.best_by_engine.items() if c.concurrency_setting]
    return _("Concurrency is each engine's own setting: {settings}.").format(settings=", ".join(settings)) \
        if settings else ""


#: Where in the search a configuration was turned down, as people read it (the stage ids stay in the JSON).
STAGE_WORDS = {
    "engine": N_("engine"), "weights": N_("weights"), "hardware": N_("hardware"), "memory": N_("memory"),
    "slo": N_("latency target"), "limit": N_("limits"), "price": N_("price"), "pruned": N_("pruned"),
}


def rejections_table(result: PlannerResult, engines: Mapping[str, str], gpus: Mapping[str, str],
                     schemes: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every configuration the planner turned down: where in the search, and why."""
    return pd.DataFrame([{
        _("engine"): _name(engines, r.engine), _("GPU"): _name(gpus, r.gpu_id) if r.gpu_id else "",
        _("GPUs per instance"): r.gpus_per_instance, _("weights"): _name(schemes or {}, r.weights) if r.weights else "",
        _("KV"): r.kv_cache_type or "",
        _("concurrency"): r.concurrency, _("stage"): translated_word(STAGE_WORDS, r.stage),
        _("reason"): r.reason,
    } for r in result.rejections])


def planner_markdown(result: PlannerResult, engines: Mapping[str, str], gpus: Mapping[str, str],
                     sections: tuple[str, ...] = SECTIONS, schemes: Mapping[str, str] | None = None) -> str:
    """Winner per engine and overall, the arithmetic behind the winner, and every rejected configuration."""
    spec = result.spec
    parts: dict[str, list[str]] = {}
    lines = parts.setdefault("summary", [])
    lines += [
        "# " + _("servewise capacity plan"), "",
        _("Model {model}; load {rate}\u00a0requests/s; target p{tp} TTFT ≤ {ttft}\u00a0s and p{ip} inter-token "
          "latency ≤ {itl}\u00a0ms, at most {fail} failed.").format(
            model=result.model_name, rate=significant(result.load_rate_per_s), tp=compact(spec.slo.ttft_percentile, 2),
            ttft=compact(spec.slo.ttft_s, 3), ip=compact(spec.slo.itl_percentile, 2),
                itl=compact(spec.slo.itl_s * 1000, 3),
            fail=percent(spec.slo.max_failed_share, 1)), "",
        _("Every figure is an estimate from servewise's memory plans and scheduler simulation: a hypothesis to "
          "verify with the benchmark plan before buying."), "",
    ]
    lines = parts.setdefault("winners", [])
    lines += ["## " + _("Cheapest per engine"), "",
              "| " + " | ".join([_("engine"), _("configuration"), _("best rate per instance"), _("per hour"),
                                 _("per month"), _("per million output tokens")]) + " |",
              "|---|---|---|---|---|---|"]
    for engine, c in result.best_by_engine.items():
        assert c.cost is not None
        lines.append(f"| {_name(engines, engine)} | {_configuration(c, engines, gpus, schemes)} | "
                     f"{significant(c.max_rate_per_instance)}/s | {_money(c.cost.usd_per_hour)} | "
                     f"{_money(c.cost.usd_per_month)} | {_money(c.cost.usd_per_million_output_tokens)} |")
    if not result.best_by_engine:
        lines.append("| — | " + _("no configuration meets the target; see the rejections below") + " | | | | |")
    best = result.best
    if best is not None and best.cost is not None and best.at_max_rate is not None:
        point = best.at_max_rate
        lines = parts.setdefault("why", [])
        lines += ["", "## " + _("Why this configuration"), "",
                  "- " + (_("Memory: {engine}'s own plan keeps {kv} KV tokens per instance for requests of up to "
                            "{ctx}\u00a0tokens.") if best.kv_capacity_tokens else
                          _("Memory: {engine}'s own plan keeps each slot's KV in every instance for requests of up "
                            "to {ctx}\u00a0tokens.")).format(engine=_name(engines, best.shape.engine),
                                                        kv=number(best.kv_capacity_tokens or 0),
                                                        ctx=number(result.context_tokens)),
                  "- " + _("Latency: at {rate}\u00a0requests/s per instance the simulation gives p{tp} TTFT "
                           "{ttft}\u00a0s and p{ip} inter-token latency {itl}\u00a0ms; {fail} failed.").format(
                      rate=significant(point.rate_per_s), tp=compact(spec.slo.ttft_percentile, 2),
                      ttft=significant(point.ttft_s or 0.0), ip=compact(spec.slo.itl_percentile, 2),
                      itl=significant((point.itl_s or 0.0) * 1000), fail=percent(point.failed_share, 1)),
                  "- " + _("Replicas: {load} ÷ {rate} rounded up = {instances} on {hosts}.").format(
                      load=significant(result.load_rate_per_s), rate=significant(best.max_rate_per_instance),
                      instances=ngettext("{n} instance", "{n} instances", best.replicas or 0).format(
                          n=number(best.replicas or 0)),  # a winner always has them; None only for rejections
                      hosts=ngettext("{n} host", "{n} hosts", best.hosts or 0).format(n=number(best.hosts or 0))),
                  "- " + _("Cost: {gpus} × {price}/GPU-hour = {hour}/h; × {hours}\u00a0h = {month}/month "
                           "({source}).").format(gpus=ngettext("{n} GPU", "{n} GPUs", best.cost.gpus).format(
                                                     n=number(best.cost.gpus)),
                                                 price=_money(best.cost.usd_per_gpu_hour),
                                                 hour=_money(best.cost.usd_per_hour), hours=compact(HOURS_PER_MONTH, 1),
                                                 month=_money(best.cost.usd_per_month), source=_price_source(best))]
    parts["assumptions"] = ["", "## " + _("Assumptions"), ""] + [f"- {note}" for note in result.notes]
    lines = parts.setdefault("rejections", [])
    lines += ["", "## " + _("Rejected configurations"), "",
              "| " + " | ".join([_("engine"), _("GPU"), _("GPUs/instance"), _("weights"), _("KV"),
                                 _("concurrency"), _("stage"), _("reason")]) + " |",
              "|---|---|---|---|---|---|---|---|"]
    for r in result.rejections:
        lines.append(f"| {_name(engines, r.engine)} | {_name(gpus, r.gpu_id) if r.gpu_id else '—'} | "
                     f"{r.gpus_per_instance or '—'} | {_name(schemes or {}, r.weights) if r.weights else '—'} | "
                     f"{r.kv_cache_type or '—'} | "
                     f"{r.concurrency or '—'} | {translated_word(STAGE_WORDS, r.stage)} | "
                     f"{r.reason.replace('|', '/')} |")
    chosen = [line for name in sections for line in parts.get(name, [])]
    return "\n".join(chosen).strip("\n") + "\n"


def _plain(value: Any) -> Any:
    """JSON-ready data from dataclasses, pydantic models, enums, tuples and dicts."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _slugs(result: PlannerResult) -> set[str]:
    """Every catalog slug the result mentions: engines, GPUs and weight schemes."""
    found = {result.spec.model_id, *(result.spec.engines or ()), *result.spec.weights,
             *(option.gpu_id for option in result.spec.hardware)}
    for c in (*result.candidates, *result.best_by_engine.values()):
        found |= {c.shape.engine, c.shape.gpu_id, c.shape.weights}
    for r in result.rejections:
        found |= {slug for slug in (r.engine, r.gpu_id, r.weights) if slug}
    return found


def planner_json(result: PlannerResult, include_probes: bool = False,
                 names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The whole planner result as JSON data (the simulated probes only when asked: they are many).

    Ids stay slugs (what scripts match on); with `names`, a "names" object maps each slug the result mentions
    to the name people read ("h100-sxm-80gb" -> "NVIDIA H100 SXM5 80 GB")."""
    data = _plain(result)
    if names is not None:
        data["names"] = {slug: names[slug] for slug in sorted(_slugs(result)) if slug in names}
    if not include_probes:
        for candidate in data["candidates"]:
            candidate.pop("probes", None)
        for candidate in data["best_by_engine"].values():
            candidate.pop("probes", None)
    data["best"] = None if result.best is None else data["best_by_engine"][result.best.shape.engine]
    return data
