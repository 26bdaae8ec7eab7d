"""Ollama, vLLM, SGLang and MLX LM start-up logs from public threads, every figure pinned.

Each file is cited in tests/data/logs/SOURCES.md; the comment on each test names the printed line.
"""

from __future__ import annotations

from calculators.units import GIB, MIB
from tests.support.startup_log import one, parse, values

# ---------------------------------------------------------------- Ollama


def test_ollama_offload_estimate_across_four_gpus():
    log = parse("ollama-v0.5-offload-4gpu-partial.log")
    assert log.engine == "ollama"
    # msg=offload library=cuda layers.model=81 layers.offload=44 ... memory.required.full="127.4 GiB"
    assert one(log, "total_layers") == 81 and one(log, "estimate_offload_layers") == 44
    full = log.figure("estimate_required_full_bytes")
    assert full is not None and full.value == round(127.4 * GIB) and full.printed == "127.4" and full.unit_size == GIB
    assert one(log, "estimate_kv_bytes") == round(19.5 * GIB)
    assert one(log, "estimate_graph_full_bytes") == round(8.2 * GIB)
    assert values(log, "device_available_bytes") == [round(22.0 * GIB)] * 4
    assert [f.device for f in log.figures_named("estimate_allocation_bytes")] == ["cuda0", "cuda1", "cuda2", "cuda3"]
    assert one(log, "gpu_overhead_bytes") == 0  # memory.gpu_overhead="0 B"
    # cmd="... runner ... --ctx-size 64000 --batch-size 512 --n-gpu-layers 44 ... --flash-attn --parallel 1
    #      --tensor-split 11,11,11,11"
    assert log.runner_settings == {
        "ctx_size": 64000,
        "batch_size": 512,
        "n_gpu_layers": 44,
        "flash_attn": "on",
        "parallel": 1,
        "tensor_split": "11,11,11,11",
    }
    # context_length: the runner's --ctx-size 64000 over --parallel 1
    assert log.settings == {"library": "cuda", "flash_attention": True, "num_parallel": 1, "num_gpu": 44,
                            "context_length": 64000}
    assert [n.code for n in log.notes] == ["kv_cache_type_ignored", "context_length_derived"]


def test_ollama_journal_quoted_in_markdown_on_cpu():
    log = parse("ollama-v0.9-cpu-offload-journal-quoted.log")
    assert log.engine == "ollama"
    # msg="system memory" total="31.3 GiB" free="29.5 GiB"; memory.weights.nonrepeating="787.5 MiB"
    assert one(log, "host_total_bytes") == round(31.3 * GIB)
    assert one(log, "estimate_weights_nonrepeating_bytes") == round(787.5 * MIB)
    assert one(log, "estimate_projector_graph_bytes") == 1 * GIB
    assert one(log, "estimate_required_partial_bytes") == 0  # memory.required.partial="0 B"
    assert log.settings["num_parallel"] == 2 and log.runner_settings["ctx_size"] == 8192


def test_ollama_relaying_llama_cpp_with_partial_offload():
    log = parse("ollama-docker-deepseek-partial-1-of-62.log")
    assert (log.engine, log.runner) == ("ollama", "llama-cpp")
    # llm_load_tensors: offloaded 1/62 layers to GPU; CPU_Mapped model buffer size = 378582.96 MiB
    assert (one(log, "offloaded_layers"), one(log, "total_layers")) == (1, 62)
    assert one(log, "model_buffer_bytes", device="CPU_Mapped") == round(378582.96 * MIB)
    assert one(log, "model_buffer_bytes", device="CUDA0") == round(7106.67 * MIB)
    # llama_kv_cache_init: CPU KV buffer size = 9600.00 MiB, CUDA0 KV buffer size = 160.00 MiB
    assert values(log, "kv_buffer_bytes") == [9600 * MIB, 160 * MIB]
    assert (one(log, "cells"), one(log, "layers")) == (2048, 61)
    # the relayed llama.cpp settings stay in the runner's vocabulary
    assert log.runner_settings["ctx_size"] == 2048 and log.runner_settings["flash_attn"] == "off"
    assert log.settings == {}
    # "KV self size  = 9760.00 M" is cut: said, not guessed
    assert values(log, "kv_cache_bytes") == []
    assert [(n.code, n.line) for n in log.notes] == [("unparsed_line", 17)]


def test_ollama_engine_allocations_on_two_gpus():
    log = parse("ollama-v0.10-new-memory-two-gpus.log")
    assert log.engine == "ollama" and log.runner is None
    # msg="model weights" buffer=CUDA1 size="11.9 GiB" / buffer=CPU size="680.0 MiB" / buffer=CUDA0 size="11.5 GiB"
    assert [(f.device, f.value) for f in log.figures_named("model_buffer_bytes")] == [
        ("CUDA1", round(11.9 * GIB)),
        ("CPU", 680 * MIB),
        ("CUDA0", round(11.5 * GIB)),
    ]
    assert (one(log, "offloaded_layers"), one(log, "total_layers")) == (41, 41)
    assert log.geometry.architecture == "mistral3" and log.geometry.file_type == "Q8_0"


def test_ollama_journal_prefixes():
    rocm = parse("ollama-v0.2-rocm-journal.log")
    assert rocm.engine == "ollama"
    assert one(rocm, "compute_buffer_bytes", device="ROCm_Host") == round(20.01 * MIB)
    meta = parse("ollama-v0.3-kv-quant-journal-print-meta.log")
    assert meta.engine == "ollama" and meta.geometry.file_type == "Q4_0"
    assert one(meta, "model_file_bytes") == round(37.22 * GIB)  # model size = 37.22 GiB (4.53 BPW)


# ---------------------------------------------------------------- vLLM


def test_vllm_v1_tokens_and_concurrency():
    log = parse("vllm-v0.11-enginecore-qwen3-14b.log")
    assert log.engine == "vllm"
    # Available KV cache memory: 6.51 GiB / GPU KV cache size: 42,656 tokens / ... 32,768 tokens per request: 1.30x
    assert one(log, "available_kv_cache_bytes") == round(6.51 * GIB)
    tokens = log.figure("kv_tokens")
    assert tokens is not None and tokens.value == 42656 and tokens.printed == "42,656"
    assert tokens.device == "EngineCore_DP0 pid=1133552"
    concurrency = log.figure("max_concurrency")
    assert concurrency is not None and concurrency.value == 1.30 and concurrency.unit == "ratio"
    assert concurrency.consistent_with(42656 / 32768)  # vLLM's own ratio, to its printed precision
    assert one(log, "concurrency_request_tokens") == 32768


def test_vllm_blocks_and_tokens_agree_at_block_size_16():
    blocks = parse("vllm-v0.7-gpu-blocks.log")
    tokens = parse("vllm-v0.7-kv-tokens.log")
    # "# GPU blocks: 127626" (before PR 13596) and "GPU KV cache size: 2,042,016 tokens" (after)
    assert one(blocks, "num_gpu_blocks") == 127626 and one(tokens, "kv_tokens") == 2_042_016 == 127626 * 16
    assert blocks.figure("max_concurrency").consistent_with(2_042_016 / 2048)


def test_vllm_v0_profiling_line_and_refusal():
    ok = parse("vllm-v0.6-profiling-3090.log")
    # Loading model weights took 14.9888 GB -- vLLM divides by 2**30 there
    weights = ok.figure("weights_bytes")
    assert weights is not None and weights.value == round(14.9888 * GIB) and weights.printed_unit == "GB"
    assert weights.unit_size == GIB and "2**30" in weights.basis
    # Memory profiling results: total_gpu_memory=23.58GiB ... kv_cache_size=3.81GiB gpu_memory_utilization=0.90
    assert one(ok, "device_total_bytes") == round(23.58 * GIB)
    assert one(ok, "available_kv_cache_bytes") == round(3.81 * GIB)
    assert ok.settings["gpu_memory_utilization"] == 0.90
    assert (one(ok, "num_gpu_blocks"), one(ok, "num_cpu_blocks")) == (1952, 2048)
    assert ok.figure("max_concurrency").consistent_with(1952 * 16 / 20000)
    refused = parse("vllm-v0.6-too-long-3090.log")
    assert refused.refusal is not None and "23648" in refused.refusal
    assert one(refused, "kv_tokens") == 23648 == 1478 * 16
    assert refused.settings["max_model_len"] == 29000


def test_vllm_profiling_table_and_summary_forms():
    table = parse("vllm-v0.6.5-memory-profiling-table.log")
    # model weights take 7.48GiB (with -tp 2) ... the last value is cut in the thread
    assert one(table, "weights_bytes") == round(7.48 * GIB)
    assert one(table, "requested_memory_bytes") == round(71.29 * GIB)
    assert one(table, "activation_peak_bytes") == round(1.26 * GIB)
    assert values(table, "available_kv_cache_bytes") == []
    workers = parse("vllm-v0.8-workers-tp-3090.log")
    # every worker prints its own: model weights take 21.21GiB; ... reserved for KV Cache is 1.57GiB.
    assert values(workers, "available_kv_cache_bytes") == [round(1.57 * GIB)] * 3
    assert workers.devices == ["VllmWorkerProcess pid=521", "VllmWorkerProcess pid=507", "VllmWorkerProcess pid=577"]
    assert workers.settings["gpu_memory_utilization"] == 0.99
    loading = parse("vllm-v0.7.4-model-loading-tp.log")
    assert values(loading, "weights_bytes") == [round(15.4137 * GIB)] * 4  # Model loading took 15.4137 GB


def test_vllm_config_lines_across_versions():
    v064 = parse("vllm-v0.6.4-engine-config.log")
    assert v064.version == "0.6.4.post1"
    assert v064.settings["max_model_len"] == 120000 and v064.settings["max_num_batched_tokens"] == 512
    v083 = parse("vllm-v0.8.3-dp-engine-config.log")
    assert v083.version == "0.8.3"
    assert v083.settings == {
        "model": "/mnt/tenant-home_speed/Model/Qwen/Qwen2.5-7B-Instruct",
        "dtype": "bfloat16",
        "max_model_len": 102400,
        "tensor_parallel_size": 1,
        "pipeline_parallel_size": 1,
        "kv_cache_dtype": "auto",
        "enable_prefix_caching": True,
        "enable_chunked_prefill": True,
    }
    gptoss = parse("vllm-v0.10.2-gptoss-mxfp4-config.log")
    assert gptoss.version == "0.10.2.dev2+gf5635d62e.d20250805"
    assert gptoss.settings["quantization"] == "mxfp4"
    assert gptoss.settings["enable_prefix_caching"] is True  # "enable_prefix" + wrapped "_caching=True"
    v027 = parse("vllm-v0.27-engine-config.log")
    assert v027.version == "0.27.1" and v027.settings["gpu_memory_utilization"] == 0.5
    assert v027.settings["max_model_len"] == 2048 and v027.settings["data_parallel_size"] == 1
    args = parse("vllm-v0.14-apiserver-nondefault-args.log")
    assert args.settings["gpu_memory_utilization"] == 0.35 and args.settings["max_model_len"] == 1024


def test_vllm_fp8_cache_and_tensor_parallel():
    fp8 = parse("vllm-fp8-kv-cache.log")
    assert one(fp8, "kv_tokens") == 230528 and one(fp8, "available_kv_cache_bytes") == round(10.55 * GIB)
    assert fp8.figure("max_concurrency").consistent_with(230528 / 100000)
    tp4 = parse("vllm-v0.9-tp4-qwen3-235b.log")
    assert (one(tp4, "kv_tokens"), one(tp4, "available_kv_cache_bytes")) == (178880, round(8.11 * GIB))


# ---------------------------------------------------------------- SGLang


def test_sglang_weights_kv_pool_and_binary_gb():
    log = parse("sglang-v0.4.4-gemma3-h200.log")
    assert log.engine == "sglang"
    # [.. TP0] Load weight end. ... avail mem=131.08 GB, mem usage=8.13 GB.
    weights = log.figure("weights_bytes")
    assert weights is not None and weights.value == round(8.13 * GIB) and weights.device == "TP0"
    assert weights.printed_unit == "GB" and weights.unit_size == GIB
    # KV Cache is allocated. #tokens: 834615, K size: 54.12 GB, V size: 54.12 GB
    assert one(log, "kv_tokens") == 834615
    assert one(log, "k_bytes") == one(log, "v_bytes") == round(54.12 * GIB)
    assert one(log, "avail_after_pool_bytes") == round(14.61 * GIB)


def test_sglang_mla_pool_and_summary_line():
    mla = parse("sglang-2026-npu-mla-kv-size.log")
    # KV Cache is allocated. #tokens: 383872, KV size: 19.36 GB
    assert one(mla, "kv_tokens") == 383872 and one(mla, "k_bytes") == round(19.36 * GIB)
    assert values(mla, "v_bytes") == [] and "MLA" in mla.figure("k_bytes").basis
    summary = parse("sglang-max-total-num-tokens.log")
    # max_total_num_tokens=2261377, chunked_prefill_size=16384, max_prefill_tokens=16384,
    # max_running_requests=4096, context_len=128000, available_gpu_mem=37.06 GB
    assert one(summary, "max_total_num_tokens") == 2261377
    assert one(summary, "max_running_requests") == 4096
    assert one(summary, "context_len") == 128000
    assert one(summary, "available_gpu_mem_bytes") == round(37.06 * GIB)
    assert one(summary, "cuda_graph_bytes") == round(1.44 * GIB)


def test_sglang_server_args_and_wrappers():
    args = parse("sglang-server-args-llama31.log")
    assert args.settings["mem_fraction_static"] == 0.88 and args.settings["tp_size"] == 1
    assert args.settings["chunked_prefill_size"] == 8192 and args.settings["page_size"] == 1
    assert args.settings["context_length"] == "auto" and args.settings["max_running_requests"] == "auto"
    assert args.settings["enable_metrics"] is False
    tp4 = parse("sglang-tp4-qwen3-235b.log")
    assert (one(tp4, "kv_tokens"), one(tp4, "k_bytes")) == (367404, round(8.23 * GIB))
    wrapped = parse("sglang-wrapped-by-olmocr.log")
    assert wrapped.engine == "sglang" and wrapped.settings["mem_fraction_static"] == 0.76
    assert one(wrapped, "avail_before_weights_bytes", device="TP0") == round(22.46 * GIB)
    tp2 = parse("sglang-tp2-capture.log")
    assert [(f.device, f.value) for f in tp2.figures_named("cuda_graph_bytes")] == [
        ("TP1", round(1.04 * GIB)),
        ("TP0", 1 * GIB),
    ]


# ---------------------------------------------------------------- MLX LM


def test_mlx_lm_peak_memory_in_decimal_gb():
    gen = parse("mlx-lm-generate-peak-memory.log")
    assert gen.engine == "mlx-lm"
    peak = gen.figure("peak_memory_bytes")
    assert peak is not None and peak.value == 11_496_000_000 and peak.unit_size == 10**9  # Peak memory: 11.496 GB
    assert one(gen, "prompt_tokens") == 32188 and one(gen, "cache_memory_bytes") == 4_034_000_000
    bench = parse("mlx-lm-benchmark.log")
    assert one(bench, "peak_memory_bytes") == 3_285_000_000  # Averages: ... peak_memory=3.285
    assert bench.missing == []


def test_ollama_server_config_and_version():
    log = parse("ollama-v0.2.7-server-config-windows.log")
    assert log.engine == "ollama" and log.version == "0.2.7"  # msg="Listening on 127.0.0.1:11434 (version 0.2.7)"
    # server config env="map[... OLLAMA_FLASH_ATTENTION:false ... OLLAMA_MAX_QUEUE:512 ... OLLAMA_NUM_PARALLEL:0 ...]"
    assert log.settings == {
        "flash_attention": False,
        "host": "http://127.0.0.1:11434",
        "keep_alive": "5m0s",
        "max_loaded_models": 0,
        "max_queue": 512,
        "num_parallel": 0,
    }
    later = parse("ollama-v0.5-server-config-kv-cache-type.log")
    assert (
        later.settings["gpu_overhead"] == 0 and "kv_cache_type" not in later.settings
    )  # OLLAMA_KV_CACHE_TYPE: (unset)


def test_ollama_llama_server_command_gives_the_per_request_context():
    # Constructed in the argument order of ollama/ollama:llm/llama_server.go (v0.33.0-rc2): no public log of a
    # v0.30+ start-up was found, so this pins the rule, not a printed figure.
    line = (
        'time=2026-08-21T10:00:00.000Z level=INFO source=llama_server.go:433 msg="starting llama-server" '
        'cmd="/usr/lib/ollama/llama-server --model /m.gguf --port 40000 --host 127.0.0.1 --no-webui --offline '
        '-c 16384 -np 4 --cache-type-k q8_0 --cache-type-v q8_0 -ngl 99 -b 512 -ub 512 --flash-attn on"'
    )
    from calculators.reconcile.log.parse import parse_startup_log

    log = parse_startup_log(line)
    assert log.engine == "ollama"
    assert log.runner_settings == {
        "ctx_size": 16384,
        "parallel": 4,
        "cache_type_k": "q8_0",
        "cache_type_v": "q8_0",
        "n_gpu_layers": 99,
        "batch_size": 512,
        "ubatch_size": 512,
        "flash_attn": "on",
    }
    assert log.settings["context_length"] == 4096 and log.settings["num_parallel"] == 4
    assert log.settings["kv_cache_type"] == "q8_0" and log.settings["flash_attention"] is True


def test_ollama_engine_kv_cache_per_gpu():
    log = parse("ollama-v0.20.7-engine-two-gpus-kv.log")
    assert log.engine == "ollama"
    # msg="kv cache" device=CUDA0 size="5.2 GiB" / device=CUDA1 size="4.9 GiB"
    assert [(f.device, f.value) for f in log.figures_named("kv_buffer_bytes")] == [
        ("CUDA0", round(5.2 * GIB)),
        ("CUDA1", round(4.9 * GIB)),
    ]
    assert log.total("model_buffer_bytes") == round(15.4 * GIB) + 16 * GIB + round(1.5 * GIB)
    # Ollama prints one decimal: the exact sum is only known to +-0.05 GiB per device
    kv = log.figure("kv_buffer_bytes", device="CUDA0")
    assert kv.consistent_with(round(5.24 * GIB)) and not kv.consistent_with(round(5.26 * GIB))


def test_ollama_load_request_gives_context_parallel_and_cache_type():
    log = parse("ollama-2026-02-load-request-parallel-8.log")
    # msg=load request="{Operation:fit ... Parallel:8 BatchSize:512 FlashAttention:Enabled KvSize:262144
    #                    KvCacheType:q8_0 NumThreads:12 GPULayers:49[...]"   (KvSize = num_ctx x num_parallel)
    assert log.settings == {"flash_attention": True, "num_parallel": 8, "context_length": 32768,
                            "kv_cache_type": "q8_0", "num_gpu": 49}  # fmt: skip
    assert log.runner_settings == {"parallel": 8, "ctx_size": 262144, "batch_size": 512}
    # msg="gpu memory" ... available="125.6 MiB" free="582.6 MiB"; msg="loading model" "model layers"=49
    assert one(log, "device_available_bytes") == round(125.6 * MIB)
    assert one(log, "total_layers") == 49
    eight = parse("ollama-2025-08-load-request-8-gpus.log")
    assert eight.settings["context_length"] == 65536 and "kv_cache_type" not in eight.settings  # KvCacheType: (unset)
    assert values(eight, "device_free_bytes") == [round(31.4 * GIB)] * 3
    assert eight.geometry.architecture == "gptoss" and eight.hardware == ["Tesla V100-SXM2-32GB"]


def test_missing_lists_what_a_complete_log_of_that_engine_states():
    engine_only = parse("ollama-v0.20.7-engine-two-gpus-kv.log")
    assert [f"{m.kind}:{m.name}" for m in engine_only.missing] == [
        "version:version", "geometry:n_layers", "geometry:n_kv_heads", "geometry:head_dim_k", "geometry:head_dim_v",
        "setting:num_parallel", "setting:context_length", "setting:flash_attention", "figure:compute_buffer_bytes",
    ]  # fmt: skip
    tp4 = parse("vllm-v0.9-tp4-qwen3-235b.log")
    assert [m.name for m in tp4.missing] == [
        "version", "max_model_len", "gpu_memory_utilization", "tensor_parallel_size", "kv_cache_dtype",
        "block_size", "weights_bytes", "max_concurrency",
    ]  # fmt: skip


def test_vllm_refusal_states_what_was_needed_and_its_estimate():
    log = parse("vllm-fp8-refusal-estimated-len.log")
    assert log.engine == "vllm" and log.refusal is not None
    # (10.12 GiB KV cache is needed, ... available KV cache memory (5.59 GiB) ...
    # ... the estimated maximum model length is 122080
    assert one(log, "kv_needed_bytes") == round(10.12 * GIB)
    assert one(log, "available_kv_cache_bytes") == round(5.59 * GIB)
    assert one(log, "estimated_max_model_len") == 122080
    assert log.settings["max_model_len"] == 221000
