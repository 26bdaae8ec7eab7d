"""The layering and the engine rule, checked on the source: a layer imports only layers below it, and shared
code never names an engine (anything engine-specific is a field of that engine's adapter).

    knowledge  <-  calculators  <-  reports  <-  ui  <-  pages        (cli: calculators, reports, knowledge)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from calculators.engines import ENGINE_IDS
from tests.support.paths import REPO_ROOT

#: What each layer may import from the project (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    "knowledge": frozenset(),
    "calculators": frozenset({"knowledge"}),
    "reports": frozenset({"calculators", "knowledge"}),
    "ui": frozenset({"reports", "calculators", "knowledge"}),
    "pages": frozenset({"ui", "reports", "calculators", "knowledge"}),
    "cli": frozenset({"reports", "calculators", "knowledge"}),
}
#: `python -m calculators` keeps working by handing over to the CLI, the one file allowed to look up.
EXEMPT = frozenset({"calculators/__main__.py"})
#: Shared code: every layer except the engines' own folders and the knowledge base (its YAML and schema are data).
SHARED = ("calculators", "reports", "ui", "pages", "cli")
ENGINE_HOME = "calculators/engines/"
_QUOTED_ID = re.compile(r"""["'](""" + "|".join(re.escape(engine_id) for engine_id in ENGINE_IDS) + r""")["']""")


def layer_violations(source: str, layer: str) -> list[str]:
    """Project imports in `source` (a module of `layer`) that point at a layer above it."""
    allowed = ALLOWED[layer] | {layer}
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in ALLOWED and top not in allowed:
                found.append(f"line {node.lineno}: {layer} imports {name}")
    return found


def _named_engine(node: ast.AST) -> bool:
    """`engine`, `engine_id`, `x.engine`, `engine.id`: an expression that holds an engine id."""
    if isinstance(node, ast.Name):
        return node.id in ("engine", "engine_id", "plan_engine")
    if isinstance(node, ast.Attribute):
        return node.attr in ("engine", "engine_id") or (node.attr == "id" and _named_engine(node.value))
    return False


def _string_literals(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_string_literals(item) for item in node.elts)
    return False


def engine_rule_violations(source: str) -> list[str]:
    """Engine id strings typed in `source`, and comparisons of an engine id with a string literal."""
    found = [f"line {n}: types an engine id: {line.strip()}"
             for n, line in enumerate(source.splitlines(), start=1) if _QUOTED_ID.search(line)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_named_engine(side) for side in sides) and any(_string_literals(side) for side in sides):
                found.append(f"line {node.lineno}: compares an engine id with a literal")
    return found


def _modules(layer: str) -> list[Path]:
    return sorted(path for path in (REPO_ROOT / layer).rglob("*.py") if "__pycache__" not in path.parts)


def test_every_layer_is_scanned():
    for layer in ALLOWED:
        assert _modules(layer), layer


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_no_layer_imports_upward(layer):
    problems = {}
    for path in _modules(layer):
        relative = path.relative_to(REPO_ROOT).as_posix()
        if relative in EXEMPT:
            continue
        found = layer_violations(path.read_text(encoding="utf-8"), layer)
        if found:
            problems[relative] = found
    assert not problems, problems


@pytest.mark.parametrize("layer", SHARED)
def test_shared_code_never_names_an_engine(layer):
    problems = {}
    for path in _modules(layer):
        relative = path.relative_to(REPO_ROOT).as_posix()
        if relative.startswith(ENGINE_HOME):
            continue
        found = engine_rule_violations(path.read_text(encoding="utf-8"))
        if found:
            problems[relative] = found
    assert not problems, problems


def test_the_layer_check_can_fail():
    assert layer_violations("from ui import url_widgets\n", "calculators") == ["line 1: calculators imports ui"]
    assert layer_violations("import pages.memory\n", "reports") == ["line 1: reports imports pages.memory"]
    assert layer_violations("from calculators.units import GIB\n", "knowledge")
    assert not layer_violations("from calculators.units import GIB\nimport json\n", "reports")


def test_the_engine_check_can_fail():
    engine_id = ENGINE_IDS[0]
    assert engine_rule_violations(f"ORDER = ({engine_id!r},)\n")
    assert engine_rule_violations(f'if row.engine == "{engine_id}":\n    pass\n')
    assert engine_rule_violations('if engine in ("a-new-engine", "another"):\n    pass\n')
    assert engine_rule_violations('if spec.engine.id != "x":\n    pass\n')
    assert not engine_rule_violations("if row.engine == spec.id:\n    pass\nname = 'the engine'\n")
