"""SGLang's CUDA-graph batch cap: decode batches above cuda_graph_max_bs run eagerly, at least the host's launch
time; a calibration on a level above the cap fits that launch time, not the GPU's decode step."""

from __future__ import annotations

import pytest

from calculators.engines.sglang.plan import SglangSettings, auto_chunk_and_graph_sizes, plan_sglang
from calculators.engines.sglang.scheduler import (
    EAGER_HOST_S_PER_LAYER,
    SIMULATOR_KNOBS,
    SglangPolicy,
    policy_from_plan,
)
from calculators.hardware.machine import Machine
from calculators.simulator.engines import policy_for_gpu
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, WorkloadSpec, draw_requests
from calculators.speed import accuracy
from calculators.speed.calibrate import ServingObservation, above_graph_cap, fit_serving, measured_running
from calculators.speed.model import Accelerator, Band, ModelShape, SpeedParams
from calculators.units import MIB
from knowledge.loader import load_knowledge
from knowledge.speed import load_speed_measurements
from tests.support.models import gqa

# nvidia-smi total of an A100-SXM4-40GB (shared/research/hardware.md table: 40960 MiB); SGLang's 35-60 GiB row
A100_40GB_MIB = 40960
LAYERS = 24  # Qwen2.5-0.5B's layer count; any count works, the floor is per layer
FLOOR_S = LAYERS * EAGER_HOST_S_PER_LAYER
# a 1 ms decode step (1e9 B of weights at 1e12 B/s), far below the eager floor of 24 layers (about 6.2 ms)
COST = StepCostModel(memory_bandwidth_bytes_per_s=1e12, flops_per_s=1e15, weights_bytes=1e9, active_params=1e8,
                     kv_bytes_per_token=0, memory_efficiency=1.0, compute_efficiency=1.0, n_layers=LAYERS)


def burst(n: int, prompt: int = 10, output: int = 11) -> WorkloadSpec:
    """n requests sent together (closed loop, no think time): every decode step after the prefill has n sequences."""
    fixed = LengthDistribution(kind="fixed", value=prompt)
    return WorkloadSpec(n_requests=n, arrival=ArrivalProcess.CLOSED, n_clients=n, think_time_s=0.0, prompt=fixed,
                        output=LengthDistribution(kind="fixed", value=output))


def decode_s(result) -> float:
    """Seconds from the first token to the end of the first request (its decode steps)."""
    record = result.records[0]
    return record.e2e_s - record.ttft_s


def test_eager_launch_figure_is_the_one_sglang_1401_printed():
    # sgl-project/sglang#1401 (2024-09-12): Meta-Llama-3-8B batch-1 decode, flashinfer, 0.00823 s median without
    # CUDA graphs (0.00735 s with them); Llama-3-8B has 32 layers
    assert pytest.approx(0.00823 / 32) == EAGER_HOST_S_PER_LAYER


def test_batch_33_is_slower_than_32_on_a_cap_of_32():
    policy = SglangPolicy(cuda_graph_max_bs=32)
    at_32 = simulate(burst(32), policy, COST, 100_000)
    at_33 = simulate(burst(33), policy, COST, 100_000)
    assert decode_s(at_32) == pytest.approx(10 * 0.001)  # ten graph-replayed steps at the GPU's 1 ms
    assert decode_s(at_33) == pytest.approx(10 * FLOOR_S)  # ten eager steps at the host's launch time
    assert at_32.diagnostics.eager_decode_steps == 0
    assert at_33.diagnostics.eager_decode_steps == 10 and at_33.diagnostics.decode_steps == 10
    assert any(note.code == "eager_decode_steps" for note in at_33.notes)
    assert not any(note.code == "eager_decode_steps" for note in at_32.notes)


def test_ignoring_the_cap_would_make_33_as_fast_as_32():
    uncapped = simulate(burst(33), SglangPolicy(), COST, 100_000)  # GPU unknown: no cap simulated
    assert decode_s(uncapped) == pytest.approx(10 * 0.001)
    assert uncapped.diagnostics.eager_decode_steps == 0


def test_an_eager_step_takes_the_gpu_time_when_that_is_longer():
    # steps that grow with their KV read cross the floor mid-span: each step is max(roofline, floor)
    n, prompt, output = 33, 100, 11
    kv_s_per_token = 1e-5 / n  # each step reads n more tokens: 10 us longer
    weights_s = FLOOR_S - n * prompt * kv_s_per_token - 5.5 * n * kv_s_per_token  # step 5 or 6 crosses the floor
    cost = COST.model_copy(update={"weights_bytes": weights_s * 1e12, "kv_bytes_per_token": kv_s_per_token * 1e12})
    result = simulate(burst(n, prompt, output), SglangPolicy(cuda_graph_max_bs=32), cost, 100_000)
    steps = [weights_s + kv_s_per_token * n * (prompt + j) for j in range(1, output)]
    assert min(steps) < FLOOR_S < max(steps)
    assert decode_s(result) == pytest.approx(sum(max(step, FLOOR_S) for step in steps))


def test_the_cap_comes_from_sglangs_gpu_memory_rule():
    knob = next(k for k in SIMULATOR_KNOBS if k.field == "cuda_graph_max_bs")
    assert knob.default_for_gpu is not None
    assert knob.default_for_gpu(A100_40GB_MIB * MIB) == auto_chunk_and_graph_sizes(A100_40GB_MIB, 1)[1] == 32
    assert knob.default_for_gpu(81559 * MIB) == 256  # an H100's nvidia-smi total: the 60-160 GiB row
    policy = policy_for_gpu("sglang", A100_40GB_MIB * MIB)
    assert policy.cuda_graph_max_bs == 32 and policy.scheduler_spec(10_000).graph_max_batch == 32


def test_a_plan_carries_its_cap_to_the_scheduler():
    llama = gqa(32, 8, 128, 32, 131072, "Llama-3.1-8B-Instruct")
    machine = Machine(device_memory_bytes=A100_40GB_MIB * MIB)
    settings = SglangSettings(mem_fraction_static=0.88, context_length=8192)
    plan = plan_sglang(llama, settings, machine, 16 * 10**9)
    policy, _tokens = policy_from_plan(settings, plan)
    assert plan.cuda_graph_max_bs == 32 and policy.cuda_graph_max_bs == 32
    explicit = SglangSettings(mem_fraction_static=0.88, context_length=8192, cuda_graph_max_bs=128)
    policy, _tokens = policy_from_plan(explicit, plan_sglang(llama, explicit, machine, 16 * 10**9))
    assert policy.scheduler_spec(10_000).graph_max_batch == 128


def test_a_level_above_the_cap_is_told_by_littles_law_on_its_own_medians():
    # AccelMark suite A, SGLang 0.5.6 on an A100 40 GB (knowledge/speed_measurements.yaml, result.json of run
    # 958afbbd): TPOT 15.63, 36.16, 41.47 ms at 5, 25, 100 requests/s with outputs of about 160 tokens, so about
    # 12, 144 and 660 requests decoding (an overloaded level finishes fewer than arrive: an upper estimate)
    data = load_speed_measurements()
    sweep = next(s for s in data.sweeps if s.id.startswith("am-nvidia-a100-sxm4-40gbx1-suite-a-nvidia-sglang"))
    memory = {g.id: g.memory_bytes for g in load_knowledge().gpus.all_gpus}
    policy = accuracy.sweep_policy(data, sweep, memory)
    assert policy.cuda_graph_max_bs == 32  # the 35-60 GiB row of SGLang's rule, tp 1
    levels = [accuracy.level_observation(sweep, k, True) for k in range(3)]
    running = [measured_running(level) for level in levels]
    assert running[0] == pytest.approx(12, abs=1) and running[1] == pytest.approx(144, abs=3)
    assert above_graph_cap(levels, policy, 10**6) == levels[1:]


def test_one_level_above_the_cap_fits_the_eager_launch_time_and_keeps_the_decode_step():
    band = Band(low=-0.1, high=0.1, median_abs=0.05, n_points=5)
    start = SpeedParams(memory_efficiency=0.6, decode_overhead_s=0.002, compute_efficiency=0.5,
                        prefill_overhead_s=0.02, decode_band=band, prefill_band=band)
    model = ModelShape(weights_read_bytes=2e9, params_active=1e9, n_layers=16, attention_q_dim=2048,
                       kv_bytes_per_token=32768)
    hw = Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=2e12, flops_per_s=3e14)
    workload = WorkloadSpec(n_requests=80, arrival=ArrivalProcess.POISSON, rate_per_s=40.0,
                            prompt=LengthDistribution(kind="fixed", value=64),
                            output=LengthDistribution(kind="fixed", value=50))
    level = ServingObservation("40 requests/s", workload, 0.03, 0.02, draw_requests(workload))
    policy = SglangPolicy(cuda_graph_max_bs=8)
    assert measured_running(level) == pytest.approx(40 * 49 * 0.02)  # 39 decoding: above 8
    fitted = fit_serving([level], model, hw, start, policy, 10**6, max_evals=20)
    assert fitted.memory_efficiency == start.memory_efficiency and fitted.decode_overhead_s == start.decode_overhead_s
    assert fitted.eager_host_scale > 1.0
    graph = fit_serving([level], model, hw, start, SglangPolicy(cuda_graph_max_bs=64), 10**6, max_evals=20)
    assert graph.eager_host_scale == 1.0 and graph.memory_efficiency != start.memory_efficiency
