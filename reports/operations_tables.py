"""Tables for the Operations page, built from the knowledge base (pandas only, no streamlit).

Every row carries the source its value was read from, linked at the version read, so the page never
shows a value without where it comes from. A section the engine lacks reads `not supported`, and one
the knowledge base has no record of reads `unknown`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from knowledge.common import Sourced
from knowledge.engines import Engine
from knowledge.sources import source_url

UNKNOWN_TEXT = "unknown"
ENDPOINTS = (
    ("chat_completions", "/v1/chat/completions"),
    ("completions", "/v1/completions"),
    ("embeddings", "/v1/embeddings"),
    ("rerank", "rerank"),
    ("responses", "/v1/responses"),
)
METRICS = (
    ("queue_time", "Queue time"),
    ("time_to_first_token", "Time to first token"),
    ("inter_token_latency", "Inter-token latency"),
    ("e2e_latency", "End-to-end latency"),
    ("requests_running", "Requests running"),
    ("requests_waiting", "Requests waiting"),
    ("kv_cache_usage", "KV cache usage"),
)
#: What no engine metric can see: the application measures these itself (product brief, idea 13).
APP_MEASURES = (
    ("Network", "client ↔ gateway ↔ engine time, TLS and proxy overhead, dropped connections"),
    ("Retrieval", "embedding calls, vector search and reranking before the prompt reaches the engine"),
    ("Tools", "time spent running tool calls between model turns, and their failures"),
    ("Client-side queueing", "requests held by a gateway, rate limiter or a client pool before they are sent"),
    ("Accepted work", "requests completed within the latency target, not just requests sent"),
    ("Errors", "HTTP errors, timeouts, rejected requests (e.g. a full queue) and truncated outputs"),
)
SOURCE_COLUMN = "Source"
VERSION_COLUMN = "Version read"


def _row(engine: Engine, what: str, value: str, fact: Sourced | None) -> dict[str, str]:
    """One long-format row: engine, what, value and the source link with the version read."""
    if fact is None:
        return {"Engine": engine.name, "What": what, "Value": value, SOURCE_COLUMN: "", VERSION_COLUMN: UNKNOWN_TEXT}
    link = source_url(fact.source, fact.verified.version) or fact.source
    return {"Engine": engine.name, "What": what, "Value": value, SOURCE_COLUMN: link,
            VERSION_COLUMN: fact.verified.version}  # fmt: skip


def _joined(values: Sequence[str], empty: str = "none") -> str:
    return ", ".join(values) if values else empty


def _frame(rows: list[dict[str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["Engine", "What", "Value", SOURCE_COLUMN, VERSION_COLUMN])


def endpoints_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """One row per engine: availability of each OpenAI-style endpoint, with source and version."""
    rows = []
    for engine in engines:
        api = engine.http_api
        row = {"Engine": engine.name}
        for field, label in ENDPOINTS:
            row[label] = getattr(api, field) if api else UNKNOWN_TEXT
        row[SOURCE_COLUMN] = (source_url(api.source, api.verified.version) or api.source) if api else ""
        row[VERSION_COLUMN] = api.verified.version if api else UNKNOWN_TEXT
        row["Other routes"] = _joined(api.other) if api else UNKNOWN_TEXT
        rows.append(row)
    return pd.DataFrame(rows)


def practice_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Where chat templates, sampling defaults and output limits come from, per engine (long format)."""
    rows = []
    for engine in engines:
        ops = engine.operations
        if ops is None:
            rows.append(_row(engine, "Templates and sampling", UNKNOWN_TEXT, None))
            continue
        template, sampling = ops.chat_template, ops.sampling
        rows += [
            _row(engine, "Chat template", template.default, template),
            _row(engine, "Template flags", _joined(template.flags, "none (see note)") +
                 (f" — {template.note}" if template.note else ""), template),
            _row(engine, "Sampling defaults come from", sampling.defaults_from, sampling),
            _row(engine, "Engine's own sampling defaults", sampling.engine_defaults, sampling),
            _row(engine, "Output limit when max_tokens is unset", sampling.default_max_output, sampling),
            _row(engine, "Sampling flags", _joined(sampling.flags), sampling),
        ]
    return _frame(rows)


def tool_calling_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Tool calling and structured output per engine: whether, which parser flags, which parsers."""
    rows = []
    for engine in engines:
        calling, structured = engine.tool_calling, engine.structured_output
        if calling is None:
            rows.append(_row(engine, "Tool calling", UNKNOWN_TEXT, None))
        else:
            rows += [
                _row(engine, "Tool calling", calling.supported, calling),
                _row(engine, "Parser flags", _joined(calling.parser_flags, "none: chosen from the model"), calling),
                _row(engine, "Parsers (sample)", _joined(calling.parsers, "not listed"), calling),
            ]
            if calling.note:
                rows.append(_row(engine, "Note", calling.note, calling))
        if structured is not None:
            rows.append(_row(engine, f"Structured output ({structured.supported})", structured.how, structured))
    return _frame(rows)


def embeddings_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Embeddings: availability, pooling, normalisation, output dimension and the flags that set them."""
    rows = []
    for engine in engines:
        config = engine.operations.embeddings if engine.operations else None
        if config is None:
            rows.append(_row(engine, "Embeddings", UNKNOWN_TEXT, None))
            continue
        if config.supported == "no":
            rows.append(_row(engine, "Embeddings", "not supported", config))
            continue
        rows += [
            _row(engine, f"Embeddings ({config.supported})", _joined(config.flags, "no flag needed"), config),
            _row(engine, "Pooling", config.pooling, config),
            _row(engine, "Normalisation", config.normalisation, config),
            _row(engine, "Output dimension", config.dimensions, config),
        ]
        if engine.http_api is not None:
            rows.append(_row(engine, "Rerank endpoint", engine.http_api.rerank, engine.http_api))
    return _frame(rows)


def metrics_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """One row per engine: metrics endpoint, how to enable it and the metric name for each latency."""
    rows = []
    for engine in engines:
        metrics = engine.metrics
        row = {"Engine": engine.name}
        row[SOURCE_COLUMN] = (source_url(metrics.source, metrics.verified.version) or metrics.source) if metrics else ""
        row[VERSION_COLUMN] = metrics.verified.version if metrics else UNKNOWN_TEXT
        row["Endpoint"] = metrics.endpoint if metrics else UNKNOWN_TEXT
        row["Enabled by"] = metrics.enabled_by if metrics else UNKNOWN_TEXT
        for field, label in METRICS:
            value = getattr(metrics, field) if metrics else UNKNOWN_TEXT
            row[label] = "— lacks it" if value == "none" else value
        row["Note"] = metrics.note if metrics else ""
        rows.append(row)
    return pd.DataFrame(rows)


def lacking_metrics(engine: Engine) -> tuple[str, ...]:
    """Labels of the latency metrics this engine does not export (all of them when it has no metrics)."""
    if engine.metrics is None:
        return tuple(label for _, label in METRICS)
    return tuple(label for field, label in METRICS if getattr(engine.metrics, field) == "none")


def lifecycle_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """How a client disconnect propagates into each engine."""
    rows = []
    for engine in engines:
        cancel = engine.operations.cancellation if engine.operations else None
        if cancel is None:
            rows.append(_row(engine, "On client disconnect", UNKNOWN_TEXT, None))
            continue
        rows += [
            _row(engine, "On client disconnect", cancel.on_disconnect, cancel),
            _row(engine, "How", cancel.how, cancel),
        ]
    return _frame(rows)


def security_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Bind address, API key coverage, open routes, CORS and inter-node traffic per engine (long format)."""
    rows = []
    for engine in engines:
        network, auth = engine.network, engine.auth
        ops = engine.operations
        if network is not None:
            bind = f"{network.default_host}:{network.default_port}" + (f" ({network.note})" if network.note else "")
            rows.append(_row(engine, "Default bind address", bind, network))
        if auth is not None:
            spellings = list(auth.api_key_flags) + list(auth.api_key_env)
            rows += [
                _row(engine, "API key", _joined(spellings, "not supported"), auth),
                _row(engine, "What the key guards", auth.guards, auth),
                _row(engine, "Reachable without the key", _joined(auth.open_paths), auth),
            ]
        if ops is not None:
            cors, inter = ops.cors, ops.inter_node
            rows += [
                _row(engine, "CORS default", cors.default, cors),
                _row(engine, "CORS settings", _joined(list(cors.flags) + list(cors.env), "none (fixed)") +
                     (f" — {cors.note}" if cors.note else ""), cors),
                _row(engine, "Inter-node traffic", inter.mechanism, inter),
                _row(engine, "Inter-node protection", inter.protection, inter),
            ]
        if not rows or rows[-1]["Engine"] != engine.name:
            rows.append(_row(engine, "Security", UNKNOWN_TEXT, None))
    return _frame(rows)


def hardening_steps(engine: Engine) -> list[tuple[str, Sourced]]:
    """Concrete steps this engine's defaults call for, each with the fact it follows from."""
    steps: list[tuple[str, Sourced]] = []
    network, auth = engine.network, engine.auth
    ops = engine.operations
    if network is not None and network.default_host in {"0.0.0.0", "::"}:
        steps.append((f"It listens on every interface by default ({network.default_host}): bind it to 127.0.0.1 or a "
                      "private address and let only the proxy reach it.", network))  # fmt: skip
    if auth is not None and not (auth.api_key_flags or auth.api_key_env):
        steps.append(("It has no API key of its own: authenticate at the reverse proxy.", auth))
    if auth is not None and auth.open_paths:
        steps.append((f"Routes reachable without the key ({_joined(auth.open_paths)}): allow-list only the routes "
                      "clients need at the proxy and block the rest.", auth))  # fmt: skip
    if ops is not None and ops.cors.any_origin_by_default is True:
        settings = list(ops.cors.flags) + list(ops.cors.env)
        how = f"restrict it with {settings[0]} or at the proxy" if settings else "override CORS headers at the proxy"
        steps.append((f"Any browser origin may call it by default: {how}.", ops.cors))
    if ops is not None and engine.multi_gpu is not None and ops.inter_node.mechanism.split(";")[0] != "none":
        steps.append(("Multi-host traffic is not protected by the engine: keep those ports on an isolated network "
                      "and firewall them from everything else.", ops.inter_node))  # fmt: skip
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
