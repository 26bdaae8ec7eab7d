"""Ollama's relayed llama-server lines, judged by llama.cpp's rows against Ollama's plan."""

from __future__ import annotations

from calculators.engines.llama_cpp.reconcile import llamacpp_rows
from calculators.engines.ollama.plan import ENGINE_ID, plan_ollama
from calculators.reconcile.rows import EngineRun, Outcome


def ollama_rows(run: EngineRun) -> Outcome:
    """llama.cpp's rows for the runner Ollama started, planned by Ollama's own plan."""
    return llamacpp_rows(run, engine=ENGINE_ID, plan_fn=plan_ollama)
