"""`python -m calculators`: plans as JSON with the documented fields, refusals (3) and bad input (2)."""

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    """Run the CLI in-process (fast: the knowledge base loads once) with the same exit code and streams."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_module_entry_point_runs_in_a_fresh_process():
    done = subprocess.run([sys.executable, "-m", "calculators", "memory", "--model", "nope", "--", "llama-server"],
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("servewise: ") and "Traceback" not in done.stderr


def test_vllm_plan_json_has_the_documented_fields():
    done = cli("memory", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--json", "--",
               "vllm", "serve", "meta-llama/Llama-3.1-8B", "--max-model-len", "32768")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    for key in ("engine", "kv_bytes_per_token", "kv_cache_bytes", "weights_bytes", "caches", "num_gpu_blocks",
                "kv_tokens", "max_concurrency", "max_model_len"):
        assert key in plan
    assert plan["engine"] == "vllm"
    assert plan["kv_bytes_per_token"] == 131_072  # 2 x 32 layers x 8 KV heads x 128 x 2 bytes (the brief's figure)
    assert plan["max_model_len"] == 32_768
    assert {"name", "layers", "cells", "type_k", "type_v", "k_bytes", "v_bytes"} <= set(plan["caches"][0])
    assert plan["refusal"] is None


def test_sglang_plan_json_has_its_own_figures():
    done = cli("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--json", "--",
               "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--mem-fraction-static", "0.85")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    for key in ("max_total_num_tokens", "max_running_requests", "k_bytes", "v_bytes"):
        assert key in plan
    assert plan["k_bytes"] == plan["v_bytes"] > 0


def test_engine_refusal_prints_the_plan_and_exits_3():
    done = cli("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--json", "--",
               "vllm", "serve", "Qwen/Qwen3-8B", "-tp", "3")
    assert done.returncode == 3
    assert "divisible by tensor parallel size (3)" in json.loads(done.stdout)["refusal"]


def test_unknown_flags_are_reported_not_ignored():
    done = cli("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--json", "--",
               "vllm", "serve", "Qwen/Qwen3-8B", "--frobnicate", "7")
    assert done.returncode == 0
    assert json.loads(done.stdout)["unknown_flags"] == ["--frobnicate", "7"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("memory", "--model", "nope", "--gpu", "h100-sxm-80gb", "--", "vllm", "serve", "x"), "not a catalog model"),
        (("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--", "vllm", "serve", "x",
          "--max-model-len", "-5"), "max_model_len"),
        (("memory", "--model", "qwen3-8b", "--", "vllm", "serve", "x"), "give --gpu"),
        (("memory", "--model", "qwen3-8b", "--gpu", "no-such-gpu", "--", "vllm", "serve", "x"), "no GPU"),
        (("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb"), "after `--`"),
        (("memory", "--hf-config", "/no/such/config.json", "--gpu", "h100-sxm-80gb", "--", "vllm", "serve", "x"),
         "config"),
        (("memory", "--gguf", str(REPO / "README.md"), "--gpu", "h100-sxm-80gb", "--", "vllm", "serve", "x"), "GGUF"),
        (("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--", "docker", "run", "x"), "launcher"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_status_2(args, message):
    done = cli(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr
    assert done.stderr.startswith("servewise: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_llama_server_issue_example_json():
    done = cli("memory", "--model", "llama-3.1-8b", "--json", "--",
               "llama-server", "-c", "32768", "-np", "4", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert (plan["n_ctx"], plan["n_ctx_seq"], plan["n_seq"]) == (32_768, 8_192, 4)  # ctx-size split over slots
    (cache,) = plan["caches"]
    # q8_0 stores 32 values in 34 bytes: 32 layers x 8 KV heads x 128 x 8192 cells x 34/32 bytes = 1088 MiB
    assert cache["k_bytes"] == cache["v_bytes"] == 1088 * 2**20
    assert (cache["type_k"], cache["type_v"], cache["cells"]) == ("q8_0", "q8_0", 8_192)


def test_llama_server_quantized_v_without_flash_attention_is_refused():
    done = cli("memory", "--model", "llama-3.1-8b", "--json", "--", "llama-server", "-c", "8192", "-ctv", "q8_0",
               "-fa", "off")
    assert done.returncode == 3
    assert "flash" in json.loads(done.stdout)["refusal"].lower()


def test_ollama_environment_command():
    done = cli("memory", "--model", "llama-3.1-8b", "--gpu", "rtx-4090-24gb", "--json", "--",
               "OLLAMA_NUM_PARALLEL=4", "OLLAMA_CONTEXT_LENGTH=8192", "ollama", "serve")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    # Ollama starts llama-server with -c num_ctx x num_parallel -np num_parallel (llm/llama_server.go)
    assert (plan["effective_ctx_size"], plan["effective_parallel"], plan["n_ctx_seq"]) == (32_768, 4, 8_192)


def test_gguf_header_gives_exact_weight_bytes(tmp_path):
    from tests.support.tiny_gguf import TinyAttentionModel

    path = TinyAttentionModel("llama3-8b", "llama", 2, 32, 8, 128, 8192).write(tmp_path / "tiny.gguf")
    done = cli("memory", "--gguf", str(path), "--json", "--", "llama-server", "-c", "4096")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["weights_basis"].startswith("exact")
    assert plan["kv_bytes_per_token"] == 2 * 2 * 8 * 128 * 2  # 2 layers, K+V, 8 KV heads, head 128, f16


def test_mlx_workload_options_size_the_cache_that_grows_with_the_work():
    # 1,000 prompt + 25 generated tokens: the prompt's 999-token chunk takes 1,024 slots, the 1,025th token a
    # fifth 256-token step (the live mlx-lm recording of llama 1000 + 30 shows the same 1,280 slots)
    done = cli("memory", "--model", "llama-3.1-8b", "--prompt-tokens", "1000", "--generated-tokens", "25",
               "--sequences", "3", "--json", "--", "mlx_lm.server", "--model", "mlx-community/Llama-3.1-8B")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert (plan["retained_tokens"], plan["allocated_tokens"], plan["n_sequences"]) == (1025, 1280, 3)
    assert plan["kv_cache_bytes"] == 3 * 1280 * 131_072  # 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
    assert plan["model_file"] == "llama"


def test_workload_options_are_refused_by_engines_that_size_their_cache_up_front():
    done = cli("memory", "--model", "qwen3-8b", "--gpu", "h100-sxm-80gb", "--sequences", "3", "--",
               "vllm", "serve", "Qwen/Qwen3-8B")
    assert done.returncode == 2
    assert "vLLM sizes its cache before any request arrives" in done.stderr and "MLX LM" in done.stderr


def test_mlx_flags_read_but_not_modelled_are_listed():
    done = cli("memory", "--model", "qwen3-8b", "--prompt-tokens", "512", "--", "mlx_lm.server", "--model",
               "Qwen/Qwen3-8B", "--prompt-cache-size", "4")
    assert done.returncode == 0, done.stderr
    assert "flags servewise reads but does not model (the memory they take is not in the plan): --prompt-cache-size" \
        in done.stdout
