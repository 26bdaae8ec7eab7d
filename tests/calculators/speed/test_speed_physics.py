"""The speed model's physics terms: MoE experts read as far as a step's tokens pick them, prefill attention
grows with the square of the prompt, and request handling reaches the simulated TTFT (planner included)."""

from __future__ import annotations

import pytest

from calculators.engines import adapter
from calculators.hardware.catalog import catalog_gpu, machine_for_gpu
from calculators.memory.compare import model_weights
from calculators.model.catalog import architecture_from_catalog
from calculators.planner.search import instance_step_cost
from calculators.simulator.engines import default_policy
from calculators.simulator.roofline import StepCostModel, experts_touched_share
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, LengthKind, WorkloadSpec
from calculators.speed.inputs import model_shape
from calculators.speed.model import Accelerator, Band, SpeedParams, decode_step_seconds, weights_read_for_tokens
from calculators.speed.predict import step_cost_model
from knowledge.loader import load_knowledge

KB = load_knowledge()
BAND = Band(low=-0.1, high=0.1, median_abs=0.05, n_points=5)
PARAMS = SpeedParams(memory_efficiency=0.5, decode_overhead_s=0.002, compute_efficiency=0.5,
                     prefill_overhead_s=0.030, decode_band=BAND, prefill_band=BAND)
HW = Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=2e12, flops_per_s=300e12)


def moe_shape():
    arch = architecture_from_catalog("qwen3-30b-a3b", KB)
    weights = model_weights(KB.formats, arch, "bf16").bytes
    return arch, weights, model_shape(arch, weights, 98_304)


def test_a_single_moe_token_reads_the_active_share_and_a_big_batch_reads_every_expert():
    arch, weights, shape = moe_shape()
    assert arch.moe is not None and arch.params_active < arch.params_total
    assert shape.weights_read_bytes == pytest.approx(weights * arch.params_active / arch.params_total)
    assert shape.expert_share_per_token == pytest.approx(arch.moe.n_active / arch.moe.n_experts)
    reads = [weights_read_for_tokens(shape, t) for t in (1, 2, 8, 64, 4096)]
    assert reads == sorted(reads) and reads[0] < reads[1]
    assert reads[-1] == pytest.approx(weights, rel=1e-3)  # every expert picked by someone
    # the simulator's step reads the same bytes as the speed model's decode step
    cost = step_cost_model(shape, HW, PARAMS)
    for t in (1, 8, 64):
        memory_s = weights_read_for_tokens(shape, t) / (HW.memory_bandwidth_bytes_per_s * PARAMS.memory_efficiency)
        assert cost.step_seconds(t, 0.0) == pytest.approx(memory_s + PARAMS.decode_overhead_s)
        assert decode_step_seconds(shape, HW, PARAMS, batch=t) == pytest.approx(memory_s + PARAMS.decode_overhead_s)


def test_the_planner_steps_a_moe_model_on_its_active_bytes_not_its_full_weights():
    arch, weights, _shape = moe_shape()
    gpu = catalog_gpu(KB, "h100-sxm-80gb")
    machine = machine_for_gpu(gpu, 1, working_set=KB.gpus.apple_working_set)
    cost = instance_step_cost(machine, adapter("vllm"), 1, weights, arch)
    assert isinstance(cost, StepCostModel)
    bandwidth = machine.memory_bandwidth_bytes_per_s * cost.memory_efficiency
    one = cost.step_seconds(1, 0.0) - cost.step_overhead_s - cost.per_sequence_overhead_s
    assert one == pytest.approx(weights * arch.params_active / arch.params_total / bandwidth, rel=1e-6)
    assert one < 0.2 * weights / bandwidth  # 3.3B of 30.5B parameters: an order of magnitude below the full read
    assert cost.step_seconds(256, 0.0) > 3 * cost.step_seconds(1, 0.0)  # a big batch touches most experts


def test_experts_touched_share_is_a_probability_growing_with_tokens():
    assert experts_touched_share(0.0, 10) == 0.0
    assert experts_touched_share(0.125, 1) == pytest.approx(0.125)
    assert experts_touched_share(0.125, 2) == pytest.approx(1 - 0.875**2)
    assert experts_touched_share(1.0, 3) == 1.0


def one_request(prompt_tokens: int) -> WorkloadSpec:
    return WorkloadSpec(n_requests=1, arrival=ArrivalProcess.POISSON, rate_per_s=0.01,
                        prompt=LengthDistribution(kind=LengthKind.FIXED, value=prompt_tokens),
                        output=LengthDistribution(kind=LengthKind.FIXED, value=4))


def test_prefill_attention_makes_long_prompts_superlinear_in_the_simulator():
    _arch, _weights, shape = moe_shape()
    cost = step_cost_model(shape, HW, PARAMS)
    assert cost.attention_flops_per_pair == 4.0 * shape.n_layers * shape.attention_q_dim
    without = cost.model_copy(update={"attention_flops_per_pair": 0.0})
    policy = default_policy("sglang").model_copy(update={"chunked_prefill_size": 100_000})

    def ttft(c, n):
        result = simulate(one_request(n), policy, c, 10_000_000)
        return result.records[0].ttft_s

    short, long = ttft(cost, 2_000), ttft(cost, 32_000)
    assert long / short > 16 * 1.2  # 16x the tokens, and attention pairs grow with the square
    assert ttft(without, 32_000) < long


def test_request_handling_reaches_the_simulated_ttft_and_not_the_itl():
    _arch, _weights, shape = moe_shape()
    cost = step_cost_model(shape, HW, PARAMS)
    assert cost.request_overhead_s == pytest.approx(PARAMS.prefill_overhead_s - PARAMS.decode_overhead_s)
    bare = cost.model_copy(update={"request_overhead_s": 0.0})
    policy = default_policy("vllm")
    with_handling = simulate(one_request(500), policy, cost, 10_000_000).records[0]
    without = simulate(one_request(500), policy, bare, 10_000_000).records[0]
    assert with_handling.ttft_s == pytest.approx(without.ttft_s + cost.request_overhead_s)
    assert with_handling.itl_s == pytest.approx(without.itl_s)


def test_the_planner_ttft_includes_the_fitted_request_handling():
    arch = architecture_from_catalog("llama-3.1-8b", KB)
    weights = model_weights(KB.formats, arch, "bf16").bytes
    machine = machine_for_gpu(catalog_gpu(KB, "h100-sxm-80gb"), 1, working_set=KB.gpus.apple_working_set)
    cost = instance_step_cost(machine, adapter("vllm"), 1, weights, arch)
    assert isinstance(cost, StepCostModel)
    from calculators.speed.predict import speed_params

    params, _ = speed_params("vllm", "datacenter-hbm")
    assert cost.request_overhead_s == pytest.approx(max(0.0, params.prefill_overhead_s - params.decode_overhead_s))
    assert cost.request_overhead_s > 0


def test_the_ledger_judges_each_half_of_the_sweeps_with_a_per_sequence_prior_chosen_on_the_other(monkeypatch):
    from calculators.speed import accuracy
    from knowledge.speed import load_speed_measurements

    data = load_speed_measurements()
    first, second = accuracy.sweep_folds(data.sweeps)
    assert first and second and len(first) + len(second) == len(data.sweeps)
    assert not {s.hardware for s in first} & {s.hardware for s in second}  # no machine in both halves
    # fake ledger rows: on the first half the smallest prior does best, on the second the largest
    best_on = {id(first): 0.0, id(second): 4e-4}

    def fake_rows(data, table, memory, *, max_evals, sweeps, uncalibrated, per_sequence_prior_s):
        half = first if sweeps == first else second
        error = 0.05 if per_sequence_prior_s == best_on[id(half)] else 0.5
        return [accuracy.LedgerRow(accuracy.CALIBRATED_CHECK, s.engine, "datacenter-hbm", "itl_p50_s", 1.0,
                                   1.0 + error, s.source, s.id) for s in half]

    monkeypatch.setattr(accuracy, "sweep_rows", fake_rows)
    cross = accuracy.cross_fitted_calibrated_rows(data, None, {}, candidates=(0.0, 2e-4, 4e-4))
    (hw_first, chosen_first, _), (_hw_second, chosen_second, _) = cross.choices
    assert set(hw_first) == {s.hardware for s in first}
    assert chosen_first == 4e-4 and chosen_second == 0.0  # each half gets the other half's best, not its own
    judged_first = {r.item for r in cross.rows if r.item in {s.id for s in first}}
    assert judged_first == {s.id for s in first}
    assert all(abs(r.error - 0.5) < 1e-9 for r in cross.rows)  # so the judged rows show the honest, worse error


def test_apple_chips_get_a_stated_prefill_estimate_from_bandwidth_and_other_unified_systems_do_not():
    from calculators.speed.inputs import accelerator_of_gpu
    from calculators.speed.model import APPLE_FLOPS_NOTE
    from calculators.speed.predict import estimate_speed
    from reports.speed_text import basis_line

    arch = architecture_from_catalog("llama-3.1-8b", KB)
    shape = model_shape(arch, 4.9e9, 131_072)
    # M3 and M3 Ultra have no sourced GPU throughput in the catalog (M1/M2 do: see the test below)
    small, large = accelerator_of_gpu(KB.gpus.get("m3-8gb")), accelerator_of_gpu(KB.gpus.get("m3-ultra-96gb"))
    assert small.flops_per_s == pytest.approx(2.6e12 * 100 / 66.6)  # scaled from the M1 anchor
    assert large.flops_per_s / small.flops_per_s == pytest.approx(819 / 100)
    est_small = estimate_speed(shape, small, "llama-cpp", prompt_tokens=512)
    est_large = estimate_speed(shape, large, "llama-cpp", prompt_tokens=512)
    assert est_small.prefill_tokens_per_s is not None and est_large.prefill_tokens_per_s is not None
    assert est_large.prefill_tokens_per_s.value > 3 * est_small.prefill_tokens_per_s.value
    assert est_small.basis.flops_note == APPLE_FLOPS_NOTE and "M1's 2.6\u00a0TFLOPS" in basis_line(est_small.basis)
    spark = accelerator_of_gpu(KB.gpus.get("dgx-spark-gb10-128gb"))
    assert spark.flops_per_s is None and spark.flops_note == ""  # not an Apple chip: no proxy


def test_m1_and_m2_chips_get_prefill_from_their_sourced_gpu_throughput_not_the_bandwidth_proxy():
    from calculators.speed.inputs import accelerator_of_gpu
    from calculators.speed.predict import estimate_speed

    arch = architecture_from_catalog("llama-3.1-8b", KB)
    shape = model_shape(arch, 4.9e9, 131_072)
    # knowledge/gpus.yaml: philipturner/metal-benchmarks README (M2 Max 38 cores, 13600 GOPS16) and Apple (M2 Ultra)
    m2_max, m2_ultra = accelerator_of_gpu(KB.gpus.get("m2-max-96gb")), accelerator_of_gpu(KB.gpus.get("m2-ultra-192gb"))
    assert m2_max.flops_per_s == pytest.approx(13.6e12) and m2_ultra.flops_per_s == pytest.approx(27.2e12)
    assert m2_max.flops_note == "" and m2_ultra.flops_note == ""  # a sourced figure, not the estimate
    est = estimate_speed(shape, m2_max, "llama-cpp", prompt_tokens=512)
    assert est.prefill_tokens_per_s is not None and est.prefill_tokens_per_s.value > 0
    assert est.basis.flops_note == ""
    machine = machine_for_gpu(catalog_gpu(KB, "m1-16gb"), 1, working_set=KB.gpus.apple_working_set)
    assert machine.dense_bf16_flops_per_s == pytest.approx(2.617e12)
    unknown = machine_for_gpu(catalog_gpu(KB, "m4-max-40c-128gb"), 1, working_set=KB.gpus.apple_working_set)
    assert unknown.dense_bf16_flops_per_s is None  # nothing citable for M4: left unknown


def test_vllm_v0_without_chunked_prefill_stalls_decodes_for_prefills():
    from calculators.engines.vllm.scheduler import VllmPolicy

    v1 = VllmPolicy(enable_chunked_prefill=False, max_num_batched_tokens=4096)
    v0 = v1.model_copy(update={"v0_engine": True})
    assert v1.scheduler_spec(100_000).mixed_prefill_decode
    assert not v0.scheduler_spec(100_000).mixed_prefill_decode
    assert VllmPolicy(v0_engine=True).scheduler_spec(100_000).mixed_prefill_decode  # chunked prefill on: mixed
    _arch, _weights, shape = moe_shape()
    cost = step_cost_model(shape, HW, PARAMS)
    busy = WorkloadSpec(n_requests=120, arrival=ArrivalProcess.POISSON, rate_per_s=20.0, seed=1,
                        prompt=LengthDistribution(kind=LengthKind.FIXED, value=2000),
                        output=LengthDistribution(kind=LengthKind.FIXED, value=100))
    itl_v1 = simulate(busy, v1, cost, 1_000_000).summary.itl.p50
    itl_v0 = simulate(busy, v0, cost, 1_000_000).summary.itl.p50
    assert itl_v0 > itl_v1  # the running sequences wait out every prefill step


def test_each_fitted_band_is_the_spread_of_its_groups_leave_one_out_residuals():
    import numpy as np

    from calculators.speed.fit import (
        BAND_MIN_POINTS,
        DECODE_METRICS,
        band_from,
        default_fit,
        loo_residuals,
        observations,
    )
    from calculators.speed.predict import estimate_speed
    from knowledge.speed import load_speed_measurements

    table = default_fit()
    rows = observations(load_speed_measurements(), DECODE_METRICS)
    for (family, cls), group in table.groups.items():
        mine = [r for r in rows if (r.family, r.hardware_class) == (family, cls)]
        assert tuple(r.point.id for r in mine) == group.decode_points
        residuals = loo_residuals(mine)
        if len(mine) < BAND_MIN_POINTS:  # too few of its own: every fitted group's residuals on the class
            residuals = [x for (f, c) in sorted(table.groups) if c == cls
                         for x in loo_residuals([r for r in rows if (r.family, r.hardware_class) == (f, c)])]
        expected = band_from(residuals)
        band = group.params.decode_band
        assert (band.low, band.high, band.median_abs, band.n_points) == (
            expected.low, expected.high, expected.median_abs, len(residuals))
        assert band.median_abs == pytest.approx(float(np.median(np.abs(np.asarray(residuals)))))
    arch = architecture_from_catalog("llama-3.1-8b", KB)
    est = estimate_speed(model_shape(arch, 16e9, 131_072), HW, "vllm")
    band = table.groups[("vllm", "datacenter-hbm")].params.decode_band
    one = est.decode_tokens_per_s_batch1
    assert one.low == pytest.approx(one.value * (1 + band.low))
    assert one.high == pytest.approx(one.value * (1 + band.high))


def test_step_times_move_the_way_physics_says():
    _arch, _weights, shape = moe_shape()
    slow = HW.model_copy(update={"memory_bandwidth_bytes_per_s": HW.memory_bandwidth_bytes_per_s / 2})
    by_batch = [decode_step_seconds(shape, HW, PARAMS, batch=b, context_tokens=1000) for b in (1, 2, 8, 64)]
    assert by_batch == sorted(by_batch) and len(set(by_batch)) == 4
    by_context = [decode_step_seconds(shape, HW, PARAMS, batch=4, context_tokens=c) for c in (0, 1000, 10_000)]
    assert by_context == sorted(by_context) and len(set(by_context)) == 3
    assert decode_step_seconds(shape, slow, PARAMS, batch=4) > decode_step_seconds(shape, HW, PARAMS, batch=4)
    from calculators.speed.model import prefill_seconds

    by_prompt = [prefill_seconds(shape, HW, PARAMS, n) for n in (128, 1024, 8192, 32768)]
    assert by_prompt == sorted(by_prompt) and len(set(by_prompt)) == 4


def test_tensor_parallel_instances_pay_their_all_reduce_traffic_over_the_catalog_link():
    from calculators.planner.search import allreduce_seconds_per_token, link_bytes_per_s_per_direction

    arch = architecture_from_catalog("llama-3.1-8b", KB)
    weights = model_weights(KB.formats, arch, "bf16").bytes
    gpu = catalog_gpu(KB, "h100-sxm-80gb")
    link = link_bytes_per_s_per_direction(gpu.id)
    assert link == pytest.approx(450e9)  # 900 GB/s NVLink stated bidirectional: 450 each way
    one = instance_step_cost(machine_for_gpu(gpu, 1, working_set=KB.gpus.apple_working_set), adapter("vllm"), 1,
                             weights, arch)
    two = instance_step_cost(machine_for_gpu(gpu, 2, working_set=KB.gpus.apple_working_set), adapter("vllm"), 2,
                             weights, arch)
    assert isinstance(one, StepCostModel) and isinstance(two, StepCostModel)
    assert one.allreduce_s_per_token == 0.0
    # 2 all-reduces x 32 layers x 4096 x 2 bytes, a ring of 2 moving 2 x 1/2 of it, at 450 GB/s
    assert two.allreduce_s_per_token == pytest.approx(2 * 32 * 4096 * 2 * 1.0 / 450e9)
    assert allreduce_seconds_per_token(arch, 4, link) > two.allreduce_s_per_token
    ideal = two.model_copy(update={"allreduce_s_per_token": 0.0})
    for tokens in (1, 64, 2048):
        assert two.step_seconds(tokens, 0.0) == pytest.approx(
            ideal.step_seconds(tokens, 0.0) + tokens * two.allreduce_s_per_token)
    assert two.decode_span_seconds(10, 8, 1000.0) == pytest.approx(
        ideal.decode_span_seconds(10, 8, 1000.0) + 10 * 8 * two.allreduce_s_per_token)
    assert link_bytes_per_s_per_direction("l4-24gb") is None  # PCIe without a figure: not modelled


def test_llama_cpp_prefill_runs_at_the_fp16_accumulate_rate_on_geforce_cards_only():
    """llama.cpp's prompt matmuls accumulate in FP16 (engines/llama_cpp/speed.py cites ggml-cuda.cu): on an RTX 4090
    it sees 330.3 TFLOPS (Ada whitepaper, FP16 accumulate), vLLM the 165.2 BF16 FP32-accumulate figure; on an RTX
    6000 Ada (one rate for both accumulates) both see the catalog's 364."""
    from calculators.speed.inputs import accelerator_of_gpu
    from calculators.speed.model import FP16_ACCUMULATE_NOTE, flops_note, tensor_flops_per_s
    from calculators.speed.predict import estimate_speed, speed_params

    geforce = accelerator_of_gpu(KB.gpus.get("rtx-4090-24gb"))
    pro = accelerator_of_gpu(KB.gpus.get("rtx-6000-ada-48gb"))

    def rate(engine, hw):
        return tensor_flops_per_s(hw, speed_params(engine, hw.hardware_class)[0].fp16_accumulate)

    assert rate("llama-cpp", geforce) == pytest.approx(330.3e12)
    assert rate("ollama", geforce) == pytest.approx(330.3e12)
    assert flops_note(geforce, speed_params("llama-cpp", geforce.hardware_class)[0]) == FP16_ACCUMULATE_NOTE
    assert rate("vllm", geforce) == pytest.approx(165.2e12)
    assert rate("llama-cpp", pro) == rate("vllm", pro) == pytest.approx(364e12)
    assert flops_note(pro, speed_params("llama-cpp", pro.hardware_class)[0]) == ""
    _arch, _weights, shape = moe_shape()
    # the same fitted parameters on a twice-as-fast compute rate: a long prompt's prefill is close to twice as fast
    fast = estimate_speed(shape, geforce, "llama-cpp", prompt_tokens=8192)
    slow = estimate_speed(shape, geforce.model_copy(update={"fp16_acc_flops_per_s": None}), "llama-cpp",
                          prompt_tokens=8192)
    assert fast.prefill_tokens_per_s.value > 1.6 * slow.prefill_tokens_per_s.value
    assert fast.basis.flops_note == FP16_ACCUMULATE_NOTE


def test_the_fit_sees_llama_cpp_geforce_prefill_at_the_fp16_accumulate_rate():
    """A llama.cpp pp512 row on a GeForce card gets its FLOPs over the FP16-accumulate rate in the fit, so the
    professional cards (full-rate FP32 accumulate) and GeForce cards share one compute efficiency."""
    from calculators.speed.fit import PREFILL_METRICS, observations
    from knowledge.speed import load_speed_measurements

    rows = {o.point.id: o for o in observations(load_speed_measurements(), PREFILL_METRICS)}
    geforce, pro = rows["sb-rtx-4090-24gb-pp512"], rows["sb-rtx-6000-ada-48gb-pp512"]
    # same model and prompt: the feature (FLOPs / flop/s) is inverse to the rate each card is seen at
    assert geforce.x_s / pro.x_s == pytest.approx(364.0 / 330.3, rel=1e-6)
