"""Run mlx-lm's speculative decoding (--draft-model) on tiny models and record both caches; run with the MLX venv,
from the repository root:

    .venv-mlx/bin/python -m tests.support.mlx_conformance.speculative tests/data/conformance/mlx_lm/speculative.json

Each case goes through mlx_lm.generate's own `generate(..., draft_model=...)` (what `mlx_lm.generate --draft-model`
runs) with one prompt cache made by `make_prompt_cache` for the target and one for the draft, passed as
speculative_generate_step takes them (target layers first), so both can be read afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from mlx_lm.generate import generate
from mlx_lm.models.cache import make_prompt_cache
from mlx_lm.utils import load

from tests.support.mlx_conformance.runner import VOCAB, describe, model_config, write_model

#: (target, draft, prompt tokens, generated tokens, num_draft_tokens); the draft is another tiny model of the
#: same vocabulary (mlx_lm checks only that the vocabularies match)
CASES = [
    {"model": "llama", "draft": "qwen3", "prompt_tokens": 1000, "generated_tokens": 200, "num_draft_tokens": 3},
    {"model": "qwen3", "draft": "llama", "prompt_tokens": 300, "generated_tokens": 20, "num_draft_tokens": 2},
    {"model": "llama", "draft": "qwen3", "prompt_tokens": 250, "generated_tokens": 3, "num_draft_tokens": 4},
    {"model": "qwen3_next", "draft": "llama", "prompt_tokens": 100, "generated_tokens": 10, "num_draft_tokens": 3},
]


def run_case(case: dict, root: Path) -> dict:
    """Generate once with the draft model and describe every layer of both caches afterwards."""
    model, tokenizer = load(str(write_model(case["model"], root)))
    draft, _ = load(str(write_model(case["draft"], root)))
    prompt = [1 + (7 * i) % (VOCAB - 1) for i in range(case["prompt_tokens"])]
    target_cache, draft_cache = make_prompt_cache(model), make_prompt_cache(draft)
    error = None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            generate(model, tokenizer, prompt, verbose=True, max_tokens=case["generated_tokens"], draft_model=draft,
                     num_draft_tokens=case["num_draft_tokens"], prompt_cache=target_cache + draft_cache)
    except Exception as exc:  # the engine refusing a configuration is a result too
        error = f"{type(exc).__name__}: {exc}"
    return {"case": case, "error": error, "target_layers": [describe(c) for c in target_cache],
            "draft_layers": [describe(c) for c in draft_cache]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_case(case, Path(tmp)) for case in CASES]
    names = sorted({c["model"] for c in CASES} | {c["draft"] for c in CASES})
    record = {"mlx": version("mlx"), "mlx_lm": version("mlx-lm"), "platform": platform.platform(),
              "models": {n: model_config(n) for n in names}, "results": results}
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{len(results)} cases -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
