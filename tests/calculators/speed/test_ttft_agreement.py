"""One request on an idle server: the speed estimate's TTFT (Speed and Memory pages) and the simulator's (Simulator
page, the memory page's users at a latency target) are one figure: both sum the same step cost over the engine's
prefill chunks (calculators/simulator/roofline.py lone_prefill_seconds), so they agree to rounding.

Until session 10 they differed by 2x on every machine of two GPUs: the speed estimate summed both devices'
bandwidth and flop/s for every engine, while the simulator's step costs (calculators/planner/search.py,
instance_step_cost) count the devices only tensor parallelism splits a step across. vLLM and SGLang plans at
tensor parallel size 1 run on one of the two GPUs, and llama.cpp/Ollama's layer split runs each device's layers in
turn (calculators/engines/base.py, EngineAdapter.multi_gpu_split), so a single prompt goes at one device's speed.
"""

from __future__ import annotations

import pytest

from calculators.engines import adapter
from calculators.hardware.catalog import machine_for_gpu_id
from calculators.memory.compare import ComparisonInputs, Workload, compare_engine, model_weights
from calculators.model.catalog import architecture_from_catalog
from calculators.planner.readout import readout_lengths
from calculators.planner.search import instance_speed_params, instance_step_cost
from calculators.simulator.roofline import (
    ONE_PASS,
    PrefillSteps,
    StepCostModel,
    lone_prefill_seconds,
    prefill_chunk_seconds,
    prefill_pairs,
)
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, LengthKind, WorkloadSpec
from calculators.speed.command import plan_speed, plan_speed_inputs
from calculators.speed.model import prefill_seconds
from calculators.speed.predict import SpeedEstimate
from knowledge.loader import load_knowledge

KB = load_knowledge()
ARCH = architecture_from_catalog("llama-3.1-8b", KB)
WEIGHTS = model_weights(KB.formats, ARCH, "bf16").bytes
#: The memory page's typical link at 32k-token contexts (bench/typical_states.py, mem_ctx 32768): 32,512-token prompts.
CONTEXT_TOKENS = 32_768
#: Largest relative gap allowed between the two TTFTs of one request on an idle server: float rounding only (one sum
#: of the same step costs in two orders).
TOLERANCE = 1e-9


def _both_ttfts(engine_id: str, gpu_id: str, n_devices: int, overrides: dict | None = None) -> tuple[float, float]:
    """(speed estimate's TTFT, simulated TTFT of one request on the idle server) for one engine's plan, seconds."""
    machine = machine_for_gpu_id(KB, gpu_id, n_devices=n_devices)
    inputs = ComparisonInputs(ARCH, machine, WEIGHTS, {engine_id: overrides} if overrides else {})
    row = compare_engine(inputs, engine_id, Workload(CONTEXT_TOKENS, 8))
    assert row.plan is not None and row.settings is not None and row.plan.refusal is None, row
    prompt, output = readout_lengths(CONTEXT_TOKENS)
    estimate = plan_speed(engine_id, row.settings, row.plan, machine, ARCH, WEIGHTS, KB, prompt)
    assert isinstance(estimate, SpeedEstimate) and estimate.ttft_s is not None, estimate
    engine = adapter(engine_id)
    gpus = engine.devices_from_settings(row.settings) if engine.multi_gpu_split == "tensor" else machine.n_devices
    cost = instance_step_cost(machine, engine, gpus, WEIGHTS, ARCH)
    assert isinstance(cost, StepCostModel), cost
    assert engine.policy_from_plan is not None
    policy, kv_tokens = engine.policy_from_plan(row.settings, row.plan)
    one = WorkloadSpec(n_requests=1, arrival=ArrivalProcess.POISSON, rate_per_s=0.01,
                       prompt=LengthDistribution(kind=LengthKind.FIXED, value=prompt),
                       output=LengthDistribution(kind=LengthKind.FIXED, value=output))
    (record,) = simulate(one, policy, cost, kv_tokens).records
    assert record.ttft_s is not None
    return estimate.ttft_s.value, record.ttft_s


@pytest.mark.parametrize("n_devices", [1, 2])
@pytest.mark.parametrize("gpu_id", ["h100-sxm-80gb", "a100-sxm-80gb"])
@pytest.mark.parametrize("engine_id", ["ollama", "llama-cpp", "vllm", "sglang"])
def test_one_request_on_an_idle_server_has_one_ttft(engine_id, gpu_id, n_devices):
    speed, simulated = _both_ttfts(engine_id, gpu_id, n_devices)
    assert simulated == pytest.approx(speed, rel=TOLERANCE), (speed, simulated)


def test_only_tensor_parallelism_speeds_one_prompt_up():
    one_gpu, _ = _both_ttfts("vllm", "h100-sxm-80gb", 1)
    unsplit, _ = _both_ttfts("vllm", "h100-sxm-80gb", 2)
    split, simulated_split = _both_ttfts("vllm", "h100-sxm-80gb", 2, {"tensor_parallel_size": 2})
    assert unsplit == pytest.approx(one_gpu)  # tensor parallel size 1: the second GPU does nothing for this prompt
    assert split < 0.6 * one_gpu  # two ranks split every step
    # the simulator adds the ranks' all-reduce per token over NVLink (the speed estimate does not model it): 7 % here
    assert split < simulated_split < 1.1 * split
    # chunked prefill is not what set them apart: one pass is within a few per cent of the engines' chunks here
    layers_one, _ = _both_ttfts("llama-cpp", "h100-sxm-80gb", 1)
    layers_two, _ = _both_ttfts("llama-cpp", "h100-sxm-80gb", 2)
    assert layers_two == pytest.approx(layers_one)  # layers split over devices take turns


def test_the_cli_says_which_devices_count():
    machine = machine_for_gpu_id(KB, "h100-sxm-80gb", n_devices=2)
    row = compare_engine(ComparisonInputs(ARCH, machine, WEIGHTS), "llama-cpp", Workload(CONTEXT_TOKENS, 8))
    inputs = plan_speed_inputs("llama-cpp", row.settings, row.plan, machine, ARCH, WEIGHTS, KB)
    assert inputs.hardware.memory_bandwidth_bytes_per_s == pytest.approx(machine.memory_bandwidth_bytes_per_s)
    assert any("1 of the 2 devices" in note for note in inputs.notes), inputs.notes


def test_mlx_lm_prefills_all_but_the_last_token_in_steps_in_both_models():
    machine = machine_for_gpu_id(KB, "m2-max-96gb")  # the catalog's sourced 13.6 TFLOPS FP16
    row = compare_engine(ComparisonInputs(ARCH, machine, WEIGHTS), "mlx-lm", Workload(8192, 1))
    inputs = plan_speed_inputs("mlx-lm", row.settings, row.plan, machine, ARCH, WEIGHTS, KB)
    assert inputs.prefill_steps == PrefillSteps(chunk_tokens=2048, last_token_apart=True)  # --prefill-step-size
    engine = adapter("mlx-lm")
    cost = instance_step_cost(machine, engine, 1, WEIGHTS, ARCH)
    assert isinstance(cost, StepCostModel) and engine.policy_from_plan is not None
    policy, kv_tokens = engine.policy_from_plan(row.settings, row.plan)
    params, _basis = instance_speed_params(machine, engine)
    for prompt in (100, 2048, 2049, 7936):
        one = WorkloadSpec(n_requests=1, arrival=ArrivalProcess.POISSON, rate_per_s=0.01,
                           prompt=LengthDistribution(kind=LengthKind.FIXED, value=prompt),
                           output=LengthDistribution(kind=LengthKind.FIXED, value=16))
        (record,) = simulate(one, policy, cost, kv_tokens).records
        speed = prefill_seconds(inputs.model, inputs.hardware, params, prompt, inputs.prefill_steps)
        assert record.ttft_s == pytest.approx(speed, rel=TOLERANCE), prompt


def test_a_chunk_late_in_a_prompt_costs_more_and_the_cut_changes_only_the_steps():
    machine = machine_for_gpu_id(KB, "h100-sxm-80gb")
    cost = instance_step_cost(machine, adapter("vllm"), 1, WEIGHTS, ARCH)
    assert isinstance(cost, StepCostModel)
    rates = cost.rates
    # the same 2,048-token chunk at growing depth: its attention over the cached prefix grows linearly
    ends = (2048, 8192, 16384, 32768)
    chunk = [prefill_chunk_seconds(rates, 2048, end) for end in ends]
    assert chunk == sorted(chunk) and chunk[-1] > 1.5 * chunk[0]
    rises = [(chunk[k + 1] - chunk[k]) / (ends[k + 1] - ends[k]) for k in range(3)]
    assert rises == pytest.approx([rises[0]] * 3, rel=1e-9)  # linear in the chunk's position (compute-bound)
    # however a prompt is cut its chunks hold n^2 / 2 (query, key) pairs, the causal attention of one pass
    n = 32_512
    for step in (512, 2048, 8192, n):
        cuts = [(min(step, n - start), min(start + step, n)) for start in range(0, n, step)]
        assert sum(prefill_pairs(c, end) for c, end in cuts) == pytest.approx(n * n / 2.0)
    # so a finer cut adds only steps: each pays the step overhead and reads the weights again
    times = [lone_prefill_seconds(rates, n, PrefillSteps(chunk_tokens=step)) for step in (512, 2048, 8192)]
    one_pass = lone_prefill_seconds(rates, n, ONE_PASS)
    assert times[0] > times[1] > times[2] > one_pass
    assert times[0] - one_pass < 0.1 * one_pass  # 64 steps of a 32k prompt on an H100: under a tenth more
