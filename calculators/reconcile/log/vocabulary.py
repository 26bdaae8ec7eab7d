"""The names `ParsedLog` uses: every figure name with its unit, meaning and matching plan field.

This is the contract the reconciliation relies on. `plan_field` names the `MemoryPlan` field (or the
field an engine plan is expected to add) that predicts the same quantity; `None` means the figure is
context for the page (a free-memory reading, an engine's own estimate) rather than something the
memory model predicts. `per` says how the figure is scoped: one per cache, per device, per worker or
one per log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from calculators.reconcile.log.figures import FigureUnit

Scope = Literal["cache", "device", "worker", "log"]


@dataclass(frozen=True)
class FigureSpec:
    """What one figure name means."""

    unit: FigureUnit
    per: Scope
    meaning: str
    plan_field: str | None = None
    other_units: tuple[FigureUnit, ...] = ()

    def allows(self, unit: str) -> bool:
        """True when a figure of this name may carry `unit`."""
        return unit == self.unit or unit in self.other_units


FIGURES: dict[str, FigureSpec] = {
    # llama.cpp (and Ollama relaying it): one set per cache ('kv', 'kv_swa', 'recurrent')
    "kv_cache_bytes": FigureSpec(
        "bytes",
        "cache",
        "K+V bytes of one cache as llama.cpp prints it",
        "caches[].total_bytes; sum = kv_cache_bytes",
    ),
    "k_bytes": FigureSpec(
        "bytes",
        "cache",
        "K bytes of one cache (recurrent: R state; SGLang: per rank, MLA's single 'KV size')",
        "caches[].k_bytes; SglangPlan.k_bytes",
    ),
    "v_bytes": FigureSpec("bytes", "cache", "V bytes of one cache (recurrent: S state)", "caches[].v_bytes"),
    "cells": FigureSpec(
        "tokens",
        "cache",
        "token slots in the cache (recurrent: sequence slots)",
        "caches[].cells",
        other_units=("sequences",),
    ),
    "layers": FigureSpec("layers", "cache", "layers the cache holds", "caches[].layers"),
    "seqs": FigureSpec("sequences", "cache", "n_seq_max the cache serves", "caches[].seqs"),
    "streams": FigureSpec("sequences", "cache", "KV streams: 1 if unified, n_seq_max otherwise"),
    "recurrent_state_bytes": FigureSpec(
        "bytes", "cache", "R+S bytes of the recurrent state", "caches[name='recurrent'].total_bytes"
    ),
    "kv_buffer_bytes": FigureSpec("bytes", "device", "KV buffer one device holds for a cache"),
    "recurrent_buffer_bytes": FigureSpec("bytes", "device", "recurrent-state buffer one device holds"),
    "model_buffer_bytes": FigureSpec(
        "bytes", "device", "weights one device (or host mapping) holds", "weights_bytes (per device)"
    ),
    "compute_buffer_bytes": FigureSpec(
        "bytes", "device", "compute (activation) buffer of one device", "components[kind=activations]"
    ),
    "output_buffer_bytes": FigureSpec("bytes", "device", "logits/output buffer of one device"),
    "model_file_bytes": FigureSpec("bytes", "log", "GGUF tensor data size as llama.cpp prints it"),
    "offloaded_layers": FigureSpec("layers", "log", "layers placed on accelerators"),
    "offloaded_repeating_layers": FigureSpec("layers", "log", "transformer blocks placed on accelerators"),
    "total_layers": FigureSpec("layers", "log", "layers the engine counts (output layer included)"),
    "slot_ctx_tokens": FigureSpec("tokens", "log", "context one llama-server slot holds (n_ctx_slot)"),
    "slots": FigureSpec("sequences", "log", "llama-server slots"),
    "fit_projected_bytes": FigureSpec("bytes", "log", "device memory llama.cpp's --fit projected before loading"),
    "fit_free_bytes": FigureSpec("bytes", "log", "free device memory llama.cpp's --fit saw"),
    "device_free_bytes": FigureSpec("bytes", "device", "free memory of a device when the model loaded"),
    # Ollama's own lines
    "estimate_offload_layers": FigureSpec("layers", "log", "layers Ollama planned to offload"),
    "estimate_required_full_bytes": FigureSpec("bytes", "log", "Ollama's prediction for the whole model on GPU"),
    "estimate_required_partial_bytes": FigureSpec("bytes", "log", "Ollama's prediction for the offloaded part"),
    "estimate_kv_bytes": FigureSpec("bytes", "log", "Ollama's KV prediction (f16 assumption in its estimator)"),
    "estimate_weights_bytes": FigureSpec("bytes", "log", "Ollama's weights prediction"),
    "estimate_weights_repeating_bytes": FigureSpec("bytes", "log", "Ollama's prediction for repeating layers"),
    "estimate_weights_nonrepeating_bytes": FigureSpec("bytes", "log", "Ollama's prediction for embeddings/output"),
    "estimate_graph_full_bytes": FigureSpec("bytes", "log", "Ollama's compute-graph prediction, full offload"),
    "estimate_graph_partial_bytes": FigureSpec("bytes", "log", "Ollama's compute-graph prediction, partial offload"),
    "estimate_projector_weights_bytes": FigureSpec("bytes", "log", "Ollama's prediction for a vision projector"),
    "estimate_projector_graph_bytes": FigureSpec("bytes", "log", "Ollama's projector graph prediction"),
    "estimate_allocation_bytes": FigureSpec("bytes", "device", "Ollama's per-device prediction"),
    "estimate_split_layers": FigureSpec("layers", "device", "layers Ollama planned for one GPU (layers.split)"),
    "device_available_bytes": FigureSpec("bytes", "device", "memory Ollama saw available on a device"),
    "gpu_overhead_bytes": FigureSpec("bytes", "log", "OLLAMA_GPU_OVERHEAD as applied"),
    "host_total_bytes": FigureSpec("bytes", "log", "host RAM total"),
    "host_free_bytes": FigureSpec("bytes", "log", "host RAM free"),
    "total_allocated_bytes": FigureSpec("bytes", "log", "sum Ollama's engine reports allocating"),
    # vLLM (per worker when a worker prefix is present)
    "weights_bytes": FigureSpec(
        "bytes", "worker", "memory the weights took while loading (vLLM, SGLang)", "weights_bytes"
    ),
    "available_kv_cache_bytes": FigureSpec(
        "bytes", "worker", "memory vLLM left for the KV cache", "kv_cache_bytes (vLLM)"
    ),
    "kv_tokens": FigureSpec(
        "tokens",
        "worker",
        "KV pool capacity in tokens (vLLM 'GPU KV cache size', SGLang '#tokens')",
        "VllmPlan.kv_tokens; SglangPlan.max_total_num_tokens",
    ),
    "num_gpu_blocks": FigureSpec("blocks", "worker", "vLLM KV blocks on the GPU", "num_gpu_blocks"),
    "hybrid_block_size": FigureSpec(
        "tokens", "log", "vLLM's attention block size raised to hold one Mamba state page", "block_size (VllmPlan)"
    ),
    "mamba_page_padding_percent": FigureSpec(
        "ratio", "log", "vLLM's padding of the Mamba state page to the attention page, in percent",
        "mamba_state.padding_percent (VllmPlan)",
    ),
    "mamba_cache_slots": FigureSpec(
        "sequences", "worker", "SGLang's max_mamba_cache_size: recurrent-state slots", "mamba.max_mamba_cache_size"
    ),
    "mamba_conv_state_bytes": FigureSpec(
        "bytes", "worker", "SGLang's Mamba conv-state pool", "mamba.conv_state_bytes (SglangPlan)"
    ),
    "mamba_ssm_state_bytes": FigureSpec(
        "bytes", "worker", "SGLang's Mamba temporal-state pool", "mamba.ssm_state_bytes (SglangPlan)"
    ),
    "num_cpu_blocks": FigureSpec("blocks", "worker", "vLLM swap blocks on the host"),
    "max_concurrency": FigureSpec("ratio", "worker", "KV capacity / tokens per request", "max_concurrency"),
    "concurrency_request_tokens": FigureSpec("tokens", "worker", "request length max_concurrency is computed for"),
    "device_total_bytes": FigureSpec("bytes", "worker", "total device memory vLLM saw", "device_capacity_bytes"),
    "requested_memory_bytes": FigureSpec(
        "bytes", "worker", "total x gpu_memory_utilization", "requested_memory_bytes (VllmPlan)"
    ),
    "estimated_max_model_len": FigureSpec(
        "tokens", "worker", "vLLM's estimate of the longest context that fits (refusal)", "estimated_max_model_len"
    ),
    "non_torch_bytes": FigureSpec(
        "bytes", "worker", "non-torch memory (CUDA context, NCCL, ...)", "components[kind=runtime]"
    ),
    "activation_peak_bytes": FigureSpec(
        "bytes", "worker", "PyTorch activation peak of the profile run", "components[kind=activations]"
    ),
    "peak_torch_bytes": FigureSpec("bytes", "worker", "torch peak during profiling (old one-line form)"),
    "initial_used_bytes": FigureSpec("bytes", "worker", "device memory in use before profiling"),
    "post_profile_used_bytes": FigureSpec("bytes", "worker", "device memory in use after profiling"),
    "kv_needed_bytes": FigureSpec("bytes", "worker", "KV one max-length request needs (refusal)"),
    # SGLang (per TP rank when the prefix names one)
    "avail_before_weights_bytes": FigureSpec("bytes", "worker", "free device memory before loading weights"),
    "avail_after_weights_bytes": FigureSpec("bytes", "worker", "free device memory after loading weights"),
    "avail_after_pool_bytes": FigureSpec("bytes", "worker", "free device memory after the KV pool"),
    "cuda_graph_bytes": FigureSpec("bytes", "worker", "memory CUDA/NPU graph capture took"),
    "avail_after_graphs_bytes": FigureSpec("bytes", "worker", "free device memory after graph capture"),
    "max_total_num_tokens": FigureSpec("tokens", "worker", "SGLang KV pool size in tokens", "max_total_num_tokens"),
    "chunked_prefill_size": FigureSpec("tokens", "worker", "prefill chunk in force"),
    "max_prefill_tokens": FigureSpec("tokens", "worker", "prefill token budget in force"),
    "max_running_requests": FigureSpec("requests", "worker", "running-request limit in force", "max_running_requests"),
    "context_len": FigureSpec("tokens", "worker", "context length in force"),
    "available_gpu_mem_bytes": FigureSpec("bytes", "worker", "free device memory once serving starts"),
    # MLX LM
    "peak_memory_bytes": FigureSpec("bytes", "log", "MLX peak memory (GB = 10**9)"),
    "cache_memory_bytes": FigureSpec("bytes", "log", "MLX buffer cache memory"),
    "prompt_tokens": FigureSpec("tokens", "log", "prompt length of the run"),
    "generation_tokens": FigureSpec("tokens", "log", "tokens generated in the run"),
    "batch_sequences": FigureSpec("sequences", "log", "sequences an MLX LM benchmark decodes together (-b)"),
    "prompt_cache_sequences": FigureSpec("sequences", "log", "sequences in mlx_lm.server's prompt cache"),
    "prompt_cache_bytes": FigureSpec("bytes", "log", "bytes in mlx_lm.server's prompt cache"),
}
