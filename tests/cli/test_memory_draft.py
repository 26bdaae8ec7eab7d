"""`memory --draft-model / --draft-config`: the speculative drafter a command loads, planned with the target."""

import json

from tests.cli.test_memory_recommend import cli
from tests.support.paths import HF_CONFIG_DIR

MLX = ["--", "mlx_lm.server", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--draft-model", "meta-llama/Llama-3.2-1B"]


def test_mlx_draft_model_from_the_catalog_adds_its_weights_and_cache():
    done = cli("memory", "--model", "llama-3.1-8b", "--gpu", "m4-max-40c-128gb", "--prompt-tokens", "1000",
               "--draft-model", "llama-3.2-1b", "--json", *MLX)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    labels = {c["label"]: c["bytes"] for c in plan["components"]}
    # 1000 prompt tokens -> 1024-token buffers; Llama 3.2 1B: 16 layers x 8 KV heads x 64, K and V
    assert labels["draft model cache (llama-3.2-1b)"] == 1024 * 16 * 8 * 64 * 2 * 2
    assert labels["draft model weights (llama-3.2-1b)"] > 2 << 30  # 1.24B parameters at bf16


def test_a_draft_config_json_is_read_too_and_a_text_report_names_it():
    done = cli("memory", "--model", "llama-3.1-8b", "--gpu", "m4-max-40c-128gb", "--prompt-tokens", "1000",
               "--draft-config", str(HF_CONFIG_DIR / "Llama-3.2-1B.json"), *MLX)
    assert done.returncode == 0, done.stderr
    assert "draft model cache" in done.stdout and "requests run one at a time" in done.stdout


def test_an_engine_without_a_drafter_model_option_says_so():
    done = cli("memory", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--draft-model", "llama-3.2-1b", "--",
               "ollama", "serve")
    assert done.returncode == 2 and "takes no drafter model this way" in done.stderr
    assert "Modelfile DRAFT layer" in done.stderr  # why Ollama's own drafter is not planned
