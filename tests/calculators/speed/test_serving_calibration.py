"""The serving check reproduces the published benchmarks (request order, request counts, engine defaults) and a
one-level calibration fits exactly what one level can identify: a decode and a prefill scale."""

from __future__ import annotations

import math

import pytest

from calculators.simulator.engines import default_policy
from calculators.simulator.workload import ArrivalProcess, WorkloadSpec
from calculators.speed import accuracy
from calculators.speed.calibrate import (
    PER_SEQUENCE_PRIOR_CANDIDATES_S,
    PER_SEQUENCE_PRIOR_S,
    ServingObservation,
    _scaled,
    fit_serving,
    serving_start,
    simulate_medians,
)
from calculators.speed.model import Accelerator, Band, ModelShape, SpeedParams
from knowledge.speed import load_speed_measurements

DATA = load_speed_measurements()
BAND = Band(low=-0.1, high=0.1, median_abs=0.05, n_points=5)
START = SpeedParams(memory_efficiency=0.6, decode_overhead_s=0.002, compute_efficiency=0.5,
                    prefill_overhead_s=0.02, decode_band=BAND, prefill_band=BAND)
MODEL = ModelShape(weights_read_bytes=2e9, params_active=1e9, n_layers=16, attention_q_dim=2048,
                   kv_bytes_per_token=32768)
HW = Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=2e12, flops_per_s=300e12)


def _sweep(fragment: str):
    return next(s for s in DATA.sweeps if fragment in s.id)


def test_accelmark_requests_go_out_in_dataset_order_at_every_level():
    sweep = _sweep("a100-sxm4-40gbx1-suite-a-nvidia-vllm")
    assert len(sweep.prompt_lengths) == 300
    # datasets/sharegpt_standard_v1/requests.jsonl@5797fc4, request_id 0..2 (printed by servecal's edit script)
    assert sweep.prompt_lengths[:3] == (395, 342, 401)
    for load in (5.0, 100.0):
        requests = accuracy.sweep_requests(accuracy.sweep_workload(sweep, load))
        assert requests.prompt_tokens == list(sweep.prompt_lengths)
        assert len(requests.arrival_s or []) == 300
    low, high = (accuracy.sweep_requests(accuracy.sweep_workload(sweep, x)) for x in (5.0, 100.0))
    assert low.output_tokens == high.output_tokens  # the same requests, only the arrival rate differs


def test_requests_without_published_lengths_are_still_taken_in_order():
    spec = WorkloadSpec(n_requests=3, arrival=ArrivalProcess.POISSON, rate_per_s=1.0,
                        length_pairs=((10, 1), (20, 2), (30, 3)))
    assert accuracy.sweep_requests(spec).prompt_tokens == [10, 20, 30]


def test_suite_d_runs_sent_100_requests_and_v0_runs_use_vllm_073_defaults():
    for sweep in DATA.sweeps:
        if "-suite-d-" in sweep.id:
            assert sweep.n_requests == 100, sweep.id  # each run's elapsed time x rate, see the sweep's note
        if sweep.engine_version.startswith("vLLM 0.7.3"):
            # AsyncLLMEngine gets no max_num_seqs from the runner: vllm 0.7.3 EngineArgs defaults
            assert sweep.policy["max_num_seqs"] == 256 and sweep.policy["enable_prefix_caching"] is False
            assert accuracy.sweep_policy(DATA, sweep, {}).host_work_per_sequence_in_step


def test_a_sweep_accelerator_without_published_flops_gets_a_labelled_class_estimate():
    ratios = accuracy.flops_per_byte_by_class(DATA)
    assert set(ratios) >= {"consumer-gddr", "datacenter-hbm"}
    # the RTX 4090 D has no sourced dense figure (knowledge/speed_measurements.yaml); the A6000 now has 154.8
    sweep = _sweep("rtx-4090-dx1-suite-a")
    hw = accuracy.sweep_accelerator(DATA, sweep, ratios)
    assert hw.flops_per_s == pytest.approx(hw.memory_bandwidth_bytes_per_s * ratios["consumer-gddr"])
    assert hw.flops_note == accuracy.FLOPS_FROM_CLASS_NOTE
    published = accuracy.sweep_accelerator(DATA, _sweep("h100-80gb-hbm3x1-suite-a"), ratios)
    assert published.flops_per_s == pytest.approx(989.4e12) and not published.flops_note
    a6000 = accuracy.sweep_accelerator(DATA, _sweep("rtx-a6000x1-suite-a"), ratios)
    assert a6000.flops_per_s == pytest.approx(154.8e12) and not a6000.flops_note


def test_the_per_sequence_prior_applies_only_where_steps_do_every_sequences_host_work():
    v0 = default_policy("vllm").model_copy(update={"v0_engine": True, "enable_chunked_prefill": False})
    v1 = default_policy("vllm")
    assert serving_start(START, v0, 2e-4).per_sequence_overhead_s == 2e-4
    assert serving_start(START, v1, 2e-4).per_sequence_overhead_s == 0.0
    assert serving_start(START, default_policy("sglang"), 2e-4).per_sequence_overhead_s == 0.0
    assert PER_SEQUENCE_PRIOR_S in PER_SEQUENCE_PRIOR_CANDIDATES_S


def _observation(load: float, params: SpeedParams, policy) -> ServingObservation:
    spec = WorkloadSpec(n_requests=80, arrival=ArrivalProcess.POISSON, rate_per_s=load,
                        length_pairs=tuple((200 + 37 * (i % 9), 60 + 11 * (i % 5)) for i in range(80)))
    obs = ServingObservation(f"{load:g}", spec, 1.0, 1.0, accuracy.sweep_requests(spec))
    ttft, itl = simulate_medians(obs, MODEL, HW, params, policy, 10**6)
    return ServingObservation(obs.label, spec, ttft, itl, obs.requests)


def test_one_level_fits_a_decode_and_a_prefill_scale_and_predicts_another_level_of_the_same_machine():
    policy = default_policy("vllm").model_copy(update={"v0_engine": True, "enable_chunked_prefill": False})
    base = serving_start(START, policy, 2e-4)
    truth = _scaled(base, [math.log(1.6), math.log(0.7)])  # a machine 1.6x slower to decode, 1.4x faster to prefill
    anchor, other = _observation(4.0, truth, policy), _observation(12.0, truth, policy)
    fitted = fit_serving([anchor], MODEL, HW, START, policy, 10**6, max_evals=60, per_sequence_prior_s=2e-4)
    assert fitted.per_sequence_overhead_s == pytest.approx(truth.per_sequence_overhead_s, rel=0.05)
    ttft, itl = simulate_medians(other, MODEL, HW, fitted, policy, 10**6)
    assert ttft == pytest.approx(other.ttft_s, rel=0.05) and itl == pytest.approx(other.itl_s, rel=0.05)


def test_two_levels_also_fit_the_per_sequence_host_overhead():
    policy = default_policy("vllm").model_copy(update={"v0_engine": True, "enable_chunked_prefill": False})
    truth = START.model_copy(update={"per_sequence_overhead_s": 3e-4})
    levels = [_observation(4.0, truth, policy), _observation(40.0, truth, policy)]
    fitted = fit_serving(levels, MODEL, HW, START, policy, 10**6, max_evals=120, per_sequence_prior_s=0.0)
    assert fitted.per_sequence_overhead_s > 1e-4  # started from none, found the host time the loads reveal
    for obs in levels:
        ttft, itl = simulate_medians(obs, MODEL, HW, fitted, policy, 10**6)
        assert ttft == pytest.approx(obs.ttft_s, rel=0.1) and itl == pytest.approx(obs.itl_s, rel=0.1)


def test_a_v0_small_model_sweep_fitted_on_one_level_predicts_the_others_ttft():
    # AccelMark A100 40 GB, Qwen2.5-0.5B, vLLM 0.7.3, 10 and 40 requests/s: TTFT 18.7 and 33.8 ms, ITL 4.7 and
    # 32.2 ms. With V0's async output processing simulated (outputs_returned_next_step) each level predicts the
    # other's TTFT within 2 % and ITL within 7 % (scratch residual analysis, 2026-12-01, main 712341d + this
    # change); returning first tokens at the end of the prefill step instead gave -28 % and +46 % TTFT.
    from calculators.speed.fit import default_fit
    from knowledge.loader import load_knowledge

    sweep = _sweep("a100-sxm4-40gbx1-suite-f-nvidia-vllm")
    assert accuracy.sweep_policy(DATA, sweep, {}).scheduler_spec(10**6).outputs_returned_next_step
    memory = {g.id: g.memory_bytes for g in load_knowledge().gpus.all_gpus}
    rows = accuracy.sweep_rows(DATA, default_fit(), memory, sweeps=[sweep], uncalibrated=False,
                               per_sequence_prior_s=PER_SEQUENCE_PRIOR_S)
    assert len(rows) == 4  # two anchors x (TTFT, ITL) of the other level
    for row in rows:
        assert abs(row.error) < 0.15, (row.item, row.metric, row.error)


def test_accelmark_passes_repeat_the_prompts_into_the_prefix_cache_of_engines_that_have_one():
    # AccelMark's online scenario sends the same 300 requests num_runs times per level on one engine and pools the
    # passes (loadgen/loadgen.py@3ae358a _run_online_async). vLLM V1 (prefix caching on) sees two simulated passes:
    # at the first level a cold one counted once and a warm one counted twice, later all three are warm passes.
    v1 = _sweep("a100-sxm4-80gbx1-suite-a-nvidia-vllm020")
    assert v1.passes_per_level == 3
    first, later = accuracy.level_observation(v1, 0, True), accuracy.level_observation(v1, 1, True)
    for obs in (first, later):
        assert obs.requests is not None and obs.requests.prompt_keys == list(range(300)) * 2
        assert obs.requests.prompt_tokens[:300] == obs.requests.prompt_tokens[300:] == list(v1.prompt_lengths)
        assert obs.requests.arrival_s[300] - obs.requests.arrival_s[299] > accuracy.PASS_GAP_S / 2
    assert first.counts == (1,) * 300 + (2,) * 300 and later.counts == (0,) * 300 + (3,) * 300
    # an engine without a prefix cache (vLLM 0.7.3's V0 default) is one pass: the passes are alike
    v0 = _sweep("a100-sxm4-80gbx1-suite-a-nvidia-vllm-47f5d58e")
    assert not v0.policy["enable_prefix_caching"]
    obs = accuracy.level_observation(v0, 1, False)
    assert obs.counts is None and obs.requests is not None and obs.requests.prompt_keys is None


def test_cached_passes_bring_a_v1_level_from_twice_the_measurement_to_within_a_fifth():
    # A100 80 GB, vLLM 0.20.1 (V1), Llama-3.1-8B at 100 requests/s: TTFT p50 1710 ms. One uncached pass (arrivals
    # as the run drew them) predicts 3347 ms, a prefill queue; with the passes' prompts cached 1401 ms (-18 %)
    # (scratch check, 2026-12-01 21:01 UTC, main 2741602 + this change).
    from calculators.speed.families import speed_family
    from calculators.speed.fit import default_fit, shape_of
    from knowledge.loader import load_knowledge

    sweep = _sweep("a100-sxm4-80gbx1-suite-a-nvidia-vllm020")
    memory = {g.id: g.memory_bytes for g in load_knowledge().gpus.all_gpus}
    ratios = accuracy.flops_per_byte_by_class(DATA)
    hw = accuracy.sweep_accelerator(DATA, sweep, ratios)
    params, _unused = default_fit().lookup(speed_family(sweep.engine, sweep.engine_version), hw.hardware_class)
    policy = accuracy.sweep_policy(DATA, sweep, memory)
    capacity = accuracy.sweep_kv_capacity_tokens(DATA, sweep, memory)
    model = shape_of(DATA.models_by_id()[sweep.model])
    cached, _itl = simulate_medians(accuracy.level_observation(sweep, 2, True), model, hw, params, policy, capacity)
    single, _itl = simulate_medians(accuracy.level_observation(sweep, 2, False), model, hw, params, policy, capacity)
    measured = sweep.levels[2].ttft_ms_p50 / 1000
    assert single > 1.8 * measured and abs(cached / measured - 1) < 0.2


def test_each_pass_arrives_as_accelmark_drew_it():
    # loadgen/loadgen.py@3ae358a: self._rng = random.Random(42); per target QPS, per run, len(requests) draws of
    # expovariate(target_qps), accumulated; the stream runs on through passes and levels
    import itertools
    import random

    sweep = _sweep("a100-sxm4-80gbx1-suite-a-nvidia-vllm020")
    assert sweep.arrival_seed == 42 and sweep.n_requests == 300
    rng = random.Random(42)
    expected = {}
    for k, level in enumerate(sweep.levels):
        for p in range(sweep.passes_per_level):
            expected[k, p] = list(itertools.accumulate(rng.expovariate(level.load) for _ in range(300)))
    assert accuracy.harness_arrivals_s(sweep, 1, 2) == expected[1, 2]
    # cached engine: level 1 = the last pass of level 0 (warms the cache) then level 1's first pass
    obs = accuracy.level_observation(sweep, 1, True)
    assert obs.requests.arrival_s[:300] == expected[0, 2]
    offset = expected[0, 2][-1] + accuracy.PASS_GAP_S
    assert obs.requests.arrival_s[300:] == pytest.approx([t + offset for t in expected[1, 0]])
    # first level: its first pass (cold) and second (warm)
    first = accuracy.level_observation(sweep, 0, True)
    assert first.requests.arrival_s[:300] == expected[0, 0]
    # an engine without a prefix cache: the level's first pass
    assert accuracy.level_observation(sweep, 2, False).requests.arrival_s == expected[2, 0]
