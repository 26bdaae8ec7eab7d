"""The capacity planner behaves as a team expects: more load, tighter targets and bigger models cost more."""

import pytest
from pydantic import ValidationError

from calculators.errors import ServewiseInputError
from calculators.planner import CostBasis, HardwareOption, LoadSpec, OnPremisesCost, PlannerSpec, SloSpec, plan_capacity
from calculators.planner.cost import cost_of, on_premises_usd_per_gpu_hour
from calculators.planner.rate_search import percentile
from calculators.planner.weights_options import engine_accepts
from knowledge.formats import CompatStatus
from knowledge.loader import load_knowledge

KB = load_knowledge()
H100 = HardwareOption(gpu_id="h100-sxm-80gb", max_gpus_per_host=8)
L4 = HardwareOption(gpu_id="l4-24gb", max_gpus_per_host=8)


def spec(**changes) -> PlannerSpec:
    base = {"model_id": "llama-3.1-8b", "hardware": (H100, L4), "engines": ("vllm", "llama-cpp"),
                "load": LoadSpec(arrival_rate_per_s=4.0), "slo": SloSpec(ttft_s=1.0, itl_s=0.05),
                "concurrency_options": (8, 64), "requests_per_simulation": 120}
    return PlannerSpec(**(base | changes))


def gpus_of(result) -> int:
    assert result.best is not None and result.best.cost is not None
    return result.best.cost.gpus


def test_a_winner_is_explained_by_its_memory_rates_and_cost_arithmetic():
    result = plan_capacity(spec(), KB)
    best = result.best
    assert best is not None and best.meets_load
    assert best.at_max_rate is not None and best.at_max_rate.meets
    assert best.at_max_rate.ttft_s <= 1.0 and best.at_max_rate.itl_s <= 0.05
    assert best.replicas * best.max_rate_per_instance >= result.load_rate_per_s
    cost = best.cost
    assert cost.usd_per_hour == pytest.approx(cost.gpus * cost.usd_per_gpu_hour)
    assert cost.usd_per_month == pytest.approx(cost.usd_per_hour * 730.5)
    tokens_per_hour = result.load_rate_per_s * result.mean_output_tokens * 3600
    assert cost.usd_per_million_output_tokens == pytest.approx(cost.usd_per_hour / tokens_per_hour * 1e6)
    assert "list price" in cost.price_source and "2026-05-07" in cost.price_source
    assert set(result.best_by_engine) <= {"vllm", "llama-cpp"}
    assert best is min(result.best_by_engine.values(), key=lambda c: c.cost.usd_per_hour)


@pytest.mark.parametrize("engine", ["vllm", "llama-cpp"])
def test_more_load_never_needs_fewer_gpus_and_never_costs_less(engine):
    previous_gpus, previous_cost = 0, 0.0
    for rate in (0.5, 4.0, 16.0, 40.0):
        result = plan_capacity(spec(engines=(engine,), hardware=(H100,), load=LoadSpec(arrival_rate_per_s=rate)), KB)
        assert gpus_of(result) >= previous_gpus
        assert result.best.cost.usd_per_hour >= previous_cost
        previous_gpus, previous_cost = gpus_of(result), result.best.cost.usd_per_hour
    assert previous_gpus > 1, "40 requests/s of 8B must need more than one H100 in this model"


def test_a_tighter_slo_never_gets_cheaper():
    costs = []
    for ttft, itl in ((4.0, 0.2), (1.0, 0.05), (0.4, 0.012), (0.2, 0.009)):
        result = plan_capacity(spec(slo=SloSpec(ttft_s=ttft, itl_s=itl), load=LoadSpec(arrival_rate_per_s=8.0)), KB)
        costs.append(result.best.cost.usd_per_hour if result.best else float("inf"))
    assert costs == sorted(costs)
    assert costs[0] < costs[-1]


def test_a_model_that_fits_no_candidate_says_so():
    result = plan_capacity(spec(model_id="llama-3.1-405b", hardware=(L4.model_copy(update={"max_gpus_per_host": 2}),)),
                           KB)
    assert result.best is None and not result.best_by_engine
    memory = [r for r in result.rejections if r.stage == "memory"]
    assert memory and all(r.gpu_id == "l4-24gb" for r in memory)
    assert all(r.reason for r in result.rejections)


def test_an_unreachable_slo_names_the_latency_that_misses():
    result = plan_capacity(spec(engines=("vllm",), hardware=(L4,), slo=SloSpec(ttft_s=0.01, itl_s=0.05)), KB)
    assert result.best is None
    slo = [r for r in result.rejections if r.stage == "slo"]
    assert slo and all("time to first token" in r.reason and "target 0.01\u00a0s" in r.reason for r in slo)


def test_engines_that_cannot_run_or_be_simulated_here_are_excluded_with_the_reason():
    result = plan_capacity(spec(engines=("mlx-lm", "vllm"), hardware=(H100,)), KB)
    mlx = [r for r in result.rejections if r.engine == "mlx-lm"]
    assert mlx and mlx[0].stage == "engine" and "Apple silicon only" in mlx[0].reason
    # the KB's word on MLX's CUDA build, with its source (knowledge/engines.yaml mlx-lm hardware)
    assert "CUDA build is experimental" in mlx[0].reason and "ml-explore/mlx-lm:setup.py" in mlx[0].reason
    assert "mlx-lm" not in result.best_by_engine and "vllm" in result.best_by_engine


#: Apple's dense BF16 throughput is unknown in the catalog (knowledge/gpus.yaml), so no engine can be planned on a
#: Mac from the KB alone; these tests give one as a TEST INPUT (not a fact) to reach the scheduler and the cost.
#: An Apple chip whose GPU throughput the catalog sources (knowledge/gpus.yaml m2-max: 13.6 TFLOPS FP16, 38 cores,
#: philipturner/metal-benchmarks README); the M3/M4/M5 entries stay 'unknown'.
M2_MAX = HardwareOption(gpu_id="m2-max-96gb", max_gpus_per_host=1, usd_per_gpu_hour=0.9)


@pytest.mark.parametrize("engine", ["mlx-lm", "llama-cpp"])
def test_mlx_lm_and_llama_cpp_are_planned_on_apple_silicon_with_a_cost(engine):
    result = plan_capacity(spec(engines=(engine,), hardware=(M2_MAX,), load=LoadSpec(arrival_rate_per_s=0.2),
                                slo=SloSpec(ttft_s=5.0, itl_s=0.1), max_hosts=8), KB)
    best = result.best_by_engine[engine]
    assert best.meets_load and best.cost is not None and best.cost.usd_per_hour == pytest.approx(0.9 * best.replicas)
    assert not [r for r in result.rejections if r.stage == "hardware"]
    if engine == "mlx-lm":
        assert best.concurrency_setting == "decode_concurrency"
        assert not [r for r in result.rejections if "scheduler model" in r.reason]


def test_without_apple_flops_in_the_catalog_a_mac_is_refused_for_that_reason():
    m4 = HardwareOption(gpu_id="m4-max-40c-128gb", max_gpus_per_host=1, usd_per_gpu_hour=0.9)
    result = plan_capacity(spec(engines=("mlx-lm",), hardware=(m4,)), KB)
    assert result.best is None
    assert {r.stage for r in result.rejections} == {"hardware"}
    assert "dense BF16 throughput" in result.rejections[0].reason


def test_weights_an_engine_does_not_load_natively_are_excluded_with_the_matrix_reason():
    result = plan_capacity(spec(engines=("vllm", "llama-cpp"), hardware=(H100,), weights=("q4_k_m",)), KB)
    vllm = [r for r in result.rejections if r.engine == "vllm" and r.stage == "weights"]
    assert vllm and "Q4_K_M" in vllm[0].reason
    assert "llama-cpp" in result.best_by_engine
    assert engine_accepts(KB.formats, "llama-cpp", "q4_k_m").status is CompatStatus.NATIVE


def test_a_gpu_without_a_price_asks_for_one_and_a_typed_price_wins():
    unpriced = HardwareOption(gpu_id="rtx-4090-24gb")
    result = plan_capacity(spec(hardware=(unpriced,), engines=("llama-cpp",)), KB)
    assert result.best is None
    assert any(r.stage == "price" and "enter your price" in r.reason for r in result.rejections)
    priced = plan_capacity(spec(hardware=(unpriced.model_copy(update={"usd_per_gpu_hour": 0.5}),),
                                engines=("llama-cpp",)), KB)
    assert priced.best is not None and priced.best.cost.usd_per_gpu_hour == 0.5
    assert priced.best.cost.price_source == "your price"


def test_on_premises_cost_is_amortisation_plus_power_at_the_pue():
    owned = OnPremisesCost(purchase_usd_per_gpu=30_000, amortisation_months=36, energy_usd_per_kwh=0.12, pue=1.5)
    amortisation, power = on_premises_usd_per_gpu_hour(owned, tdp_watts=700)
    assert amortisation == pytest.approx(30_000 / (36 * 730.5))
    assert power == pytest.approx(0.7 * 1.5 * 0.12)
    result = plan_capacity(spec(cost_basis=CostBasis.ON_PREMISES, on_premises=owned, hardware=(H100,),
                                engines=("vllm",)), KB)
    assert result.best.cost.usd_per_gpu_hour == pytest.approx(amortisation + power)
    with pytest.raises(ValidationError, match="on-premises costs need"):
        spec(cost_basis=CostBasis.ON_PREMISES)


def test_users_are_planned_as_the_most_they_could_send_and_said_so():
    result = plan_capacity(spec(load=LoadSpec(users=200, think_time_s=50.0)), KB)
    assert result.load_rate_per_s == pytest.approx(4.0)
    assert any("200 users" in note for note in result.notes)
    assert result.best.users_per_instance > 0


def test_bad_specs_get_messages_not_tracebacks():
    with pytest.raises(ValidationError, match="either an arrival rate or a number of users"):
        LoadSpec()
    with pytest.raises(ServewiseInputError, match="unknown engine"):
        plan_capacity(spec(engines=("tgi-9000",)), KB)
    with pytest.raises(ServewiseInputError):
        plan_capacity(spec(model_id="no-such-model"), KB)


def test_cost_and_percentile_arithmetic():
    assert percentile([], 95) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile(list(range(1, 101)), 95) == 95
    free = cost_of(2, 1.0, "x", output_tokens_per_s=0.0)
    assert free.usd_per_million_output_tokens is None


def test_the_winners_launch_command_round_trips_and_its_benchmark_uses_the_same_workload():
    from calculators.launch.settings import settings_from_command
    from calculators.operations.bench_plan import build_bench_plan
    from calculators.planner.verify import bench_request, launch_command

    result = plan_capacity(spec(), KB)
    for candidate in result.best_by_engine.values():
        command = launch_command(result, candidate, KB)
        typed = " ".join([*(f"{k}={v}" for k, v in command.env.items()), *command.words])
        parsed = settings_from_command(typed, KB)
        assert parsed.engine == candidate.shape.engine
        from calculators.engines import adapter

        tp_key = adapter(candidate.shape.engine).tensor_parallel_key
        for key in (candidate.concurrency_setting, *([tp_key] if tp_key else [])):
            assert getattr(parsed.settings, key) == getattr(candidate.settings, key), (typed, key)
        request = bench_request(result, candidate)
        plan = build_bench_plan(request, KB)
        assert request.short_input_tokens == 1024 and request.short_output_tokens == 256
        assert max(request.request_rates_per_s) == pytest.approx(candidate.max_rate_per_instance, rel=1e-3)
        assert plan.engines[0].commands, "the winner's engine gets runnable benchmark commands"


def test_users_readout_grows_with_think_time_and_names_engines_it_cannot_simulate():
    from calculators.hardware.catalog import machine_for_gpu_id
    from calculators.memory.compare import ComparisonInputs, Workload, compare_engine, model_weights
    from calculators.model.catalog import architecture_from_catalog
    from calculators.planner.readout import users_at_slo

    arch = architecture_from_catalog("llama-3.1-8b", KB)
    machine = machine_for_gpu_id(KB, "h100-sxm-80gb")
    weights = model_weights(KB.formats, arch, "bf16").bytes
    row = compare_engine(ComparisonInputs(arch, machine, weights), "vllm", Workload(4096, 8))
    short = users_at_slo(arch, machine, "vllm", row.settings, row.plan, weights, 4096, think_time_s=10.0)
    long = users_at_slo(arch, machine, "vllm", row.settings, row.plan, weights, 4096, think_time_s=60.0)
    assert short.users and long.users and long.users > short.users
    assert (short.prompt_tokens, short.output_tokens) == (3840, 256)
    assert long.rate_per_s == pytest.approx(short.rate_per_s)  # the rate within the SLO is the plan's, not the users'
    mlx_machine = machine_for_gpu_id(KB, "m4-max-40c-128gb")
    mlx = compare_engine(ComparisonInputs(arch, mlx_machine, weights), "mlx-lm", Workload(4096, 1))
    readout = users_at_slo(arch, mlx_machine, "mlx-lm", mlx.settings, mlx.plan, weights, 4096)
    assert readout.users is None and "dense BF16 throughput" in readout.reason  # unknown for Apple in the catalog
    m2_max = machine_for_gpu_id(KB, "m2-max-96gb")  # the catalog's sourced 13.6 TFLOPS FP16 (metal-benchmarks)
    assert m2_max.dense_bf16_flops_per_s == pytest.approx(13.6e12)
    mlx = compare_engine(ComparisonInputs(arch, m2_max, weights), "mlx-lm", Workload(4096, 1))
    lenient = SloSpec(ttft_s=15.0, itl_s=0.2)  # 16 GB of BF16 weights at 400 GB/s: a decode pass alone ~40 ms+
    readout = users_at_slo(arch, m2_max, "mlx-lm", mlx.settings, mlx.plan, weights, 4096, slo=lenient)
    # a 3,840-token prompt takes seconds of prefill at 13.6 TFLOPS, so one instance sustains a trickle only
    assert readout.reason is None and readout.users is not None and readout.rate_per_s > 0


def test_an_rtx_3090_is_planned_from_its_sourced_bf16_rate_instead_of_refused():
    # knowledge/gpus.yaml: 71.2 dense BF16 TFLOPS with FP32 accumulate (NVIDIA RTX Blackwell whitepaper Table 3,
    # as quoted); until it was sourced the planner refused the card ("the catalog lacks ... dense BF16 throughput").
    assert KB.gpus.get("rtx-3090-24gb").dense_bf16_tflops == 71.2
    rtx3090 = HardwareOption(gpu_id="rtx-3090-24gb", max_gpus_per_host=2, usd_per_gpu_hour=0.22)
    result = plan_capacity(spec(engines=("llama-cpp", "vllm"), hardware=(rtx3090,),
                                load=LoadSpec(arrival_rate_per_s=0.5), slo=SloSpec(ttft_s=4.0, itl_s=0.1)), KB)
    assert not [r for r in result.rejections if r.stage == "hardware"]
    best = result.best
    assert best is not None and best.meets_load and best.cost.usd_per_gpu_hour == 0.22
    assert best.at_max_rate is not None and best.at_max_rate.ttft_s <= 4.0


def test_sglang_candidates_above_its_cuda_graph_cap_are_named_in_the_assumptions():
    # SGLang's rule for an L4 (24 GB, tp 1): cuda_graph_max_bs 48 (plan.py auto_chunk_and_graph_sizes); a candidate
    # allowed 64 running requests decodes its larger batches eagerly, at least 32 x 0.257 ms (sglang#1401) a step
    result = plan_capacity(spec(engines=("sglang",), hardware=(L4,), concurrency_options=(8, 64)), KB)
    notes = [note for note in result.notes if "CUDA graph" in note]
    assert len(notes) == 1 and "`cuda_graph_max_bs` = 48" in notes[0] and "8.2\u00a0ms" in notes[0]
    lighter = plan_capacity(spec(engines=("sglang",), hardware=(L4,), concurrency_options=(8,)), KB)
    assert not [note for note in lighter.notes if "CUDA graph" in note]


def test_users_readout_runs_on_a_links_calibration_for_its_own_engine_and_says_which_basis():
    """A calibration for vLLM on HBM sets vLLM's step times there (half the memory efficiency: fewer users) and the
    readout carries it as its basis with the calibration's band; SGLang on the same card keeps the default fit."""
    from calculators.engines import adapter
    from calculators.hardware.catalog import machine_for_gpu_id
    from calculators.memory.compare import ComparisonInputs, Workload, compare_engine, model_weights
    from calculators.model.catalog import architecture_from_catalog
    from calculators.planner.readout import users_at_slo
    from calculators.planner.search import instance_speed_params
    from calculators.speed.calibration import CalibrationProfile
    from calculators.speed.model import Band

    arch = architecture_from_catalog("llama-3.1-8b", KB)
    machine = machine_for_gpu_id(KB, "h100-sxm-80gb")
    weights = model_weights(KB.formats, arch, "bf16").bytes
    row = compare_engine(ComparisonInputs(arch, machine, weights), "vllm", Workload(4096, 8))
    default = users_at_slo(arch, machine, "vllm", row.settings, row.plan, weights, 4096)
    fitted, _basis = instance_speed_params(machine, adapter("vllm"))
    band = Band(low=-0.04, high=0.03, median_abs=0.02, n_points=4)
    slower = CalibrationProfile(
        engine="vllm", hardware_class="datacenter-hbm", label="our H100",
        memory_efficiency=fitted.memory_efficiency / 2,
        decode_overhead_s=fitted.decode_overhead_s * 2, compute_efficiency=fitted.compute_efficiency,
        prefill_overhead_s=fitted.prefill_overhead_s, decode_band=band, n_measurements=4)
    calibrated = users_at_slo(arch, machine, "vllm", row.settings, row.plan, weights, 4096, calibration=slower)
    assert default.basis is not None and default.basis.kind == "default-fit"
    assert default.decode_band == fitted.decode_band
    assert calibrated.basis is not None and calibrated.basis.kind == "calibration"
    assert calibrated.decode_band == band
    assert default.users and calibrated.users and calibrated.users < default.users
    sglang = compare_engine(ComparisonInputs(arch, machine, weights), "sglang", Workload(4096, 8))
    other = users_at_slo(arch, machine, "sglang", sglang.settings, sglang.plan, weights, 4096, calibration=slower)
    assert other.basis is not None and other.basis.kind == "default-fit"
