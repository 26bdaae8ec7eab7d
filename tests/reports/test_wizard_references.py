"""The wizard's 'Rests on' line names each cited fact in words: engine and format names, not reference ids."""

import re
from pathlib import Path

import pytest

from calculators.engines import ENGINE_IDS, display_name
from calculators.i18n import language
from knowledge.loader import load_knowledge
from reports.wizard import fact_label, reference_words

KB = load_knowledge()
REFERENCES = sorted(set(re.findall(r"\b(?:knob|compat|feature|os):[a-z0-9_.-]+/[a-z0-9_.-]+",
                                   (Path(KB.directory) / "wizard.yaml").read_text())))  # fmt: skip


def test_every_cited_reference_is_found():
    assert len(REFERENCES) > 50 and {r.split(":")[0] for r in REFERENCES} == {"knob", "compat", "feature", "os"}


@pytest.mark.parametrize("reference", REFERENCES)
def test_a_cited_fact_reads_as_words(reference):
    words = reference_words(reference, KB)
    engine = reference.split(":")[1].split("/")[0]
    assert words.startswith(display_name(engine)) and reference not in words
    assert not any(f"{e}/" in words or f":{e}" in words for e in ENGINE_IDS)
    assert words in fact_label(reference, KB)


def test_features_read_in_spanish():
    with language("es"):
        assert reference_words("feature:vllm/multi_gpu", KB) == "vLLM: varias GPU"
    assert reference_words("knob:vllm/max_num_seqs", KB) == "vLLM `max_num_seqs`"
    assert reference_words("compat:vllm/gguf", KB) == "vLLM × GGUF"
