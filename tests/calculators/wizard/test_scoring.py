"""The wizard's recommendations for realistic teams: assert the reasons given, not only the winner."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calculators.errors import ServewiseInputError
from calculators.wizard.answers import parse_answers
from calculators.wizard.scoring import recommend
from knowledge import load_knowledge

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def verdict(result, engine):
    return next(v for v in result.ranking if v.engine == engine)


def rule_ids(result, engine):
    return {c.rule_id for c in verdict(result, engine).contributions}


def caveat_ids(result, engine):
    return {c.id for c in verdict(result, engine).caveats}


def run(kb, **answers):
    return recommend(parse_answers(answers), kb)


def test_laptop_occasional_use(kb):
    result = run(kb, use="occasional-local", hardware="cpu", n_gpus=0, concurrent_users=1, exposure="localhost")
    assert result.top.engine in ("ollama", "llama-cpp")
    assert "occasional-local-use" in rule_ids(result, "ollama")
    assert "cpu-only" in rule_ids(result, "llama-cpp")
    assert verdict(result, "vllm").score < 0


def test_mac_developer(kb):
    result = run(kb, use="local-dev", hardware="apple", os="macos", apple_memory_gb=64, multi_model=True,
                 concurrent_users=1, exposure="localhost")
    assert result.top.engine in ("ollama", "llama-cpp")
    assert "apple-silicon" in rule_ids(result, "mlx-lm")
    assert "mlx-wired-memory" in caveat_ids(result, "mlx-lm")
    # vLLM reaches Apple GPUs only through a plugin: a penalty with that reason, not a strength
    assert any("plugin" in c.reason for c in verdict(result, "vllm").contributions if c.points < 0)


def test_shared_api_with_slos_on_h100s(kb):
    result = run(kb, use="shared-api", gpu_id="h100-sxm-80gb", n_gpus=4, nvlink=True, slo_metrics=True,
                 concurrent_users=64, ops_skill="high")
    assert result.top.engine in ("vllm", "sglang")
    assert {"shared-api-with-targets", "latency-metrics", "many-concurrent-users"} <= rule_ids(result, "vllm")
    assert "ollama-one-request-at-a-time" in caveat_ids(result, "ollama")
    assert "concurrency-cap-is-not-capacity" in caveat_ids(result, "vllm")
    assert "more-gpus-not-multiplier" in caveat_ids(result, "vllm")
    assert verdict(result, "ollama").score < verdict(result, "vllm").score


def test_agents_with_long_shared_prefixes(kb):
    result = run(kb, use="shared-api", shared_prefixes=True, prompt_length="long", concurrent_users=32,
                 tool_calling=True)
    assert result.top.engine == "sglang"
    assert "shared-prefixes" in rule_ids(result, "sglang")
    assert "prefix-must-match-tokens" in caveat_ids(result, "sglang")
    assert "tool-calling-needs-agreement" in caveat_ids(result, "vllm")


def test_gguf_only_model_on_a_datacenter_gpu(kb):
    result = run(kb, use="shared-api", weight_format="gguf", gpu_id="h100-sxm-80gb", concurrent_users=16)
    vllm_penalties = [c for c in verdict(result, "vllm").contributions if c.rule_id.startswith("support-")]
    assert vllm_penalties and all(c.points < 0 for c in vllm_penalties)
    assert any("plugin" in c.reason for c in vllm_penalties)
    assert "gguf-weights" in rule_ids(result, "llama-cpp")
    assert verdict(result, "mlx-lm").excluded  # MLX LM cannot load GGUF


def test_model_larger_than_vram(kb):
    result = run(kb, use="occasional-local", fits_one_card="no", n_gpus=1, concurrent_users=1)
    assert result.top.engine in ("ollama", "llama-cpp")  # both split layers between GPU and host RAM
    for engine in ("ollama", "llama-cpp"):
        assert "offload-to-host" in rule_ids(result, engine)
        assert "offload-bandwidth" in caveat_ids(result, engine)
    assert "offload-to-host" in rule_ids(result, "vllm") and verdict(result, "vllm").score < 0


def test_windows_workstation(kb):
    result = run(kb, use="local-dev", os="windows", concurrent_users=2)
    assert result.top.engine in ("ollama", "llama-cpp")
    vllm = verdict(result, "vllm")
    assert vllm.excluded and "Windows" in vllm.exclusions[0].reason  # the OS by its name, not the answer's id
    assert "WSL" in vllm.exclusions[0].reason


def test_rag_embeddings_service(kb):
    result = run(kb, use="embeddings", concurrent_users=8)
    assert "embeddings-service" in rule_ids(result, "vllm")
    assert "embeddings-must-match-index" in caveat_ids(result, "vllm")
    assert verdict(result, "mlx-lm").score < 0


def test_multi_model_internal_tool(kb):
    result = run(kb, use="local-dev", multi_model=True, concurrent_users=2, ops_skill="low")
    assert result.top.engine == "ollama"
    assert {"several-models", "low-ops-skill"} <= rule_ids(result, "ollama")


def test_cpu_only_server(kb):
    result = run(kb, use="shared-api", hardware="cpu", n_gpus=0, concurrent_users=4)
    assert result.top.engine == "llama-cpp"
    assert "cpu-only" in rule_ids(result, "llama-cpp")
    assert (
        rule_ids(result, "vllm") >= {"cpu-only"} and verdict(result, "vllm").score < verdict(result, "llama-cpp").score
    )


def test_multi_node(kb):
    result = run(kb, use="public-multitenant", hosts=4, n_gpus=8, nvlink=True, fits_one_card="no",
                 concurrent_users=1000, shared_prefixes=True, exposure="internet")
    assert result.top.engine in ("vllm", "sglang")
    assert {"several-hosts", "split-needs-parallelism"} <= rule_ids(result, "sglang")
    assert "cache-aware-routing-queues" in caveat_ids(result, "sglang")
    assert "exposed-port-no-boundary" in caveat_ids(result, "ollama")


def test_on_premises_data(kb):
    result = run(kb, use="shared-api", on_prem=True, cancellation=True)
    for engine in ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm"):
        assert "on-prem-verify-path" in caveat_ids(result, engine)
        assert "cancellation-lifecycle" in caveat_ids(result, engine)


def test_what_would_change_is_consistent(kb):
    base = parse_answers({"use": "shared-api"})
    result = recommend(base, kb)
    assert result.changes
    for change in result.changes:
        changed = recommend(base.model_copy(update={change.field: change.alternative}), kb)
        assert changed.top.engine == change.new_top != result.top.engine


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ({"hardware": "apple", "os": "linux"}, "macos"),
        ({"hardware": "cpu", "n_gpus": 2}, "n_gpus"),
        ({"use": "embeddings", "tool_calling": True}, "tool"),
        ({"concurrent_users": -3}, "concurrent_users"),
        ({"use": "chatbot"}, "use"),
        ({"favourite_colour": "blue"}, "favourite_colour"),
        (["not", "an", "object"], "JSON object"),
    ],
)
def test_bad_or_contradictory_answers_get_clear_messages(answers, message):
    with pytest.raises(ServewiseInputError, match=message):
        parse_answers(answers)


def test_cli_recommend_json_and_bad_file(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"use": "shared-api", "shared_prefixes": True, "concurrent_users": 32}))
    done = subprocess.run([sys.executable, "-m", "calculators", "recommend", "--answers", str(answers), "--json"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["top"] == "sglang"
    assert data["ranking"][0]["contributions"]
    answers.write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "calculators", "recommend", "--answers", str(answers)],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("servewise:") and "not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr


def test_fits_one_card_is_derived_from_the_catalog_model_and_gpu(kb):
    big = run(kb, model_id="llama-3.1-70b", gpu_id="h100-sxm-80gb", n_gpus=1)
    assert big.answers.fits_one_card == "no"
    # 70.6B parameters x 2 bytes (bf16) alone exceed an 80 GB card
    assert big.fit_check.weights_bytes > big.fit_check.usable_bytes
    assert "offload-to-host" in rule_ids(big, "llama-cpp")
    small = run(kb, model_id="llama-3.1-8b", gpu_id="rtx-4090-24gb", n_gpus=1)
    assert small.answers.fits_one_card == "yes" and small.fit_check.fits
    told = run(kb, model_id="llama-3.1-70b", gpu_id="h100-sxm-80gb", fits_one_card="yes")
    assert told.fit_check is None and told.answers.fits_one_card == "yes"
