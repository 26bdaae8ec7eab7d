"""The product brief's worked memory example (shared/PRODUCT.md, item 10) must come out exactly."""

import pytest

from calculators.memory.kv import raw_kv_estimate, uniform_gqa_architecture
from calculators.units import GIB

BRIEF_MODEL = uniform_gqa_architecture(n_layers=32, n_kv_heads=8, head_dim=128)


def test_bytes_per_token_is_128_kib():
    estimate = raw_kv_estimate(BRIEF_MODEL, tokens_per_sequence=1, n_sequences=1, bytes_per_element=2)
    assert estimate.bytes_per_token_unbounded_layers == 131_072 == 128 * 1024


@pytest.mark.parametrize(
    ("sequences", "tokens", "gib"),
    [(1, 8_192, 1), (1, 32_768, 4), (4, 8_192, 4), (8, 8_192, 8), (8, 32_768, 32)],
)
def test_brief_table(sequences, tokens, gib):
    estimate = raw_kv_estimate(BRIEF_MODEL, tokens_per_sequence=tokens, n_sequences=sequences, bytes_per_element=2)
    assert estimate.total_bytes == gib * GIB


def test_last_row_exceeds_a_24_gib_card_before_weights():
    estimate = raw_kv_estimate(BRIEF_MODEL, tokens_per_sequence=32_768, n_sequences=8, bytes_per_element=2)
    assert estimate.total_bytes > 24 * GIB
