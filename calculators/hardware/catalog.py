"""Turn a catalog accelerator into the `Machine` a memory plan is made for (bytes, bytes/s, flop/s)."""

from __future__ import annotations

from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.units import MIB
from knowledge.gpus import AppleWorkingSet, Gpu


def apple_default_gpu_bytes(total_bytes: int, working_set: AppleWorkingSet) -> int:
    """Bytes the GPU may wire by default on a Mac with `total_bytes` of unified memory (an estimate).

    Uses the share printed on the observed machine whose RAM is closest to this one (ties: the larger
    machine). The share depends on the macOS release; `working_set.raise_with` lifts it.
    """
    if total_bytes <= 0:
        raise ServewiseInputError(_("unified memory must be a positive number of bytes"))
    total_mib = total_bytes / MIB
    nearest = min(working_set.observations, key=lambda obs: (abs(obs.ram_gib * 1024 - total_mib), -obs.ram_gib))
    return int(total_bytes * nearest.share)


def machine_for_gpu(
    gpu: Gpu,
    n_devices: int = 1,
    host_ram_bytes: int | None = None,
    working_set: AppleWorkingSet | None = None,
) -> Machine:
    """Machine for `n_devices` of a catalog entry: memory in bytes, bandwidth in bytes/s, dense BF16 flop/s (and
    FP16-accumulate flop/s where the card runs them at another rate).

    A GPU without a tensor BF16 figure but with a sourced shader-ALU FP16 rate (Apple M1/M2: FP16 and BF16
    run on the FP32 ALUs) gets that rate as its flop/s: the compute figure prefill and the planner use.

    Discrete GPUs use the reported capacity when the catalog has it, else marketed GB read as GiB.
    Apple silicon is one device whose engine-visible memory is the default GPU working set (needs
    `working_set`); the whole unified memory becomes `host_ram_bytes`. Other unified-memory systems
    (DGX Spark, Ryzen AI Max) are driven by CUDA/ROCm like a discrete GPU: their catalog memory is the
    whole shared pool (an upper bound on what the GPU gets), and the Metal working-set rule does not apply.
    """
    if n_devices < 1:
        raise ServewiseInputError(_("the number of devices must be at least 1"))
    bandwidth = gpu.memory_bandwidth_gb_per_s
    bf16 = gpu.dense_bf16_tflops
    if not isinstance(bf16, (int, float)) and isinstance(gpu.gpu_alu_fp16_tflops, (int, float)):
        bf16 = gpu.gpu_alu_fp16_tflops
    common = {
        "memory_bandwidth_bytes_per_s": bandwidth * 1e9 if isinstance(bandwidth, (int, float)) else None,
        "dense_bf16_flops_per_s": bf16 * 1e12 if isinstance(bf16, (int, float)) else None,
        "dense_fp16_acc_flops_per_s": (gpu.dense_fp16_acc_tflops * 1e12
                                       if isinstance(gpu.dense_fp16_acc_tflops, (int, float)) else None),
        "gpu_id": gpu.id,
    }
    if gpu.unified_memory and gpu.vendor == "apple":
        if n_devices != 1:
            raise ServewiseInputError(_("an Apple silicon machine has one GPU; use n_devices=1"))
        if working_set is None:
            raise ServewiseInputError(
                _("Apple silicon needs the working-set observations (knowledge base: gpus.apple_working_set)")
            )
        return Machine(
            device_memory_bytes=apple_default_gpu_bytes(gpu.memory_bytes, working_set),
            n_devices=1,
            host_ram_bytes=gpu.memory_bytes,
            unified_memory=True,
            **common,
        )
    return Machine(device_memory_bytes=gpu.memory_bytes, n_devices=n_devices, host_ram_bytes=host_ram_bytes, **common)


def catalog_gpu(kb, gpu_id: str) -> Gpu:
    """The GPU catalog entry with this id; ServewiseInputError naming the id when there is none."""
    try:
        return kb.gpus.get(gpu_id)
    except KeyError as exc:
        raise ServewiseInputError(_("{args}; see the ids in knowledge/gpus.yaml").format(args=exc.args[0])) from exc


def machine_for_gpu_id(kb, gpu_id: str, n_devices: int = 1) -> Machine:
    """`machine_for_gpu` for a catalog id, with the catalog's Apple working-set observations."""
    return machine_for_gpu(catalog_gpu(kb, gpu_id), n_devices=n_devices, working_set=kb.gpus.apple_working_set)
