"""`mlx_lm.server`: how a pasted command names MLX LM, and Settings written back as a command.

Settings only mlx_lm.generate reads (engines.yaml lists each knob's programs) are left out of the server
command, and a remark says how to pass them to mlx_lm.generate.
"""

from __future__ import annotations

from calculators.engines.mlx_lm.plan import ENGINE_ID
from calculators.i18n import _
from calculators.launch.flags import flag_spelling, flag_value

EXAMPLE = "mlx_lm.server"
SERVER = "mlx_lm.server"
GENERATE = "mlx_lm.generate"


def command_start(program: str, second: str) -> int | None:
    """Index where MLX LM's own arguments begin (None: not an MLX LM command)."""
    if program.startswith("python"):
        return 3 if second.startswith("mlx_lm") else None
    if program in (SERVER, GENERATE, "mlx_lm.chat"):
        return 1
    return 2 if program == "mlx_lm" else None


def render(values: dict[str, object], model_ref: str, kb):
    """(environment, words, remarks): the server command, and the generate-only settings as a remark."""
    server = flag_spelling(kb, ENGINE_ID, SERVER)
    generate = flag_spelling(kb, ENGINE_ID, GENERATE)
    words = [SERVER, "--model", model_ref, *server.words(values)]
    remarks = []
    generate_only = {k: v for k, v in values.items() if k in generate.flags and k not in server.flags and v is not None}
    if generate_only:
        flags = " ".join(f"{generate.flags[k]} {flag_value(v)}" for k, v in generate_only.items())
        remarks.append(_("{server} has no {generate_only}; these apply to {generate}: {generate} --model "
                         "{model_ref} {flags}").format(
                         server=SERVER,
                         generate_only=', '.join(generate.flags[k] for k in generate_only),
                         generate=GENERATE,
                         model_ref=model_ref,
                         flags=flags))
    return {}, words, remarks
