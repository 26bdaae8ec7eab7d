"""A flag and its value are one code span in prose too, as in the tables since 0e8ad68 (issue 19 review).

Sentences and bullet lists drew "`--tool-call-parser` llama3_json", "`--flash-attn` auto", "`-ngl` 0" or, in the
compatibility page's reasons, no code span at all: the value did not copy with its flag, and a flag outside a code
span breaks after its hyphens. Prose joins a flag to its value with reports.tables.FLAG_VALUE_JOINER (a message
template writes "{flag}\\u00a0{parser}", the knowledge base the no-break space itself).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.hardware.machine import Machine
from calculators.i18n import language
from calculators.memory.compare import ComparisonInputs, Workload, compare_engines
from calculators.units import GIB
from reports.memory_readouts import engine_readout
from reports.tables import FLAG_VALUE_JOINER, literal_with_flags
from tests.support.page_runs import page_in_language

PAGES = Path(__file__).resolve().parents[2] / "pages"


def _page_text(page: str, lang: str, query: dict | None = None) -> str:
    at = page_in_language(str(PAGES / page), lang, query).run()
    assert not at.exception
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [m.value for e in at.expander for m in e.markdown]
    return "\n".join(texts)


def test_a_joined_flag_keeps_its_value_before_a_colon_or_full_stop():
    assert literal_with_flags(f"with --generation-config{FLAG_VALUE_JOINER}vllm: temperature 1.0") == (
        "with `--generation-config vllm`: temperature 1.0")
    assert literal_with_flags(f"add --tool-call-parser{FLAG_VALUE_JOINER}hermes.") == (
        "add `--tool-call-parser hermes`.")
    # a joiner with no value after it (an unknown parser) leaves the flag alone in its span
    assert literal_with_flags(f"add --tool-call-parser{FLAG_VALUE_JOINER}.") == (
        f"add `--tool-call-parser`{FLAG_VALUE_JOINER}.")


@pytest.mark.parametrize(("lang", "expected"), [
    ("en", "`-c 32768` over `-np 4` slots"), ("es", "`-c 32768` repartido entre `-np 4` slots")])
def test_the_llama_cpp_readout_writes_each_flag_with_its_value(lang, expected):
    from tests.support.models import gqa

    brief = gqa(32, 8, 128, 32, 131_072)
    h100 = Machine(device_memory_bytes=80 * GIB)
    with language(lang):
        rows = {r.engine: r for r in compare_engines(ComparisonInputs(brief, h100, 16 * GIB), Workload(8192, 4))}
        lines = "\n".join(engine_readout(rows["llama-cpp"]))
    assert expected in lines, lines
    assert "`-ngl " in lines and "`-ngl`" not in lines, lines


@pytest.mark.parametrize(("lang", "add"), [("en", "add"), ("es", "añade")])
def test_the_compatibility_reasons_show_the_flag_to_add_with_its_value(lang, add):
    text = _page_text("compatibility.py", lang, {"cmp_tool_model": "llama-3.1-8b"})
    assert f"{add} `--tool-call-parser llama3_json`." in text, text
    assert "--tool-call-parser llama3\\_json" not in text  # the reason no longer leaves the flag as plain prose


@pytest.mark.parametrize("lang", ["en", "es"])
def test_knowledge_base_prose_keeps_flags_with_their_values(lang):
    engines = _page_text("engines.py", lang)
    for span in ("`--flash-attn auto`", "`-ngl 0`", "`-ngl N`", "`-m sglang.launch_server`"):
        assert span in engines, span
    operations = _page_text("operations.py", lang)
    for span in ("`--cors-origins localhost`", "`--rpc host:port`", "`--generation-config auto`",
                 "`--generation-config vllm`:"):
        assert span in operations, span


@pytest.mark.parametrize(("lang", "one", "two"), [
    ("en", "**Ollama**: `-ngl 33` of 33 layers on the GPU\n",
     "**llama.cpp (llama-server)**: `-ngl 33` of 33 layers on the GPUs"),
    ("es", "**Ollama**: `-ngl 33` de 33 capas en la GPU\n",
     "**llama.cpp (llama-server)**: `-ngl 33` de 33 capas en las GPU")])
def test_the_offload_line_counts_the_gpus_the_plan_uses(lang, one, two):
    """On two GPUs Ollama keeps a model that fits one on one (its table lists gpu0 and the host only), and its line
    read "on the GPUs"; llama.cpp splits the layers over both."""
    from bench.typical_states import TYPICAL_STATES

    text = _page_text("memory.py", lang, TYPICAL_STATES["memory.py"].query) + "\n"
    assert one in text and two in text, [line for line in text.splitlines() if "-ngl" in line]
