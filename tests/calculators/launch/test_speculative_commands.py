"""Speculative decoding and hybrid-state flags read from pasted launch commands into each engine's settings."""

from __future__ import annotations

import pytest

from calculators.engines.llama_cpp.plan import plan_llamacpp
from calculators.engines.vllm.plan import plan_vllm
from calculators.errors import LaunchCommandError
from calculators.hardware.machine import Machine
from calculators.launch.settings import settings_from_command
from calculators.model.hf_config import architecture_from_config_file
from knowledge.loader import load_knowledge
from tests.support.paths import HF_CONFIG_DIR

KB = load_knowledge()


def test_vllm_speculative_config_json_and_mamba_dtype():
    parsed = settings_from_command(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
        "'{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", \"num_speculative_tokens\": 3}' "
        "--mamba-ssm-cache-dtype float32 --kv-cache-memory-bytes 8589934592 --max-model-len 8192", KB)
    spec = parsed.settings.speculative_config
    assert (spec.method, spec.num_speculative_tokens, spec.model) == (
        "eagle3",
        3,
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    )
    assert parsed.settings.mamba_ssm_cache_dtype == "float32"
    arch = architecture_from_config_file(HF_CONFIG_DIR / "Llama-3.1-8B-Instruct.json")
    with_head = plan_vllm(arch, parsed.settings, Machine(device_memory_bytes=80 << 30), None)
    without = plan_vllm(arch, parsed.settings.model_copy(update={"speculative_config": None}),
                        Machine(device_memory_bytes=80 << 30), None)
    assert with_head.num_gpu_blocks * 33 // 32 <= without.num_gpu_blocks  # one drafter layer next to 32


def test_vllm_bad_speculative_json_names_the_flag():
    with pytest.raises(LaunchCommandError, match="--speculative-config"):
        settings_from_command("vllm serve m --speculative-config '{method: eagle3}'", KB)


def test_llama_server_draft_flags():
    parsed = settings_from_command("llama-server -m target.gguf -md draft.gguf --spec-draft-n-max 5 -ctkd q8_0 "
                                   "--spec-type draft-mtp -c 8192 -np 2", KB)
    s = parsed.settings
    assert (s.spec_draft_model, s.spec_draft_n_max, s.spec_draft_type_k, s.spec_type) == (
        "draft.gguf", 5, "q8_0", ("draft-mtp",))
    qwen35 = architecture_from_config_file(HF_CONFIG_DIR / "Qwen3.5-397B-A17B.json")
    recurrent = {c.name: c for c in plan_llamacpp(qwen35, s).caches}["recurrent"]
    plain = {c.name: c for c in plan_llamacpp(qwen35, s.model_copy(update={"spec_type": ()})).caches}["recurrent"]
    assert recurrent.total_bytes == 6 * plain.total_bytes  # 1 + --spec-draft-n-max snapshots


def test_sglang_speculative_and_mamba_flags():
    parsed = settings_from_command(
        "python -m sglang.launch_server --model-path Qwen/Qwen3.5-397B-A17B --speculative-algorithm NEXTN "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
        "--mamba-ssm-dtype bfloat16 --mamba-radix-cache-strategy no_buffer "
        "--disable-overlap-schedule --tp 8", KB)
    s = parsed.settings
    assert (s.speculative_algorithm, s.speculative_num_draft_tokens, s.mamba_ssm_dtype,
            s.mamba_radix_cache_strategy, s.disable_overlap_schedule) == ("NEXTN", 4, "bfloat16", "no_buffer", True)


def test_mlx_draft_model_flags():
    parsed = settings_from_command("mlx_lm.server --model mlx-community/Llama-3.1-8B-Instruct-4bit "
                                   "--draft-model mlx-community/Llama-3.2-1B-Instruct-4bit --num-draft-tokens 4", KB)
    assert (parsed.settings.draft_model, parsed.settings.num_draft_tokens) == (
        "mlx-community/Llama-3.2-1B-Instruct-4bit", 4)


def test_sglang_mamba_cache_size_flag():
    parsed = settings_from_command("python -m sglang.launch_server --model-path m --max-mamba-cache-size 120 "
                                   "--mamba-full-memory-ratio 0.5", KB)
    assert (parsed.settings.max_mamba_cache_size, parsed.settings.mamba_full_memory_ratio) == (120, 0.5)
