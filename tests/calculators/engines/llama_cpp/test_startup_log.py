"""llama.cpp start-up logs from public threads: every figure pinned to what the engine printed.

Each file is cited in tests/data/logs/SOURCES.md; the comment on each test names the printed line.
"""

from __future__ import annotations

from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from calculators.units import GIB, MIB
from tests.support.startup_log import one, parse, values


def test_gpt_oss_on_eight_cann_devices_with_sliding_window_caches():
    log = parse("llamacpp-2025-08-gptoss-20b-8x-cann-swa.log")
    assert log.engine == "llama-cpp" and log.runner is None
    geo = log.geometry
    # print_info: n_layer = 24, n_head = 64, n_head_kv = 8, n_swa = 128, n_embd_head_k/v = 64, n_ctx_train = 131072
    assert (geo.n_layers, geo.n_heads, geo.n_kv_heads, geo.head_dim_k, geo.head_dim_v) == (24, 64, 8, 64, 64)
    assert geo.sliding_window_tokens == 128 and geo.context_train_tokens == 131072
    assert geo.architecture == "gpt-oss" and geo.file_type == "MXFP4 MoE" and geo.params_total == 20_910_000_000
    # llama_context: n_seq_max = 1, n_ctx = 131072, n_ubatch = 512, flash_attn = 1, kv_unified = false
    assert log.settings == {
        "parallel": 1,
        "ctx_size": 131072,
        "ctx_per_seq": 131072,
        "batch_size": 2048,
        "ubatch_size": 512,
        "flash_attn": "on",
        "kv_unified": False,
        "cache_type_k": "f16",
        "cache_type_v": "f16",
    }
    # llama_kv_cache_unified: size = 3072.00 MiB (131072 cells, 12 layers, 1/1 seqs), K (f16): 1536.00 MiB, ...
    assert one(log, "kv_cache_bytes", cache="kv") == 3072 * MIB
    assert one(log, "k_bytes", cache="kv") == one(log, "v_bytes", cache="kv") == 1536 * MIB
    assert (one(log, "cells", cache="kv"), one(log, "layers", cache="kv"), one(log, "seqs", cache="kv")) == (
        131072,
        12,
        1,
    )
    # ... size = 18.00 MiB (768 cells, 12 layers, 1/1 seqs), K (f16): 9.00 MiB, V (f16): 9.00 MiB
    assert one(log, "kv_cache_bytes", cache="kv_swa") == 18 * MIB
    assert (one(log, "cells", cache="kv_swa"), one(log, "layers", cache="kv_swa")) == (768, 12)
    assert log.caches() == ["kv", "kv_swa"]
    # the eight per-device KV buffers add up to the cache they belong to
    assert sum(values(log, "kv_buffer_bytes", cache="kv")) == 3072 * MIB
    assert sum(values(log, "kv_buffer_bytes", cache="kv_swa")) == 18 * MIB
    assert [f.device for f in log.figures_named("kv_buffer_bytes", cache="kv")] == [f"CANN{i}" for i in range(8)]
    # load_tensors: CPU_Mapped model buffer size = 10949.33 MiB; CANN7 ... = 641.43 MiB
    assert one(log, "model_buffer_bytes", device="CPU_Mapped") == round(10949.33 * MIB)
    assert one(log, "compute_buffer_bytes", device="CANN_Host") == round(402.27 * MIB)
    assert (one(log, "offloaded_layers"), one(log, "total_layers")) == (25, 25)
    assert one(log, "model_file_bytes") == round(11.27 * GIB)  # print_info: file size = 11.27 GiB
    assert one(log, "slot_ctx_tokens") == 131072  # new slot n_ctx_slot = 131072
    assert [m.name for m in log.missing] == ["version"]


def test_printed_k_size_is_exact_for_the_printed_geometry():
    # 131072 cells x 12 layers x 8 KV heads x 64 dims x 2 bytes (f16) = exactly 1536 MiB
    log = parse("llamacpp-2025-08-gptoss-20b-8x-cann-swa.log")
    k = log.figure("k_bytes", cache="kv")
    assert k is not None and k.consistent_with(131072 * 12 * 8 * 64 * 2)
    assert not k.consistent_with(131072 * 12 * 8 * 64 * 2 + 8 * 1024)


def test_quantized_q8_0_cache_on_two_gpus():
    log = parse("llamacpp-2025-q8-cache-two-gpus.log")
    # llama_kv_cache_init: kv_size = 32768, ..., type_k = 'q8_0', type_v = 'q8_0', n_layer = 64
    assert log.settings == {"cache_type_k": "q8_0", "cache_type_v": "q8_0"}
    assert (one(log, "cells", cache="kv"), one(log, "layers", cache="kv")) == (32768, 64)
    # CUDA0 KV buffer size = 2788.00 MiB, CUDA1 ... = 1564.00 MiB; KV self size = 4352.00 MiB, K (q8_0): 2176.00 MiB
    assert values(log, "kv_buffer_bytes") == [2788 * MIB, 1564 * MIB]
    assert one(log, "kv_cache_bytes") == 4352 * MIB == sum(values(log, "kv_buffer_bytes"))
    assert one(log, "k_bytes") == one(log, "v_bytes") == 2176 * MIB
    # q8_0 stores 32 elements in 34 bytes: 32768 cells x 64 layers x 1024 K elements x 34/32 = 2176 MiB exactly
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType.Q8_0]
    assert log.figure("k_bytes").consistent_with(32768 * 64 * 1024 // block * size)
    assert values(log, "compute_buffer_bytes") == [233 * MIB, round(237.51 * MIB), round(133.01 * MIB)]
    assert one(log, "device_free_bytes", device="CUDA1") == 9866 * MIB  # using device CUDA1 ... - 9866 MiB free
    assert log.hardware == ["NVIDIA GeForce RTX 3090 Ti"]


def test_2024_two_gpus_with_per_device_kv_buffers():
    log = parse("llamacpp-2024-two-gpus-pipeline.log")
    assert log.hardware == ["NVIDIA GeForce RTX 4070 Ti", "NVIDIA GeForce RTX 3090 Ti"]
    # llm_load_tensors: CPU buffer size = 1640.62 MiB, CUDA0 ... = 5434.38 MiB, CUDA1 ... = 13989.53 MiB
    assert [f.device for f in log.figures_named("model_buffer_bytes")] == ["CPU", "CUDA0", "CUDA1"]
    assert values(log, "model_buffer_bytes") == [round(1640.62 * MIB), round(5434.38 * MIB), round(13989.53 * MIB)]
    # KV self size = 5120.00 MiB, K (f16): 2560.00 MiB, V (f16): 2560.00 MiB = 1536 + 3584 per device
    assert one(log, "kv_cache_bytes") == 5120 * MIB == sum(values(log, "kv_buffer_bytes"))
    assert log.settings["ctx_size"] == 4096 and log.settings["cache_type_k"] == "f16"
    assert (one(log, "offloaded_layers"), one(log, "total_layers")) == (41, 41)


def test_2023_log_prints_mib_under_the_label_mb():
    log = parse("llamacpp-2023-llava-mb-units.log")
    kv = log.figure("kv_cache_bytes")
    # llama_new_context_with_model: kv self size  = 1024.00 MB
    assert kv is not None and kv.value == 1024 * MIB and kv.printed_unit == "MB" and kv.unit_size == MIB
    assert "MB" in kv.basis
    assert one(log, "compute_buffer_bytes") == round(162.13 * MIB)  # compute buffer total size = 162.13 MB
    assert (one(log, "offloaded_layers"), one(log, "total_layers")) == (0, 35)
    assert log.settings == {"ctx_size": 2048}


def test_size_line_variants_across_versions():
    # "(  8192 cells,  32 layers)" -- no seqs field
    no_seqs = parse("llamacpp-2025-cpu-no-seqs-field.log")
    assert one(no_seqs, "kv_cache_bytes") == 1024 * MIB and one(no_seqs, "layers") == 32
    assert values(no_seqs, "seqs") == []
    # "(  4096 cells,  32 layers,  1 seqs)"
    bare = parse("llamacpp-2025-cuda-one-seqs-field.log")
    assert one(bare, "seqs") == 1 and values(bare, "streams") == []
    assert one(bare, "kv_buffer_bytes", device="CUDA0") == 1536 * MIB
    # "(  4096 cells, 126 layers,  1/ 1 seqs)" on RPC devices, kv_unified = true
    rpc = parse("llamacpp-2025-rpc-kv-unified.log")
    assert (one(rpc, "seqs"), one(rpc, "streams"), one(rpc, "layers")) == (1, 1, 126)
    assert rpc.settings["kv_unified"] is True
    assert sum(values(rpc, "kv_buffer_bytes")) == one(rpc, "kv_cache_bytes") == 2016 * MIB
    assert "RPC[172.31.110.11:50052]" in rpc.devices
    # "( 2048 cells, 27 layers, 8/8 seqs), K (f16): 2592.00 MiB, V (f16): 1728.00 MiB" -- K and V differ
    mla = parse("llamacpp-2026-mla-8-seqs.log")
    assert (one(mla, "seqs"), one(mla, "streams")) == (8, 8)
    assert (one(mla, "k_bytes"), one(mla, "v_bytes")) == (2592 * MIB, 1728 * MIB)
    assert one(mla, "compute_buffer_bytes", device="CUDA0") == round(125.39 * MIB)  # sched_reserve: CUDA0 ...


def test_iswa_caches_relayed_by_ollama():
    # Only llama.cpp's own lines are in this excerpt, so the text itself names llama.cpp.
    log = parse("ollama-2026-gemma-iswa-relayed.log")
    assert log.engine == "llama-cpp"
    assert log.caches() == ["kv", "kv_swa"]
    assert (one(log, "kv_cache_bytes", cache="kv"), one(log, "layers", cache="kv")) == (416 * MIB, 13)
    assert (one(log, "cells", cache="kv_swa"), one(log, "layers", cache="kv_swa")) == (2560, 39)
    assert one(log, "k_bytes", cache="kv_swa") == round(48.75 * MIB)


def test_cut_and_coloured_log_keeps_what_it_has():
    log = parse("llamacpp-2026-ansi-dsv4-swa.log")
    assert log.engine == "llama-cpp"
    # a 0-layer non-SWA cache is still a printed figure
    assert one(log, "kv_cache_bytes", cache="kv") == 0 and one(log, "cells", cache="kv") == 64000
    # the SWA size line is cut after "43": its cell count comes from the 'creating … 4352 cells' line
    assert one(log, "cells", cache="kv_swa") == 4352
    assert one(log, "kv_buffer_bytes", cache="kv_swa", device="CUDA0") == round(182.75 * MIB)
    assert values(log, "kv_cache_bytes", cache="kv_swa") == []
    assert [(n.code, n.line) for n in log.notes] == [("unparsed_line", 15)]
    assert log.geometry.context_train_tokens == 1048576  # n_ctx_seq (64000) < n_ctx_train (1048576)


def test_log_cut_before_the_size_line():
    log = parse("llamacpp-b5xxx-no-kv-offload-iswa.log")
    assert one(log, "cells", cache="kv") == 240000  # creating non-SWA KV cache, size = 240000 cells
    assert {m.name for m in log.missing} >= {"kv_cache_bytes", "k_bytes", "v_bytes"}
    assert log.settings["ctx_size"] == 240000 and log.geometry.context_train_tokens == 262144


def test_metadata_dumps_give_geometry():
    # print_info: file type = Q6_K, file size = 18.31 GiB, n_layer = 40, n_head = 32, n_head_kv = 8 (cut after)
    small = parse("llamacpp-2025-mistral-small-print-info.log")
    geo = small.geometry
    assert (geo.n_layers, geo.n_heads, geo.n_kv_heads, geo.head_dim_k, geo.head_dim_v) == (40, 32, 8, 128, None)
    assert geo.sliding_window_tokens == 0 and geo.file_type == "Q6_K"
    assert one(small, "model_file_bytes") == round(18.31 * GIB)
    # llama_model_loader: - kv 14: qwen2.block_count u32 = 24 ... general.file_type u32 = 7 (docker timestamps)
    qwen = parse("llamacpp-docker-timestamps-qwen2-kv.log").geometry
    assert (qwen.n_layers, qwen.n_heads, qwen.n_kv_heads, qwen.n_embd) == (24, 14, 2, 896)
    assert qwen.context_train_tokens == 32768 and qwen.file_type == "MOSTLY_Q8_0"
    # llm_load_print_meta: model ftype = IQ3_K - 3.4325 bpw, model params = 235.094 B, model size = 106.830 GiB
    big = parse("llamacpp-ik-qwen3-235b-print-meta.log")
    assert big.geometry.file_type == "IQ3_K - 3.4325 bpw" and big.geometry.params_total == 235_094_000_000
    assert one(big, "model_file_bytes") == round(106.830 * GIB)
    swa = parse("llamacpp-ik-gptoss-20b-print-info.log").geometry
    assert (swa.sliding_window_tokens, swa.n_expert, swa.n_expert_used) == (128, 32, 4)


def test_build_line_and_command_line():
    log = parse("llamacpp-b4202-build-line.log")
    assert log.version == "b4202 (9f912511)"  # build: 4202 (9f912511) with cc ...
    # ./llama-server ... --ctx-size 4096 --flash-attn --cache-type-k q8_0 --cache-type-v q8_0 --gpu-layers 1
    assert log.settings == {
        "ctx_size": 4096,
        "flash_attn": "on",
        "cache_type_k": "q8_0",
        "cache_type_v": "q8_0",
        "n_gpu_layers": 1,
    }
    assert [n.code for n in log.notes] == ["no_figures"]


def test_binding_prefixes_are_removed():
    log = parse("llamacpp-binding-level-prefix.log")
    assert one(log, "kv_cache_bytes") == 112 * MIB and one(log, "layers") == 28
    assert one(log, "compute_buffer_bytes", device="CPU") == round(300.75 * MIB)


def test_total_sums_devices_and_shortened_arrays_are_not_per_layer_values():
    log = parse("llamacpp-2025-08-gptoss-20b-8x-cann-swa.log")
    assert log.total("kv_buffer_bytes", cache="kv") == log.figure("kv_cache_bytes", cache="kv").value
    assert log.total("recurrent_buffer_bytes") is None
    from calculators.reconcile.log.parse import parse_startup_log

    # "arr[i32,48] = [0, 0, 0, 8, ..." is cut by llama.cpp itself: no per-layer list can be read from it
    shortened = parse_startup_log(
        "llama_model_loader: - kv  13:  qwen3next.attention.head_count_kv arr[i32,48]  = [0, 0, 0, 8, 0, 0, 0, 8, ..."
    )
    assert shortened.geometry.n_kv_heads is None and shortened.geometry.n_kv_heads_per_layer is None


def test_hybrid_model_has_a_kv_cache_and_a_recurrent_state():
    log = parse("llamacpp-2026-hybrid-recurrent-cpu.log")
    # llama_kv_cache: size = 3072.00 MiB (262144 cells, 6 layers, 4/1 seqs), K (f16): 1536.00 MiB, ...
    assert (one(log, "cells", cache="kv"), one(log, "layers", cache="kv")) == (262144, 6)
    assert (one(log, "seqs", cache="kv"), one(log, "streams", cache="kv")) == (4, 1)  # 4 slots share one stream
    # llama_memory_recurrent: size = 77.06 MiB (4 cells, 24 layers, 4 seqs), R (f32): 5.06 MiB, S (f32): 72.00 MiB
    assert one(log, "recurrent_state_bytes", cache="recurrent") == round(77.06 * MIB)
    assert (one(log, "k_bytes", cache="recurrent"), one(log, "v_bytes", cache="recurrent")) == (
        round(5.06 * MIB),
        72 * MIB,
    )
    assert (one(log, "cells", cache="recurrent"), one(log, "layers", cache="recurrent")) == (4, 24)
    assert one(log, "recurrent_buffer_bytes", device="CPU") == round(77.06 * MIB)
    # flash_attn = auto, then "Flash Attention was auto, set to enabled"
    assert log.settings["flash_attn"] == "auto" and log.settings["flash_attn_resolved"] == "on"
    assert log.settings["parallel"] == 4 and log.settings["kv_unified"] is True
    assert log.caches() == ["kv", "recurrent"]


def test_pipe_timestamped_hybrid_with_q8_0_cache():
    log = parse("llamacpp-2026-hybrid-q8-pipe-timestamps.log")
    assert log.engine == "llama-cpp"
    assert log.settings["cache_type_k"] == log.settings["cache_type_v"] == "q8_0"
    assert one(log, "kv_cache_bytes", cache="kv") == 4352 * MIB == one(log, "kv_buffer_bytes", device="CUDA0")
    assert one(log, "layers", cache="recurrent") == 65 and one(log, "v_bytes", cache="recurrent") == 576 * MIB
    assert log.geometry.context_train_tokens == 262144


def test_four_slots_sharing_a_unified_cache():
    log = parse("llamacpp-2026-flash-auto-4-slots.log")
    # n_seq_max = 4, n_ctx = 65536, n_ctx_seq = 65536, kv_unified = true; 65536 cells, 48 layers, 4/1 seqs
    assert (log.settings["parallel"], log.settings["ctx_size"], log.settings["ctx_per_seq"]) == (4, 65536, 65536)
    assert (one(log, "cells"), one(log, "layers"), one(log, "seqs"), one(log, "streams")) == (65536, 48, 4, 1)
    assert one(log, "kv_cache_bytes") == 6144 * MIB
    assert log.settings["flash_attn_resolved"] == "on"


def test_quantized_v_cache_forces_flash_attention_and_fit_projection():
    log = parse("llamacpp-2026-quantized-v-needs-flash.log")
    assert log.settings["flash_attn_resolved"] == "on" and log.settings["flash_attn"] == "on"
    # projected to use 4792 MiB of device memory vs. 30991 MiB of free device memory
    assert (one(log, "fit_projected_bytes"), one(log, "fit_free_bytes")) == (4792 * MIB, 30991 * MIB)
    # initializing, n_slots = 4, n_ctx_slot = 16384, kv_unified = 'true'
    assert (one(log, "slots"), one(log, "slot_ctx_tokens")) == (4, 16384)
    assert (one(log, "k_bytes"), one(log, "cells"), one(log, "layers")) == (238 * MIB, 16384, 28)
