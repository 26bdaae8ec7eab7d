"""Speed model arithmetic (hand-checked), the default fit, calibration profiles and calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from calculators.errors import ServewiseInputError
from calculators.i18n import language
from calculators.simulator.engines import default_policy
from calculators.speed.calibrate import calibrate, serving_observation, simulate_medians
from calculators.speed.calibration import CalibrationProfile, decode_profile, encode_profile
from calculators.speed.fit import BAND_MIN_POINTS, default_fit, fit_line
from calculators.speed.imports.read import read_benchmark
from calculators.speed.imports.run import ImportedRun
from calculators.speed.model import (
    Accelerator,
    Band,
    ModelShape,
    SpeedParams,
    decode_step_seconds,
    group_name,
    prefill_seconds,
)
from calculators.speed.predict import (
    MAX_SWEEP_CONCURRENCY,
    decode_by_concurrency,
    estimate_speed,
    speed_params,
    sweep_concurrencies,
)
from knowledge.speed import FIT_FILE, HOLDOUT_FILE, load_speed_measurements

DATA = Path(__file__).resolve().parents[2] / "data" / "speed"
BAND = Band(low=-0.1, high=0.2, median_abs=0.05, n_points=10)
PARAMS = SpeedParams(
    memory_efficiency=0.5,
    decode_overhead_s=0.001,
    compute_efficiency=0.5,
    prefill_overhead_s=0.01,
    decode_band=BAND,
    prefill_band=BAND,
)
HW = Accelerator(hardware_class="consumer-gddr", memory_bandwidth_bytes_per_s=1e12, flops_per_s=100e12)
MODEL = ModelShape(weights_read_bytes=1e9, params_active=1e9, n_layers=10, attention_q_dim=1000, kv_bytes_per_token=1e5)


def test_decode_step_by_hand():
    # 1e9 bytes / (1e12 B/s x 0.5) = 2 ms, + 1 ms overhead
    assert decode_step_seconds(MODEL, HW, PARAMS) == pytest.approx(0.003)
    # 4 sequences x 1000 tokens x 1e5 bytes = 4e8 more bytes: 2.8 ms + 1 ms
    assert decode_step_seconds(MODEL, HW, PARAMS, batch=4, context_tokens=1000) == pytest.approx(0.0038)


def test_prefill_by_hand_includes_attention():
    # 2 x 1e9 x 1000 + 2 x 10 x 1000 x 1000^2 = 2.02e12 flop / (1e14 x 0.5) = 40.4 ms, + 10 ms
    assert prefill_seconds(MODEL, HW, PARAMS, 1000) == pytest.approx(0.0504)
    assert prefill_seconds(MODEL, HW.model_copy(update={"flops_per_s": None}), PARAMS, 1000) is None
    with pytest.raises(ServewiseInputError):
        prefill_seconds(MODEL, HW, PARAMS, 0)


def test_fit_line_recovers_and_clamps():
    x = np.array([1.0, 2.0, 4.0])
    slope, intercept = fit_line(x, 1.5 * x + 0.25)
    assert (slope, intercept) == (pytest.approx(1.5), pytest.approx(0.25))
    slope, _ = fit_line(x, 0.5 * x)  # faster than peak bandwidth: efficiency capped at 1
    assert slope == 1.0


def test_default_fit_covers_every_class_and_never_reads_the_holdout():
    table = default_fit()
    for cls in ("consumer-gddr", "datacenter-hbm", "apple-unified", "cpu"):
        assert ("llama-cpp", cls) in table.groups
    fitted = {pid for g in table.groups.values() for pid in g.decode_points + g.prefill_points}
    held = {p.id for p in load_speed_measurements(HOLDOUT_FILE).points}
    assert fitted and not fitted & held
    assert not any("4167" in p.source for p in load_speed_measurements(FIT_FILE).points)


def test_lookup_falls_back_and_says_so():
    _, basis = speed_params("ollama", "apple-unified")  # ollama runs llama.cpp kernels
    assert basis.group == "llama-cpp / apple-unified" and basis.kind == "default-fit"
    _, basis = speed_params("vllm", "apple-unified")
    # the note names the engines and the class as people know them; the group keeps the ids (code matches on it)
    assert basis.note == ("No measurements of vLLM on Apple silicon (unified memory): parameters of "
                          "llama.cpp (llama-server) on the same class.")
    _, basis = speed_params("sglang", "consumer-gddr")  # a similar runtime's parameters first
    assert basis.group == "vllm / consumer-gddr"
    assert group_name(basis.group) == "vLLM on consumer GPUs (GDDR)"
    with language("es"):
        assert group_name(basis.group) == "vLLM en GPU de consumo (GDDR)"
        _, basis = speed_params("vllm", "apple-unified")
        assert "consumer" not in basis.note and "apple-unified" not in basis.note and "vLLM" in basis.note


def test_a_group_with_few_measurements_borrows_its_class_spread_and_says_so():
    table = default_fit()
    for (family, cls), group in table.groups.items():
        band = group.params.decode_band
        on_class = sum(len(g.decode_points) for (f, c), g in table.groups.items() if c == cls)
        if len(group.decode_points) >= BAND_MIN_POINTS or on_class == len(group.decode_points):
            assert band.group_points is None and band.n_points == len(group.decode_points), (family, cls)
        else:
            assert band.group_points == len(group.decode_points) and band.n_points == on_class, (family, cls)
    # vLLM on HBM rests on 3 V1 measurements from one host: its band is the class's, and the basis says so
    params, basis = speed_params("vllm", "datacenter-hbm")
    assert params.decode_band.group_points == 3 and params.decode_band.n_points > 3
    assert basis.note.startswith("Only 3 measurements of vLLM on data-centre GPUs (HBM)")
    assert params.decode_band.high - params.decode_band.low > 0.2  # three agreeing points gave a 5-point band
    _, basis = speed_params("llama-cpp", "consumer-gddr")  # 54 of its own
    assert basis.note == ""


def test_estimate_speed_bands_and_concurrency():
    est = estimate_speed(MODEL, HW, "llama-cpp", concurrency=8, prompt_tokens=512)
    one, many = est.decode_tokens_per_s_batch1, est.decode_tokens_per_s_at_concurrency
    assert one.low < one.value < one.high and many.value > one.value
    assert est.ttft_s is not None and est.ttft_s.low <= est.ttft_s.value <= est.ttft_s.high


def test_profile_round_trips_through_a_link():
    profile = CalibrationProfile(engine="vllm", hardware_class="datacenter-hbm", label="test", memory_efficiency=0.7,
                                 decode_overhead_s=0.002, compute_efficiency=0.6, prefill_overhead_s=0.02,
                                 decode_band=BAND, n_measurements=3)
    encoded = encode_profile(profile)
    assert len(encoded) < 600 and "=" not in encoded
    assert decode_profile(encoded) == profile
    assert decode_profile(profile.model_dump_json()) == profile


@pytest.mark.parametrize("bad", ["", "!!!", "eyJ2IjoxfQ", "x" * 5000, "{\"v\": 1}"])
def test_bad_profiles_are_refused(bad):
    with pytest.raises(ServewiseInputError):
        decode_profile(bad)


def test_calibrate_on_llama_bench_reproduces_the_run():
    runs = list(read_benchmark((DATA / "llama_bench_readme.json").read_text()).runs)
    model = ModelShape(
        weights_read_bytes=4677120000 - 306561024,
        params_active=7615616512,
        n_layers=28,
        attention_q_dim=3584,
        kv_bytes_per_token=57344,
    )
    hw = Accelerator(hardware_class="consumer-gddr", memory_bandwidth_bytes_per_s=716.8e9, flops_per_s=None)
    result = calibrate(runs, model, hw, "llama-cpp", label="RTX 4080 Qwen2.5 7B Q4_K_M")
    decode = [c for c in result.comparisons if c.metric == "decode_tokens_per_s"]
    assert len(decode) == 1 and abs(decode[0].error) < 0.01
    assert any("flop/s are unknown" in n for n in result.notes)
    # one decode rate fits one efficiency: its zero error is by construction, and the notes say so
    assert any("as many free parameters as measured values (1)" in n for n in result.notes)
    assert not any("peak memory bandwidth" in n for n in result.notes)


def test_a_run_faster_than_the_accelerators_peak_is_named_not_silently_fitted():
    """The same llama-bench run (Qwen2.5 7B Q4_K_M on an RTX 4080, 716.8 GB/s) told it ran BF16 weights (15.2 GB): at
    its measured decode rate that would read more than the card's peak bandwidth, so the fitted efficiency stops at 1
    and the calibration misses; the notes say the run is faster than the given model can go on this accelerator."""
    runs = list(read_benchmark((DATA / "llama_bench_readme.json").read_text()).runs)
    bf16 = ModelShape(weights_read_bytes=15.2e9, params_active=7615616512, n_layers=28, attention_q_dim=3584,
                      kv_bytes_per_token=57344)
    hw = Accelerator(hardware_class="consumer-gddr", memory_bandwidth_bytes_per_s=716.8e9, flops_per_s=None)
    result = calibrate(runs, bf16, hw, "llama-cpp")
    assert result.profile.memory_efficiency == 1.0
    decode = next(c for c in result.comparisons if c.metric == "decode_tokens_per_s")
    assert decode.error < -0.3  # the calibration cannot follow the run, and
    assert any("at least as fast as this model can go at the accelerator's peak memory bandwidth" in n
               for n in result.notes), result.notes
    assert not any("near zero by construction" in n for n in result.notes)  # (its errors are not near zero)
    with language("es"):
        spanish = calibrate(runs, bf16, hw, "llama-cpp").notes
    assert not any("peak memory bandwidth" in n for n in spanish)


def test_calibrate_serving_recovers_a_known_model():
    model = ModelShape(
        weights_read_bytes=2e9, params_active=1e9, n_layers=16, attention_q_dim=2048, kv_bytes_per_token=32768
    )
    hw = Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=2e12, flops_per_s=300e12)
    truth = PARAMS.model_copy(update={"memory_efficiency": 0.4, "decode_overhead_s": 0.003})
    policy = default_policy("vllm")
    run = ImportedRun(
        tool="vllm-bench-serve", load_kind="rate", load=4.0, n_requests=60, prompt_tokens=300, output_tokens=60
    )
    obs = serving_observation(run.model_copy(update={"ttft_ms_p50": 1.0, "itl_ms_p50": 1.0}), "synthetic")
    ttft, itl = simulate_medians(obs, model, hw, truth, policy, 10**6)
    measured = run.model_copy(update={"ttft_ms_p50": ttft * 1000, "itl_ms_p50": itl * 1000})
    # 80 evaluations (the default): the search starts from the default fit's vLLM / HBM group, fitted on V1
    # measurements only, whose 0.77 bandwidth efficiency lies further from this truth's 0.4 than the old start
    result = calibrate([measured], model, hw, "vllm", kv_capacity_tokens=10**6, max_evals=80)
    assert all(abs(c.error) < 0.05 for c in result.comparisons)


def test_a_serving_run_whose_requests_cannot_fit_the_launch_says_so():
    """A run of 300 + 60-token requests on a launch whose KV cache holds 100 tokens: no simulated request finishes,
    so there is nothing to compare; the error says why (it said 'none of the imported runs has a rate or latency')."""
    model = ModelShape(
        weights_read_bytes=2e9, params_active=1e9, n_layers=16, attention_q_dim=2048, kv_bytes_per_token=32768
    )
    hw = Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=2e12, flops_per_s=300e12)
    run = ImportedRun(tool="vllm-bench-serve", load_kind="rate", load=4.0, n_requests=20, prompt_tokens=300,
                      output_tokens=60, ttft_ms_p50=30.0, itl_ms_p50=5.0)
    with pytest.raises(ServewiseInputError) as info:
        calibrate([run], model, hw, "vllm", kv_capacity_tokens=100, max_evals=10)
    assert "no simulated request of 300 prompt + 60 output tokens finished" in str(info.value)


def test_the_decode_sweep_agrees_with_the_estimate_at_every_concurrency():
    """The speed page's chart and its text come from one model: at each swept concurrency the sweep's rates and
    bands are estimate_speed's, each sequence gets the total over the count, and more sequences never make one
    sequence faster nor all of them slower."""
    concurrencies = sweep_concurrencies(24)
    points = decode_by_concurrency(MODEL, HW, "vllm", concurrencies, context_tokens=2048)
    assert [p.concurrency for p in points] == concurrencies
    for point in points:
        est = estimate_speed(MODEL, HW, "vllm", concurrency=point.concurrency, prompt_tokens=2048)
        assert point.all_sequences == est.decode_tokens_per_s_at_concurrency
        assert point.per_sequence == est.per_sequence_tokens_per_s_at_concurrency
        assert point.all_sequences.value == pytest.approx(point.per_sequence.value * point.concurrency)
        assert point.per_sequence.low <= point.per_sequence.value <= point.per_sequence.high
    per_sequence = [p.per_sequence.value for p in points]
    together = [p.all_sequences.value for p in points]
    assert per_sequence == sorted(per_sequence, reverse=True) and together == sorted(together)


def test_sweep_concurrencies_spans_powers_of_two_past_the_choice():
    assert sweep_concurrencies(1) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert sweep_concurrencies(100) == [1, 2, 4, 8, 16, 32, 64, 100, 128, 256]
    assert sweep_concurrencies(3000)[-2:] == [3000, MAX_SWEEP_CONCURRENCY]
    assert sweep_concurrencies(MAX_SWEEP_CONCURRENCY)[-1] == MAX_SWEEP_CONCURRENCY
