"""Which engine wrote a log: count the lines only that engine prints."""

from __future__ import annotations

from dataclasses import dataclass

from calculators.engines.llama_cpp import startup_log as llamacpp
from calculators.engines.mlx_lm import startup_log as mlx
from calculators.engines.ollama import startup_log as ollama
from calculators.engines.sglang import startup_log as sglang
from calculators.engines.vllm import startup_log as vllm
from calculators.reconcile.log.clean import LogLine

ENGINE_NAMES = {
    "llama-cpp": "llama.cpp (llama-server)",
    "ollama": "Ollama",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "mlx-lm": "MLX LM",
}

_MARKERS = {
    "llama-cpp": llamacpp.MARKERS,
    "ollama": ollama.MARKERS,
    "vllm": vllm.MARKERS,
    "sglang": sglang.MARKERS,
    "mlx-lm": mlx.MARKERS,
}


@dataclass(frozen=True)
class Detection:
    """The engine a log belongs to, the engine it relays (Ollama -> llama.cpp), and the evidence counts."""

    engine: str | None
    runner: str | None
    scores: dict[str, int]

    @property
    def rivals(self) -> list[str]:
        """Other engines with clear evidence of their own (several logs pasted together)."""
        return [
            name
            for name, score in self.scores.items()
            if score >= 2
            and name not in (self.engine, self.runner)
            and not (self.engine == "ollama" and name == "llama-cpp")
        ]


def detect(lines: list[LogLine]) -> Detection:
    """Score every engine by its marker lines; Ollama wins when its lines accompany llama.cpp's."""
    scores = {name: 0 for name in _MARKERS}
    for line in lines:
        if not line.text and not line.program:
            continue
        for name, pattern in _MARKERS.items():
            if pattern.search(line.text):
                scores[name] += 1
        if line.program and line.program.lower().startswith("ollama"):
            scores["ollama"] += 1
    if scores["ollama"] > 0:
        runner = "llama-cpp" if scores["llama-cpp"] > 0 else None
        return Detection(engine="ollama", runner=runner, scores=scores)
    best = max(scores, key=lambda name: scores[name])
    if scores[best] == 0:
        return Detection(engine=None, runner=None, scores=scores)
    return Detection(engine=best, runner=None, scores=scores)
