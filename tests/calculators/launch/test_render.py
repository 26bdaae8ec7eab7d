"""Launch commands written back from engine settings: the workload keys always, other keys when not default."""

from __future__ import annotations

from calculators.launch.render import render_launch_command
from calculators.memory.compare import Workload, engine_settings


def _render(engine: str, workload: Workload, overrides=None):
    settings = engine_settings(engine, workload, overrides)
    return render_launch_command(engine, settings, "org/model")


def test_llama_server_gets_context_times_slots():
    command = _render("llama-cpp", Workload(8192, 4, "8-bit"), {"n_gpu_layers": 20})
    assert command.words[:3] == ["llama-server", "-m", "org/model"]
    joined = " ".join(command.words)
    assert "-c 32768 -np 4" in joined and "-ctk q8_0 -ctv q8_0" in joined and "-ngl 20" in joined


def test_ollama_is_configured_by_environment_and_skips_unset_values():
    command = _render("ollama", Workload(8192, 4))
    assert command.words == ["ollama", "serve"]
    assert command.env == {"OLLAMA_NUM_PARALLEL": "4", "OLLAMA_CONTEXT_LENGTH": "8192"}
    quantized = _render("ollama", Workload(8192, 4, "8-bit"))
    assert quantized.env["OLLAMA_KV_CACHE_TYPE"] == "q8_0" and quantized.env["OLLAMA_FLASH_ATTENTION"] == "1"


def test_vllm_and_sglang_flags():
    vllm = " ".join(_render("vllm", Workload(8192, 16), {"gpu_memory_utilization": 0.85}).words)
    assert vllm.startswith("vllm serve org/model")
    for flag in ("--max-model-len 8192", "--max-num-seqs 16", "--kv-cache-dtype auto", "--gpu-memory-utilization 0.85"):
        assert flag in vllm
    sglang = " ".join(_render("sglang", Workload(8192, 16, "8-bit")).words)
    for flag in ("--context-length 8192", "--max-running-requests 16", "--kv-cache-dtype fp8_e4m3"):
        assert flag in sglang


def test_mlx_generate_only_flags_are_a_remark_not_a_server_flag():
    # engines.yaml (mlx_lm/server.py at v0.32.2) lists --max-kv-size for mlx_lm.generate only, while
    # --kv-bits is read by mlx_lm.server too (an earlier hand-typed flag table had it generate-only)
    command = _render("mlx-lm", Workload(8192, 2, "4-bit"), {"max_kv_size": 4096})
    assert "--max-kv-size" not in command.words
    assert any("mlx_lm.generate" in remark and "--max-kv-size 4096" in remark for remark in command.remarks)
    assert " ".join(command.words).startswith("mlx_lm.server --model org/model")
    assert "--kv-bits 4" in " ".join(command.words)


def test_written_commands_read_back_to_the_same_settings():
    import shlex

    from calculators.launch.settings import settings_from_command
    from knowledge.loader import load_knowledge

    kb = load_knowledge()
    workload = Workload(8192, 4, "8-bit")
    for engine in ("llama-cpp", "ollama", "vllm", "sglang", "mlx-lm"):
        settings = engine_settings(engine, workload)
        command = render_launch_command(engine, settings, "org/model")
        env = " ".join(f"{k}={v}" for k, v in command.env.items())
        parsed = settings_from_command(f"{env} {shlex.join(command.words)}".strip(), kb)
        assert parsed.engine == engine
        assert not parsed.unknown_flags, (engine, parsed.unknown_flags)
        for key in parsed.settings.model_fields_set:
            assert getattr(parsed.settings, key) == getattr(settings, key), (engine, key)
