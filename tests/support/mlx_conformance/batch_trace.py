"""Drive mlx-lm's BatchGenerator (mlx_lm.server's scheduler) on tiny random models and record every step.

Run with the MLX venv from the repository root:

    .venv-mlx/bin/python -m tests.support.mlx_conformance.batch_trace tests/data/conformance/mlx_lm/batch_traces.json

For each case in batch_cases.py the requests are inserted before the `_next()` call their case names; each
call's record says which sequences the decode pass ran (GenerationBatch.next), which were handed from the prompt
batch to the generation batch (PromptProcessingBatch.generate) and how many prompt tokens each sequence of the
prompt pass processed (PromptProcessingBatch.prompt). Times are not recorded: the traces check the order of
the steps, not their length.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
from importlib.metadata import version
from pathlib import Path

import mlx.core as mx
from mlx_lm import generate as generate_module
from mlx_lm.generate import BatchGenerator, GenerationBatch, PromptProcessingBatch
from mlx_lm.utils import _get_classes

from tests.support.mlx_conformance.batch_cases import BATCH_CASES, TRACE_MODEL

_step: dict = {}  # the record of the _next() call running now


def _spy() -> None:
    """Wrap the three methods that run forward passes so each call records what it ran."""
    original_next, original_generate, original_prompt = (GenerationBatch.next, PromptProcessingBatch.generate,
                                                         PromptProcessingBatch.prompt)

    def next_(self):
        if self.uids:
            _step["decoded"] = sorted(self.uids)
        return original_next(self)

    def generate(self, tokens):
        _step["handed_over"] = list(self.uids)
        _step["in_generate"] = True  # generate() prompts all but the last token itself when it gets more
        try:
            return original_generate(self, tokens)
        finally:
            del _step["in_generate"]

    def prompt(self, tokens):
        if tokens and not _step.get("in_generate"):
            _step["prefilled"] = [[uid, len(t)] for uid, t in zip(self.uids, tokens, strict=True)]
        return original_prompt(self, tokens)

    GenerationBatch.next = next_
    PromptProcessingBatch.generate = generate
    PromptProcessingBatch.prompt = prompt


def _model():
    mx.random.seed(0)
    model_class, args_class = _get_classes(TRACE_MODEL)
    model = model_class(args_class.from_dict(dict(TRACE_MODEL)))
    mx.eval(model.parameters())
    return model


def run_case(model, case: dict) -> list[dict]:
    """Every non-empty `_next()` step of one case: decoded / handed_over / prefilled."""
    generator = BatchGenerator(model, completion_batch_size=case["decode_concurrency"],
                               prefill_batch_size=case["prompt_concurrency"],
                               prefill_step_size=case["prefill_step_size"])
    rng = random.Random(0)
    requests = case["requests"]
    pending = list(requests)
    steps: list[dict] = []
    finished = 0
    iteration = 0
    while finished < len(requests):
        due = [r for r in pending if r[0] <= iteration]
        pending = [r for r in pending if r[0] > iteration]
        if due:
            generator.insert([[rng.randrange(1, TRACE_MODEL["vocab_size"]) for _ in range(p)] for _, p, _ in due],
                             max_tokens=[m for _, _, m in due])
        _step.clear()
        _prompts, generated = generator.next()
        finished += sum(1 for r in generated if r.finish_reason is not None)
        record = {"decoded": _step.get("decoded", []), "handed_over": _step.get("handed_over", []),
                  "prefilled": _step.get("prefilled", [])}
        if not any(record.values()) and pending:
            raise RuntimeError(f"the generator went idle at iteration {iteration} before every request was inserted")
        if any(record.values()):
            steps.append(record)
        iteration += 1
    generator.close()
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    _spy()
    model = _model()
    traces = {name: {**case, "steps": run_case(model, case)} for name, case in BATCH_CASES.items()}
    record = {"engine": {"mlx": version("mlx"), "mlx-lm": version("mlx-lm"), "device": str(mx.default_device()),
                         "python": platform.python_version(), "module": generate_module.__name__},
              "model": TRACE_MODEL, "cases": traces}
    args.out.write_text(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
