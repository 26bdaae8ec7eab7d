"""The engines knowledge base: it validates, every fact is sourced, and the defaults that matter are pinned.

Pinned figures cite the file and version they were read from (see the header of knowledge/engines.yaml).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from knowledge import KnowledgeError, load_knowledge
from knowledge.common import Sourced
from knowledge.engines import (
    PRIMARY_ENGINE_IDS,
    SECONDARY_ENGINE_IDS,
    SHARED_SETTING_KEYS,
    Engine,
    EnginesFile,
    Support,
    engine_by_id,
)
from knowledge.loader import KNOWLEDGE_DIR, load_yaml_file
from knowledge.sources import source_url


@pytest.fixture(scope="module")
def engines() -> tuple[Engine, ...]:
    return load_knowledge().engines


def engine(engines: tuple[Engine, ...], engine_id: str) -> Engine:
    return engine_by_id(engines, engine_id)


def _walk(node: object, path: str = ""):
    """Yield (path, model) for every pydantic model inside `node`."""
    if isinstance(node, BaseModel):
        yield path, node
        for name in type(node).model_fields:
            yield from _walk(getattr(node, name), f"{path}.{name}")
    elif isinstance(node, (tuple, list)):
        for index, item in enumerate(node):
            yield from _walk(item, f"{path}[{index}]")
    elif isinstance(node, dict):
        for key, item in node.items():
            yield from _walk(item, f"{path}[{key}]")


# ----------------------------------------------------------------------------------------- structure
def test_every_engine_is_present_once(engines):
    ids = [e.id for e in engines]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(PRIMARY_ENGINE_IDS) | set(SECONDARY_ENGINE_IDS)
    assert {e.id for e in engines if e.tier == "primary"} == set(PRIMARY_ENGINE_IDS)


def test_every_fact_group_names_a_source_and_a_version(engines):
    checked = 0
    for e in engines:
        for path, model in _walk(e, e.id):
            if isinstance(model, Sourced):
                assert len(model.source) >= 3, path
                assert model.verified.version.strip(), path
                checked += 1
            if isinstance(model, Support) and model.source is not None:
                assert model.verified is not None, path
    assert checked > 150  # knobs, support lists, API sections, strengths and limits of eight engines


def test_primary_engines_cover_the_shared_setting_keys(engines):
    for engine_id, keys in SHARED_SETTING_KEYS.items():
        have = {k.key for k in engine(engines, engine_id).knobs}
        assert keys <= have, (engine_id, sorted(keys - have))


def test_repository_sources_link_to_the_version_read(engines):
    vllm = engine(engines, "vllm")
    knob = vllm.knob("gpu_memory_utilization")
    assert source_url(knob.source, knob.verified.version) == (
        "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/cache.py"
    )
    assert source_url("ollama/ollama:LICENSE", "v0.33.0-rc2") == (
        "https://github.com/ollama/ollama/blob/v0.33.0-rc2/LICENSE"
    )
    assert source_url("ml-explore/mlx-lm:mlx_lm/tool_parsers", "v0.32.2").endswith("/tree/v0.32.2/mlx_lm/tool_parsers")
    assert source_url("https://example.org/page", "x") == "https://example.org/page"
    assert source_url("not a source", "x") is None


# ------------------------------------------------------------------------------------ pinned: Ollama
def test_ollama_concurrency_defaults(engines):
    ollama = engine(engines, "ollama")
    # envconfig/config.go @ v0.33.0-rc2: Uint("OLLAMA_NUM_PARALLEL", 1), Uint("OLLAMA_MAX_QUEUE", 512)
    assert ollama.knob("num_parallel").default == 1
    assert ollama.knob("max_queue").default == 512
    # envconfig/config.go: MaxRunners default 0; server/sched.go: defaultModelsPerGPU = 3 -> 3 x GPUs
    max_loaded = ollama.knob("max_loaded_models")
    assert max_loaded.default == 0
    assert "3 ×" in max_loaded.default_rule
    # envconfig/config.go KeepAlive(): 5 * time.Minute
    assert ollama.knob("keep_alive").default == "5m"
    assert ollama.knob("keep_alive").env == ("OLLAMA_KEEP_ALIVE",)


def test_ollama_default_context_depends_on_vram(engines):
    # server/routes.go @ v0.33.0-rc2: >= 47 GiB -> 262144, >= 23 GiB -> 32768, else 4096
    knob = engine(engines, "ollama").knob("context_length")
    assert knob.default == 0
    assert knob.api_option == "num_ctx"
    for figure in ("47\u00a0GiB", "262144", "23\u00a0GiB", "32768", "4096"):
        assert figure in knob.default_rule


def test_ollama_exposes_no_metrics_and_no_local_auth(engines):
    ollama = engine(engines, "ollama")
    assert ollama.metrics.endpoint == "none"
    assert ollama.auth.api_key_flags == ()
    assert (ollama.network.default_host, ollama.network.default_port) == ("127.0.0.1", 11434)


# -------------------------------------------------------------------------------------- pinned: vLLM
def test_vllm_memory_and_scheduler_limits_are_distinct(engines):
    vllm = engine(engines, "vllm")
    keys = ("gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens")
    flags = [vllm.knob(key).flags for key in keys]
    assert len({f for group in flags for f in group}) == sum(len(group) for group in flags)
    # vllm/config/cache.py @ v0.33.0: gpu_memory_utilization Field(default=0.92)
    assert vllm.knob("gpu_memory_utilization").default == 0.92
    # vllm/config/model.py: max_model_len None -> from the model config; -1/auto -> largest that fits
    assert vllm.knob("max_model_len").default is None
    assert "auto" in vllm.knob("max_model_len").default_rule
    # vllm/engine/arg_utils.py get_batch_defaults: 256 below 70 GiB (or A100), 1024 above
    seqs = vllm.knob("max_num_seqs")
    assert seqs.default is None and "256" in seqs.default_rule and "1024" in seqs.default_rule
    # same function, API server: 2048 below 70 GiB, 8192 at >= 70 GiB, 16384 at >= 160 GiB
    tokens = vllm.knob("max_num_batched_tokens")
    assert tokens.default is None
    for figure in ("2048", "8192", "16384"):
        assert figure in tokens.default_rule


def test_vllm_gguf_only_through_the_experimental_plugin(engines):
    formats = engine(engines, "vllm").formats
    gguf = next(item for item in formats.items if item.id == "gguf")
    assert gguf.status == "via-plugin"
    assert "experimental" in gguf.note and "plugin" in gguf.note
    assert formats.status_of("safetensors") == "native"


def test_vllm_api_key_guards_only_some_prefixes(engines):
    auth = engine(engines, "vllm").auth
    assert "/v1" in auth.guards and "/invocations" in auth.open_paths


# ------------------------------------------------------------------------------------ pinned: SGLang
def test_sglang_mem_fraction_static_is_computed(engines):
    # python/sglang/srt/arg_groups/memory_hook.py @ v0.5.23: (gpu_mem - reserved) / gpu_mem, floor of
    # 10 GiB reserve above 60 GiB, 0.95 when memory is unknown
    knob = engine(engines, "sglang").knob("mem_fraction_static")
    assert knob.default is None
    for words in ("10\u00a0GiB", "0.95", "device memory"):
        assert words in knob.default_rule


# --------------------------------------------------------------------------------- pinned: llama.cpp
def test_llama_server_splits_ctx_size_over_slots(engines):
    llama = engine(engines, "llama-cpp")
    # src/llama-context.cpp @ 0c1e57098: n_ctx_seq = n_ctx / n_seq_max unless kv_unified
    ctx = llama.knob("ctx_size")
    assert ctx.default == 0
    assert "ctx_size / parallel" in ctx.default_rule
    # common/arg.cpp: -np default -1 (auto); tools/server/server.cpp: auto -> 4 slots + unified KV
    parallel = llama.knob("parallel")
    assert parallel.default == -1 and "4 slots" in parallel.default_rule


def test_llama_cpp_flag_aliases_and_forms(engines):
    llama = engine(engines, "llama-cpp")
    index = llama.flag_index("llama-server")
    expected = {
        "-c": "ctx_size", "--ctx-size": "ctx_size", "-np": "parallel", "--parallel": "parallel",
        "-ctk": "cache_type_k", "--cache-type-k": "cache_type_k", "-ctv": "cache_type_v",
        "-fa": "flash_attn", "--flash-attn": "flash_attn", "-ngl": "n_gpu_layers", "--gpu-layers": "n_gpu_layers",
        "--n-gpu-layers": "n_gpu_layers", "-kvu": "kv_unified", "--kv-unified": "kv_unified",
        "--no-kv-unified": "kv_unified", "-no-kvu": "kv_unified", "--swa-full": "swa_full", "-b": "batch_size",
        "-ub": "ubatch_size", "-cb": "cont_batching", "-nocb": "cont_batching", "--cache-reuse": "cache_reuse",
        "--cache-ram": "cache_ram", "--fit": "fit", "--metrics": "metrics", "--api-key": "api_key",
        "--host": "host", "--port": "port",
    }
    assert {flag: index.get(flag) for flag in expected} == expected
    assert llama.negates("--no-kv-unified") and not llama.negates("--kv-unified")
    assert {"on", "off", "auto"} <= set(llama.knob("flash_attn").value_forms)
    assert llama.knob("flash_attn").takes_value is True
    assert llama.knob("kv_unified").takes_value is False
    assert llama.knob("cache_type_k").default == "f16"


def test_server_engine_parallelism_aliases(engines):
    vllm = engine(engines, "vllm").flag_index()
    assert (vllm["-tp"], vllm["-pp"], vllm["-dp"]) == (
        "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
    )
    assert vllm["--no-enable-prefix-caching"] == "enable_prefix_caching"
    sglang = engine(engines, "sglang").flag_index()
    assert sglang["--tp"] == sglang["--tp-size"] == "tp_size"
    assert sglang["--dp"] == sglang["--dp-size"] == "dp_size"


def test_env_index_and_missing_knob(engines):
    assert engine(engines, "llama-cpp").env_index()["LLAMA_ARG_CTX_SIZE"] == "ctx_size"
    assert engine(engines, "ollama").env_index()["OLLAMA_NUM_PARALLEL"] == "num_parallel"
    with pytest.raises(KeyError, match="no knob 'ctx_size'"):
        engine(engines, "vllm").knob("ctx_size")
    with pytest.raises(KnowledgeError, match="no engine 'nope'"):
        engine_by_id(engines, "nope")


# -------------------------------------------------------------------------------------- pinned: MLX
def test_mlx_wired_memory_needs_macos_15(engines):
    mlx = engine(engines, "mlx-lm")
    macos = next(item for item in mlx.operating_systems.items if item.id == "macos")
    assert "macOS 15" in macos.note
    assert any("macOS 15" in point.text for point in mlx.limits)
    # mlx_lm/server.py @ v0.32.2: --decode-concurrency 32, --prompt-concurrency 8, --prompt-cache-size 10
    assert [mlx.knob(k).default for k in ("decode_concurrency", "prompt_concurrency", "prompt_cache_size")] == [
        32, 8, 10,
    ]
    assert mlx.knob("max_kv_size").programs == ("mlx_lm.generate",)


# ---------------------------------------------------------------------------------- broken data
def _copy_knowledge(tmp_path: Path) -> Path:
    """Every knowledge YAML in a temporary folder, so one file can be broken without touching the repo."""
    target = tmp_path / "knowledge"
    target.mkdir()
    for path in KNOWLEDGE_DIR.glob("*.yaml"):
        shutil.copy(path, target / path.name)
    return target


def test_a_broken_field_is_reported_with_file_entry_and_field(tmp_path):
    directory = _copy_knowledge(tmp_path)
    path = directory / "engines.yaml"
    text = path.read_text(encoding="utf-8")
    broken = text.replace(
        "        name: OLLAMA_MAX_QUEUE\n", "        name: OLLAMA_MAX_QUEUE\n        colour: blue\n", 1
    )
    assert broken != text
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(KnowledgeError) as caught:
        load_yaml_file(path, EnginesFile)
    message = str(caught.value)
    assert "engines.yaml" in message
    assert "'ollama'" in message
    assert "colour" in message


def test_a_duplicate_engine_id_is_rejected(tmp_path):
    directory = _copy_knowledge(tmp_path)
    path = directory / "engines.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  - id: lmdeploy\n", "  - id: tgi\n", 1), encoding="utf-8")
    with pytest.raises(KnowledgeError, match="duplicate engine ids"):
        load_knowledge(str(directory))


def test_a_missing_shared_key_is_rejected(tmp_path):
    directory = _copy_knowledge(tmp_path)
    path = directory / "engines.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("      - key: max_queue\n", "      - key: max_queue_renamed\n", 1), encoding="utf-8")
    with pytest.raises(KnowledgeError, match="max_queue"):
        load_yaml_file(path, EnginesFile)


def test_versions_read_must_agree_with_each_engine(tmp_path):
    directory = _copy_knowledge(tmp_path)
    path = directory / "engines.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("  vllm: &vllm_v {version: v0.33.0,", "  vllm: &vllm_v {version: v0.32.0,", 1), encoding="utf-8"
    )
    with pytest.raises(KnowledgeError, match="versions_read"):
        load_yaml_file(path, EnginesFile)


# ------------------------------------------------------------ the vocabulary drives the real parser
def _syntaxes(engines):
    from calculators.launch.command import EngineCommandSyntax, FlagSpec

    return {
        e.id: EngineCommandSyntax(
            e.id,
            tuple(
                FlagSpec(k.key, k.flags, k.env[0] if k.env else None, k.takes_value, k.negative_flags)
                for k in e.knobs
            ),
            positional_model=e.id == "vllm",
        )
        for e in engines
        if e.tier == "primary"
    }


@pytest.mark.parametrize(
    ("command", "engine_id", "settings"),
    [
        (
            "llama-server -m q.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on -ngl 99 --no-kv-unified",
            "llama-cpp",
            {
                "ctx_size": "32768",
                "parallel": "4",
                "cache_type_k": "q8_0",
                "cache_type_v": "q8_0",
                "flash_attn": "on",
                "n_gpu_layers": "99",
                "kv_unified": "false",
            },
        ),
        (
            "OLLAMA_NUM_PARALLEL=4 OLLAMA_MAX_QUEUE=64 OLLAMA_KEEP_ALIVE=-1 ollama serve",
            "ollama",
            {"num_parallel": "4", "max_queue": "64", "keep_alive": "-1"},
        ),
        (
            "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.85 --max_num_seqs=64 -tp 2 --no-enable-prefix-caching",
            "vllm",
            {
                "gpu_memory_utilization": "0.85",
                "max_num_seqs": "64",
                "tensor_parallel_size": "2",
                "enable_prefix_caching": "false",
            },
        ),
        (
            "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 --mem-fraction-static 0.8 "
            "--enable-metrics",
            "sglang",
            {"tp_size": "2", "mem_fraction_static": "0.8", "enable_metrics": "true"},
        ),
        (
            "mlx_lm.server --model mlx-community/Qwen3-8B-4bit --decode-concurrency 8 --kv-bits 8",
            "mlx-lm",
            {"decode_concurrency": "8", "kv_bits": "8"},
        ),
    ],
)
def test_launch_commands_parse_with_the_kb_vocabulary(engines, command, engine_id, settings):
    from calculators.launch.command import parse_launch_command

    parsed = parse_launch_command(command, _syntaxes(engines))
    assert parsed.engine == engine_id
    assert parsed.settings == settings
    assert parsed.unknown_flags == []
    assert (parsed.model is None) == (engine_id == "ollama")  # ollama serve names no model


def test_vendor_status_takes_the_most_direct_backend(engines):
    # Ollama reaches AMD through ROCm (native); vLLM reaches Apple only through the vllm-metal plugin;
    # MLX LM has no AMD path at all (only Metal, CUDA and CPU builds of MLX).
    assert engine(engines, "ollama").vendor_status("amd") == "native"
    assert engine(engines, "vllm").vendor_status("apple") == "via-plugin"
    assert engine(engines, "mlx-lm").vendor_status("amd") == "not-supported"
    assert engine(engines, "tgi").vendor_status("apple") == "unknown"  # not checked
    assert engine(engines, "llama-cpp").vendor_status("intel") == "native"


def test_engines_section_imports_without_streamlit():
    import subprocess
    import sys

    code = (
        "import sys, knowledge.engines, knowledge.sources, reports.engines_tables; "
        "assert 'streamlit' not in sys.modules, 'streamlit was imported'"
    )
    repo = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=repo)
