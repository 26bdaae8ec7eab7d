"""How Ollama holds a workload: OLLAMA_CONTEXT_LENGTH x OLLAMA_NUM_PARALLEL, its KV cache types, its own
pre-flight estimate (which must fit its load headroom) and then llama.cpp's slots and devices."""

from __future__ import annotations

from typing import Any

from calculators.engines.base import CapacitySearch
from calculators.engines.llama_cpp.plan import FIT_MARGIN_BYTES
from calculators.engines.llama_cpp.workload import devices_hold, slots_hold
from calculators.engines.ollama.plan import LOAD_HEADROOM_PERCENT, OllamaPlan, OllamaSettings
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.units import GIB, number

KV_SETTINGS: dict[str, dict[str, Any] | None] = {
    "16-bit": {},
    # Ollama applies OLLAMA_KV_CACHE_TYPE only with flash attention on
    "8-bit": {"kv_cache_type": "q8_0", "flash_attention": True},
    "4-bit": {"kv_cache_type": "q4_0", "flash_attention": True},
}
WORKLOAD_KEYS = ("context_length", "num_parallel", "kv_cache_type", "flash_attention")


def workload_settings(context_tokens: int, sequences: int) -> dict[str, Any]:
    """Ollama passes -c = context_length x num_parallel to its llama-server."""
    return {"context_length": context_tokens, "num_parallel": sequences}


def not_applicable(machine: Machine) -> str | None:
    """Ollama runs on every machine servewise plans."""
    return None


def why_not_held(plan: OllamaPlan, workload, machine: Machine) -> str | None:
    """llama.cpp's slots, then Ollama's own load check, then every device's memory."""
    reason = slots_hold(plan, workload.sequences, workload.context_tokens, machine)
    if reason is None and not plan.fits_preflight:
        reason = _("Ollama's own estimate ({predicted}\u00a0GiB) is over its load headroom of the {free}\u00a0GiB it "
                   "sees free, so it would not load it this way").format(
                       predicted=number(plan.predicted_for_load_bytes / GIB, 2),
                           free=number(plan.available_bytes / GIB, 2))
    return reason or devices_hold(plan, machine)


def _load_room(plan: OllamaPlan, machine: Machine) -> tuple[int, int]:
    """(an f16 KV guess, bytes left within the load headroom): Ollama's pre-flight estimate (file + that guess)
    must stay within its headroom; Ollama spreads a model over every GPU once it no longer fits one."""
    kv_guess = max(plan.predicted_vram_bytes - (plan.weights_bytes or 0), 1)
    room = plan.available_bytes * machine.n_devices * LOAD_HEADROOM_PERCENT // 100 - plan.predicted_for_load_bytes
    return kv_guess, room


def clamp_sequences_guess(guess: int, plan: OllamaPlan, workload, machine: Machine) -> int:
    """The free-bytes guess, no higher than the sequences Ollama's own estimate lets it load."""
    kv_guess, room = _load_room(plan, machine)
    n = workload.sequences
    return min(guess, n + room * n // kv_guess)


def clamp_context_guess(guess: int, plan: OllamaPlan, workload, machine: Machine) -> int:
    """The free-bytes guess, no longer than the context Ollama's own estimate lets it load."""
    kv_guess, room = _load_room(plan, machine)
    return min(guess, plan.per_request_context + room * plan.per_request_context // kv_guess)


def capacity_search(kept: dict[str, Any], arch: ModelArchitecture, machine: Machine) -> CapacitySearch:
    """Ollama's llama-server runs --fit with -ngl auto; asking for every layer (num_gpu = blocks + 1) plans the
    same memory without --fit's layer search, and the margin stands in for it (see llama_cpp.workload)."""
    no_host_room = machine.unified_memory or machine.host_ram_bytes is None
    if no_host_room and kept.get("num_gpu", OllamaSettings.model_fields["num_gpu"].default) == -1:
        return CapacitySearch({**kept, "num_gpu": arch.n_layers + 1}, FIT_MARGIN_BYTES)
    return CapacitySearch(kept)
