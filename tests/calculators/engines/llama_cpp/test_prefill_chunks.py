"""llama.cpp prefills a long prompt chunk by chunk, each chunk attending over everything cached before it: the cost
the simulator and the speed estimate give a chunk (calculators/simulator/roofline.py prefill_chunk_seconds, a fixed
part plus a part in proportion to prefill_pairs) grows with the chunk's position as llama.cpp's own does.

Measured with llama-cpp-python on a tiny random-weight model whose attention outweighs its matmuls at a few thousand
tokens (2 layers, 4 heads x 64, hidden 256): each 512-token llama_decode along an 8,192-token prompt, on one thread,
the fastest of five passes. On this machine (session 10, load 18) the chunks took 30 ms of CPU at the start and
262 ms at the end, 15.4 ms more for each 512 tokens of depth; a line in prefill_pairs fits them with R^2 0.999
(intercept 20 ms). The test asserts that shape, not those times.
"""

from __future__ import annotations

import random

import llama_cpp
import numpy as np
import pytest

from calculators.simulator.roofline import prefill_pairs
from tests.support.tiny_gguf import TinyAttentionModel

pytestmark = pytest.mark.llamacpp

CHUNK = 512
PROMPT = 8192
MODEL = TinyAttentionModel("attention-heavy", "llama", 2, 4, 4, 64, 16384, n_embd=256, n_ff=512)


def _chunk_seconds(path, rounds: int = 5) -> list[float]:
    """CPU seconds of each CHUNK-token llama_decode along a PROMPT-token prompt, the fastest of `rounds` passes (the
    calling thread's CPU time: with one thread llama.cpp computes in it, and other jobs on the machine stretch the
    wall clock, not this)."""
    import time

    tokens = [random.Random(0).randrange(1, 32) for _ in range(PROMPT)]
    best = [float("inf")] * (PROMPT // CHUNK)
    for _ in range(rounds):
        llm = llama_cpp.Llama(str(path), n_ctx=PROMPT, n_batch=CHUNK, n_ubatch=CHUNK, n_threads=1, n_threads_batch=1,
                              verbose=False)
        for k in range(PROMPT // CHUNK):
            start = time.thread_time()
            llm.eval(tokens[k * CHUNK:(k + 1) * CHUNK])
            best[k] = min(best[k], time.thread_time() - start)
        del llm
    return best


def test_a_chunk_costs_a_fixed_part_plus_its_attention_over_the_cached_prefix(tmp_path):
    measured = np.array(_chunk_seconds(MODEL.write(tmp_path / "attention-heavy.gguf")))
    pairs = np.array([prefill_pairs(CHUNK, (k + 1) * CHUNK) for k in range(PROMPT // CHUNK)])
    slope, intercept = np.polyfit(pairs, measured, 1)
    predicted = intercept + slope * pairs
    r_squared = 1.0 - float(np.sum((measured - predicted) ** 2) / np.sum((measured - measured.mean()) ** 2))
    assert slope > 0 and intercept > 0, (slope, intercept)
    assert r_squared > 0.95, (r_squared, measured.round(4).tolist())  # 0.999 measured
    # the last chunk sees 16 times the keys of the first: a chunk costed at the prompt's full context (or at none)
    # would keep the two alike
    assert measured[-4:].mean() > 3.0 * measured[:4].mean(), measured.round(4).tolist()
