"""llama.cpp's side of the speed model: its own fit family, its slots, and llama-bench's outputs."""

from __future__ import annotations

import re

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.llama_cpp import bench_import
from calculators.engines.llama_cpp.plan import ENGINE_ID, SERVER_AUTO_PARALLEL


def concurrency(settings, plan, machine) -> int:
    """-np slots (-1: the server's automatic 4)."""
    return SERVER_AUTO_PARALLEL if settings.parallel == -1 else max(1, settings.parallel)


#: Kernels ggml's CUDA backend launches for one LLaMA-architecture layer of a one-token decode step, read at
#: llama.cpp afefa31 (tag b1680, 2023-12-21; the build of the Dec 2023 A100/H100 rows). build_llama (llama.cpp)
#: gives per layer two RMS_NORMs and their MULs, seven weight MUL_MATs (q, k, v, o, gate, up, down), two ROPEs, two
#: CPYs into the KV cache, the KQ and KQV MUL_MATs, one SOFT_MAX (ext: mask and scale fused), one CONT, the SILU and
#: its MUL, two ADDs: one kernel each in ggml-cuda.cu, except the MUL_MATs. ggml_cuda_mul_mat's third branch
#: (CUDA_USE_TENSOR_CORES, on unless GGML_CUDA_FORCE_MMQ; F16 src0, F32 src1, neither transposed; no batch
#: condition) sends the F16 cache's KQ and KQV, and F16 weights too, to ggml_cuda_mul_mat_mat_batched_cublas: src1
#: converted to F16, the cuBLAS GEMM (CUBLAS_COMPUTE_16F), the F16 result back to F32, three kernels, plus
#: k_compute_batched_ptrs when the heads are grouped (r2 > 1 takes cublasGemmBatchedEx). Quantized weights at batch
#: 1 take mul_mat_vec_q (MMVQ: one warp per row, dp4a on 4-bit nibbles against q8_1 activations; cc >= 6.1), fed by
#: a quantize_q8_1 kernel that ggml_cuda_op_mul_mat runs on src1 at every call: two kernels per weight mat-vec.
LAUNCHES_PER_LAYER_BESIDES_WEIGHTS = 2 + 3 + 2 + 2 + 3 + 1 + 3 + 1 + 1 + 2
WEIGHT_MATVECS_PER_LAYER = 7
LAUNCHES_PER_WEIGHT_MATVEC_F16 = 3
LAUNCHES_PER_WEIGHT_MATVEC_QUANTIZED = 2
GROUPED_QUERY_LAUNCHES_PER_LAYER = 2
#: Outside the layers: the token's embedding row (GET_ROWS), the output RMS_NORM and its MUL, then the output mat-vec.
LAUNCHES_PER_TOKEN_HEAD = 3


def graphless_launches_per_token(n_layers: int, quantized: bool, grouped_query: bool) -> int:
    """Kernels the host launches for one decode token of a LLaMA-shaped model on a CUDA build without CUDA graphs.

    At b1680 no graph is captured (ggml-cuda.cu has no cudaGraph call; graphs came with bc4bba364, #6766, 2024-05-08,
    and then only at compute capability >= 8.0, CUDA >= 12 and batch 1): ggml.c's graph loop calls
    ggml_cuda_compute_forward for every node from one host thread (llama.cpp sets n_threads = 1 when fully offloaded),
    so every kernel costs host time whatever bytes it reads. A quantized model reads about a quarter of an F16 one's
    bytes with 34 launches a layer against 41, so its fixed launch time is a far larger share of its step.
    """
    per_matvec = LAUNCHES_PER_WEIGHT_MATVEC_QUANTIZED if quantized else LAUNCHES_PER_WEIGHT_MATVEC_F16
    per_layer = LAUNCHES_PER_LAYER_BESIDES_WEIGHTS + WEIGHT_MATVECS_PER_LAYER * per_matvec
    if grouped_query:
        per_layer += GROUPED_QUERY_LAUNCHES_PER_LAYER
    return n_layers * per_layer + LAUNCHES_PER_TOKEN_HEAD + per_matvec


#: Fit family of decode measurements whose F16 weight mat-vecs ran as a cuBLAS GEMM. ggml_cuda_mul_mat's batched-cuBLAS
#: branch took any all-on-device F16 src0 with an F32 src1 from 2b4ea35e5 (ggml-org/llama.cpp#3749, tag b1422) until
#: e7e4df031 (#4766, b1843) added `src1->ne[2]*src1->ne[3] > 1`; from then on a one-token step sends F16 weights to
#: ggml's own mat-vec kernel (dequantize_mul_mat_vec at b2836), as quantized weights always went to ggml's (MMVQ).
#: Read in the ggerganov/llama.cpp history (ggml-cuda.cu at afefa31, b1680, and 8c570c94, b2836). On that path the step
#: streams its weights through a vendor GEMM (tensor cores, CUBLAS_COMPUTE_16F) instead of a hand-written mat-vec, a
#: different share of bandwidth; today's builds never take it, so its parameters only fit the old measurements.
CUBLAS_MATVEC_FAMILY = "llama-cpp-cublas"
CUBLAS_MATVEC_BUILDS = (1422, 1842)


def _build_number(version: str) -> int | None:
    """The llama.cpp build number a measurement's version names ("llama.cpp afefa31 (1680)" -> 1680), if any."""
    found = re.search(r"\((\d{3,5})\)", version)
    return int(found.group(1)) if found else None


def family_for_kernel_path(version: str, backend: str, weights_quantized: bool | None) -> str | None:
    """'llama-cpp-cublas' for a CUDA/ROCm decode measurement of F16 weights at builds b1422..b1842, else None.

    The build must be named by number; one that is not (a bare commit the readable history cannot date) keeps the
    usual family. GGML_CUDA_FORCE_MMQ builds (no CUDA_USE_TENSOR_CORES) skipped that branch; no measurement names one.
    """
    build = _build_number(version)
    if weights_quantized is not False or build is None or backend not in ("CUDA", "ROCm"):
        return None
    low, high = CUBLAS_MATVEC_BUILDS
    return CUBLAS_MATVEC_FAMILY if low <= build <= high else None


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
    graphless_launches_per_token=graphless_launches_per_token,
    family_for_kernel_path=family_for_kernel_path,
    bench_readers=(
        BenchReader("llama-bench-json", bench_import.read_llama_bench_json, bench_import.looks_like_json),
        BenchReader("llama-bench-markdown", bench_import.read_llama_bench_markdown, bench_import.looks_like_markdown),
    ),
)
