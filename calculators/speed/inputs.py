"""The speed model's inputs from servewise's own objects: a catalog accelerator and a model architecture."""

from __future__ import annotations

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.speed.model import APPLE_FLOPS_NOTE, Accelerator, ModelShape, apple_flops_from_bandwidth
from knowledge.gpus import Gpu


def hardware_class_of(gpu: Gpu) -> str:
    """The speed model's class for a catalog entry: Apple unified memory, HBM data-centre part, or GDDR card."""
    if gpu.unified_memory:
        return "apple-unified"
    return "datacenter-hbm" if "HBM" in gpu.memory_type.upper() else "consumer-gddr"


def hardware_class_of_machine(machine, gpu: Gpu | None = None) -> str:
    """The speed model's class for a Machine (its catalog entry when known; a typed GPU counts as GDDR)."""
    if machine.device_kind == "cpu":
        return "cpu"
    if gpu is not None:
        return hardware_class_of(gpu)
    return "apple-unified" if machine.unified_memory else "consumer-gddr"


def accelerator_of_gpu(gpu: Gpu) -> Accelerator:
    """Peak bandwidth and dense BF16 flop/s of a catalog entry (flop/s None when the catalog has no figure).

    Without a tensor figure the catalog's shader-ALU FP16 rate is used (Apple M1/M2); an Apple chip with
    neither gets the bandwidth-scaled estimate, said so in `flops_note`.
    """
    bandwidth = gpu.memory_bandwidth_gb_per_s
    if not isinstance(bandwidth, int | float):
        raise ServewiseInputError(_("{name}: the catalog has no memory bandwidth, so no speed can be "
                                    "estimated").format(name=gpu.name))
    flops = gpu.dense_bf16_tflops
    if not isinstance(flops, int | float):
        flops = gpu.gpu_alu_fp16_tflops  # Apple M1/M2: the sourced shader-ALU rate (no tensor units)
    if not isinstance(flops, int | float) and gpu.vendor == "apple":
        return Accelerator(hardware_class=hardware_class_of(gpu), memory_bandwidth_bytes_per_s=bandwidth * 1e9,
                           flops_per_s=apple_flops_from_bandwidth(bandwidth * 1e9), label=gpu.name,
                           flops_note=APPLE_FLOPS_NOTE)
    fp16_acc = gpu.dense_fp16_acc_tflops
    return Accelerator(
        hardware_class=hardware_class_of(gpu),
        memory_bandwidth_bytes_per_s=bandwidth * 1e9,
        flops_per_s=flops * 1e12 if isinstance(flops, int | float) else None,
        fp16_acc_flops_per_s=fp16_acc * 1e12 if isinstance(fp16_acc, int | float) else None,
        label=gpu.name,
    )


def model_shape(arch: ModelArchitecture, weights_bytes: float, kv_bytes_per_token: float) -> ModelShape:
    """What one decode step of `arch` reads and computes, from its weight bytes and KV bytes per token.

    MoE: a single sequence reads the active experts only, so one token's read is the weights scaled by
    active / total parameters. The routed experts hold (total - active) x E / (E - k) parameters (E routed
    experts, k picked per token; shared experts count as dense), and a batch of t tokens reads 1 - (1 - k/E)^t
    of them (see `weights_read_for_tokens`). Bytes are split in proportion to parameters (an estimate when
    experts and the rest are quantized differently). The input embedding table's single-row reads are not
    subtracted (servewise does not know whether it is tied).
    """
    total = arch.params_total or arch.params_active
    active = arch.params_active or arch.params_total
    if not total or not active:
        raise ServewiseInputError(_("{name}: the parameter count is unknown, so no speed can be estimated").format(
                                    name=arch.name))
    if weights_bytes <= 0:
        raise ServewiseInputError(_("weight bytes must be positive to estimate speed"))
    read = weights_bytes * (active / total) if active < total else weights_bytes
    expert_bytes, share = 0.0, 0.0
    moe = arch.moe
    if moe is not None and active < total and moe.n_experts > moe.n_active > 0:
        routed_params = min(float(total), (total - active) * moe.n_experts / (moe.n_experts - moe.n_active))
        expert_bytes = weights_bytes * routed_params / total
        share = moe.n_active / moe.n_experts
    attention = next(
        (layer for layer in arch.layers if layer.kind in (LayerKind.FULL, LayerKind.SLIDING) and layer.head_dim_k), None
    )
    q_dim = arch.n_heads * attention.head_dim_k if attention is not None and arch.n_heads else arch.hidden_size
    return ModelShape(
        weights_read_bytes=read,
        expert_weights_bytes=expert_bytes,
        expert_share_per_token=share,
        params_active=active,
        n_layers=max(1, arch.n_layers),
        attention_q_dim=max(1, q_dim),
        kv_bytes_per_token=max(0.0, kv_bytes_per_token),
        label=arch.name,
    )
