"""One answer per engine x format x hardware (calculators/hardware/compat.py), from the formats matrix's
hardware paths and the GPU catalog's generations. Limits cited are the ones knowledge/formats.yaml read."""

from __future__ import annotations

import pytest

from calculators.errors import ServewiseInputError
from calculators.hardware.catalog import machine_for_gpu
from calculators.hardware.compat import HardwareChoice, engine_backends, format_verdict, matrix_on_hardware
from knowledge.engines import engine_by_id
from knowledge.formats import CompatStatus
from knowledge.loader import load_knowledge

KB = load_knowledge()


@pytest.mark.parametrize(
    ("engine", "column", "gpu", "status", "refused_by"),
    [
        # SGLang registers the OCP mxfp4 method on AMD only for gfx950 (layers/quantization/__init__.py, v0.5.23):
        # gpt-oss's MXFP4 checkpoint is refused on an MI300X (gfx942) and served on an MI355X (gfx950).
        ("sglang", "mxfp4", "mi300x-192gb", CompatStatus.NOT_SUPPORTED, "gpu-arch"),
        ("sglang", "mxfp4", "mi355x-288gb", CompatStatus.NATIVE, None),
        # SGLang's ROCm list lacks gptq and bitsandbytes (configs/model_config.py, v0.5.23).
        ("sglang", "gptq", "mi325x-256gb", CompatStatus.NOT_SUPPORTED, None),
        ("sglang", "gptq", "h100-sxm-80gb", CompatStatus.NATIVE, None),
        # vLLM FP8 on an RTX 3090 (8.6): weight-only Marlin; on an H100: FP8 tensor cores (fp8.py, cuda.py v0.33.0).
        ("vllm", "fp8", "rtx-3090-24gb", CompatStatus.NATIVE, None),
        ("vllm", "fp8", "h100-sxm-80gb", CompatStatus.NATIVE, None),
        # The MLX layout: MLX LM on a Mac, SGLang's MLX backend on a Mac only, never vLLM.
        ("mlx-lm", "mlx-safetensors", "m4-max-40c-128gb", CompatStatus.NATIVE, None),
        ("sglang", "mlx-safetensors", "m4-max-40c-128gb", CompatStatus.EXPERIMENTAL, None),
        ("sglang", "mlx-safetensors", "h100-sxm-80gb", CompatStatus.NOT_SUPPORTED, "backend"),
        ("vllm", "mlx-safetensors", "m4-max-40c-128gb", CompatStatus.NOT_SUPPORTED, None),
        # A cell that does not depend on hardware gives its headline status on any machine.
        ("llama-cpp", "gguf-k-quants", "ryzen-ai-max-395-128gb", CompatStatus.NATIVE, None),
    ],
)
def test_verdict_for_a_catalog_gpu(engine, column, gpu, status, refused_by):
    verdict = format_verdict(KB, engine, column, HardwareChoice(gpu_id=gpu))
    assert verdict.status is status
    assert verdict.refused_by == refused_by
    assert verdict.source and verdict.verified.version


def test_fp8_path_differs_by_generation():
    ampere = format_verdict(KB, "vllm", "fp8", HardwareChoice(gpu_id="rtx-3090-24gb"))
    hopper = format_verdict(KB, "vllm", "fp8", HardwareChoice(gpu_id="h100-sxm-80gb"))
    assert ampere.path.min_compute_capability == 7.5 and "Marlin" in ampere.path.kernel
    assert hopper.path.min_compute_capability == 8.9 and hopper.path.kernel == "FP8 W8A8"


def test_a_refusal_names_what_the_gpu_lacks():
    verdict = format_verdict(KB, "sglang", "mxfp4", HardwareChoice(gpu_id="mi300x-192gb"))
    assert verdict.required_gpu_archs == ("gfx950",)


def test_vendor_only_and_no_hardware():
    assert format_verdict(KB, "sglang", "gptq", HardwareChoice(vendor="amd")).status is CompatStatus.NOT_SUPPORTED
    assert format_verdict(KB, "sglang", "gptq").status is KB.formats.cell("sglang", "gptq").status


def test_backends_are_the_ones_the_engine_runs_for_the_vendor():
    # vLLM has no Vulkan backend (engines.yaml hardware), llama.cpp has both for NVIDIA.
    assert engine_backends(engine_by_id(KB.engines, "vllm"), "nvidia") == ("cuda",)
    assert engine_backends(engine_by_id(KB.engines, "llama-cpp"), "nvidia") == ("cuda", "vulkan")


def test_whole_matrix_for_one_machine_covers_every_cell():
    verdicts = matrix_on_hardware(KB, HardwareChoice(gpu_id="mi300x-192gb"))
    assert len(verdicts) == len(KB.formats.cells)
    assert verdicts[("sglang", "mxfp4")].status is CompatStatus.NOT_SUPPORTED


def test_unknown_gpu_is_a_clear_error():
    with pytest.raises(ServewiseInputError, match="no GPU 'h1000'"):
        format_verdict(KB, "vllm", "awq", HardwareChoice(gpu_id="h1000"))


def test_unified_memory_outside_apple_is_planned_like_a_gpu():
    # DGX Spark (GB10) is driven by CUDA: its 128 GB pool is the device memory, not a Metal working set.
    spark = next(g for g in KB.gpus.all_gpus if g.id == "dgx-spark-gb10-128gb")
    machine = machine_for_gpu(spark)
    assert not machine.unified_memory
    assert machine.device_memory_bytes == spark.memory_bytes
    assert spark.generation.compute_capability == 12.1
