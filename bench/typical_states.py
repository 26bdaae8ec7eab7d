"""The state a user would typically share for each page, and the element that is its main result.

Both speed benches read this table: bench_page_reruns reruns each page in its state (AppTest) and
bench_shared_link opens each state as a link in Chromium and stops the clock when the main result is
on screen. Pages are discovered from app.py (tests/support/page_discovery.py); a page without an entry
here makes both benches fail (`missing_pages`), so a page added later is measured from the day it lands.

Not a bench: `make bench` runs every bench/bench_*.py; this module only defines data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.page_discovery import REPO_ROOT, app_pages

#: The log a user pastes on the check page (not kept in links: a rerun state only).
RECONCILE_LOG = REPO_ROOT / "tests" / "data" / "logs" / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log"


@dataclass(frozen=True)
class TypicalState:
    """One page's typical shared state: URL parameters, typed values links do not carry, and its main result."""

    query: dict[str, str | list[str]]
    #: CSS selector (Playwright) of the result a user opens the link for, and text it must contain ("" = any).
    main_result: str
    main_text: str = ""
    #: Widget values a user types or pastes that links do not keep (session state, for reruns only).
    typed: dict[str, str] = field(default_factory=dict)


SUCCESS = '[data-testid="stAlertContentSuccess"]'
MARKDOWN_TABLE = '[data-testid="stMarkdown"] table'  # also inside ui/markup.show_wide_table's box
#: The memory page's side-by-side bars: an inline SVG (reports/svg_charts.py), no longer a plotly chart.
MEMORY_BARS = '[data-testid="stMarkdown"] svg.memory-bars rect'

TYPICAL_STATES: dict[str, TypicalState] = {
    # The request-state figures are a Markdown table (pages/home.py), no longer four st.metric.
    "home.py": TypicalState(
        {"home_connections": "40", "home_active": "4"},
        '[data-testid="stMarkdown"] table:has-text("Waiting in the queue") td', "36",
    ),
    # The comparison is a Markdown table (reports/tables.py), no longer a dataframe.
    "engines.py": TypicalState({"engines_backend": "metal", "engines_knobs": "vllm"}, MARKDOWN_TABLE, "Version read"),
    "formats.py": TypicalState(
        {"formats_engine": "vllm", "formats_format": "awq", "formats_gpu": "rtx-4090-24gb"},
        '[data-testid="stMarkdown"] h4', "×",
    ),
    "memory.py": TypicalState(
        {"mem_model": "llama-3.1-8b", "mem_gpu": "h100-sxm-80gb", "mem_gpus": "2", "mem_ctx": "16384",
         "mem_seqs": "8"},
        MEMORY_BARS,
    ),
    "wizard.py": TypicalState({"wiz_use": "shared-api", "wiz_users": "32", "wiz_prefixes": "true"}, SUCCESS),
    # The side-by-side table is a Markdown table, no longer a dataframe.
    "simulator.py": TypicalState(
        {"sim_engines": ["vllm", "llama-cpp"], "sim_n": "1000", "sim_rate": "4"}, MARKDOWN_TABLE, "goodput",
    ),
    "planner.py": TypicalState(
        {"plan_model": "llama-3.1-8b", "plan_rate": "2", "plan_ttft": "2"}, SUCCESS, "Cheapest",
    ),
    "speed.py": TypicalState(
        {"speed_engine": "vllm", "speed_gpu": "h100-sxm-80gb", "speed_model": "llama-3.1-8b",
         "speed_concurrency": "64"},
        '[data-testid="stMarkdown"]:has-text("tokens/s")',
    ),
    # The endpoints table (the first tab's first result) is a Markdown table, no longer a dataframe.
    "operations.py": TypicalState(
        {"ops_engines": ["vllm", "llama-cpp", "ollama"]}, MARKDOWN_TABLE, "/v1/chat/completions",
    ),
    "compatibility.py": TypicalState(
        {"cmp_tool_model": "llama-3.1-8b",
         "cmp_tool_cmd": "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-auto-tool-choice "
                         "--tool-call-parser llama3_json"},
        MARKDOWN_TABLE, "Parser",  # the tool-call verdicts: a Markdown table, no longer a dataframe
    ),
    # A link to the check page opens it empty (a log is never kept in a link): its main result is the box to paste
    # into. A rerun there is someone who has pasted a log and reads the verdicts.
    "reconcile.py": TypicalState({}, '[data-testid="stTextArea"] textarea', typed={"log_text": "RECONCILE_LOG"}),
}  # fmt: skip


def missing_pages() -> list[str]:
    """Page files app.py lists that have no typical state here."""
    return [page.name for page in app_pages() if page.name not in TYPICAL_STATES]


def typed_values(state: TypicalState) -> dict[str, str]:
    """The typed values with file placeholders read (RECONCILE_LOG -> the log's text)."""
    files = {"RECONCILE_LOG": RECONCILE_LOG}
    return {key: files[value].read_text() if value in files else value for key, value in state.typed.items()}


_PAGE_ENTRY = re.compile(r"""st\.Page\(\s*["']pages/([\w/]+\.py)["']""")


def url_paths() -> dict[str, str]:
    """Each page file's URL path as app.py registers it ('' for the default page)."""
    source = (REPO_ROOT / "app.py").read_text()
    entries = list(_PAGE_ENTRY.finditer(source))
    paths = {}
    for match, following in zip(entries, [*entries[1:], None], strict=True):
        name = match.group(1)
        rest = source[match.end():following.start() if following else len(source)]  # this entry's arguments
        explicit = re.search(r"""url_path=["']([^"']*)["']""", rest)
        default = re.search(r"default=True", rest)
        paths[Path(name).name] = "" if default else (explicit.group(1) if explicit else Path(name).stem)
    return paths


def link(page_name: str, state: TypicalState) -> str:
    """The shared link's path and query string for `page_name` in `state`."""
    from urllib.parse import urlencode

    return "/" + url_paths()[page_name] + ("?" + urlencode(state.query, doseq=True) if state.query else "")


def unknown_page_names(names: list[str]) -> str:
    """A message naming each of `names` ("speed" or "speed.py") that is no page app.py lists, "" when all are."""
    known = [page.name for page in app_pages()]
    unknown = sorted(set(page_file_names(names)) - set(known))
    return f"no such page: {', '.join(unknown)} (pages: {', '.join(known)})" if unknown else ""


def page_file_names(names: list[str]) -> list[str]:
    """`names` as page file names: "speed" and "speed.py" both name pages/speed.py."""
    return [name if name.endswith(".py") else f"{name}.py" for name in names]
