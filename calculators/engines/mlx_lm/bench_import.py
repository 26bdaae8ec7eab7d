"""Readers for MLX LM's text outputs: `mlx_lm.benchmark` and `mlx_lm.generate --verbose`.

Line formats follow ml-explore/mlx-lm (mlx_lm/benchmark.py: "Timing with prompt_tokens=..., ...",
"Trial n:  prompt_tps=..., generation_tps=..., peak_memory=...", "Averages: ..."; mlx_lm/generate.py:
"Prompt: N tokens, X tokens-per-sec", "Generation: N tokens, X tokens-per-sec", "Peak memory: X GB").
"""

from __future__ import annotations

import re

from calculators.engines.mlx_lm.plan import ENGINE_ID
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.speed.imports.run import ImportedRun, ImportResult, SkippedLine

_TIMING = re.compile(r"Timing with prompt_tokens=(\d+)(?:,| and)\s*generation_tokens=(\d+)(?:,\s*batch_size=(\d+))?")
_VALUES = re.compile(r"(prompt_tps|generation_tps|peak_memory|total_time)=([0-9.]+)")
_PROMPT = re.compile(r"^Prompt:\s*(\d+) tokens,\s*([0-9.]+) tokens-per-sec")
_GEN = re.compile(r"^Generation:\s*(\d+) tokens,\s*([0-9.]+) tokens-per-sec")


def read_mlx_benchmark(text: str) -> ImportResult:
    """`mlx_lm.benchmark` output: the Averages line (or the mean of the Trial lines when it is missing)."""
    prompt_tokens = gen_tokens = None
    batch = 1
    trials, averages, skipped, start = [], None, [], 1
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        timing = _TIMING.search(line)
        if timing:
            prompt_tokens, gen_tokens = int(timing.group(1)), int(timing.group(2))
            batch = int(timing.group(3) or 1)
            start = line_no
            continue
        values = {k: float(v) for k, v in _VALUES.findall(line)}
        if line.startswith("Averages:") and "generation_tps" in values:
            averages = values
        elif line.startswith("Trial") and "generation_tps" in values:
            trials.append(values)
        elif line:
            skipped.append(SkippedLine(line_no=line_no, text=raw, reason="not a Timing, Trial or Averages line"))
    chosen = averages or (
        {
            k: sum(t[k] for t in trials) / len(trials)
            for k in ("prompt_tps", "generation_tps")
            if all(k in t for t in trials)
        }
        if trials
        else None
    )
    if not chosen or "generation_tps" not in chosen:
        raise ServewiseInputError(_("mlx_lm.benchmark: no 'Averages:' or 'Trial' line with generation_tps="))
    if chosen["generation_tps"] <= 0:
        raise ServewiseInputError(_("mlx_lm.benchmark: generation_tps must be positive"))
    single = batch == 1
    return ImportResult(
        tool="mlx-lm-benchmark",
        runs=(
            ImportedRun(
                tool="mlx-lm-benchmark",
                engine=ENGINE_ID,
                load_kind="single" if single else "concurrency",
                load=None if single else float(batch),
                prompt_tokens=prompt_tokens,
                output_tokens=gen_tokens,
                context_tokens=float(prompt_tokens or 0) + float(gen_tokens or 0) / 2.0,
                decode_tokens_per_s=chosen["generation_tps"] if single else None,
                output_tokens_per_s=None if single else chosen["generation_tps"],
                prefill_tokens_per_s=chosen.get("prompt_tps") or None,
                line_no=start,
            ),
        ),
        skipped=tuple(skipped),
    )


def read_mlx_generate(text: str) -> ImportResult:
    """`mlx_lm.generate --verbose` statistics; several Prompt/Generation pairs give several runs."""
    runs, skipped, prompt = [], [], None
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        p, g = _PROMPT.match(line), _GEN.match(line)
        if p:
            prompt = (line_no, int(p.group(1)), float(p.group(2)))
        elif g:
            n_gen, gen_tps = int(g.group(1)), float(g.group(2))
            if gen_tps <= 0:
                raise ServewiseInputError(_("line {line_no}: generation tokens-per-sec must be positive").format(
                                            line_no=line_no))
            start, n_prompt, prompt_tps = prompt if prompt else (line_no, None, None)
            runs.append(ImportedRun(
                tool="mlx-lm-generate", engine=ENGINE_ID, prompt_tokens=n_prompt, output_tokens=n_gen,
                context_tokens=float(n_prompt or 0) + n_gen / 2.0, decode_tokens_per_s=gen_tps,
                prefill_tokens_per_s=prompt_tps or None,
                ttft_ms_p50=n_prompt / prompt_tps * 1000.0 if n_prompt and prompt_tps else None, line_no=start,
            ))
            prompt = None
        elif line and not line.startswith("Peak memory:"):
            skipped.append(SkippedLine(line_no=line_no, text=raw, reason="not a Prompt/Generation statistics line"))
    if not runs:
        raise ServewiseInputError(
            _("mlx_lm.generate: no 'Generation: N tokens, X tokens-per-sec' line (run with --verbose)")
        )
    return ImportResult(tool="mlx-lm-generate", runs=tuple(runs), skipped=tuple(skipped))


def looks_like_benchmark(text: str, first: dict | None) -> bool:
    """mlx_lm.benchmark prints generation_tps= on its Trial and Averages lines."""
    return first is None and "generation_tps=" in text


def looks_like_generate(text: str, first: dict | None) -> bool:
    """mlx_lm.generate --verbose prints 'Generation: N tokens, X tokens-per-sec'."""
    return first is None and "tokens-per-sec" in text and "Generation:" in text
