"""How to check the planner's winner before buying: its launch command and a benchmark at the planned load."""

from __future__ import annotations

from calculators.engines import adapter
from calculators.launch.render import LaunchCommand, render_launch_command
from calculators.operations.bench_plan import BenchPlanRequest
from calculators.planner.search import Candidate, PlannerResult
from calculators.simulator.workload import LengthDistribution, LengthKind


def typical_tokens(lengths: LengthDistribution) -> int:
    """The length a benchmark sends for a distribution: the fixed value, the median, or the uniform midpoint."""
    if lengths.kind is LengthKind.FIXED:
        return lengths.value
    if lengths.kind is LengthKind.UNIFORM:
        return (lengths.low + lengths.high) // 2
    return max(1, round(lengths.median))


def launch_command(result: PlannerResult, candidate: Candidate, kb) -> LaunchCommand:
    """The command that starts one instance of `candidate` with the settings the planner simulated."""
    engine = adapter(candidate.shape.engine)
    model = kb.models.get(result.spec.model_id)
    model_ref = engine.model_file or (model.hf_repo if model is not None else result.spec.model_id)
    return render_launch_command(engine.id, candidate.settings, model_ref, kb=kb)


def bench_request(result: PlannerResult, candidate: Candidate) -> BenchPlanRequest:
    """A benchmark plan for one instance of `candidate`: the spec's lengths, half and all of its best rate."""
    rate = candidate.max_rate_per_instance
    return BenchPlanRequest(
        engines=(candidate.shape.engine,),
        model_id=result.spec.model_id,
        gpu_id=candidate.shape.gpu_id,
        gpu_count=candidate.shape.gpus_per_instance,
        workloads=("short-in-short-out",),
        short_input_tokens=typical_tokens(result.spec.prompt),
        short_output_tokens=typical_tokens(result.spec.output),
        request_rates_per_s=tuple(sorted({round(rate / 2, 3), round(rate, 3)})),
        client_counts=(candidate.concurrency,),
        num_prompts=max(200, round(rate * 120)),
        prefix_share=min(max(result.spec.shared_prefix_fraction, 0.01), 0.99),
    )
