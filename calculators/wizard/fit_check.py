"""Does a model, with one working conversation, fit on one card? The wizard's "fits one card" answer, derived.

A first-order check, stated as such: weight bytes at the team's weight format plus the raw KV cache of
one sequence of `FIT_CONTEXT_TOKENS` tokens at 16-bit, against a share of one device's memory. The
share leaves room for activations and runtime the way engines do by default (vLLM reserves 8 % with
gpu_memory_utilization 0.92; SGLang keeps about 10 GB free on large GPUs). The memory page gives the
engine-exact answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.compare import model_weights
from calculators.memory.kv import raw_kv_estimate
from calculators.model.architecture import ModelArchitecture

FIT_CONTEXT_TOKENS = 8_192
USABLE_SHARE = 0.9
KV_BYTES_PER_ELEMENT = 2

#: The wizard's weight-format answer -> the quantization whose bits per weight the check uses.
SCHEME_FOR_FORMAT = {
    "any": "bf16",
    "safetensors": "bf16",
    "fp8": "fp8-e4m3-block128",
    "awq": "awq-w4-g128",
    "gptq": "gptq-w4-g128",
    "gguf": "q4_k_m",
    "mxfp4": "mxfp4",
    "nvfp4": "nvfp4",
    "mlx": "mlx-affine-4",
}


@dataclass(frozen=True)
class FitCheck:
    """The figures behind a derived "fits one card" answer (bytes)."""

    model: str
    device: str
    weights_bytes: int
    weights_scheme: str
    kv_bytes: int
    context_tokens: int
    device_bytes: int
    usable_bytes: int

    @property
    def fits(self) -> bool:
        """True when weights plus one sequence's KV fit in the usable share of one device."""
        return self.weights_bytes + self.kv_bytes <= self.usable_bytes


def check_fit(kb, arch: ModelArchitecture, machine: Machine, weight_format: str) -> FitCheck | None:
    """The fit check for `arch` on one device of `machine`; None when the parameter count is unknown or the
    scheme does not apply to the architecture (MXFP4 as gpt-oss uses it needs routed experts)."""
    if arch.params_total is None:
        return None
    scheme = SCHEME_FOR_FORMAT[weight_format]
    try:
        weights = model_weights(kb.formats, arch, scheme)  # per-scope parts (MXFP4 covers the experts only)
    except ServewiseInputError:
        return None
    kv = raw_kv_estimate(arch, FIT_CONTEXT_TOKENS, 1, KV_BYTES_PER_ELEMENT)
    return FitCheck(
        model=arch.name,
        device=machine.gpu_id or "device",
        weights_bytes=weights.bytes,
        weights_scheme=scheme,
        kv_bytes=int(kv.total_bytes),
        context_tokens=FIT_CONTEXT_TOKENS,
        device_bytes=machine.device_memory_bytes,
        usable_bytes=int(machine.device_memory_bytes * USABLE_SHARE),
    )
