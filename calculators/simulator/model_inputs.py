"""The simulator's model inputs read off the memory model: a catalog model on a catalog GPU.

Active parameters, weight bytes (BF16), KV bytes per token and the KV capacity in tokens that vLLM
would report on that GPU (its "GPU KV cache size"), so the queueing simulation starts from the same
arithmetic as the memory page instead of typed guesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.plan import plan_vllm
from calculators.errors import ServewiseInputError
from calculators.hardware.catalog import catalog_gpu, machine_for_gpu_id
from calculators.i18n import _
from calculators.memory.compare import model_weights
from calculators.memory.kv import raw_kv_estimate
from calculators.model.catalog import architecture_from_catalog
from calculators.speed.inputs import model_shape
from calculators.speed.model import ModelShape
from calculators.units import number

PLANNED_CONTEXT_TOKENS = 32_768
WEIGHTS_SCHEME = "bf16"


@dataclass(frozen=True)
class SimulatorModelInputs:
    """What the simulator needs about the model, with where each figure came from."""

    model: str
    active_params: int
    weights_bytes: int
    kv_bytes_per_token: int
    kv_capacity_tokens: int
    basis: str
    #: What one step reads and computes (MoE: dense part + routed experts apart; attention layers and query width),
    #: the same shape the planner and the speed model use.
    shape: ModelShape


def _scheme_name(kb, scheme_id: str) -> str:
    """A weight scheme as a person reads it ("BF16" for `bf16`), from the formats catalog."""
    scheme = kb.formats.quantization(scheme_id)
    return _(scheme.name) if scheme is not None else scheme_id


def simulator_inputs(kb, model_id: str, gpu_id: str) -> SimulatorModelInputs:
    """Model figures for the simulator from the catalog and vLLM's plan on one GPU (bytes, tokens)."""
    arch = architecture_from_catalog(model_id, kb)
    if not arch.params_active and not arch.params_total:
        raise ServewiseInputError(_("{name}: the parameter count is unknown; type the figures instead").format(
                                    name=arch.name))
    machine = machine_for_gpu_id(kb, gpu_id)
    weights = model_weights(kb.formats, arch, WEIGHTS_SCHEME).bytes
    context = min(arch.max_context_tokens or PLANNED_CONTEXT_TOKENS, PLANNED_CONTEXT_TOKENS)
    plan = plan_vllm(arch, VllmSettings(max_model_len=context), machine, weights)
    per_token = raw_kv_estimate(arch, 1, 1, 2).bytes_per_token_unbounded_layers
    active_params = arch.params_active or arch.params_total
    assert active_params  # refused above when both are unknown
    return SimulatorModelInputs(
        model=arch.name,
        active_params=active_params,
        weights_bytes=weights,
        kv_bytes_per_token=int(per_token),
        kv_capacity_tokens=max(plan.kv_tokens, 0),
        basis=_("vLLM's plan for {model} in {weights} on one {gpu} (max_model_len {context_tokens})").format(
            model=arch.name, weights=_scheme_name(kb, WEIGHTS_SCHEME), gpu=catalog_gpu(kb, gpu_id).name,
            context_tokens=number(context)),
        shape=model_shape(arch, weights, per_token),
    )
