"""Every engine with a memory model: its Settings type and its plan function, looked up by engine id.

All plan functions share the leading signature `(arch, settings, machine, weights_bytes)`; engine-
specific keyword arguments (vLLM overheads, MLX working set...) keep their defaults here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from calculators.engines.llama_cpp.plan import LlamaCppSettings, plan_llamacpp
from calculators.engines.mlx_lm.plan import MlxLmSettings, plan_mlx_lm
from calculators.engines.ollama.plan import OllamaSettings, plan_ollama
from calculators.engines.sglang.plan import SglangSettings, plan_sglang
from calculators.engines.vllm.plan import VllmSettings, plan_vllm
from calculators.memory.plan import MemoryPlan


@dataclass(frozen=True)
class EngineModule:
    """An engine's settings model and memory plan function."""

    engine: str
    settings_type: type[BaseModel]
    plan: Callable[..., MemoryPlan]


ENGINE_MODULES: dict[str, EngineModule] = {
    module.engine: module
    for module in (
        EngineModule("ollama", OllamaSettings, plan_ollama),
        EngineModule("llama-cpp", LlamaCppSettings, plan_llamacpp),
        EngineModule("vllm", VllmSettings, plan_vllm),
        EngineModule("sglang", SglangSettings, plan_sglang),
        EngineModule("mlx-lm", MlxLmSettings, plan_mlx_lm),
    )
}
