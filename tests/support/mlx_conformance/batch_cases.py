"""Arrival patterns for checking the MLX LM scheduler model against mlx-lm's own BatchGenerator (plain data).

Each case: the BatchGenerator knobs (completion_batch_size = --decode-concurrency, prefill_batch_size =
--prompt-concurrency, prefill_step_size = --prefill-step-size) and requests as (iteration inserted before,
prompt tokens, max tokens), in insertion order. Small knobs make every rule fire in a few dozen iterations:
prompts longer than one step, more prompts than prompt places, a full decode batch, a one-token prompt, and
a generation batch that outgrows completion_batch_size when a prompt batch hands over at once. No case lets
the generator go idle before its last insertion (an idle generator runs no iteration, so the two traces
would count iterations differently).
"""

from __future__ import annotations

from tests.support.paths import DATA_DIR

BATCH_TRACES = DATA_DIR / "conformance" / "mlx_lm" / "batch_traces.json"

#: the tiny model the traces run (config.json of mlx_lm/models/llama.py; random weights, nothing downloaded)
TRACE_MODEL = {"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
               "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
               "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": False,
               "max_position_embeddings": 4096}

BATCH_CASES: dict[str, dict] = {
    "mixed": {"decode_concurrency": 4, "prompt_concurrency": 2, "prefill_step_size": 16,
              "requests": [(0, 40, 3), (0, 5, 6), (0, 1, 2), (2, 17, 5), (3, 33, 4), (3, 3, 1), (6, 2, 7),
                           (8, 60, 3), (9, 16, 2)]},
    # prompt_concurrency above the decode batch: completion_batch_size = max(3, 5) = 5. Admission counts only the
    # generation batch, so short prompts admitted next to three long ones push it to 7 once the long ones hand
    # over; while it holds 5 or more, the long prompts' passes stop (the generator only decodes)
    "outgrow": {"decode_concurrency": 3, "prompt_concurrency": 5, "prefill_step_size": 8,
                "requests": [(0, 2, 20), (0, 2, 20), (0, 30, 3), (0, 30, 3), (0, 30, 3), (1, 2, 20), (1, 2, 20),
                             (2, 3, 4), (3, 9, 2)]},
    # one place for each: the shape of mlx_lm.server's one-at-a-time path
    "one_at_a_time": {"decode_concurrency": 1, "prompt_concurrency": 1, "prefill_step_size": 8,
                      "requests": [(0, 20, 3), (0, 4, 2), (1, 9, 1), (2, 1, 2)]},
}
