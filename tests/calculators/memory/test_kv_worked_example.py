"""The product brief's worked memory example (shared/PRODUCT.md, item 10) must come out exactly."""

import pytest

from calculators.memory.kv import raw_kv_estimate, uniform_gqa_architecture
from calculators.model.catalog import architecture_from_catalog
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


def test_a_state_beside_attention_is_counted_as_the_part_that_does_not_grow():
    """Falcon-H1 keeps attention and a Mamba2 state in every layer: the raw figure counts the state once per
    sequence whatever its length. Per layer, conv (4-1) x (1536 + 2 x 1 x 128) + state 24 x 64 x 128 =
    201,984 f32 elements; 36 layers x 807,936 bytes = 29,085,696 bytes, llama.cpp's recurrent cache for one
    sequence (the memory page's llama-server plan prints 221.91 MiB for 8)."""
    arch = architecture_from_catalog("falcon-h1-0.5b")
    short, long = (raw_kv_estimate(arch, tokens, 1, 2) for tokens in (1_024, 16_384))
    assert short.recurrent_state_bytes_per_sequence == long.recurrent_state_bytes_per_sequence == 29_085_696
    assert long.kv_bytes_per_sequence == 16 * short.kv_bytes_per_sequence == 16_384 * 36 * 2 * 2 * 64 * 2
