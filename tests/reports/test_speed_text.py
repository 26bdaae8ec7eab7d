"""Speed readouts in the reader's language: Spanish words and Spanish digits (issue 19)."""

from __future__ import annotations

import re

from calculators.i18n import language
from calculators.speed.predict import estimate_speed
from reports.speed_text import speed_readout_line
from tests.calculators.speed.test_speed_model import HW, MODEL


def test_the_memory_pages_speed_line_writes_the_readers_digits():
    estimate = estimate_speed(MODEL, HW, "llama-cpp", concurrency=8, prompt_tokens=2048)
    english = speed_readout_line("llama.cpp (llama-server)", estimate)
    with language("es"):
        spanish = speed_readout_line("llama.cpp (llama-server)", estimate)
    assert "2,048-token prompt" in english and re.search(r"\d\.\d tokens/s", english)
    assert "prompt de 2.048 tokens" in spanish and re.search(r"\d,\d tokens/s", spanish)
    assert not re.search(r"\d\.\d tokens/s", spanish)  # no English decimal point left in the Spanish line


def test_the_speed_answer_counts_its_sequences_and_writes_its_prompt_in_the_readers_digits():
    from reports.speed_text import speed_estimate_text

    one = speed_estimate_text(estimate_speed(MODEL, HW, "vllm", concurrency=1, prompt_tokens=2048))
    assert "Decode, 1 concurrent sequence:" in one and "for 2,048 prompt tokens" in one
    with language("es"):
        many = speed_estimate_text(estimate_speed(MODEL, HW, "vllm", concurrency=16, prompt_tokens=2048))
    assert "Decodificación, 16 secuencias concurrentes:" in many and "2.048 tokens de prompt" in many
