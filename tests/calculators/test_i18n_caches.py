"""Text is made in the language of the run that asks for it: nothing cached in one language reaches another.

Translation happens where a calculator writes a note or message (the current language is a context
variable), so a memoised result holding text would replay the first reader's language to everyone. Every
cache in the calculators is listed here with why it holds no translated text, and one process producing
the same results in English, Spanish and English again gets each in its own language.
"""

from __future__ import annotations

import ast

import pytest

from calculators.i18n import language
from knowledge import load_knowledge
from tests.support.paths import REPO_ROOT

#: Every functools cache under calculators/, with why its value holds no translated text.
LANGUAGE_FREE_CACHES: dict[str, str] = {
    "calculators/i18n.py:catalog": "keyed by the language itself: one catalog per language",
    "calculators/speed/fit.py:default_fit": "numbers only (fitted parameters per group); bases are built per lookup",
    "calculators/i18n.py:babel_locale": "keyed by the language itself: Babel's number and plural rules for it, no text",
}


def _cached_functions() -> set[str]:
    found = set()
    for path in sorted((REPO_ROOT / "calculators").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                    if name in {"lru_cache", "cache", "cached_property"}:
                        found.add(f"{path.relative_to(REPO_ROOT)}:{node.name}")
    return found


def test_every_calculator_cache_is_known_to_hold_no_translated_text():
    unknown = _cached_functions() - set(LANGUAGE_FREE_CACHES)
    assert not unknown, (
        f"new caches {sorted(unknown)}: key them by calculators.i18n.current_language() if their value holds "
        "text for people, then list them in LANGUAGE_FREE_CACHES with why"
    )


def _memory_notes() -> list[str]:
    from calculators.memory.command import plan_from_command

    result = plan_from_command("vllm serve m --max-model-len 32768", load_knowledge(), catalog_id="llama-3.1-8b",
                               gpu_id="h100-sxm-80gb")
    return [note.message for note in result.plan.notes] + [c.label for c in result.plan.components]


def _reconcile_rows() -> list[str]:
    from calculators.reconcile.check import reconcile_log, resolve_model
    from calculators.reconcile.log.parse import parse_startup_log

    kb = load_knowledge()
    parsed = parse_startup_log((REPO_ROOT / "tests/data/logs/vllm-v0.11-enginecore-qwen3-14b.log").read_text())
    result = reconcile_log(parsed, arch=resolve_model(kb, model_id="qwen3-14b"), machine=None, overrides={})
    return [row.label for row in result.rows] + [row.explanation for row in result.rows]


def _recommendation() -> list[str]:
    from calculators.wizard.answers import parse_answers
    from calculators.wizard.scoring import recommend

    result = recommend(parse_answers({"use": "local-dev"}), load_knowledge())
    return [repr(result)]


@pytest.mark.parametrize(("produce", "english", "spanish"), [
    (_memory_notes, "Maximum concurrency assumes", "La concurrencia máxima supone"),
    (_reconcile_rows, "KV cache size in tokens", "tamaño de la caché KV en tokens"),
    (_recommendation, "", ""),
], ids=["memory", "reconcile", "wizard"])
def test_english_then_spanish_then_english_in_one_process(produce, english, spanish):
    first = produce()
    with language("es"):
        second = produce()
    third = produce()
    assert first == third
    assert second != first
    if english:
        assert any(english in text for text in first) and not any(english in text for text in second)
        assert any(spanish in text for text in second) and not any(spanish in text for text in third)
