"""Text of the Memory & capacity page: the brief's arithmetic, engine vocabulary, exports (no Streamlit needed)."""

from __future__ import annotations

import json

from calculators.hardware.machine import Machine
from calculators.memory.capacity import capacity
from calculators.memory.compare import ComparisonInputs, Workload, compare_engines
from calculators.units import GIB
from reports.memory_readouts import arithmetic_markdown, engine_readout, export_data, export_json, export_markdown
from tests.support.models import gqa

BRIEF = gqa(32, 8, 128, 32, 131_072)
H100 = Machine(device_memory_bytes=80 * GIB)


def test_arithmetic_reproduces_the_brief_table():
    # PRODUCT.md item 10: 131,072 bytes = 128 KiB per token; 8 x 32,768 tokens = 32 GiB
    text = arithmetic_markdown(BRIEF, Workload(32_768, 8))
    assert "131,072\u00a0bytes = 128.0\u00a0KiB" in text
    assert "Per sequence of 32,768\u00a0tokens: **4.00\u00a0GiB**" in text
    assert "For 8 sequences: **32.00\u00a0GiB**" in text


def test_the_element_size_is_a_counted_word_and_products_use_the_times_sign():
    from calculators.i18n import language

    assert "Element size: **1\u00a0byte** (8-bit cache; the 2 in '2 × heads'" in arithmetic_markdown(
        BRIEF, Workload(1024, 1, "8-bit"))
    assert "**2\u00a0bytes**" in arithmetic_markdown(BRIEF, Workload(1024, 1, "16-bit"))
    assert "**0.5\u00a0bytes**" in arithmetic_markdown(BRIEF, Workload(1024, 1, "4-bit"))
    with language("es"):
        assert "Tamaño de elemento: **1\u00a0byte**" in arithmetic_markdown(BRIEF, Workload(1024, 1, "8-bit"))
        assert "**0,5\u00a0bytes**" in arithmetic_markdown(BRIEF, Workload(1024, 1, "4-bit"))


def test_llamacpp_readout_states_the_per_slot_context():
    rows = {r.engine: r for r in compare_engines(ComparisonInputs(BRIEF, H100, 16 * GIB), Workload(8192, 4))}
    lines = "\n".join(engine_readout(rows["llama-cpp"]))
    # each flag with its value one code span, spelled as the command line takes it
    assert "`-c 32768` over `-np 4` slots: each slot holds **8,192\u00a0tokens**" in lines
    vllm = "\n".join(engine_readout(rows["vllm"]))
    assert "GPU KV cache size" in vllm and "Maximum concurrency for 8,192\u00a0tokens per request" in vllm


def test_exports_carry_every_engine_including_the_ones_that_cannot_run():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    workload = Workload(8192, 4)
    rows = compare_engines(inputs, workload)
    caps = [capacity(inputs, row.engine, workload) for row in rows]
    data = export_data("brief", "1 x H100", workload, 16 * GIB, rows, caps, {"vllm": "vllm serve x"})
    parsed = json.loads(export_json(data))
    engines = {e["engine"]: e for e in parsed["engines"]}
    assert set(engines) == {"ollama", "llama-cpp", "vllm", "sglang", "mlx-lm"}
    assert engines["mlx-lm"]["not_applicable"] and engines["mlx-lm"]["plan"] is None
    assert engines["vllm"]["plan"]["engine"] == "vllm" and engines["vllm"]["launch_command"] == "vllm serve x"
    markdown = export_markdown(data)
    assert "| vLLM | yes |" in markdown and "```sh\nvllm serve x\n```" in markdown
    assert "| MLX LM | n/a: " in markdown and "## vLLM" in markdown  # names for people; the JSON keeps the ids


def test_a_replica_layout_keeps_each_number_with_its_word_in_both_languages():
    """Issue 19: "2 réplicas × TP 1" wrapped before its number in the several-GPUs table at 1024 px. Only the space
    after the × may break; the others are no-break spaces."""
    from calculators.i18n import language
    from reports.memory_readouts import replica_layout_text

    with language("en"):
        assert replica_layout_text(2, 4) == "2\u00a0replicas\u00a0× TP\u00a04"
        assert replica_layout_text(1, 8) == "1\u00a0replica\u00a0× TP\u00a08"
    with language("es"):
        assert replica_layout_text(2, 1) == "2\u00a0réplicas\u00a0× TP\u00a01"
        assert replica_layout_text(1, 2) == "1\u00a0réplica\u00a0× TP\u00a02"
