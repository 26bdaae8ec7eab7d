"""Small cases whose answers are worked out by hand from the roofline and the scheduling rules."""

import pytest

from calculators.engines.ollama.scheduler import OllamaPolicy
from calculators.engines.sglang.scheduler import SglangPolicy
from calculators.engines.vllm.scheduler import VllmPolicy
from calculators.errors import ServewiseInputError
from calculators.simulator.policy import StaticBatchPolicy
from calculators.simulator.results import Constraint, RejectReason, RequestStatus
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, RequestSet, WorkloadSpec

# Weights take 1e10 B / 1e12 B/s = 0.01 s to stream; compute is 2 x 1e10 / 1e14 = 2e-4 s per token.
# So a decode step of a few sequences takes 0.01 s and a prefill of N tokens takes max(0.01, 2e-4 N) s.
COST = StepCostModel(
    memory_bandwidth_bytes_per_s=1e12,
    flops_per_s=1e14,
    weights_bytes=1e10,
    active_params=1e10,
    kv_bytes_per_token=0,
    memory_efficiency=1.0,
    compute_efficiency=1.0,
)
DECODE_S = 0.01


def fixed(value: int) -> LengthDistribution:
    return LengthDistribution(kind="fixed", value=value)


def burst(n: int, prompt: int, output: int, **extra) -> WorkloadSpec:
    """n requests all sent at t = 0 (closed loop, n clients, no think time)."""
    return WorkloadSpec(
        n_requests=n, arrival=ArrivalProcess.CLOSED, n_clients=n, think_time_s=0.0,
        prompt=fixed(prompt), output=fixed(output), **extra,
    )


def test_single_request_latency_is_prefill_plus_decodes():
    # prefill 1000 tokens: 2e-4 x 1000 = 0.2 s (compute-bound); then 10 decode steps of 0.01 s
    result = simulate(burst(1, 1000, 11), VllmPolicy(), COST, kv_capacity_tokens=100_000)
    (record,) = result.records
    assert record.status is RequestStatus.FINISHED
    assert record.ttft_s == pytest.approx(0.2)
    assert record.e2e_s == pytest.approx(0.2 + 10 * DECODE_S)
    assert record.itl_s == pytest.approx(DECODE_S)
    assert record.generated_tokens == 11


def test_single_request_latency_counts_kv_reads():
    # with 1e6 B of KV per token, decode step j reads 1000 + j tokens: 0.01 + (1000 + j) x 1e-6 s
    cost = COST.model_copy(update={"kv_bytes_per_token": 1e6})
    result = simulate(burst(1, 1000, 11), VllmPolicy(), cost, kv_capacity_tokens=100_000)
    decodes = sum(0.01 + (1000 + j) * 1e-6 for j in range(1, 11))
    assert result.records[0].e2e_s == pytest.approx(0.2 + decodes)


def test_ollama_single_slot_serialises_requests():
    # each request: prefill 100 tokens = 0.02 s, then 4 decode steps = 0.04 s -> 0.06 s of service
    result = simulate(burst(3, 100, 5), OllamaPolicy(num_parallel=1), COST)
    finishes = sorted(r.end_s for r in result.records)
    assert finishes == pytest.approx([0.06, 0.12, 0.18])
    admits = sorted(r.admit_s for r in result.records)
    assert admits == pytest.approx([0.0, 0.06, 0.12])
    assert result.diagnostics.binding is Constraint.MAX_RUNNING
    assert result.diagnostics.peak_active == 1


def test_ollama_three_slots_run_together():
    # one step prefills all 300 tokens (0.06 s), then 4 shared decode steps -> all end at 0.10 s
    result = simulate(burst(3, 100, 5), OllamaPolicy(num_parallel=3), COST)
    assert [r.end_s for r in result.records] == pytest.approx([0.10, 0.10, 0.10])


def test_vllm_preempts_when_kv_runs_out():
    # both 100-token prompts are admitted (next-chunk admission); KV fills at 200 + 2k = 350 tokens
    result = simulate(burst(2, 100, 200), VllmPolicy(block_size=1), COST, kv_capacity_tokens=350)
    first, second = result.records
    assert result.summary.n_finished == 2
    assert second.preemptions >= 1 and first.preemptions == 0
    assert second.generated_tokens == 200
    assert result.diagnostics.n_preemptions >= 1
    assert result.diagnostics.peak_kv_used_tokens <= 350
    assert any(note.code == "preemptions" for note in result.notes)


def test_sglang_reserves_output_instead_of_preempting():
    # admission needs prompt + 0.7 x remaining output free: 100 + 139.3 fits once, not twice in 350
    result = simulate(burst(2, 100, 200), SglangPolicy(), COST, kv_capacity_tokens=350)
    assert result.diagnostics.n_preemptions == 0
    first, second = result.records
    assert second.admit_s == pytest.approx(first.end_s)
    assert result.diagnostics.binding is Constraint.KV_CAPACITY


@pytest.mark.parametrize("policy", [SglangPolicy(), VllmPolicy()], ids=["sglang", "vllm"])
def test_full_prefix_hit_removes_prefill(policy):
    # a 1000-token prompt, wholly a warm shared prefix: only the last token is computed (0.01 s step)
    hit = simulate(burst(1, 1000, 3, shared_prefix_fraction=1.0), policy, COST, kv_capacity_tokens=100_000)
    miss = simulate(burst(1, 1000, 3), policy, COST, kv_capacity_tokens=100_000)
    assert hit.records[0].ttft_s == pytest.approx(DECODE_S)
    assert miss.records[0].ttft_s == pytest.approx(0.2)
    assert hit.records[0].prefix_hit_tokens == 999


def test_disabled_radix_cache_gives_no_hit():
    result = simulate(
        burst(1, 1000, 3, shared_prefix_fraction=1.0), SglangPolicy(disable_radix_cache=True), COST, 100_000
    )
    assert result.records[0].ttft_s == pytest.approx(0.2)


def test_cancellation_frees_kv_of_a_request_in_prefill():
    # a 5000-token prompt is prefilled 256 tokens a step (0.0512 s each, ~1 s in all); it is
    # cancelled 0.5 s after arrival, mid-prefill, and the engine must release its KV
    workload = burst(1, 5000, 5, cancel_after_s=0.5)
    policy = VllmPolicy(max_num_seqs=4, max_num_batched_tokens=256, block_size=1)
    result = simulate(workload, policy, COST, kv_capacity_tokens=100_000)
    (record,) = result.records
    assert record.status is RequestStatus.CANCELLED
    assert record.admit_s == 0.0 and record.first_token_s is None
    assert record.end_s == pytest.approx(0.5)
    # ten 256-token chunks were in KV when the deadline passed (0.512 s)
    assert result.diagnostics.peak_kv_used_tokens == 2560
    assert result.timeseries.kv_used_tokens[-1] == 0


def test_cancellation_of_queued_request_leaves_running_one_alone():
    workload = WorkloadSpec(
        n_requests=2, arrival=ArrivalProcess.CLOSED, n_clients=2,
        prompt=fixed(100), output=fixed(200), cancel_after_s=0.5,
    )
    result = simulate(workload, OllamaPolicy(num_parallel=1), COST)
    first, second = result.records
    assert first.status is RequestStatus.FINISHED
    assert second.status is RequestStatus.CANCELLED and second.admit_s is None
    assert result.summary.n_cancelled == 1


def test_max_queue_rejects_when_applied_to_slot_wait():
    policy = OllamaPolicy(num_parallel=1, max_queue=2, max_queue_applies_to_slot_wait=True)
    result = simulate(burst(6, 100, 5), policy, COST)
    rejected = [r for r in result.records if r.status is RequestStatus.REJECTED]
    assert len(rejected) == 4
    assert {r.reject_reason for r in rejected} == {RejectReason.QUEUE_FULL}
    assert result.summary.n_finished == 2


def test_max_queue_not_applied_by_default_as_in_ollama_source():
    result = simulate(burst(6, 100, 5), OllamaPolicy(num_parallel=1, max_queue=2), COST)
    assert result.summary.n_rejected == 0
    assert any(note.code == "ollama_max_queue_scope" for note in result.notes)


def test_slot_context_truncates_and_rejects():
    # -c 2048 -np 2: each slot holds 1024 tokens; a 1000-token prompt may generate only 24 tokens
    from calculators.engines.llama_cpp.scheduler import LlamaCppPolicy

    policy = LlamaCppPolicy(ctx_size=2048, parallel=2)
    result = simulate(burst(1, 1000, 100), policy, COST)
    assert result.records[0].truncated and result.records[0].generated_tokens == 24
    too_long = simulate(burst(1, 1024, 10), policy, COST)
    assert too_long.records[0].reject_reason is RejectReason.EXCEEDS_CONTEXT


def test_static_batch_waits_for_whole_batch():
    # batch of 2 from 3 requests at t=0: the third starts only after the longest of the first two
    workload = WorkloadSpec(
        n_requests=3, arrival=ArrivalProcess.CLOSED, n_clients=3, length_pairs=((100, 5),),
    )
    result = simulate(workload, StaticBatchPolicy(batch_size=2), COST, kv_capacity_tokens=10_000)
    third = max(result.records, key=lambda r: r.admit_s)
    assert third.admit_s == pytest.approx(max(r.end_s for r in result.records if r is not third))


def test_static_baseline_needs_kv_capacity():
    with pytest.raises(ServewiseInputError, match="KV capacity"):
        simulate(burst(1, 10, 10), StaticBatchPolicy(), COST, kv_capacity_tokens=0)


def test_vllm_refuses_budget_below_max_num_seqs():
    with pytest.raises(ServewiseInputError, match="max_num_batched_tokens"):
        simulate(burst(1, 10, 10), VllmPolicy(max_num_seqs=512, max_num_batched_tokens=256), COST, 10_000)


def test_kv_binding_note_when_raising_max_num_seqs_does_not_help():
    # KV holds ~3 requests of 1100 tokens; max_num_seqs 256 or 512 give the same latencies
    workload = WorkloadSpec(n_requests=60, rate_per_s=20, prompt=fixed(1000), output=fixed(100))
    runs = [simulate(workload, VllmPolicy(max_num_seqs=n, max_num_batched_tokens=1024), COST, 3500) for n in (256, 512)]
    assert runs[0].diagnostics.binding is Constraint.KV_CAPACITY
    assert runs[0].summary.ttft.p99 == pytest.approx(runs[1].summary.ttft.p99)
    assert any(note.code == "binding_kv_capacity" for note in runs[0].notes)


def test_sglang_pauses_decodes_during_a_prefill_batch_vllm_mixes_them():
    # A (100-token prompt, 11 tokens out) arrives at 0, B (1000-token prompt, 2 out) at 0.045 s.
    # A: prefill 0.02 s, decodes at 0.03/0.04/0.05; B is scheduled at the 0.05 s step boundary.
    # vLLM: A's decode rides with B's prefill (1001 tokens, 0.2002 s); A ends 6 steps later: 0.3102 s.
    # SGLang: B's prefill batch runs alone (0.2 s) and A waits, so A needs one more step: 0.32 s.
    requests = RequestSet(
        prompt_tokens=[100, 1000], output_tokens=[11, 2], prefix_tokens=[0, 0],
        arrival_s=[0.0, 0.045], think_s=[0.0, 0.0],
    )
    workload = WorkloadSpec(n_requests=2)
    vllm = simulate(workload, VllmPolicy(), COST, 100_000, requests=requests)
    sglang = simulate(workload, SglangPolicy(), COST, 100_000, requests=requests)
    mixed = simulate(workload, SglangPolicy(enable_mixed_chunk=True), COST, 100_000, requests=requests)
    assert vllm.records[0].end_s == pytest.approx(0.3102)
    assert vllm.records[1].first_token_s == pytest.approx(0.2502)
    assert sglang.records[0].end_s == pytest.approx(0.32)
    assert sglang.records[1].first_token_s == pytest.approx(0.25)
    assert mixed.records[0].end_s == pytest.approx(0.3102)
    # the 0.2 s prefill batch is the only time A sat idle while decoding
    assert sglang.diagnostics.decode_stall_s == pytest.approx(0.2)
    assert vllm.diagnostics.decode_stall_s == 0 and mixed.diagnostics.decode_stall_s == 0


def test_records_csv_has_one_row_per_request():
    from reports.simulator_charts import RECORD_COLUMNS, records_csv

    result = simulate(burst(3, 100, 5), OllamaPolicy(num_parallel=1), COST)
    lines = records_csv([result]).strip().splitlines()
    assert lines[0].split(",") == list(RECORD_COLUMNS)
    assert len(lines) == 4 and all(line.startswith("ollama,") for line in lines[1:])


def test_downsampling_keeps_peaks_and_the_final_state():
    from calculators.simulator.core import downsample

    t = [float(i) for i in range(1000)]
    queued = [0] * 1000
    queued[501] = 7  # a one-sample spike
    series = downsample(t, queued, [1] * 999 + [0], [5.0] * 1000, 100)
    assert len(series.t_s) == 100
    assert max(series.queued) == 7
    assert series.t_s[-1] == 999.0 and series.active[-1] == 0


def test_the_binding_note_counts_one_slot_in_the_singular_and_writes_the_readers_numbers():
    from calculators.i18n import language

    with language("es"):
        one = simulate(burst(3, 100, 5), OllamaPolicy(num_parallel=1), COST)
        three = simulate(burst(9, 100, 5), OllamaPolicy(num_parallel=3), COST)
    (note,) = [n.message for n in one.notes if n.code == "binding_max_running"]
    assert note.startswith("Las peticiones hicieron cola porque 1 puesto de ejecución (`num_parallel`) estaba "
                           "ocupado (100")  # not "los 1 puestos"
    assert "4.096\u00a0tokens" in note  # the slot's KV in Spanish digits
    plural = [n.message for n in three.notes if n.code == "binding_max_running"]
    assert plural and "los 3 puestos de ejecución" in plural[0]
    english = simulate(burst(3, 100, 5), OllamaPolicy(num_parallel=1), COST)
    (note,) = [n.message for n in english.notes if n.code == "binding_max_running"]
    assert note.startswith("Requests queued because 1 running place (`num_parallel`) was taken (100")
    assert "4,096\u00a0tokens" in note


V0 = VllmPolicy(v0_engine=True, enable_chunked_prefill=False, max_num_batched_tokens=4096)


def test_vllm_v0_returns_a_steps_tokens_when_the_next_step_ends():
    # vLLM V0's async output processor handles step N's outputs inside step N+1 (vllm 0.7.3 llm_engine.step /
    # model_runner.execute_model): the prefill (0.2 s) computes the first token, the client sees it after the next
    # decode step (0.01 s); the last token (computed at 0.3 s) is seen after one more step the engine runs to learn
    # the request has finished
    assert V0.scheduler_spec(100_000).outputs_returned_next_step
    assert not VllmPolicy().scheduler_spec(100_000).outputs_returned_next_step  # V1: no such lag modelled
    (record,) = simulate(burst(1, 1000, 11), V0, COST, kv_capacity_tokens=100_000).records
    assert record.ttft_s == pytest.approx(0.2 + DECODE_S)
    assert record.e2e_s == pytest.approx(0.2 + 11 * DECODE_S)
    assert record.itl_s == pytest.approx(DECODE_S)
    (plain,) = simulate(burst(1, 1000, 11), V0.model_copy(update={"v0_engine": False}), COST, 100_000).records
    assert plain.ttft_s == pytest.approx(0.2)


def test_vllm_v0_steps_spend_the_host_time_of_the_previous_steps_sequences():
    # 1 ms of host time per sequence per step. Four 100-token prompts at t = 0 prefill in one step (400 x 2e-4 =
    # 0.08 s; no step before it, so no host time); each decode step of the four then costs 0.01 + 4 x 0.001 s.
    # A fifth request arrives at 0.1 s, inside the decode step [0.094, 0.108]; its prefill step alone (V0) costs
    # 100 x 2e-4 = 0.02 s plus the host time of the four sequences the step before ran (0.004 s): [0.108, 0.132];
    # the next decode step (five sequences) processes that one prefill's output (0.001 s): 0.132 + 0.011 = 0.143,
    # when its first token is seen. Without the lag (V1) the first prefill step pays its own four sequences' host
    # time and returns their first tokens at its end: 0.084 s.
    cost = COST.model_copy(update={"per_sequence_overhead_s": 0.001})
    requests = RequestSet(prompt_tokens=[100] * 5, output_tokens=[1000] * 5, prefix_tokens=[0] * 5,
                          arrival_s=[0.0, 0.0, 0.0, 0.0, 0.1], think_s=[0.0] * 5)
    spec = WorkloadSpec(n_requests=5, arrival=ArrivalProcess.POISSON, rate_per_s=1.0,
                        prompt=fixed(100), output=fixed(1000))
    lagged = simulate(spec, V0, cost, kv_capacity_tokens=100_000, requests=requests).records
    assert lagged[4].ttft_s == pytest.approx(0.143 - 0.1)
    assert lagged[0].ttft_s == pytest.approx(0.08 + 0.014)
    plain = simulate(spec, V0.model_copy(update={"v0_engine": False, "enable_chunked_prefill": False}), cost,
                     kv_capacity_tokens=100_000, requests=requests).records
    assert plain[0].ttft_s == pytest.approx(0.08 + 0.004)
