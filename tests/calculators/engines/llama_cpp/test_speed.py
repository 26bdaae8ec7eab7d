"""llama.cpp's decode kernel paths in the speed fit, as read in its source (ggerganov/llama.cpp history).

At b1680 (afefa31, the Dec 2023 A100/H100 rows) F16 weight mat-vecs ran as a cuBLAS GEMM and quantized ones as MMVQ,
and no CUDA graph existed, so the host launched every kernel of every token (calculators/engines/llama_cpp/speed.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from calculators.engines.llama_cpp.speed import (
    CUBLAS_MATVEC_FAMILY,
    family_for_kernel_path,
    graphless_launches_per_token,
)
from calculators.speed.families import decode_family
from calculators.speed.fit import (
    DECODE_METRICS,
    Observation,
    default_fit,
    fit_rows,
    observation_seconds,
    observations,
)
from calculators.speed.model import Accelerator, Band, ModelShape, SpeedParams, decode_step_seconds
from knowledge.speed import load_speed_measurements


@pytest.mark.parametrize(("version", "backend", "quantized", "family"), [
    ("llama.cpp afefa31 (1680)", "CUDA", False, CUBLAS_MATVEC_FAMILY),
    ("llama.cpp 2b4ea35e (1422)", "ROCm", False, CUBLAS_MATVEC_FAMILY),  # the first build of the cuBLAS branch
    ("llama.cpp e7e4df03 (1843)", "CUDA", False, None),  # #4766 gave the branch its batch condition
    ("llama.cpp 8c570c94 (2836)", "CUDA", False, None),  # F16 weights take dequantize_mul_mat_vec
    ("llama.cpp afefa31 (1680)", "CUDA", True, None),  # quantized weights: MMVQ at every build
    ("llama.cpp afefa31 (1680)", "Metal", False, None),  # not ggml-cuda.cu
    ("llama.cpp 8cf6b42", "CUDA", False, None),  # no build number: cannot be dated
    ("llama.cpp afefa31 (1680)", "CUDA", None, None),  # weight type not recorded
])
def test_only_f16_weights_at_the_cublas_builds_take_their_own_family(version, backend, quantized, family):
    assert family_for_kernel_path(version, backend, quantized) == family
    assert decode_family("llama-cpp", version, backend, quantized) == (family or "llama-cpp")


def test_launch_counts_follow_the_b1680_graph():
    # per layer besides the weights 20; F16 mat-vec 3 kernels (src1 to F16, GEMM, back to F32), quantized 2
    # (quantize_q8_1, MMVQ); head: GET_ROWS, RMS_NORM, MUL and the output mat-vec
    assert graphless_launches_per_token(32, quantized=False, grouped_query=False) == 32 * 41 + 3 + 3
    assert graphless_launches_per_token(32, quantized=True, grouped_query=False) == 32 * 34 + 3 + 2
    assert graphless_launches_per_token(80, quantized=True, grouped_query=True) == 80 * 36 + 3 + 2


def test_the_fit_puts_the_b1680_rows_where_the_source_says():
    rows = {o.point.id: o for o in observations(load_speed_measurements(), DECODE_METRICS)}
    f16, q4 = rows["xd-a100-pcie-80gb-llama1-7b-f16-tg"], rows["xd-a100-pcie-80gb-llama1-7b-q4_0-tg"]
    assert f16.family == CUBLAS_MATVEC_FAMILY and q4.family == "llama-cpp"
    assert f16.launches == 1318 and q4.launches == 1093
    # rows of builds with CUDA graphs, or that cannot be dated, launch nothing extra
    assert rows["xd-a100-pcie-80gb-q4km-tg"].launches == 0 and rows["sb-tesla-v100-pcie-32gb-tg128"].launches == 0
    table = default_fit()
    assert table.groups[("llama-cpp", "datacenter-hbm")].params.graphless_launch_s > 0
    assert set(table.groups[(CUBLAS_MATVEC_FAMILY, "datacenter-hbm")].decode_points) == {
        i for i, o in rows.items() if o.family == CUBLAS_MATVEC_FAMILY}


def test_quantized_against_f16_speed_on_an_a100_follows_the_kernel_paths():
    # Measured on one A100 80GB PCIe at llama.cpp 1680 (XiongjieDai/GPU-Benchmarks-on-LLM-Inference README @eafac9d,
    # LLaMA table, mean TG): 7B Q4_0 136.7 t/s, 7B F16 73.91 t/s, a ratio of 1.85. One efficiency and one overhead for
    # both (the fit before these rules) predicted 144.1 / 69.7 = 2.07.
    table = default_fit()
    rows = {o.point.id: o for o in observations(load_speed_measurements(), DECODE_METRICS)}
    rate = {}
    for kind in ("q4_0", "f16"):
        o = rows[f"xd-a100-pcie-80gb-llama1-7b-{kind}-tg"]
        rate[kind] = 1.0 / observation_seconds(table.groups[(o.family, o.hardware_class)].params, o)
    assert rate["q4_0"] / rate["f16"] == pytest.approx(136.7 / 73.91, rel=0.10)  # the 10 % target


def _row(x_s: float, launches: float, y_s: float) -> Observation:
    point = load_speed_measurements().points[0]
    return Observation(point, "datacenter-hbm", "llama-cpp", x_s, y_s, launches)


def test_the_three_term_fit_recovers_a_line_with_launch_time():
    x = np.linspace(1e-3, 30e-3, 6)
    launches = np.asarray([0, 1100, 0, 2700, 1300, 2400], dtype=float)
    y = 1.25 * x + 2e-3 + 4.5e-6 * launches
    line = fit_rows([_row(a, b, c) for a, b, c in zip(x, launches, y, strict=True)])
    assert (line.slope, line.intercept, line.per_launch_s) == pytest.approx((1.25, 2e-3, 4.5e-6), rel=1e-6)


def test_the_three_term_fit_keeps_its_bounds():
    x = np.linspace(1e-3, 30e-3, 6)
    launches = np.asarray([0, 1100, 0, 2700, 1300, 2400], dtype=float)
    y = 0.8 * x + 1e-3 - 1e-7 * launches  # faster than peak bandwidth, launches that save time: both impossible
    line = fit_rows([_row(a, b, c) for a, b, c in zip(x, launches, y, strict=True)])
    assert line.slope >= 1.0 and line.intercept >= 0.0 and line.per_launch_s >= 0.0


def test_a_step_pays_for_the_launches_it_is_given():
    model = ModelShape(weights_read_bytes=4e9, params_active=7e9, n_layers=32, attention_q_dim=4096,
                       kv_bytes_per_token=524288)
    hw = Accelerator(hardware_class="datacenter-hbm", memory_bandwidth_bytes_per_s=2e12)
    band = Band(low=0.0, high=0.0, median_abs=0.0, n_points=0)
    params = SpeedParams(memory_efficiency=0.8, decode_overhead_s=1e-3, compute_efficiency=0.5,
                         prefill_overhead_s=0.0, graphless_launch_s=4e-6, decode_band=band)
    base = decode_step_seconds(model, hw, params)
    assert base == pytest.approx(1e-3 + 4e9 / 1.6e12)
    assert decode_step_seconds(model, hw, params, graphless_launches=1000) == pytest.approx(base + 4e-3)
