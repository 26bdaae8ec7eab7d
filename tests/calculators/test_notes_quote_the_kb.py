"""Notes and messages that quote an engine's flags or defaults agree with the knowledge base (issue 21, item 2).

Every string literal (f-strings included; docstrings and regular expressions left out) of the memory,
engine, simulator and readout modules and of ui/ is scanned: a flag or an engine environment variable
must be one engines.yaml spells (or servewise's own CLI option), and a default it quotes must be the
default of the knob it names in engines.yaml. A default with no knob beside it is typed by hand: read it
from the KB or from the engine's settings model instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cli.main import build_parser
from knowledge import load_knowledge
from tests.support.fact_claims import ENV, FLAG, kb_spellings
from tests.support.paths import REPO_ROOT

SCANNED = ("calculators/memory/*.py", "calculators/engines/*/*.py", "calculators/simulator/*.py",
           "reports/memory_readouts.py", "reports/memory_text.py", "reports/pool_steps_text.py", "ui/*.py")
#: Spellings that are not engine settings engines.yaml models, each with why it may appear in a message.
NOT_KNOBS: dict[str, str] = {
    "-m": "the model-path argument of llama-server / python -m (a program word, not a setting)",
    "--model": "the model argument of mlx_lm.server and servewise's own CLI",
    "--model-path": "SGLang's model argument (a program word, not a setting)",
    "-mxfp4": "a suffix of mlx-community model names (-4bit, -8bit, -mxfp4), not a flag",
    "--verbose": "mlx_lm.generate's switch that prints the timing line the bench import reads (not a setting)",
    "-g": "mlx_lm.benchmark's generation-length argument, read off a pasted benchmark command",
}
#: Engine environment variables quoted that are not settings engines.yaml records (open: model them there).
NOT_KNOB_ENV: dict[str, str] = {
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "quoted from vLLM's own refusal of a max_model_len above the derived one",
    "VLLM_CPU_OMP_THREADS_BIND": "the CPU build's core binding; the memory model does not use it",
}
#: Engine environment variables servewise mentions that are not settings engines.yaml records.
ENGINE_ENV_PREFIXES = ("OLLAMA_", "LLAMA_ARG_", "VLLM_", "SGLANG_", "MLX_")
DEFAULT_NUMBER = re.compile(
    r"\bdefaults?\b\s*(?:is|of|to|=|:)?\s*(?P<a>-?\d[\d,]*(?:\.\d+)?)\b|(?P<b>-?\d[\d,]*(?:\.\d+)?)\s+by default\b",
    re.I,
)
REGEX_HINTS = ("(?:", "\\s", "\\d", "(?P<", "[^")


def _texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring or a regular expression."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skip.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        if not any(hint in text for hint in REGEX_HINTS):
            texts.append((node.lineno, text))
    return texts


def _cli_options() -> set[str]:
    options: set[str] = set()
    parsers = [build_parser()]
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            options.update(action.option_strings)
            if hasattr(action, "choices") and isinstance(action.choices, dict):
                parsers += [p for p in action.choices.values() if hasattr(p, "_actions")]
    return options


KB = load_knowledge()
FILES = sorted({p for pattern in SCANNED for p in REPO_ROOT.glob(pattern)})


def problems_in(text: str) -> list[str]:
    """What a message states against engines.yaml: unknown flags or variables, defaults that differ."""
    flags, env, knobs = kb_spellings(KB)
    known = flags | _CLI | set(NOT_KNOBS)
    found = [f"flag {f!r} is not spelled in engines.yaml" for f in FLAG.findall(text) if f not in known]
    found += [f"environment variable {v!r} is not in engines.yaml" for v in ENV.findall(text)
              if v.startswith(ENGINE_ENV_PREFIXES) and v not in env and v not in NOT_KNOB_ENV]
    for match in DEFAULT_NUMBER.finditer(text):
        said = (match.group("a") or match.group("b")).replace(",", "")
        named = [k for spelling, ks in knobs.items() if re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", text)
                 and (spelling.startswith("-") or "_" in spelling) for k in ks]
        if not named:
            found.append(f"default {said} is typed by hand (no knob named beside it): read it from the KB")
        elif not any(str(k.default) == said for k in named):
            found.append(f"default {said} differs from engines.yaml's {sorted({str(k.default) for k in named})}")
    return found


_CLI = _cli_options()


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_notes_quote_flags_and_defaults_as_the_kb_has_them(path):
    bad = [
        f"{path.name}:{line}: {problem} in {text[:90]!r}"
        for line, text in _texts(path)
        for problem in problems_in(text)
    ]
    assert bad == []


def test_the_scan_catches_a_misspelled_flag_and_a_wrong_default():
    assert problems_in("raise --num-parallel") == ["flag '--num-parallel' is not spelled in engines.yaml"]
    assert problems_in("OLLAMA_NUM_PARALLEL (default 4)") == ["default 4 differs from engines.yaml's ['1']"]
    assert problems_in("tokens per step (default 2048)") == [
        "default 2048 is typed by hand (no knob named beside it): read it from the KB"]
    assert problems_in("OLLAMA_NUM_PARALLEL (default 1)") == []
    assert problems_in("set OLLAMA_NUM_PARALEL") == ["environment variable 'OLLAMA_NUM_PARALEL' is not in engines.yaml"]
