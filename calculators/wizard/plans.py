"""Memory plans for the wizard's top choices: the team's catalog model on its GPUs, under each engine.

The workload is read off the answers (a first approximation, stated on the page): every concurrent
user is an active sequence (capped), and each retains 8,192 tokens, or 32,768 when prompts or answers
are long (capped at the trained context). The memory page takes the same state through its URL.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.hardware.catalog import catalog_gpu, machine_for_gpu_id
from calculators.memory.compare import ComparisonInputs, EngineComparison, Workload, compare_engine, model_weights
from calculators.model.catalog import architecture_from_catalog
from calculators.planner.readout import UsersReadout, users_at_slo
from calculators.wizard.fit_check import SCHEME_FOR_FORMAT
from calculators.wizard.scoring import Recommendation

SHORT_CONTEXT_TOKENS = 8_192
LONG_CONTEXT_TOKENS = 32_768
MAX_SEQUENCES = 256


@dataclass(frozen=True)
class TopChoicePlan:
    """One top engine's plan for the team's model and machine, and the memory page state that shows it."""

    engine: str
    comparison: EngineComparison
    workload: Workload
    weights_scheme: str
    model_ref: str
    memory_page_query: dict[str, str]
    #: GPUs the plan spreads over (1 for a unified-memory machine)
    gpus: int
    #: users one instance of this plan serves within the planner's default SLO (None: no plan to simulate)
    users: UsersReadout | None = None


def workload_from_answers(recommendation: Recommendation, trained_context: int | None) -> Workload:
    """Active sequences and retained tokens per sequence implied by the answers (see module docstring)."""
    answers = recommendation.answers
    long_context = "long" in (answers.prompt_length, answers.output_length)
    context = LONG_CONTEXT_TOKENS if long_context else SHORT_CONTEXT_TOKENS
    if trained_context:
        context = min(context, trained_context)
    return Workload(context_tokens=context, sequences=min(answers.concurrent_users, MAX_SEQUENCES))


def plans_for_top_choices(recommendation: Recommendation, kb, how_many: int = 2) -> list[TopChoicePlan]:
    """Plans for the best `how_many` eligible engines; empty when the answers name no catalog model or GPU."""
    answers = recommendation.answers
    if answers.model_id is None or answers.gpu_id is None:
        return []
    arch = architecture_from_catalog(answers.model_id, kb)
    unified = catalog_gpu(kb, answers.gpu_id).unified_memory
    machine = machine_for_gpu_id(kb, answers.gpu_id, 1 if unified else max(answers.n_gpus, 1))
    scheme = SCHEME_FOR_FORMAT[answers.weight_format]
    inputs = ComparisonInputs(arch, machine, model_weights(kb.formats, arch, scheme).bytes, {})
    workload = workload_from_answers(recommendation, arch.max_context_tokens)
    query = {
        "mem_model": answers.model_id,
        "mem_gpu": answers.gpu_id,
        "mem_gpus": str(machine.n_devices),
        "mem_precision": scheme,
        "mem_ctx": str(workload.context_tokens),
        "mem_seqs": str(workload.sequences),
    }
    model_ref = kb.models.get(answers.model_id).hf_repo
    eligible = [verdict.engine for verdict in recommendation.ranking if not verdict.excluded][:how_many]
    plans = []
    for engine in eligible:
        row = compare_engine(inputs, engine, workload)
        users = None
        if row.plan is not None and row.settings is not None and inputs.weights_bytes is not None:
            users = users_at_slo(arch, machine, engine, row.settings, row.plan, inputs.weights_bytes,
                                 workload.context_tokens)
        plans.append(TopChoicePlan(engine, row, workload, scheme, model_ref, query, machine.n_devices, users))
    return plans
