"""Tables and filters for the Engines page, built from the knowledge base (pandas only, no streamlit).

Each comparison value keeps the source it was read from and the version, so the page can show both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import get_args

import pandas as pd

from calculators.i18n import N_, _, translated_word
from knowledge.common import Sourced
from knowledge.currency import EngineCurrency
from knowledge.engines import (
    USABLE_STATUSES,
    Auth,
    Engine,
    HardwareBackend,
    Knob,
    OperatingSystem,
    Support,
    SupportList,
)
from knowledge.formats import FormatsSection
from knowledge.loader import load_knowledge
from knowledge.sources import source_url
from reports.tables import source_link

UNKNOWN_TEXT = N_("unknown")  # also the knowledge base's own word for it: compare untranslated
HARDWARE_OPTIONS: tuple[str, ...] = get_args(HardwareBackend)
OS_OPTIONS: tuple[str, ...] = get_args(OperatingSystem)
#: The names people know each hardware backend and operating system by (the slugs stay in links; translated
#: where shown). A test keeps them complete.
BACKEND_NAMES: dict[str, str] = {
    "cuda": N_("CUDA (NVIDIA)"), "rocm": N_("ROCm (AMD)"), "metal": N_("Metal (Apple)"), "vulkan": N_("Vulkan"),
    "cpu": N_("CPU"), "intel-xpu": N_("Intel XPU"), "sycl": N_("SYCL (Intel oneAPI)"), "tpu": N_("TPU (Google)"),
    "ascend-npu": N_("Ascend NPU (Huawei)"), "musa": N_("MUSA (Moore Threads)"), "opencl": N_("OpenCL"),
    "webgpu": N_("WebGPU"), "rpc": N_("RPC (remote devices)"),
}
OS_NAMES: dict[str, str] = {"linux": N_("Linux"), "macos": N_("macOS"), "windows": N_("Windows")}

#: How a support status reads in a table cell (translated where shown).
STATUS_TEXT = {"experimental": N_("experimental"), "via-plugin": N_("via plugin")}
CONVERT_FIRST = N_("convert first")
#: The words people read for the knowledge base's enumerated values (support statuses, multi-GPU modes, prefix
#: cache kinds, disconnect behaviours, benchmark kinds); the ids stay in the KB, links and JSON. A test keeps it
#: complete against the schema's Literal types.
KB_WORDS: dict[str, str] = {
    "native": N_("native"), "experimental": N_("experimental"), "via-plugin": N_("via plugin"),
    "convert-first": N_("convert first"), "not-supported": N_("not supported"), "unknown": N_("unknown"),
    "tensor": N_("tensor"), "pipeline": N_("pipeline"), "data": N_("data"), "expert": N_("expert"),
    "context": N_("context"), "layer-split": N_("layer split"), "row-split": N_("row split"),
    "replicas": N_("replicas"),
    "automatic-prefix-caching": N_("automatic prefix caching"), "radix-attention": N_("RadixAttention"),
    "hierarchical-cache": N_("hierarchical cache"), "slot-prompt-cache": N_("per-slot prompt cache"),
    "prompt-cache-lru": N_("LRU prompt cache"), "none": N_("none"),
    "aborts": N_("aborts the request"), "aborts-when-streaming": N_("aborts it when streaming"),
    "continues": N_("keeps generating"),
    "serving-load": N_("open-loop serving load"), "closed-loop-load": N_("closed-loop load"),
    "sequential-requests": N_("one request at a time"), "offline-throughput": N_("offline throughput"),
}


def kb_word(value: str) -> str:
    """An enumerated knowledge-base value in the reader's words (a value without a word is shown as it is)."""
    return translated_word(KB_WORDS, value)


def kb_words(values: Iterable[str]) -> str:
    """Enumerated values in the reader's words, comma-separated."""
    return ", ".join(kb_word(value) for value in values)


@dataclass(frozen=True)
class Cell:
    """One value of the comparison, with where it was read."""

    text: str
    source: str | None = None
    version: str | None = None
    read_on: str | None = None

    @property
    def link(self) -> str | None:
        """URL of the source at the version read, when it can be linked."""
        if self.source is None or self.version is None:
            return None
        return source_url(self.source, self.version)


def _cell(text: str, fact: Sourced | None) -> Cell:
    if fact is None:
        return Cell(UNKNOWN_TEXT)
    return Cell(text, fact.source, fact.verified.version, fact.verified.date.isoformat())


def item_name(item_id: str) -> str:
    """A backend, operating system, file format or quantization id as the name people know it by."""
    if item_id in BACKEND_NAMES:
        return _(BACKEND_NAMES[item_id])
    if item_id in OS_NAMES:
        return _(OS_NAMES[item_id])
    from reports.names import name_of  # the catalog's names (formats and quantizations)

    return name_of(load_knowledge(), item_id)


def name_with_note(name: str, note: str) -> str:
    """`name` followed by `note` in brackets; a name that already ends in brackets ("TPU (Google)") takes the note
    inside them ("TPU (Google, via plugin)") rather than a second pair."""
    if name.endswith(")") and "(" in name:
        return f"{name[:-1]}, {note})"
    return f"{name} ({note})"


def _support_text(support: SupportList | None, kind: str | None = None) -> str:
    """Usable items first, by name; experimental and plugin paths marked; nothing usable -> 'none found'."""
    if support is None:
        return _(UNKNOWN_TEXT)
    parts = []
    for item in support.items:
        if kind is not None and getattr(item, "kind", None) != kind:
            continue
        if item.status == "native":
            parts.append(item_name(item.id))
        elif item.status in USABLE_STATUSES:
            parts.append(name_with_note(item_name(item.id), _(STATUS_TEXT.get(item.status, item.status))))
        elif item.status == "convert-first":
            parts.append(name_with_note(item_name(item.id), _(CONVERT_FIRST)))
    return ", ".join(parts) or _("none found")


def availability_text(value: str) -> str:
    """A knowledge-base availability (yes / needs-flag / no / unknown) in the reader's words."""
    return _({"yes": N_("yes"), "needs-flag": N_("with a flag"), "no": N_("no")}.get(value, UNKNOWN_TEXT))


def _auth_text(auth: Auth) -> str:
    flags = ", ".join(auth.api_key_flags)
    return f"{flags}: {_(auth.guards)}" if flags else _(auth.guards)


def _metric_text(value: str) -> str:
    """A metric name as the engine exports it, or 'none' in the reader's words."""
    return kb_word(value) if value in ("none", "unknown") else value


def _exported_metric_text(value: str) -> str:
    """A metric's name as the engine exports it, or that it exports none: "not exported" (a bare "none" took the
    masculine "ninguno" in Spanish next to the feminine "métrica")."""
    return _("not exported") if value == "none" else _metric_text(value)


def _endpoints(engine: Engine) -> str:
    api = engine.http_api
    if api is None:
        return _(UNKNOWN_TEXT)
    names = {
        "chat": api.chat_completions,
        "completions": api.completions,
        "embeddings": api.embeddings,
        "rerank": api.rerank,
        "responses": api.responses,
        "anthropic messages": api.anthropic_messages,
    }
    flag = _("flag")
    shown = [name if value == "yes" else f"{name} ({flag})" for name, value in names.items() if value in OFFERED]
    return ", ".join(shown) or _("none")


@dataclass(frozen=True)
class Attribute:
    """A row of the comparison: a label, how to read it off one engine, and items citing their own source."""

    slug: str
    label: str
    read: Callable[[Engine], Cell]
    items: Callable[[Engine], Iterable[Support]] = lambda engine: ()
    #: What a line of a stacked cell starts with (COMPARISON_GROUPS), when shorter than the label.
    short: str | None = None


def _optional(
    getter: Callable[[Engine], Sourced | None], text: Callable[[Sourced], str]
) -> Callable[[Engine], Cell]:
    def read(engine: Engine) -> Cell:
        fact = getter(engine)
        return _cell(text(fact), fact) if fact is not None else Cell(_(UNKNOWN_TEXT))

    return read


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute("version", N_("Version read"), lambda e: _cell(e.latest_version_read.version, e.latest_version_read)),
    Attribute("license", N_("License"), lambda e: _cell(e.license.spdx, e.license)),
    Attribute(
        "hardware",
        N_("Hardware backends"),
        lambda e: _cell(_support_text(e.hardware), e.hardware),
        lambda e: e.hardware.items,
    ),
    Attribute(
        "os",
        N_("Operating systems"),
        lambda e: _cell(_support_text(e.operating_systems), e.operating_systems),
        lambda e: e.operating_systems.items,
    ),
    Attribute(
        "files",
        N_("File formats"),
        _optional(lambda e: e.formats, lambda f: _support_text(f, "file-format")),
        lambda e: [i for i in (e.formats.items if e.formats else ()) if i.kind == "file-format"],
    ),
    Attribute(
        "quant",
        N_("Quantizations"),
        _optional(lambda e: e.formats, lambda f: _support_text(f, "quantization")),
        lambda e: [i for i in (e.formats.items if e.formats else ()) if i.kind == "quantization"],
    ),
    Attribute(
        "api",
        N_("OpenAI-style endpoints"),
        lambda e: _cell(_endpoints(e), e.http_api) if e.http_api else Cell(UNKNOWN_TEXT),
    ),
    Attribute(
        "tools",
        N_("Tool calling"),
        _optional(
            lambda e: e.tool_calling,
            lambda t: availability_text(t.supported) + (f" ({', '.join(t.parser_flags)})" if t.parser_flags else ""),
        ),
    ),
    Attribute(
        "structured",
        N_("Structured output"),
        _optional(lambda e: e.structured_output, lambda s: availability_text(s.supported)),
    ),
    Attribute(
        "metrics",
        N_("Metrics endpoint"),
        _optional(lambda e: e.metrics, lambda m: f"{_metric_text(m.endpoint)} ({_(m.enabled_by)})"),
    ),
    Attribute("ttft", N_("TTFT metric"),
              _optional(lambda e: e.metrics, lambda m: _exported_metric_text(m.time_to_first_token)), short=N_("TTFT")),
    Attribute("queue", N_("Queue-time metric"),
              _optional(lambda e: e.metrics, lambda m: _exported_metric_text(m.queue_time)), short=N_("queue time")),
    Attribute("kv_usage", N_("KV-usage metric"),
              _optional(lambda e: e.metrics, lambda m: _exported_metric_text(m.kv_cache_usage)), short=N_("KV usage")),
    Attribute(
        "auth",
        N_("API key guards"),
        _optional(lambda e: e.auth, _auth_text),
    ),
    Attribute(
        "bind",
        N_("Default bind"),
        _optional(lambda e: e.network, lambda n: f"{n.default_host}:{n.default_port}"),
    ),
    Attribute(
        "prefix",
        N_("Prefix caching"),
        _optional(
            lambda e: e.prefix_caching,
            lambda p: kb_words(p.kinds) + {True: _(" (on by default)"), False: _(" (off)")}.get(p.on_by_default, ""),
        ),
    ),
    Attribute(
        "multi_gpu", N_("Multi-GPU modes"), _optional(lambda e: e.multi_gpu, lambda m: kb_words(m.modes) or _("none"))
    ),
    Attribute(
        "multi_model",
        N_("Several models per server"),
        _optional(lambda e: e.multi_model, lambda m: availability_text(m.supported)),
    ),
)



@dataclass(frozen=True)
class AttributeGroup:
    """Related attributes drawn as one table of the comparison, one row per engine.

    Each column is one attribute (by slug), or several stacked in one cell a line each (`stacked`, headed
    `stacked_label`): three metric names side by side do not fit a 1024 px window, one under another do.
    """

    title: str
    columns: tuple[str, ...]
    stacked: tuple[str, ...] = ()
    stacked_label: str | None = None


#: The comparison's attributes in groups, each a table with one row per engine. With engines as columns the table
#: grew a column per engine and scrolled sideways at 1024 px from two engines on (SGLang's column behind the
#: scroll); with engines as rows a table is as wide as its few attributes, whatever the number of engines.
#: Every attribute is in exactly one group (a test checks it).
COMPARISON_GROUPS: tuple[AttributeGroup, ...] = (
    AttributeGroup(N_("Release and license"), ("version", "license")),
    AttributeGroup(N_("Where it runs"), ("hardware", "os")),
    AttributeGroup(N_("What it loads"), ("files", "quant")),
    AttributeGroup(N_("API"), ("api", "tools")),
    AttributeGroup(N_("Serving"), ("structured", "multi_model", "prefix")),
    AttributeGroup(N_("Metrics"), ("metrics",), ("ttft", "queue", "kv_usage"), N_("Latency and cache metrics")),
    AttributeGroup(N_("Network and access"), ("bind", "auth")),
    AttributeGroup(N_("Several GPUs"), ("multi_gpu",)),
)


def row_name(name: str) -> str:
    """An engine's name as the first cell of a row, its gloss on a line of its own: "llama.cpp" over "(llama-server)".

    The page draws such names unwrapped (ui/markup.show_wide_table's one_line_names): wrapped, a narrow column broke
    "(llama-" / "server)"; on one line the column is ~65 px wider than with the gloss under the name.
    """
    return name.replace(" (", "\n(")


def _shown_text(attribute: Attribute, engine: Engine) -> str:
    """The attribute's value for the engine as the reader's table shows it ('unknown' in their language)."""
    text = attribute.read(engine).text
    return _(text) if text == UNKNOWN_TEXT else text


def _stacked_text(attributes: Sequence[Attribute], engine: Engine) -> str:
    """Several attributes of one engine in one cell, a line each ("TTFT: vllm:..."); one word when all agree."""
    texts = [_shown_text(attribute, engine) for attribute in attributes]
    if texts == [_("not exported")] * len(texts):
        return _("none exported")  # a plural for the column's metrics ("no se exporta ninguna")
    if len(set(texts)) == 1:
        return texts[0]
    return "\n".join(f"{_(attribute.short or attribute.label)}: {text}"
                      for attribute, text in zip(attributes, texts, strict=True))


def comparison_groups(engines: Sequence[Engine]) -> list[tuple[str, pd.DataFrame]]:
    """The comparison as COMPARISON_GROUPS tables: (group title, one row per engine with its name first), both in
    the reader's language."""
    by_slug = {attribute.slug: attribute for attribute in ATTRIBUTES}
    names = [row_name(engine.name) for engine in engines]
    tables = []
    for group in COMPARISON_GROUPS:
        data: dict[str, list[str]] = {_("Engine"): names}
        for slug in group.columns:
            data[_(by_slug[slug].label)] = [_shown_text(by_slug[slug], engine) for engine in engines]
        if group.stacked:
            stacked = [by_slug[slug] for slug in group.stacked]
            data[_(group.stacked_label or "")] = [_stacked_text(stacked, engine) for engine in engines]
        tables.append((_(group.title), pd.DataFrame(data)))
    return tables


# --------------------------------------------------------------------------------------- filtering
OFFERED = frozenset({"yes", "needs-flag"})


def _offers(section: str, field: str) -> Callable[[Engine], bool]:
    """Predicate: the engine's `section.field` is available, with or without a launch flag."""

    def test(engine: Engine) -> bool:
        part = getattr(engine, section)
        return part is not None and getattr(part, field) in OFFERED

    return test


def _metric(*fields: str) -> Callable[[Engine], bool]:
    """Predicate: the engine exports every named metric (not 'none' or 'unknown')."""

    def test(engine: Engine) -> bool:
        return engine.metrics is not None and all(
            getattr(engine.metrics, field) not in ("none", UNKNOWN_TEXT) for field in fields
        )

    return test


def _gpu_mode(mode: str) -> Callable[[Engine], bool]:
    return lambda engine: engine.multi_gpu is not None and mode in engine.multi_gpu.modes


def _api_key(engine: Engine) -> bool:
    return engine.auth is not None and bool(engine.auth.api_key_flags)


def _prefix_cache(engine: Engine) -> bool:
    return engine.prefix_caching is not None and bool(set(engine.prefix_caching.kinds) - {"none", "unknown"})


#: Feature filter: slug -> (label, test). A feature counts when the engine has it, with or without a flag.
FEATURES: dict[str, tuple[str, Callable[[Engine], bool]]] = {
    "openai-chat": (N_("OpenAI chat completions"), _offers("http_api", "chat_completions")),
    "embeddings": (N_("Embeddings endpoint"), _offers("http_api", "embeddings")),
    "rerank": (N_("Rerank endpoint"), _offers("http_api", "rerank")),
    "responses-api": (N_("Responses API"), _offers("http_api", "responses")),
    "tool-calling": (N_("Tool calling"), _offers("tool_calling", "supported")),
    "structured-output": (N_("Structured output"), _offers("structured_output", "supported")),
    "prometheus-metrics": (N_("Prometheus metrics"), _metric("endpoint")),
    "latency-histograms": (N_("TTFT and queue-time metrics"), _metric("time_to_first_token", "queue_time")),
    "api-key": (N_("API key"), _api_key),
    "prefix-caching": (N_("Prefix caching"), _prefix_cache),
    "tensor-parallel": (N_("Tensor parallelism"), _gpu_mode("tensor")),
    "pipeline-parallel": (N_("Pipeline parallelism"), _gpu_mode("pipeline")),
    "data-parallel": (N_("Data parallel replicas"), _gpu_mode("data")),
    "multi-model": (N_("Several models per server"), _offers("multi_model", "supported")),
}


def format_options(engines: Iterable[Engine], formats: FormatsSection | None = None) -> tuple[str, ...]:
    """Format / quantization ids to filter on: the formats matrix's columns when given (every engine has a
    cell for each), else every id any engine's own list names, in first-seen order."""
    if formats is not None:
        return tuple(column.id for column in formats.columns)
    seen: dict[str, None] = {}
    for engine in engines:
        for item in engine.formats.items if engine.formats else ():
            seen.setdefault(item.id, None)
    return tuple(seen)


def matches(
    engine: Engine,
    *,
    hardware: Sequence[str] = (),
    systems: Sequence[str] = (),
    formats: Sequence[str] = (),
    features: Sequence[str] = (),
    matrix: FormatsSection | None = None,
) -> bool:
    """True when the engine can use every selected backend, OS and format, and has every feature.

    "Can use" means native, experimental or via a plugin; convert-first and unknown do not count. With the
    formats `matrix`, a format is read from its cell on each selected backend (a cell may accept a
    quantization on CUDA and refuse it on ROCm), the same reading the Formats page and the wizard use.
    """
    if any(engine.hardware.status_of(item) not in USABLE_STATUSES for item in hardware):
        return False
    if any(engine.operating_systems.status_of(item) not in USABLE_STATUSES for item in systems):
        return False
    if matrix is not None:
        return all(_usable_in_matrix(matrix, engine, item, hardware) for item in formats) and all(
            FEATURES[slug][1](engine) for slug in features
        )
    if formats and engine.formats is None:
        return False
    if any(engine.formats.status_of(item) not in USABLE_STATUSES for item in formats):
        return False
    return all(FEATURES[slug][1](engine) for slug in features)


def _usable_in_matrix(matrix: FormatsSection, engine: Engine, column: str, backends: Sequence[str]) -> bool:
    cell = matrix.cell(engine.id, column)
    if cell is None:
        return False
    readings = [cell.on_hardware((b,)) for b in backends] if backends else [cell.on_hardware(None)]
    return all(reading.status in USABLE_STATUSES for reading in readings)


def currency_table(currencies: Sequence[EngineCurrency], names: dict[str, str]) -> pd.DataFrame:
    """Per engine: the oldest version a fact still rests on, the KB's newest read, and the facts counted."""
    return pd.DataFrame(
        {
            _("Engine"): [names.get(c.engine, c.engine) for c in currencies],
            _("Facts read at"): [c.oldest_read for c in currencies],
            _("KB's newest read"): [c.newest_read for c in currencies],
            _("Facts from its repository"): [c.facts for c in currencies],
            _("Older than the newest read"): [len(c.older) for c in currencies],
            _("Docs or commits that cannot be ordered"): [len(c.unordered) for c in currencies],
        }
    )


# ----------------------------------------------------------------------------------------- tables
def comparison_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """Attributes as rows, one column per engine, plain text values ('unknown' where not established)."""
    data = {engine.name: [attribute.read(engine).text for attribute in ATTRIBUTES] for engine in engines}
    return pd.DataFrame(data, index=[_(attribute.label) for attribute in ATTRIBUTES])


def sources_table(engines: Sequence[Engine]) -> pd.DataFrame:
    """One row per (attribute, engine): value, source link and the version and day it was read."""
    rows = []
    for attribute in ATTRIBUTES:
        for engine in engines:
            cells = [(_(attribute.label), attribute.read(engine))]
            cells += [
                (f"{_(attribute.label)}: {item_name(item.id)}",
                 _cell(f"{kb_word(item.status)}: {_(item.note) if item.note else ''}".rstrip(": "), item))
                for item in attribute.items(engine)
                if item.source is not None
            ]
            rows += [
                {
                    _("Attribute"): label,
                    _("Engine"): engine.name,
                    _("Value"): cell.text,
                    _("Source"): cell.link or cell.source or "",
                    _("Version read"): cell.version or _(UNKNOWN_TEXT),
                    _("Read on"): cell.read_on or "",
                }
                for label, cell in cells
            ]
    return pd.DataFrame(rows)


def _default_text(knob: Knob) -> str:
    if knob.default is None:
        return _("unset")
    if isinstance(knob.default, bool):
        return _("on") if knob.default else _("off")
    return str(knob.default)


def knob_table(engine: Engine) -> pd.DataFrame:
    """The engine's knobs: how to write them, default (and how it is computed), unit, effect, source."""
    rows = []
    for knob in engine.knobs:
        spellings = list(knob.flags) + list(knob.negative_flags) + list(knob.env)
        if knob.api_option:
            spellings.append(_("request: {option}").format(option=knob.api_option))
        rows.append(
            {
                _("Setting"): knob.key,
                _("Flags / env"): ", ".join(spellings),
                _("Takes"): _("value") if knob.takes_value else _("switch"),
                _("Default"): _default_text(knob),
                _("Default rule"): _(knob.default_rule) if knob.default_rule else "",
                _("Unit"): _(knob.unit) if knob.unit else "",
                _("Controls"): _(knob.controls) if knob.controls else "",
                _("Source"): source_url(knob.source, knob.verified.version) or knob.source,
                _("Version read"): knob.verified.version,
            }
        )
    return pd.DataFrame(rows)


def points_markdown(engine: Engine) -> str:
    """Strengths and limits as a Markdown list: each point in full (a table cell cut them mid-sentence), then the
    brief's idea numbers and a link to its source at the version read."""
    lines = []
    link_text = _("source")
    for kind, points in ((N_("strength"), engine.strengths), (N_("limit"), engine.limits)):
        for point in points:
            url = source_url(point.source, point.verified.version)
            source = f"[{link_text}]({url})" if url else point.source
            ideas = ", ".join(str(i) for i in point.ideas)
            where = _("ideas {ideas}; {source}, {version}").format(ideas=ideas, source=source,
                                                                   version=point.verified.version)
            lines.append(f"- **{_(kind).capitalize()}:** {_(point.text)} ({where})")
    return "\n".join(lines)


__all__ = [
    "ATTRIBUTES",
    "BACKEND_NAMES",
    "COMPARISON_GROUPS",
    "FEATURES",
    "HARDWARE_OPTIONS",
    "OS_NAMES",
    "OS_OPTIONS",
    "availability_text",
    "comparison_groups",
    "comparison_table",
    "format_options",
    "kb_word",
    "kb_words",
    "knob_table",
    "matches",
    "points_markdown",
    "sources_table",
]


def linked_sources(table: pd.DataFrame, link_text: str | None = None) -> pd.DataFrame:
    """`table` with its Source URLs as links reading `link_text` (default: the URL's last two path parts, e.g.
    vllm/arg_utils.py); a source that is not a URL (a repository path) stays as text."""
    column = _("Source")
    return table.assign(**{column: [source_link(v, link_text, path_parts=2) for v in table[column]]})
