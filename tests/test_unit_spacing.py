"""Code writes a figure and its unit through calculators/units (`quantity`, `with_unit`), never as f"{x} GiB".

Those helpers join them with a no-break space so a page never wraps "14,96" away from "GiB"; an f-string or a
concatenation that puts a plain space between a formatted value and a unit would bring the split back. Code spans
are left out: they quote an engine's output as it prints it. (Message templates are checked in the catalog test:
tests/calculators/test_i18n_catalog.py.)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.paths import REPO_ROOT

SHOWN_CODE = ("app.py", "pages", "ui", "reports", "calculators", "cli")
#: A value (written `{}` here), one plain space, a unit; a code span's content does not count.
_VALUE_THEN_UNIT = re.compile(
    r"\{\} (?:GiB|MiB|KiB|TiB|GB/s|GB|MB|KB|TB|ms|s|tok/s|tokens/s|requests/s|tokens?|bytes?|TFLOPS|%|B|W)(?![\w/])"
)
_UNIT_SUFFIX = re.compile(r"^ (?:GiB|MiB|KiB|TiB|GB/s|GB|MB|KB|TB|ms|s|tok/s|tokens/s|requests/s|tokens?|bytes?)\b")


def _shape(node: ast.JoinedStr) -> str:
    """An f-string's text with `{}` for each value and its code spans removed."""
    text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return re.sub(r"`[^`]*`", " ", text)


def _patterns(tree: ast.AST) -> set[int]:
    """Nodes inside re.compile(...): a log parser's pattern spells the engine's own spacing."""
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and ast.unparse(node.func) == "re.compile"]
    return {id(inner) for call in calls for arg in call.args for inner in ast.walk(arg)}


def hand_spaced_units(source: str) -> list[str]:
    """Each f-string or `value + " unit"` in `source` that spaces a value from its unit with a plain space."""
    tree = ast.parse(source)
    skip = _patterns(tree)
    found = []
    for node in ast.walk(tree):
        joined = isinstance(node, ast.JoinedStr) and _VALUE_THEN_UNIT.search(_shape(node))
        added = (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.right, ast.Constant)
                 and isinstance(node.right.value, str) and _UNIT_SUFFIX.match(node.right.value))
        if (joined or added) and id(node) not in skip:
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def _files() -> list[Path]:
    return [path for name in SHOWN_CODE for path in
            ([REPO_ROOT / name] if name.endswith(".py") else sorted((REPO_ROOT / name).rglob("*.py")))]


def test_no_code_spaces_a_figure_from_its_unit_by_hand():
    offenders = [f"{path.relative_to(REPO_ROOT)} {where}" for path in _files()
                 for where in hand_spaced_units(path.read_text())]
    assert not offenders, "write quantity(value, unit) or with_unit(text, unit):\n" + "\n".join(offenders)


def test_the_check_sees_an_f_string_and_a_concatenation_but_not_a_code_span():
    assert hand_spaced_units('f"{number(n / GIB, 2)} GiB"') and hand_spaced_units('number(x) + " ms"')
    assert hand_spaced_units('f"{x:.2f} MiB, {y} tokens"')
    assert not hand_spaced_units('f"`size = {x:.2f} MiB`"') and not hand_spaced_units('f"{n} sequences"')
    assert not hand_spaced_units('quantity(x, "GiB", 2)') and not hand_spaced_units('f"{x}\\u00a0GiB"')
    assert not hand_spaced_units('re.compile(r"avail mem=" + _N + r" GB")')
