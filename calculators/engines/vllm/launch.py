"""`vllm serve MODEL [flags]`: how a pasted command names vLLM, and Settings written back as a command."""

from __future__ import annotations

from calculators.engines.vllm.plan import ENGINE_ID
from calculators.errors import LaunchCommandError
from calculators.i18n import _
from calculators.launch.flags import flag_spelling

EXAMPLE = "vllm serve"


def command_start(program: str, second: str) -> int | None:
    """Index where vLLM's own arguments begin (None: not a vLLM command)."""
    if program.startswith("python"):
        return 3 if second.startswith("vllm") else None
    if program != "vllm":
        return None
    if second != "serve":
        raise LaunchCommandError(_("a vLLM launch command is 'vllm serve MODEL [flags]'"))
    return 2


def render(values: dict[str, object], model_ref: str, kb):
    """(environment, words, remarks) that serve `model_ref` with `values`."""
    spelling = flag_spelling(kb, ENGINE_ID)
    return {}, ["vllm", "serve", model_ref, *spelling.words(values)], []
