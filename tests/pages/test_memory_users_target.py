"""The memory page's 'users at a latency target' when no engine gets a figure: one line says why (the simulated
latencies at a trickle of requests against the target) and which first-token target would give an answer.

On the typical link with 32k-token contexts every engine said 'not estimated' and nothing more: the simulation's
p95 first token at a trickle is 1.1-1.35 s there, over the 1 s default target (its inter-token latency is within).
"""

from __future__ import annotations

import re

import pytest

from bench.typical_states import TYPICAL_STATES
from calculators.engines import display_name
from calculators.hardware.catalog import machine_for_gpu_id
from calculators.memory.compare import ComparisonInputs, Workload, compare_engine, model_weights
from calculators.model.catalog import architecture_from_catalog
from calculators.planner.readout import users_at_slo
from calculators.planner.spec import SloSpec
from knowledge.loader import load_knowledge
from reports.speed_text import users_missed_target_line
from tests.support.page_runs import page_in_language

LONG = {**TYPICAL_STATES["memory.py"].query, "mem_ctx": "32768"}
#: The line's start and the suggested target's sentence, per language.
WORDS = {
    "en": ("No engine here meets the target even at a trickle",
           r"A first-token target of ([\d.,]+)\u00a0s would give (.+?) an answer"),
    "es": ("Aquí ningún motor cumple el objetivo ni con un goteo",
           r"Un objetivo de primer token de ([\d.,]+)\u00a0s daría una respuesta para (.+?) \("),
}


def _readouts(context_tokens: int) -> tuple[list, dict]:
    """Each engine's users readout on the typical link's machine at `context_tokens`, and what it was built from."""
    kb = load_knowledge()
    arch = architecture_from_catalog("llama-3.1-8b", kb)
    machine = machine_for_gpu_id(kb, "h100-sxm-80gb", n_devices=2)
    weights = model_weights(kb.formats, arch, "bf16").bytes
    inputs = ComparisonInputs(arch, machine, weights)
    rows = {engine: compare_engine(inputs, engine, Workload(context_tokens, 8))
            for engine in ("ollama", "llama-cpp", "vllm", "sglang")}
    readouts = [users_at_slo(arch, machine, engine, row.settings, row.plan, weights, context_tokens)
                for engine, row in rows.items() if row.plan is not None]
    return readouts, {"arch": arch, "machine": machine, "weights": weights, "rows": rows}


def test_the_suggested_first_token_target_gives_that_engine_an_answer():
    readouts, built = _readouts(32768)
    assert readouts and all(r.users is None and r.trickle_ttft_s is not None for r in readouts)
    assert all(r.trickle_ttft_s > r.slo.ttft_s or r.trickle_itl_s > r.slo.itl_s for r in readouts)
    line = users_missed_target_line(readouts)
    assert line is not None
    needed, engine_name = re.search(WORDS["en"][1], line).groups()
    engine = next(r.engine for r in readouts if display_name(r.engine) == engine_name)
    row = built["rows"][engine]
    relaxed = users_at_slo(built["arch"], built["machine"], engine, row.settings, row.plan, built["weights"], 32768,
                           slo=SloSpec(ttft_s=float(needed)))
    assert relaxed.users is not None, (needed, engine, relaxed)


def test_no_line_when_an_engine_has_a_figure():
    readouts, _built = _readouts(16384)
    assert any(r.users is not None for r in readouts)
    assert users_missed_target_line(readouts) is None


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_page_says_why_no_engine_has_a_figure(lang):
    at = page_in_language("pages/memory.py", lang, LONG)
    at.run()
    assert not at.exception, at.exception
    start, suggestion = WORDS[lang]
    lines = [str(m.value) for m in at.markdown if str(m.value).startswith(start)]
    assert len(lines) == 1, [str(m.value)[:80] for m in at.markdown]
    assert re.search(suggestion, lines[0]), lines[0]
    assert "32" in lines[0] and "512" in lines[0]  # the simulated prompt, 32,512 tokens
