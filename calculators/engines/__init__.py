"""The engines servewise models, one folder each, and the registry shared code looks them up in.

`ENGINE_IDS` is the one tuple of engine ids (in the order pages and tables show them); `ENGINES` maps
each id to its `EngineAdapter` (see base.py and README.md in this folder). Shared code loops over
`ENGINES` or calls `adapter(engine_id)`; it never branches on an id.
"""

from __future__ import annotations

from calculators.engines.base import EngineAdapter
from calculators.engines.llama_cpp import ADAPTER as _LLAMA_CPP
from calculators.engines.mlx_lm import ADAPTER as _MLX_LM
from calculators.engines.ollama import ADAPTER as _OLLAMA
from calculators.engines.sglang import ADAPTER as _SGLANG
from calculators.engines.vllm import ADAPTER as _VLLM
from calculators.errors import ServewiseInputError
from calculators.i18n import _

ENGINES: dict[str, EngineAdapter] = {a.id: a for a in (_OLLAMA, _LLAMA_CPP, _VLLM, _SGLANG, _MLX_LM)}
ENGINE_IDS: tuple[str, ...] = tuple(ENGINES)


def adapter(engine_id: str) -> EngineAdapter:
    """The registered engine `engine_id`; ServewiseInputError naming the known ids otherwise."""
    found = ENGINES.get(engine_id)
    if found is None:
        raise ServewiseInputError(_("unknown engine '{engine_id}'; use one of {engine_ids}").format(
                                    engine_id=engine_id, engine_ids=', '.join(ENGINE_IDS)))
    return found


def display_name(engine_id: str) -> str:
    """The engine's name as people write it (the id itself for an engine servewise does not model)."""
    found = ENGINES.get(engine_id)
    return found.display_name if found else engine_id
