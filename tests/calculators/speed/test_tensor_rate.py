"""Every path that turns an accelerator into a time uses the engine's own tensor rate.

llama.cpp's (and so Ollama's) matmuls accumulate in FP16 (engines/llama_cpp/speed.py cites ggml-cuda.cu), so on a
GeForce card, whose FP32-accumulate rate is half its FP16-accumulate one, they run at the FP16-accumulate figure;
vLLM runs at the catalog's BF16 (FP32-accumulate) figure. The rule lives in the speed parameters
(`SpeedParams.fp16_accumulate`, read by `model.tensor_flops_per_s`). Each test below states it as an equivalence
per path: llama.cpp on a card with rates (BF16 B, FP16-accumulate F) gives what it gives on a card whose only rate
is F, and vLLM what it gives on a card whose only rate is B; and the rate matters on that path (F alone differs
from B alone), so a path that picked the wrong rate, or ignored the choice, fails.
"""

from __future__ import annotations

import pytest

from calculators.engines import adapter
from calculators.hardware.catalog import catalog_gpu, machine_for_gpu
from calculators.memory.compare import model_weights
from calculators.model.catalog import architecture_from_catalog
from calculators.planner.search import instance_step_cost
from calculators.speed.accuracy import sweep_rows
from calculators.speed.calibrate import calibrate
from calculators.speed.fit import PREFILL_METRICS, fit_table, observations
from calculators.speed.imports.run import ImportedRun
from calculators.speed.model import Accelerator, ModelShape
from calculators.speed.predict import engine_step_costs, estimate_speed
from knowledge.loader import load_knowledge
from knowledge.speed import load_speed_measurements

KB = load_knowledge()
B, F = 165.2e12, 330.3e12  # RTX 4090: BF16 (FP32 accumulate) and FP16-accumulate dense tensor flop/s (Ada whitepaper)
BOTH = Accelerator(hardware_class="consumer-gddr", memory_bandwidth_bytes_per_s=1008e9, flops_per_s=B,
                   fp16_acc_flops_per_s=F, label="RTX 4090")
ONLY_F = BOTH.model_copy(update={"flops_per_s": F, "fp16_acc_flops_per_s": None})
ONLY_B = BOTH.model_copy(update={"fp16_acc_flops_per_s": None})
SHAPE = ModelShape(weights_read_bytes=16e9, params_active=8e9, n_layers=32, attention_q_dim=4096,
                   kv_bytes_per_token=131072)
#: engine -> the single-rate card it must behave as on BOTH
SEEN_AS = {"llama-cpp": ONLY_F, "ollama": ONLY_F, "vllm": ONLY_B, "sglang": ONLY_B}


@pytest.mark.parametrize("engine", sorted(SEEN_AS))
def test_estimate_speed(engine):
    def rates(hw):
        got = estimate_speed(SHAPE, hw, engine, concurrency=64, prompt_tokens=4096)
        return got.prefill_tokens_per_s.value, got.decode_tokens_per_s_at_concurrency.value

    assert rates(BOTH) == rates(SEEN_AS[engine])
    assert rates(ONLY_F)[0] > rates(ONLY_B)[0]


@pytest.mark.parametrize("engine", sorted(SEEN_AS))
def test_engine_step_costs(engine):
    def cost(hw):
        return engine_step_costs((engine,), SHAPE, hw)[0].cost

    assert cost(BOTH) == cost(SEEN_AS[engine])
    assert cost(ONLY_F).step_seconds(4096, 0.0) < cost(ONLY_B).step_seconds(4096, 0.0)


@pytest.mark.parametrize("engine", ["llama-cpp", "vllm"])
def test_calibrate(engine):
    runs = [ImportedRun(tool="llama-bench", prompt_tokens=n, prefill_tokens_per_s=rate)
            for n, rate in ((512, 9000.0), (4096, 6000.0))]

    def profile(hw):
        return calibrate(runs, SHAPE, hw, engine).profile

    assert profile(BOTH) == profile(SEEN_AS[engine])
    assert profile(ONLY_F).compute_efficiency != profile(ONLY_B).compute_efficiency


def _with_rates(data, hardware_id, bf16_tflops, fp16_acc_tflops):
    hardware = tuple(h.model_copy(update={"dense_fp16_tflops": bf16_tflops, "dense_fp16_acc_tflops": fp16_acc_tflops})
                     if h.id == hardware_id else h for h in data.hardware)
    return data.model_copy(update={"hardware": hardware})


DATA = load_speed_measurements()
CARD = "rtx-4090-24gb"  # measured with llama.cpp (pp512) and vLLM (AccelMark) in the fit file


def test_the_fit_and_its_features():
    both = _with_rates(DATA, CARD, B / 1e12, F / 1e12)
    only = {"llama-cpp": _with_rates(DATA, CARD, F / 1e12, "unknown"),
            "vllm": _with_rates(DATA, CARD, B / 1e12, "unknown")}
    for engine, alone in only.items():
        def features(data, engine=engine):
            return [(o.point.id, o.x_s) for o in observations(data, PREFILL_METRICS)
                    if o.point.hardware == CARD and o.point.engine == engine]

        assert features(both) and features(both) == features(alone)
        group = (engine, "consumer-gddr")
        assert fit_table(both).groups[group].params == fit_table(alone).groups[group].params
    assert fit_table(both).groups[("llama-cpp", "consumer-gddr")].params.fp16_accumulate
    assert not fit_table(both).groups[("vllm", "consumer-gddr")].params.fp16_accumulate
    assert (fit_table(only["llama-cpp"]).groups[("llama-cpp", "consumer-gddr")].params
            != fit_table(only["vllm"]).groups[("llama-cpp", "consumer-gddr")].params)


@pytest.mark.parametrize("engine", ["llama-cpp", "vllm"])
def test_serving_sweep_rows(engine):
    # the RTX 4090 AccelMark suite-F sweep (two levels); as llama.cpp it runs on llama.cpp's fitted group
    sweep = next(s for s in DATA.sweeps if s.hardware == CARD and "suite-f" in s.id)
    version = "b8000" if engine == "llama-cpp" else "vLLM 0.20.1"
    sweep = sweep.model_copy(update={"engine": engine, "engine_version": version})
    table = fit_table(DATA)

    def rows(bf16, fp16_acc):
        data = _with_rates(DATA, CARD, bf16, fp16_acc)
        return [(r.metric, r.predicted) for r in sweep_rows(data, table, {}, calibrated=False, sweeps=[sweep])]

    alone = (F / 1e12, "unknown") if engine == "llama-cpp" else (B / 1e12, "unknown")
    assert rows(B / 1e12, F / 1e12) == rows(*alone)
    assert rows(F / 1e12, "unknown") != rows(B / 1e12, "unknown")


@pytest.mark.parametrize("engine", ["llama-cpp", "ollama", "vllm"])
def test_the_capacity_planner(engine):
    arch = architecture_from_catalog("llama-3.1-8b", KB)
    weights = model_weights(KB.formats, arch, "bf16").bytes
    machine = machine_for_gpu(catalog_gpu(KB, "rtx-4090-24gb"), 1)
    cost = instance_step_cost(machine, adapter(engine), 1, weights, arch)
    rate = F if SEEN_AS[engine] is ONLY_F else KB.gpus.get("rtx-4090-24gb").dense_bf16_tflops * 1e12
    assert cost.flops_per_s == pytest.approx(rate)
