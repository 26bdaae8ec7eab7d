"""Operations facts in the engines KB: every primary engine covers every section, every value has a source."""

from __future__ import annotations

import pytest

from knowledge import load_knowledge
from knowledge.engines import PRIMARY_ENGINE_IDS, engine_by_id
from reports.operations_tables import (
    embeddings_table,
    endpoints_table,
    hardening_steps,
    lacking_metrics,
    lifecycle_table,
    metrics_table,
    practice_table,
    security_table,
    tool_calling_table,
)

KB = load_knowledge()
PRIMARIES = [engine_by_id(KB.engines, engine_id) for engine_id in PRIMARY_ENGINE_IDS]
TABLES = [endpoints_table, practice_table, tool_calling_table, embeddings_table, metrics_table, lifecycle_table,
          security_table]  # fmt: skip


@pytest.mark.parametrize("engine", PRIMARIES, ids=PRIMARY_ENGINE_IDS)
def test_every_primary_engine_has_every_operations_section(engine):
    for section in ("http_api", "tool_calling", "structured_output", "metrics", "auth", "network", "operations"):
        assert getattr(engine, section) is not None, section
    ops = engine.operations
    for fact in (ops.cors, ops.inter_node, ops.cancellation, ops.sampling, ops.chat_template, ops.embeddings):
        assert fact.source and fact.verified.version, type(fact).__name__
    assert ops.bench_tools, f"{engine.id}: name its benchmark tools, or record that it has none"


@pytest.mark.parametrize("table", TABLES, ids=[t.__name__ for t in TABLES])
def test_every_row_of_every_table_links_its_source_and_version(table):
    frame = table(PRIMARIES)
    assert set(frame["Engine"]) == {engine.name for engine in PRIMARIES}
    assert frame["Source"].str.startswith("https://github.com/").all(), frame[["Engine", "Source"]]
    assert (frame["Version read"] != "unknown").all()


def test_serving_load_tools_take_every_workload_parameter():
    needed = {"num_prompts", "input_len", "output_len", "range_ratio", "request_rate", "max_concurrency", "seed"}
    serving = [t for e in PRIMARIES for t in e.operations.bench_tools if t.kind == "serving-load"]
    assert {t.name for t in serving} == {"vllm bench serve", "sglang.bench_serving"}
    for tool in serving:
        assert tool.open_loop and needed <= set(tool.flags), tool.name
        assert tool.fixed_length_range_ratio is not None


def test_pinned_operations_defaults():
    ops = {engine.id: engine.operations for engine in PRIMARIES}
    # vllm/entrypoints/common/cli_args.py (v0.33.0): allowed_origins defaults to an empty list
    assert ops["vllm"].cors.any_origin_by_default is False
    # llama.cpp common/common.h (0c1e57098): cors_origins "*" with cors_credentials true
    assert ops["llama-cpp"].cors.any_origin_by_default is True
    # sglang http_server.py (v0.5.23): CORSMiddleware allow_origins=["*"]
    assert ops["sglang"].cors.any_origin_by_default is True
    # mlx_lm/server.py (v0.32.2): --max-tokens default 512, --temp default 0.0
    assert "512" in ops["mlx-lm"].sampling.default_max_output
    assert ops["mlx-lm"].cancellation.on_disconnect == "aborts-when-streaming"
    assert ops["mlx-lm"].embeddings.supported == "no"


def test_lacking_metrics_and_hardening_follow_the_facts():
    vllm, ollama = engine_by_id(KB.engines, "vllm"), engine_by_id(KB.engines, "ollama")
    assert lacking_metrics(vllm) == ()
    assert len(lacking_metrics(ollama)) == 7
    vllm_steps = " ".join(text for text, _ in hardening_steps(vllm))
    assert "every interface" in vllm_steps and "/invocations" in vllm_steps
    assert any("no API key" in text for text, _ in hardening_steps(ollama))


def test_every_endpoint_row_names_a_path_or_says_why_not():
    """The endpoints table read "/v1/chat/completions, /v1/completions, /v1/embeddings, rerank, /v1/responses": the
    one row that is not a path looked like a slug (issue 19 review); it says its path differs per engine."""
    from calculators.i18n import language

    for lang, rerank in (("en", "Rerank (its path varies by engine)"),
                         ("es", "Rerank (la ruta cambia según el motor)")):
        with language(lang):
            columns = [c for c in endpoints_table(PRIMARIES).columns if c.startswith("/") or c.startswith("Rerank")]
        assert rerank in columns and len(columns) == 5, columns
