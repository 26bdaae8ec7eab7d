"""Scan the app's own source: nothing a user sends is rendered as HTML, executed, unpickled or loaded as unsafe YAML,
and no module keeps mutable state that one user's session could write and another's read.

An AST scan, not a grep: a call is flagged by what it calls, wherever it is written. A case that is
safe for a stated reason goes in an allow-list below with that reason; an unexplained new use fails.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
APP_DIRS = ("pages", "ui", "calculators", "knowledge", "reports", "cli")


def app_sources() -> list[Path]:
    """Every Python file the app or the CLI runs (not tests, not bench scripts)."""
    files = [REPO_ROOT / "app.py"]
    for directory in APP_DIRS:
        files += sorted((REPO_ROOT / directory).rglob("*.py"))
    return [path for path in files if path.is_file()]


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for an attribute chain or name; '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _calls(path: Path) -> list[tuple[int, str, ast.Call]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [(node.lineno, _dotted(node.func), node) for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


EXECUTES = {"eval", "exec", "compile", "__import__", "os.system", "os.popen", "pickle.load", "pickle.loads",
            "marshal.load", "marshal.loads", "shelve.open", "yaml.unsafe_load", "yaml.full_load", "yaml.load_all",
            "dill.load", "dill.loads", "torch.load", "importlib.import_module"}  # fmt: skip
RENDERS_HTML = {"st.html", "components.html", "st.components.v1.html", "components.v1.html", "st.iframe",
                "components.iframe", "st.components.v1.iframe"}  # fmt: skip
SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "yaml.SafeLoader", "yaml.CSafeLoader"}

#: (file relative to the repo, dotted call) -> why it is safe. Empty today: keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    ("ui/markup.py", "st.markdown"): "SVG from reports/svg_charts.py, which escapes every text it writes "
    "(tests/reports/test_svg_charts.py plants markup in each text field), and a scrolling <div> around a "
    "reports/tables.py Markdown table, whose cells stay Markdown, and one <style> from ui/uploads.uploader_style, "
    "whose texts are escaped into CSS strings (tests/ui/test_uploads.py) and which holds no markup, or the "
    "constant PAGE_STYLE",
}


def _findings() -> list[str]:
    found = []
    for path in app_sources():
        relative = path.relative_to(REPO_ROOT).as_posix()
        for line, name, call in _calls(path):
            problem = None
            if name in EXECUTES:
                problem = f"{name}() executes or deserialises data"
            elif name in RENDERS_HTML:
                problem = f"{name}() renders raw HTML"
            elif _is_true(_keyword(call, "unsafe_allow_html")):
                problem = f"{name}(unsafe_allow_html=True) renders raw HTML"
            elif name == "yaml.load" and _dotted(_keyword(call, "Loader") or ast.Constant(None)) not in SAFE_LOADERS:
                problem = "yaml.load() without a SafeLoader"
            elif name.startswith("subprocess.") and _is_true(_keyword(call, "shell")):
                problem = f"{name}(shell=True) runs a shell"
            if problem and (relative, name) not in ALLOWED:
                found.append(f"{relative}:{line}: {problem}")
    return found


def test_the_scan_sees_the_app():
    names = {path.relative_to(REPO_ROOT).as_posix() for path in app_sources()}
    assert {"app.py", "knowledge/loader.py", "ui/url_widgets.py", "cli/main.py"} <= names


def test_no_user_data_is_executed_rendered_as_html_or_unsafely_deserialised():
    findings = _findings()
    assert not findings, "unsafe calls (add to ALLOWED only with a reason):\n" + "\n".join(findings)


def test_yaml_is_loaded_with_the_safe_loader():
    """knowledge/ is the only YAML reader; it must use yaml.safe_load."""
    names = {name for path in app_sources() for _, name, _ in _calls(path) if name.startswith("yaml.")}
    assert "yaml.safe_load" in names
    assert not names & {"yaml.load", "yaml.unsafe_load", "yaml.full_load", "yaml.load_all"}


@pytest.mark.parametrize(
    "snippet",
    [
        "eval(text)",
        "yaml.load(text)",
        "yaml.load(text, Loader=yaml.FullLoader)",
        "st.markdown(text, unsafe_allow_html=True)",
        "st.html(text)",
        "pickle.loads(blob)",
        "subprocess.run(cmd, shell=True)",
    ],
)
def test_the_scan_catches_each_pattern(tmp_path, monkeypatch, snippet):
    """The scan must be able to fail: each pattern, planted in a temporary page, is reported."""
    page = tmp_path / "pages" / "planted.py"
    page.parent.mkdir()
    page.write_text(f"import yaml, pickle, subprocess\nimport streamlit as st\n{snippet}\n")
    (tmp_path / "app.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
    assert _findings() == [f"pages/planted.py:3: {_expected(snippet)}"]


def _expected(snippet: str) -> str:
    name = snippet.split("(")[0]
    if "unsafe_allow_html" in snippet:
        return f"{name}(unsafe_allow_html=True) renders raw HTML"
    if name == "yaml.load":
        return "yaml.load() without a SafeLoader"
    if "shell=True" in snippet:
        return f"{name}(shell=True) runs a shell"
    if name == "st.html":
        return f"{name}() renders raw HTML"
    return f"{name}() executes or deserialises data"


# ----------------------------------------------------------------------------------------------------
# Module-level mutable state: every session runs in the same process, so a module-level list/dict/set that
# code writes at runtime is shared by every user.

MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "clear", "remove",
            "discard", "__setitem__", "sort", "reverse"}  # fmt: skip
MUTABLE_BUILDERS = {"list", "dict", "set", "defaultdict", "collections.defaultdict", "Counter", "OrderedDict", "deque"}

#: (file, name) -> why writing it at runtime is not shared user state.
STATE_ALLOWED: dict[tuple[str, str], str] = {
    ("ui/state_cache.py", "_CACHES"): "one Streamlit cache per memoised function (its code, not any user's input)",
    ("ui/background.py", "_jobs"): "results keyed by their whole input state and language, as st.cache_* keeps them",
}


def _module_mutables(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        mutable = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and _dotted(value.func) in MUTABLE_BUILDERS
        )
        if mutable:
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def _runtime_writes(tree: ast.Module, names: set[str]) -> set[str]:
    """Module-level names written inside a function (mutating call, item/attribute assignment, or `global`)."""
    written = set()
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                written |= set(node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in MUTATORS and _dotted(node.func.value) in names:
                    written.add(_dotted(node.func.value))
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Subscript) and _dotted(target.value) in names:
                        written.add(_dotted(target.value))
    return written


def _shared_state_findings() -> list[str]:
    found = []
    for path in app_sources():
        relative = path.relative_to(REPO_ROOT).as_posix()
        tree = ast.parse(path.read_text(), filename=str(path))
        for name in sorted(_runtime_writes(tree, _module_mutables(tree))):
            if (relative, name) not in STATE_ALLOWED:
                found.append(f"{relative}: module-level {name} is written at runtime")
    # A page script's top level runs per session, but `global` in a page or a helper still means shared.
    return found


def test_no_module_level_state_is_written_at_runtime():
    findings = _shared_state_findings()
    assert not findings, "state shared by every session (move it to st.session_state):\n" + "\n".join(findings)


def test_the_state_scan_can_fail(tmp_path, monkeypatch):
    page = tmp_path / "ui" / "planted.py"
    page.parent.mkdir()
    page.write_text(
        "_SEEN = {}\n\ndef remember(k, v):\n    _SEEN[k] = v\n\nHITS = []\n\ndef hit():\n    HITS.append(1)\n"
    )
    (tmp_path / "app.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
    assert _shared_state_findings() == [
        "ui/planted.py: module-level HITS is written at runtime",
        "ui/planted.py: module-level _SEEN is written at runtime",
    ]
