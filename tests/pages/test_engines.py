"""The Engines page runs in default, filtered and bad-link states without an exception, showing KB content."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from knowledge import load_knowledge
from reports.engines_tables import (
    ATTRIBUTES,
    COMPARISON_GROUPS,
    FEATURES,
    comparison_table,
    format_options,
    knob_table,
    matches,
    sources_table,
)
from tests.support.markdown_tables import markdown_tables

PAGE = Path(__file__).resolve().parents[2] / "pages" / "engines.py"
TIMEOUT_S = 30


def run_page(**query: str | list[str]) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT_S)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def comparison(at: AppTest):
    """The comparison as the page draws it (one Markdown table per group of attributes, one row per engine) joined
    into one table, indexed by engine name."""
    tables = markdown_tables([m.value for m in at.markdown])[:len(COMPARISON_GROUPS)]
    joined = [t.assign(Engine=t["Engine"].str.replace("<br>", " ")).set_index("Engine") for t in tables]
    return joined[0].join(joined[1:])


def comparison_columns(at: AppTest) -> list[str]:
    """The engines compared, in order."""
    return list(comparison(at).index)


def all_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [s.value for s in at.subheader] + [w.value for w in at.warning]
    parts += [i.value for i in at.info]
    return "\n".join(parts)


def test_default_view_compares_the_five_primary_engines():
    at = run_page()
    assert comparison_columns(at) == ["Ollama", "llama.cpp (llama-server)", "vLLM", "SGLang", "MLX LM"]
    table = comparison(at)
    assert table.loc["vLLM", "Version read"] == "v0.33.0"
    assert table.loc["Ollama", "Default bind"] == "127.0.0.1:11434"
    assert "5 of 5 engines" in all_text(at)
    # how current each engine's facts are (knowledge/currency.py): every fact read at the newest read
    assert not at.dataframe  # every table is Markdown: no grid scripts to fetch before the wide-table box's
    tables = markdown_tables([m.value for m in at.markdown])
    currency = next(t for t in tables if "KB's newest read" in t.columns).set_index("Engine")
    assert currency.loc["vLLM", "Facts read at"] == currency.loc["vLLM", "KB's newest read"] == "v0.33.0"
    assert currency.loc["SGLang", "KB's newest read"] == "v0.5.23"
    assert (currency["Older than the newest read"] == "0").all()
    # the knob table of the first engine (Ollama) is drawn with its pinned defaults and linked sources
    knobs = next(t for t in tables if "Flags / env" in t.columns)
    assert knobs.set_index("Setting").loc["num_parallel", "Default"] == "1"
    assert all(cell.startswith("[source](http") for cell in knobs["Source"] if cell.startswith("["))
    sources = next(t for t in tables if "Read on" in t.columns)
    assert any(cell.startswith("[") and "](https://github.com/" in cell for cell in sources["Source"])
    assert not at.warning


def test_the_comparison_groups_show_every_attribute_once_with_one_row_per_engine():
    """Issue 19: engines as columns scrolled sideways at 1024 px (SGLang's column behind the scroll); the comparison
    is now a few tables of related attributes, one row per engine, each as wide as its attributes."""
    grouped = [slug for group in COMPARISON_GROUPS for slug in (*group.columns, *group.stacked)]
    assert sorted(grouped) == sorted(attribute.slug for attribute in ATTRIBUTES)
    assert all(len(group.columns) + bool(group.stacked) <= 3 for group in COMPARISON_GROUPS)
    at = run_page(engines_tier="all")
    tables = markdown_tables([m.value for m in at.markdown])[:len(COMPARISON_GROUPS)]
    names = [name.replace("<br>", " ") for name in tables[0]["Engine"]]
    assert names == [e.name for e in load_knowledge().engines]  # every engine, the tier's eight
    assert all(list(t["Engine"]) == list(tables[0]["Engine"]) for t in tables)
    assert "llama.cpp<br>(llama-server)" in list(tables[0]["Engine"])  # the gloss on a line of its own
    table = comparison(at)
    # the three metric names one under another in one cell; one word where an engine exports none
    assert table.loc["vLLM", "Latency and cache metrics"] == (
        "TTFT: vllm:time_to_first_token_seconds<br>queue time: vllm:request_queue_time_seconds<br>"
        "KV usage: vllm:kv_cache_usage_perc")
    assert table.loc["Ollama", "Latency and cache metrics"] == "none exported"
    assert table.loc["Hugging Face TGI", "Version read"] == "unknown"


def test_filters_from_a_shared_link_narrow_the_comparison():
    at = run_page(engines_backend="metal", engines_feature="prometheus-metrics")
    # Metal + Prometheus metrics: llama.cpp (with --metrics), vLLM through the vllm-metal plugin and
    # SGLang's experimental MLX/MPS backend; Ollama and MLX LM export no metrics
    assert comparison_columns(at) == ["llama.cpp (llama-server)", "vLLM", "SGLang"]
    assert "3 of 5 engines" in all_text(at)


def test_format_filter_and_secondary_rows():
    at = run_page(engines_format="gguf", engines_tier="all")
    columns = comparison_columns(at)
    assert "vLLM" in columns  # via the out-of-tree plugin, which counts as usable
    assert "MLX LM" not in columns


def test_knob_table_follows_the_link():
    at = run_page(engines_knobs="vllm")
    knobs = next(t for t in markdown_tables([m.value for m in at.markdown])
                 if "Flags / env" in t.columns).set_index("Setting")
    assert knobs.loc["gpu_memory_utilization", "Default"] == "0.92"
    assert "-tp" in knobs.loc["tensor_parallel_size", "Flags / env"]


def test_strengths_and_limits_are_written_out_in_full():
    """Issue 19: in a table cell each point was cut mid-sentence at 1024 px; now every point is a list item."""
    from knowledge import load_knowledge

    at = run_page(engines_knobs="vllm")
    vllm = next(engine for engine in load_knowledge().engines if engine.id == "vllm")
    text = " ".join(block.value for block in at.markdown)
    for point in [*vllm.strengths, *vllm.limits]:
        assert point.text in text
    assert text.count("- **Strength:**") == len(vllm.strengths) and text.count("- **Limit:**") == len(vllm.limits)


def test_a_bad_link_value_falls_back_with_a_note():
    at = run_page(engines_backend=["cuda", "quantum-abacus"], engines_knobs="nonsense", engines_tier="both")
    notes = [w.value for w in at.warning]
    assert any("quantum-abacus" in note for note in notes)
    assert any("nonsense" in note for note in notes)
    assert any("both" in note for note in notes)
    # the good part of the link still applies; the bad ones fall back to defaults
    assert "Ollama" in comparison_columns(at)
    assert at.selectbox(key="engines_knobs").value == "ollama"


def test_no_match_says_so():
    # on Windows only Ollama and llama.cpp run, and neither has data-parallel replicas in one server
    at = run_page(engines_os="windows", engines_feature="data-parallel")
    texts = [i.value for i in at.info]
    assert any("No engine matches" in t for t in texts)


# ------------------------------------------------------------------------- the view module itself
@pytest.fixture(scope="module")
def engines():
    return load_knowledge().engines


def test_matching_rules(engines):
    by_id = {e.id: e for e in engines}
    assert matches(by_id["vllm"], formats=["gguf"])  # via-plugin counts
    assert not matches(by_id["ollama"], formats=["safetensors"])  # convert-first does not
    assert not matches(by_id["mlx-lm"], features=["prometheus-metrics"])
    assert matches(by_id["llama-cpp"], hardware=["vulkan", "cpu"], systems=["windows"])
    assert set(FEATURES) >= {"embeddings", "rerank", "tool-calling", "multi-model"}


def test_tables_carry_sources_and_versions(engines):
    primary = [e for e in engines if e.tier == "primary"]
    sources = sources_table(primary)
    known = sources[sources["Value"] != "unknown"]
    assert (known["Source"] != "").all() and (known["Version read"] != "unknown").all()
    assert "gguf" in format_options(engines)
    comparison = comparison_table(engines)
    assert comparison.loc["Version read", "Hugging Face TGI"] == "unknown"
    knobs = knob_table(next(e for e in engines if e.id == "llama-cpp")).set_index("Setting")
    assert knobs.loc["kv_unified", "Takes"] == "switch"
    assert "--no-kv-unified" in knobs.loc["kv_unified", "Flags / env"]
    assert knobs.loc["ctx_size", "Source"].startswith("https://github.com/ggml-org/llama.cpp/blob/0c1e57098/")


def test_format_filter_reads_the_matrix_on_the_selected_backend():
    # SGLang v0.5.23 refuses GPTQ on ROCm (not in rocm_supported_quantization); vLLM lists gptq for ROCm.
    at = run_page(engines_backend="rocm", engines_format="gptq")
    assert "SGLang" not in comparison_columns(at) and "vLLM" in comparison_columns(at)
    # without a backend the headline status counts: SGLang serves GPTQ on CUDA
    assert "SGLang" in comparison_columns(run_page(engines_format="gptq"))


def test_a_metric_an_engine_does_not_export_reads_as_such_in_both_languages():
    """The Spanish comparison read "Métrica de TTFT: ninguno" (a masculine "none" next to a feminine noun; issue 19
    review): a metric an engine lacks now reads "not exported" / "no se exporta"."""
    from calculators.i18n import _, language

    ollama = [engine for engine in load_knowledge().engines if engine.id == "ollama"]
    for lang, expected in (("en", "not exported"), ("es", "no se exporta")):
        with language(lang):
            table = comparison_table(ollama)
            for label in ("TTFT metric", "Queue-time metric", "KV-usage metric"):
                assert table.loc[_(label)].iloc[0] == expected, (lang, label)
