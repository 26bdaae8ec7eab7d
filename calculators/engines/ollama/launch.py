"""`ollama serve`: settings are OLLAMA_* environment variables; num_gpu is a per-model option."""

from __future__ import annotations

from calculators.engines.ollama.plan import ENGINE_ID
from calculators.errors import LaunchCommandError
from calculators.i18n import _
from calculators.launch.flags import flag_spelling

EXAMPLE = "ollama serve"


def command_start(program: str, second: str) -> int | None:
    """Index where Ollama's own arguments begin (None: not an Ollama command)."""
    if program != "ollama":
        return None
    if second not in ("serve", "run", "start"):
        raise LaunchCommandError(
            _("an Ollama launch command is 'ollama serve' (settings come from OLLAMA_* variables)"))
    return 2


def render(values: dict[str, object], model_ref: str, kb):
    """(environment, words, remarks): the environment `ollama serve` reads, and where num_gpu goes instead."""
    spelling = flag_spelling(kb, ENGINE_ID)
    remarks = []
    if values.get("num_gpu", -1) != -1:
        remarks.append(_("num_gpu {num_gpu} is a per-model option: set it in the Modelfile (PARAMETER "
                         "num_gpu) or in the request's options, not in the environment.").format(
                         num_gpu=values['num_gpu']))
    return spelling.environment(values), ["ollama", "serve"], remarks
