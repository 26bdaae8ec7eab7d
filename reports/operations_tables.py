"""Tables for the Operations page, built from the knowledge base (pandas only, no streamlit).

Every row carries the source its value was read from, linked at the version read, so the page never
shows a value without where it comes from. A section the engine lacks reads `not supported`, and one
the knowledge base has no record of reads `unknown`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from calculators.i18n import N_, _
from knowledge.common import Sourced
from knowledge.engines import Engine
from knowledge.sources import source_url
from reports.engines_tables import availability_text, kb_word

UNKNOWN_TEXT = N_("unknown")
ENDPOINTS = (
    ("chat_completions", "/v1/chat/completions"),
    ("completions", "/v1/completions"),
    ("embeddings", "/v1/embeddings"),
    ("rerank", N_("Rerank (its path varies by engine)")),  # the others are one path in every engine
    ("responses", "/v1/responses"),
)
METRICS = (
    ("queue_time", N_("Queue time")),
    ("time_to_first_token", N_("Time to first token")),
    ("inter_token_latency", N_("Inter-token latency")),
    ("e2e_latency", N_("End-to-end latency")),
    ("requests_running", N_("Requests running")),
    ("requests_waiting", N_("Requests waiting")),
    ("kv_cache_usage", N_("KV cache usage")),
)
#: What no engine metric can see: the application measures these itself (product brief, idea 13).
APP_MEASURES = (
    (N_("Network"), N_("client ↔ gateway ↔ engine time, TLS and proxy overhead, dropped connections")),
    (N_("Retrieval"), N_("embedding calls, vector search and reranking before the prompt reaches the engine")),
    (N_("Tools"), N_("time spent running tool calls between model turns, and their failures")),
    (N_("Client-side queueing"), N_("requests held by a gateway, rate limiter or a client pool before they are sent")),
    (N_("Accepted work"), N_("requests completed within the latency target, not just requests sent")),
    (N_("Errors"), N_("HTTP errors, timeouts, rejected requests (e.g. a full queue) and truncated outputs")),
)
# Column keys stay English (ui/sourced_facts reads them); the page shows them through _().
SOURCE_COLUMN = N_("Source")
VERSION_COLUMN = N_("Version read")
OTHER_ROUTES, ENDPOINT, ENABLED_BY, NOTE = N_("Other routes"), N_("Endpoint"), N_("Enabled by"), N_("Note")


def _row(engine: Engine, what: str, value: str, fact: Sourced | None) -> dict[str, str]:
    """One long-format row: engine, what, value and the source link with the version read."""
    if fact is None:
        return {"Engine": engine.name, "What": what, "Value": value, SOURCE_COLUMN: "", VERSION_COLUMN: _(UNKNOWN_TEXT)}
    link = source_url(fact.source, fact.verified.version) or fact.source
    return {"Engine": engine.name, "What": what, "Value": value, SOURCE_COLUMN: link,
            VERSION_COLUMN: fact.verified.version}  # fmt: skip


def _joined(values: Sequence[str], empty: str = N_("none")) -> str:
    return ", ".join(values) if values else _(empty)


def _frame(rows: list[dict[str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["Engine", "What", "Value", SOURCE_COLUMN, VERSION_COLUMN])


def endpoints_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """One row per engine: availability of each OpenAI-style endpoint, with source and version."""
    rows = []
    for engine in engines:
        api = engine.http_api
        row = {"Engine": engine.name}
        for field, label in ENDPOINTS:
            row[_(label)] = availability_text(getattr(api, field)) if api else _(UNKNOWN_TEXT)
        row[SOURCE_COLUMN] = (source_url(api.source, api.verified.version) or api.source) if api else ""
        row[VERSION_COLUMN] = api.verified.version if api else _(UNKNOWN_TEXT)
        row[OTHER_ROUTES] = _joined(api.other) if api else _(UNKNOWN_TEXT)
        rows.append(row)
    return pd.DataFrame(rows)


def practice_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Where chat templates, sampling defaults and output limits come from, per engine (long format)."""
    rows = []
    for engine in engines:
        ops = engine.operations
        if ops is None:
            rows.append(_row(engine, _("Templates and sampling"), _(UNKNOWN_TEXT), None))
            continue
        template, sampling = ops.chat_template, ops.sampling
        rows += [
            _row(engine, _("Chat template"), _(template.default), template),
            _row(engine, _("Template flags"), _joined(template.flags, N_("none (see note)")) +
                 (f" — {_(template.note)}" if template.note else ""), template),
            _row(engine, _("Sampling defaults come from"), _(sampling.defaults_from), sampling),
            _row(engine, _("Engine's own sampling defaults"), _(sampling.engine_defaults), sampling),
            _row(engine, _("Output limit when max_tokens is unset"), _(sampling.default_max_output), sampling),
            _row(engine, _("Sampling flags"), _joined(sampling.flags), sampling),
        ]
    return _frame(rows)


def tool_calling_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Tool calling and structured output per engine: whether, which parser flags, which parsers."""
    rows = []
    for engine in engines:
        calling, structured = engine.tool_calling, engine.structured_output
        if calling is None:
            rows.append(_row(engine, _("Tool calling"), _(UNKNOWN_TEXT), None))
        else:
            rows += [
                _row(engine, _("Tool calling"), availability_text(calling.supported), calling),
                _row(engine, _("Parser flags"), _joined(calling.parser_flags, N_("none: chosen from the model")),
                     calling),
                _row(engine, _("Parsers (sample)"), _joined(calling.parsers, N_("not listed")), calling),
            ]
            if calling.note:
                rows.append(_row(engine, _("Note"), _(calling.note), calling))
        if structured is not None:
            what = _("Structured output ({status})").format(status=availability_text(structured.supported))
        rows.append(_row(engine, what, _(structured.how), structured))
    return _frame(rows)


def embeddings_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Embeddings: availability, pooling, normalisation, output dimension and the flags that set them."""
    rows = []
    for engine in engines:
        config = engine.operations.embeddings if engine.operations else None
        if config is None:
            rows.append(_row(engine, _("Embeddings"), _(UNKNOWN_TEXT), None))
            continue
        if config.supported == "no":
            rows.append(_row(engine, _("Embeddings"), _("not supported"), config))
            continue
        rows += [
            _row(engine, _("Embeddings ({status})").format(status=availability_text(config.supported)),
                 _joined(config.flags, N_("no flag needed")), config),
            _row(engine, _("Pooling"), _(config.pooling), config),
            _row(engine, _("Normalisation"), _(config.normalisation), config),
            _row(engine, _("Output dimension"), _(config.dimensions), config),
        ]
        if engine.http_api is not None:
            rows.append(_row(engine, _("Rerank endpoint"), availability_text(engine.http_api.rerank), engine.http_api))
    return _frame(rows)


def metrics_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """One row per engine: metrics endpoint, how to enable it and the metric name for each latency."""
    rows = []
    for engine in engines:
        metrics = engine.metrics
        row = {"Engine": engine.name}
        row[SOURCE_COLUMN] = (source_url(metrics.source, metrics.verified.version) or metrics.source) if metrics else ""
        row[VERSION_COLUMN] = metrics.verified.version if metrics else _(UNKNOWN_TEXT)
        endpoint = metrics.endpoint if metrics else UNKNOWN_TEXT
        row[ENDPOINT] = kb_word(endpoint) if endpoint in ("none", UNKNOWN_TEXT) else endpoint
        row[ENABLED_BY] = _(metrics.enabled_by) if metrics else _(UNKNOWN_TEXT)
        for field, label in METRICS:
            value = getattr(metrics, field) if metrics else _(UNKNOWN_TEXT)
            row[label] = _("— lacks it") if value == "none" else value
        row[NOTE] = _(metrics.note) if metrics and metrics.note else ""
        rows.append(row)
    return pd.DataFrame(rows)


def lacking_metrics(engine: Engine) -> tuple[str, ...]:
    """Labels of the latency metrics this engine does not export (all of them when it has no metrics)."""
    if engine.metrics is None:
        return tuple(_(label) for _field, label in METRICS)
    return tuple(_(label) for field, label in METRICS if getattr(engine.metrics, field) == "none")


def lifecycle_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """How a client disconnect propagates into each engine."""
    rows = []
    for engine in engines:
        cancel = engine.operations.cancellation if engine.operations else None
        if cancel is None:
            rows.append(_row(engine, _("On client disconnect"), _(UNKNOWN_TEXT), None))
            continue
        rows += [
            _row(engine, _("On client disconnect"), kb_word(cancel.on_disconnect), cancel),
            _row(engine, _("How"), _(cancel.how), cancel),
        ]
    return _frame(rows)


def security_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Bind address, API key coverage, open routes, CORS and inter-node traffic per engine (long format)."""
    rows = []
    for engine in engines:
        network, auth = engine.network, engine.auth
        ops = engine.operations
        if network is not None:
            bind = f"{network.default_host}:{network.default_port}" + (f" ({_(network.note)})" if network.note else "")
            rows.append(_row(engine, _("Default bind address"), bind, network))
        if auth is not None:
            spellings = list(auth.api_key_flags) + list(auth.api_key_env)
            rows += [
                _row(engine, _("API key"), _joined(spellings, N_("not supported")), auth),
                _row(engine, _("What the key guards"), _(auth.guards), auth),
                _row(engine, _("Reachable without the key"), _joined(auth.open_paths), auth),
            ]
        if ops is not None:
            cors, inter = ops.cors, ops.inter_node
            rows += [
                _row(engine, _("CORS default"), _(cors.default), cors),
                _row(engine, _("CORS settings"), _joined(list(cors.flags) + list(cors.env), N_("none (fixed)")) +
                     (f" — {_(cors.note)}" if cors.note else ""), cors),
                _row(engine, _("Inter-node traffic"), _(inter.mechanism), inter),
                _row(engine, _("Inter-node protection"), _(inter.protection), inter),
            ]
        if not rows or rows[-1]["Engine"] != engine.name:
            rows.append(_row(engine, _("Security"), _(UNKNOWN_TEXT), None))
    return _frame(rows)


def hardening_steps(engine: Engine) -> list[tuple[str, Sourced]]:
    """Concrete steps this engine's defaults call for, each with the fact it follows from."""
    steps: list[tuple[str, Sourced]] = []
    network, auth = engine.network, engine.auth
    ops = engine.operations
    if network is not None and network.default_host in {"0.0.0.0", "::"}:
        steps.append((_("It listens on every interface by default ({host}): bind it to 127.0.0.1 or a "
                        "private address and let only the proxy reach it.").format(host=network.default_host),
                      network))  # fmt: skip
    if auth is not None and not (auth.api_key_flags or auth.api_key_env):
        steps.append((_("It has no API key of its own: authenticate at the reverse proxy."), auth))
    if auth is not None and auth.open_paths:
        steps.append((_("Routes reachable without the key ({paths}): allow-list only the routes "
                        "clients need at the proxy and block the rest.").format(paths=_joined(auth.open_paths)),
                      auth))  # fmt: skip
    if ops is not None and ops.cors.any_origin_by_default is True:
        settings = list(ops.cors.flags) + list(ops.cors.env)
        how = (_("restrict it with {setting} or at the proxy").format(setting=settings[0]) if settings
               else _("override CORS headers at the proxy"))
        steps.append((_("Any browser origin may call it by default: {how}.").format(how=how), ops.cors))
    if ops is not None and engine.multi_gpu is not None and ops.inter_node.mechanism.split(";")[0] != "none":
        steps.append((_("Multi-host traffic is not protected by the engine: keep those ports on an isolated "
                        "network and firewall them from everything else."), ops.inter_node))  # fmt: skip
    return steps


__all__ = [
    "APP_MEASURES",
    "embeddings_table",
    "endpoints_table",
    "hardening_steps",
    "lacking_metrics",
    "lifecycle_table",
    "metrics_table",
    "practice_table",
    "security_table",
    "tool_calling_table",
]
