"""`python -m sglang.launch_server` (or `sglang serve`): how a pasted command names SGLang, and Settings
written back as a command."""

from __future__ import annotations

from calculators.engines.sglang.plan import ENGINE_ID
from calculators.launch.flags import flag_spelling

EXAMPLE = "python -m sglang.launch_server"


def command_start(program: str, second: str) -> int | None:
    """Index where SGLang's own arguments begin (None: not an SGLang command)."""
    if program.startswith("python"):
        return 3 if second.startswith("sglang") else None
    if program != "sglang":
        return None
    return 2 if second == "serve" else 1


def render(values: dict[str, object], model_ref: str, kb):
    """(environment, words, remarks) that serve `model_ref` with `values`."""
    spelling = flag_spelling(kb, ENGINE_ID)
    return {}, ["python", "-m", "sglang.launch_server", "--model-path", model_ref, *spelling.words(values)], []
