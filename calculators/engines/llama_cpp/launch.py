"""llama-server's command line: how a pasted command names it, and Settings written back as a command."""

from __future__ import annotations

from calculators.engines.llama_cpp.plan import ENGINE_ID
from calculators.errors import LaunchCommandError
from calculators.i18n import _
from calculators.launch.flags import flag_spelling

EXAMPLE = "llama-server"


def command_start(program: str, second: str) -> int | None:
    """Index where llama.cpp's own arguments begin (None: not a llama.cpp command)."""
    if program.startswith("python"):
        if second.startswith("llama_cpp"):
            raise LaunchCommandError(_("llama-cpp-python's server is not modelled; paste a llama-server command"))
        return None
    return 1 if program in ("llama-server", "llama-cli", "llama-bench") else None


def render(values: dict[str, object], model_ref: str, kb):
    """(environment, words, remarks) that start llama-server with `values` on the GGUF `model_ref`."""
    spelling = flag_spelling(kb, ENGINE_ID)
    return {}, ["llama-server", "-m", model_ref, *spelling.words(values)], []
