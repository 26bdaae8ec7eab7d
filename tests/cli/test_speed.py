"""The speed and calibrate verbs: figures from the speed model, calibration files, one-line errors."""

import json

from calculators.engines import adapter
from calculators.speed.inputs import accelerator_of_gpu, model_shape
from calculators.speed.predict import estimate_speed
from knowledge import load_knowledge
from tests.cli.test_memory_recommend import REPO, cli

DATA = REPO / "tests" / "data"
VLLM = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B", "--max-num-seqs", "64"]


def test_speed_json_matches_the_model_and_the_commands_concurrency():
    done = cli("speed", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--prompt-tokens", "2048", "--json", *VLLM)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["concurrency"] == 64 and data["prompt_tokens"] == 2048
    kb = load_knowledge()
    from calculators.model.catalog import architecture_from_catalog

    arch = architecture_from_catalog("llama-3.1-8b", kb)
    shape = model_shape(arch, 2 * arch.params_total, 131_072)  # bf16 weights, KV per token as vLLM allocates it
    expected = estimate_speed(shape, accelerator_of_gpu(kb.gpus.get("h100-sxm-80gb")), "vllm", concurrency=64,
                              prompt_tokens=2048)
    assert abs(data["decode_tokens_per_s"] / expected.decode_tokens_per_s_batch1.value - 1) < 0.01
    assert data["decode_tokens_per_s_at_concurrency"]["value"] > data["decode_tokens_per_s"]
    assert data["ttft_s_value"] > 0 and data["basis"]["kind"] == "default-fit"
    assert adapter("vllm").speed.concurrency  # the concurrency came through the adapter


def test_calibrate_writes_a_profile_that_speed_then_uses(tmp_path):
    profile = tmp_path / "profile.json"
    done = cli("calibrate", "--bench", str(DATA / "speed" / "vllm_save_result_qwen25vl3b.json"),
               "--log", str(DATA / "logs" / "vllm-v0.11-enginecore-qwen3-14b.log"), "--model", "qwen2.5-7b",
               "--gpu", "h100-sxm-80gb", "--output", str(profile), "--json",
               "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["profile"]["kv_capacity_tokens"] == 42_656  # 'GPU KV cache size: 42,656 tokens' in the log
    assert {c["metric"] for c in document["comparisons"]} == {"ttft_p50", "itl_p50"}
    assert document["link_parameter"] and json.loads(profile.read_text())["engine"] == "vllm"
    used = cli("speed", "--model", "qwen2.5-7b", "--gpu", "h100-sxm-80gb", "--calibration", str(profile),
               "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct")
    assert used.returncode == 0 and "Speed basis: your calibration" in used.stdout


def test_bad_inputs_are_one_line_with_status_2(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    gpu = ("--gpu", "h100-sxm-80gb")
    cases = [
        ("speed", "--model", "llama-3.1-8b", *VLLM),  # no --gpu
        ("speed", "--model", "llama-3.1-8b", *gpu, "--calibration", str(tmp_path / "bad.json"), *VLLM),
        ("calibrate", "--bench", str(tmp_path / "bad.json"), "--model", "llama-3.1-8b", *gpu, *VLLM),
        ("calibrate", "--bench", str(tmp_path / "missing.json"), "--model", "llama-3.1-8b", *gpu, *VLLM),
    ]
    for args in cases:
        done = cli(*args)
        assert done.returncode == 2, (args, done.stdout)
        assert done.stderr.startswith("servewise: ") and done.stderr.count("\n") == 1, done.stderr
