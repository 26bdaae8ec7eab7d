"""Every text a person reads on a page run in AppTest, and a test of whether a text is still English.

`page_texts(at)` walks the rendered element tree: headings, markdown and captions, alerts, widget labels,
help, placeholders and options, metric labels, expander and tab labels, dataframe column names and text
cells, and the plotly figures' titles, axis titles, legend names, annotations and hover templates (from
the chart element's JSON). Code blocks are commands and are not collected.

`english_words(text)` returns the English-only words of a text after removing what is the same in every
language (code spans, URLs, flags, file names, model and GPU names, placeholders). A text with none is
taken as translated; the stop list holds words Spanish never uses, so a Spanish sentence yields none.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from tests.support.markdown_tables import parse_markdown_table, table_text
from ui.uploads import STYLE_CLASS

#: Words of English that do not occur in Spanish text (nor in the names servewise shows).
ENGLISH_ONLY = frozenset(
    [
        "the", "and", "of", "with", "when", "is", "are", "per", "this", "that", "these", "those", "which",
        "what", "who", "how", "why", "where", "there", "their", "they", "your", "you", "we", "our", "it", "its",
        "be", "been", "being", "was", "were", "will", "would", "should", "could", "can", "cannot", "can't",
        "does", "doesn't", "don't", "not", "only", "than", "then", "into", "from", "for", "on", "at", "by",
        "to", "or", "if", "but", "as", "an", "each", "every", "any", "all", "some", "more", "most", "less",
        "fewer", "many", "much", "same", "other", "have", "had", "do", "did", "done", "use", "used", "uses",
        "using", "shows", "show", "shown", "see", "read", "gives", "give", "given", "takes", "take", "make",
        "makes", "made", "need", "needs", "needed", "fit", "fits", "fitting", "here", "also", "both", "either",
        "between", "without", "within", "after", "before", "while", "until", "since", "over", "under", "about",
        "across", "through", "against", "estimate", "estimated", "default", "defaults", "choose", "chosen",
        "pick", "set", "sets", "setting", "settings", "memory", "engine", "engines", "model", "models",
        "request", "requests", "queue", "queued", "waiting", "weights", "share", "shares", "shared", "limit",
        "limits", "context", "window", "length", "output", "answer", "answers", "price", "cost", "costs",
        "hour", "hours", "month", "day", "second", "seconds", "minute", "minutes", "page", "pages", "link",
        "links", "table", "tables", "chart", "charts", "value", "values", "number", "numbers", "time", "times",
        "size", "free", "used", "left", "rate", "rates", "load", "point", "points", "run", "runs", "running",
        "start", "starts", "started", "check", "checks", "checked", "compare", "compared", "plans", "planned",
        "result", "results", "none", "yes",
    ]
)

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
#: Text quoted as the engine or a tool prints it: 'KV Cache is allocated', "Maximum concurrency".
_QUOTED = re.compile(r"(?<!\w)'[^'\n]+'(?!\w)|\"[^\"\n]+\"")
_URL = re.compile(r"https?://\S+|www\.\S+|\b[\w.-]+\.(?:com|org|io|ai|md|py|yaml|json|gguf|log|txt|csv)\b")
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_PLACEHOLDER = re.compile(r"%\{[^}]*\}|\{[^{}]*\}|<[^<>]*>")
#: A command line as typed (a placeholder or an example): the same in every language.
_COMMAND = re.compile(r"^\s*(?:llama-server|llama-cli|vllm serve|python3? -m|ollama|mlx_lm\.\w+|sglang)\b.*$", re.M)
#: code words joined by _ . / : - or | (a flag's alternatives: none|mean|cls)
_IDENTIFIER = re.compile(r"\b\w+(?:[_./:|-]\w+)+\b")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")

#: Element types whose `.value` is prose (AppTest names).
_PROSE = ("title", "header", "subheader", "markdown", "caption", "error", "warning", "info", "success", "toast")


@dataclass(frozen=True)
class PageText:
    """One text on a page: where it is (element kind) and the text."""

    where: str
    text: str


def _strip(text: str, names: frozenset[str]) -> str:
    text = _CODE_SPAN.sub(" ", text)
    text = _COMMAND.sub(" ", text)
    text = _QUOTED.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _PLACEHOLDER.sub(" ", text)
    text = _FLAG.sub(" ", text)
    text = _IDENTIFIER.sub(" ", text)
    for name in sorted(names, key=len, reverse=True):
        if name:
            text = text.replace(name, " ")
    return text


def english_words(text: str, names: frozenset[str] = frozenset()) -> list[str]:
    """English-only words left in `text` once code, URLs, flags, identifiers and `names` are removed."""
    return [word for word in _WORD.findall(_strip(text, names)) if word.lower() in ENGLISH_ONLY]


def _figure_texts(spec: dict) -> list[PageText]:
    found: list[PageText] = []
    layout = spec.get("layout", {})

    def title_of(value) -> str | None:
        if isinstance(value, dict):
            return value.get("text")
        return value if isinstance(value, str) else None

    if text := title_of(layout.get("title")):
        found.append(PageText("chart title", text))
    for key, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and isinstance(axis, dict):
            if text := title_of(axis.get("title")):
                found.append(PageText("chart axis", text))
            for tick in axis.get("ticktext") or []:
                found.append(PageText("chart tick", str(tick)))
    legend = layout.get("legend", {})
    if isinstance(legend, dict) and (text := title_of(legend.get("title"))):
        found.append(PageText("chart legend title", text))
    for note in layout.get("annotations", []) or []:
        if isinstance(note, dict) and note.get("text"):
            found.append(PageText("chart annotation", str(note["text"])))
    for trace in spec.get("data", []):
        if trace.get("name") and trace.get("showlegend", True) is not False:
            found.append(PageText("chart legend", str(trace["name"])))
        if trace.get("hovertemplate"):
            found.append(PageText("chart hover", str(trace["hovertemplate"])))
        texts = trace.get("text")
        for text in texts if isinstance(texts, list) else [texts] if isinstance(texts, str) else []:
            found.append(PageText("chart text", str(text)))
        for key in ("x", "y"):
            values = trace.get(key)
            if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
                found.extend(PageText("chart category", v) for v in values)
    return found


def _dataframe_texts(frame) -> list[PageText]:
    found = [PageText("table column", str(column)) for column in frame.columns]
    found += [PageText("table index name", str(name)) for name in frame.index.names if name]
    found += [PageText("table row", label) for label in frame.index if isinstance(label, str)]
    for column in range(frame.shape[1]):
        found += [PageText("table cell", value) for value in frame.iloc[:, column] if isinstance(value, str)]
    return found


def _svg_texts(svg: str) -> list[PageText]:
    """The words of an inline SVG chart (reports/svg_charts.py): labels, legend, axis titles, hover texts."""
    root = ElementTree.fromstring(svg)
    return [PageText("chart text", element.text) for element in root.iter()
            if element.tag.rsplit("}", 1)[-1] in ("text", "tspan", "title") and element.text]


def _markdown_texts(kind: str, value: str) -> list[PageText]:
    """A Markdown element's text; a Markdown table (reports/tables.py) cell by cell, as a dataframe is."""
    if value.lstrip().startswith(("<svg", '<div class="sw-chart">')):  # ui/svg.show_svg
        return _svg_texts(value[value.index("<svg"):value.rindex("</svg>") + len("</svg>")])
    if value.startswith(f'<style class="{STYLE_CLASS}">'):  # ui/uploads: the texts it draws on an uploader
        return [PageText("uploader text", text) for text in re.findall(r'content: "((?:[^"\\]|\\.)*)"', value)]
    if (table := table_text(value)) is not None:
        with contextlib.suppress(ValueError):
            return _dataframe_texts(parse_markdown_table(table))
    return [PageText(kind, value)]


def _walk(node, found: list[PageText]) -> None:
    kind = getattr(node, "type", "")
    proto = getattr(node, "proto", None)
    if kind == "markdown":
        found += _markdown_texts(kind, str(node.value))
    elif kind in _PROSE:
        found.append(PageText(kind, str(node.value)))
    elif kind == "metric":
        found += [PageText("metric label", node.label), PageText("metric value", str(node.value))]
        if getattr(proto, "help", ""):
            found.append(PageText("metric help", proto.help))
    elif kind in ("expandable", "tab"):
        found.append(PageText(f"{kind} label", str(getattr(node, "label", "") or "")))
    elif kind in ("arrow_data_frame", "arrow_table", "dataframe", "table"):
        with contextlib.suppress(Exception):  # an element without a frame value
            found += _dataframe_texts(node.value)
    elif proto is not None and hasattr(proto, "label") and kind not in ("code",):
        found.append(PageText(f"{kind} label", str(proto.label)))
        for field in ("help", "placeholder"):
            if getattr(proto, field, ""):
                found.append(PageText(f"{kind} {field}", str(getattr(proto, field))))
        for option in getattr(proto, "options", []) or []:
            content = getattr(option, "content", option)
            found.append(PageText(f"{kind} option", str(content)))
    for child in getattr(node, "children", {}).values():
        _walk(child, found)


def page_texts(at) -> list[PageText]:
    """Every text a person reads on the page AppTest `at` has run (charts included)."""
    found: list[PageText] = []
    _walk(at._tree, found)
    for node in _unknown_elements(at._tree):
        if node.proto.WhichOneof("type") == "plotly_chart" and node.proto.plotly_chart.spec:
            found += _figure_texts(json.loads(node.proto.plotly_chart.spec))
    return [text for text in found if text.text.strip()]


def _unknown_elements(node) -> list:
    found = []
    proto = getattr(node, "proto", None)
    if proto is not None and getattr(proto, "DESCRIPTOR", None) is not None and proto.DESCRIPTOR.name == "Element":
        found.append(node)
    for child in getattr(node, "children", {}).values():
        found += _unknown_elements(child)
    return found


def page_script(page: Path, lang: str) -> str:
    """A script AppTest runs: set the language as app.py does, then run the page as Streamlit would."""
    return (
        "import runpy\n"
        "from calculators.i18n import set_language\n"
        f"set_language({lang!r})\n"
        f"runpy.run_path({str(page)!r}, run_name='__main__')\n"
    )
