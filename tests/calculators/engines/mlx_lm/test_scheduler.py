"""MLX LM's scheduler model: hand-checked steps of mlx_lm.server's BatchGenerator, and the recorded engine traces.

Step rules from mlx-lm 0.32.2 generate.py (BatchGenerator._next, insert_segments) and server.py (_is_batchable);
see calculators/engines/mlx_lm/scheduler.py. Every pass costs one second here (ONE_SECOND_PASSES), so the step
times below are counts of passes.
"""

import json
import math

import pytest

from calculators.engines.mlx_lm.plan import MlxLmSettings
from calculators.engines.mlx_lm.scheduler import MlxLmPolicy, kv_capacity_tokens, policy_from_plan
from calculators.planner.rate_search import evaluate_rate
from calculators.planner.spec import SloSpec
from calculators.simulator.policy import Admission
from calculators.simulator.results import Constraint, RequestStatus
from calculators.simulator.run import simulate, simulate_steps
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, LengthKind, RequestSet, WorkloadSpec
from tests.support.mlx_conformance.batch_cases import BATCH_CASES, BATCH_TRACES
from tests.support.mlx_conformance.simulated import ONE_SECOND_PASSES, ROOMY_KV_TOKENS, simulated_steps


def _requests(prompts, outputs, arrivals=None):
    n = len(prompts)
    reqs = RequestSet(prompt_tokens=list(prompts), output_tokens=list(outputs), prefix_tokens=[0] * n,
                      arrival_s=list(arrivals) if arrivals is not None else [0.0] * n, think_s=[0.0] * n)
    workload = WorkloadSpec(n_requests=n, arrival=ArrivalProcess.POISSON, rate_per_s=1.0,
                            prompt=LengthDistribution(kind=LengthKind.FIXED, value=1),
                            output=LengthDistribution(kind=LengthKind.FIXED, value=1))
    return workload, reqs


def _steps(policy, prompts, outputs, kv=ROOMY_KV_TOKENS):
    workload, reqs = _requests(prompts, outputs)
    return simulate_steps(workload, policy, ONE_SECOND_PASSES, kv, reqs)


@pytest.mark.parametrize("prompt", [2049, 4096, 4097, 5000, 20000])
def test_a_long_prompt_takes_one_prompt_pass_per_2048_tokens_but_its_last(prompt):
    result, trace = _steps(MlxLmPolicy(), [prompt], [3])
    passes = math.ceil((prompt - 1) / 2048)  # insert_segments keeps the last token for the hand-over
    assert [t.prefilled for t in trace[:passes]] == [((0, min(2048, prompt - 1 - 2048 * k)),) for k in range(passes)]
    assert trace[passes].handed_over == (0,) and trace[passes].prefilled == ()
    assert [t.decoded for t in trace[passes + 1:]] == [(0,)] * 3  # three tokens, one per decode pass
    # passes + 1 one-second steps, then the first decode pass returns the token the hand-over computed; that step
    # has no prompt pass, so it is seen when the hand-over ended
    assert result.records[0].first_token_s == pytest.approx(passes + 1)
    assert result.records[0].end_s == pytest.approx(passes + 3)


def test_the_ninth_simultaneous_prompt_waits_for_a_prompt_place():
    _result, trace = _steps(MlxLmPolicy(), [100] * 9, [4] * 9)
    assert [i for i, _c in trace[0].prefilled] == list(range(8))  # --prompt-concurrency 8
    assert trace[1].handed_over == tuple(range(8)) and trace[1].prefilled == ()  # places free only after this
    assert trace[2].decoded == tuple(range(8)) and trace[2].prefilled == ((8, 99),)
    workload, reqs = _requests([1500] * 60, [8] * 60, [0.01 * i for i in range(60)])
    result = simulate(workload, MlxLmPolicy(), ONE_SECOND_PASSES, ROOMY_KV_TOKENS, requests=reqs)
    assert result.diagnostics.binding is Constraint.PREFILL_SLOTS
    assert any(n.code == "binding_prefill_slots" and "prompt_concurrency" in n.message for n in result.notes)


def test_decode_concurrency_caps_the_decode_batch_and_a_full_batch_only_decodes():
    _result, trace = _steps(MlxLmPolicy(decode_concurrency=32), [10] * 40, [50] * 40)
    assert max(len(t.decoded) for t in trace) == 32
    # groups of 8 start decoding at steps 2, 4, 6 and 8; while all 32 decode, the other 8 prompts wait untouched
    assert all(len(t.decoded) == 32 and not t.prefilled and not t.handed_over for t in trace[8:51])
    # the first group returns its 50th token at step 2 + 49: that decode pass frees 8 places in the same step
    assert len(trace[51].decoded) == 32 and [i for i, _c in trace[51].prefilled] == list(range(32, 40))


def test_the_decode_batch_outgrows_its_cap_when_admission_counts_decoders_only():
    # completion_batch_size = max(3, 5) = 5, yet 7 decode at once in the recorded engine trace and the simulation
    steps = simulated_steps(BATCH_CASES["outgrow"])
    assert max(len(s["decoded"]) for s in steps) == 7


def test_unbatchable_servers_serve_one_request_at_a_time():
    for settings in (MlxLmSettings(kv_bits=8), MlxLmSettings(draft_model="draft")):
        assert MlxLmPolicy(batched=False) == policy_from_plan(settings, _plan_stub())[0]
    spec = MlxLmPolicy(batched=False).scheduler_spec(10_000)
    assert (spec.max_running, spec.max_prefilling) == (1, 1)
    _result, trace = _steps(MlxLmPolicy(batched=False), [5, 5], [2, 2])
    # (decoded, handed over, prefilled): request 1 starts in the step whose decode pass finished request 0
    assert [(t.decoded, t.handed_over, t.prefilled) for t in trace] == [
        ((), (), ((0, 4),)), ((), (0,), ()), ((0,), (), ()), ((0,), (), ((1, 4),)), ((), (1,), ()), ((1,), (), ()),
        ((1,), (), ())]


def _plan_stub():
    class Plan:  # what policy_from_plan reads of an MlxLmPlan
        working_set_bytes = 10_000
        weights_bytes = 4_000
        kv_bytes_per_token = 10
        layer_caches = ()
        n_sequences = 1
    return Plan()


def test_kv_capacity_is_the_working_set_left_by_the_weights():
    assert kv_capacity_tokens(_plan_stub()) == 600


def test_memory_is_not_checked_so_an_overflow_is_shown_not_queued():
    spec = MlxLmPolicy().scheduler_spec(1000)
    assert spec.admission is Admission.UNCHECKED and not spec.preempt_on_kv_exhaustion
    workload, reqs = _requests([600, 600, 3000], [10, 10, 10])
    result = simulate(workload, MlxLmPolicy(), ONE_SECOND_PASSES, 1000, requests=reqs)
    # nothing is rejected or made to wait for memory: the engine admits all three and the cache outgrows 1,000
    assert all(r.status is RequestStatus.FINISHED for r in result.records)
    assert result.diagnostics.kv_overflow_tokens > 0
    note = next(n for n in result.notes if n.code == "mlx_kv_overflow")
    assert "does not queue on memory" in note.message and "1,000" in note.message
    point = evaluate_rate(MlxLmPolicy(), ONE_SECOND_PASSES, 1000, SloSpec(ttft_s=3600, itl_s=60), 0.001,
                          LengthDistribution(kind=LengthKind.FIXED, value=3000),
                          LengthDistribution(kind=LengthKind.FIXED, value=10), 0.0, 20, 0)
    assert point.kv_overflow and not point.meets  # the planner never counts a rate that would swap


def test_the_simulator_steps_as_the_recorded_batch_generator():
    """mlx-lm 0.32.2's BatchGenerator, driven on CPU (tests/support/mlx_conformance/batch_trace.py, printed into
    tests/data/conformance/mlx_lm/batch_traces.json): the same passes in the same order, step by step."""
    recorded = json.loads(BATCH_TRACES.read_text())
    assert recorded["engine"]["mlx-lm"] == "0.32.2"
    assert set(recorded["cases"]) == set(BATCH_CASES)
    for name, case in recorded["cases"].items():
        assert {k: case[k] for k in BATCH_CASES[name]} == json.loads(json.dumps(BATCH_CASES[name])), name
        assert simulated_steps(case) == case["steps"], name


@pytest.mark.parametrize("policy", [MlxLmPolicy(), MlxLmPolicy(decode_concurrency=4, prompt_concurrency=2,
                                                               prefill_step_size=512), MlxLmPolicy(batched=False)])
def test_jumping_over_decode_only_steps_changes_nothing(policy):
    """simulate() jumps over decode-only steps in closed form; simulate_steps() takes them one by one."""
    from calculators.simulator.roofline import StepCostModel

    cost = StepCostModel(memory_bandwidth_bytes_per_s=4e11, flops_per_s=1.7e13, weights_bytes=16e9,
                         active_params=8e9, kv_bytes_per_token=131072, step_overhead_s=0.002)
    for rate in (0.05, 3.0):
        workload = WorkloadSpec(n_requests=60, arrival=ArrivalProcess.POISSON, rate_per_s=rate, seed=1,
                                prompt=LengthDistribution(kind=LengthKind.LOGNORMAL, median=800, sigma=0.8),
                                output=LengthDistribution(kind=LengthKind.LOGNORMAL, median=100, sigma=0.8))
        jumped = simulate(workload, policy, cost, ROOMY_KV_TOKENS)
        stepped, _trace = simulate_steps(workload, policy, cost, ROOMY_KV_TOKENS)
        assert jumped.diagnostics.n_steps == stepped.diagnostics.n_steps
        for a, b in zip(jumped.records, stepped.records, strict=True):
            assert a.first_token_s == pytest.approx(b.first_token_s, abs=1e-9)
            assert a.end_s == pytest.approx(b.end_s, abs=1e-9)
