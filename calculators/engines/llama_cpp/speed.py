"""llama.cpp's side of the speed model: its own fit family, its slots, and llama-bench's outputs."""

from __future__ import annotations

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.llama_cpp import bench_import
from calculators.engines.llama_cpp.plan import ENGINE_ID, SERVER_AUTO_PARALLEL


def concurrency(settings, plan, machine) -> int:
    """-np slots (-1: the server's automatic 4)."""
    return SERVER_AUTO_PARALLEL if settings.parallel == -1 else max(1, settings.parallel)


SPEED = EngineSpeed(
    family=ENGINE_ID,
    concurrency=concurrency,
    # Prompt matmuls accumulate in FP16 on NVIDIA: ggml_cuda_mul_mat_cublas runs F16 weights, and quantized ones it
    # dequantizes, as an F16 cublasGemmEx whose traits set CUBLAS_COMPUTE_16F (FP32 output only on Volta, RDNA4 and
    # CDNA); quantized weights otherwise take ggml's int8 MMQ kernels, whose int8 rate is twice the FP16-accumulate
    # one on every NVIDIA card here, so it orders the cards the same way. BF16 weights use CUBLAS_COMPUTE_32F.
    # ggml-org/llama.cpp:ggml/src/ggml-cuda/ggml-cuda.cu (batched_mul_mat_traits, ggml_cuda_mul_mat_cublas), read at
    # commit 00108827 on 2026-12-01.
    prefill_fp16_accumulate=True,
    bench_readers=(
        BenchReader("llama-bench-json", bench_import.read_llama_bench_json, bench_import.looks_like_json),
        BenchReader("llama-bench-markdown", bench_import.read_llama_bench_markdown, bench_import.looks_like_markdown),
    ),
)
