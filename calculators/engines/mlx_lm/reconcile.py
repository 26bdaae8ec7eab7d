"""MLX LM's `Peak memory` against weights + KV cache (+ recurrent state) at the run's printed token counts.

MLX LM prints one peak for the whole run (ml-explore/mlx-lm:mlx_lm/generate.py `Peak memory: %.3f GB`,
mlx_lm/benchmark.py `peak_memory=`), read at v0.31.3-43 (d78bf58e). servewise accounts the weights (parameters
x the bits of the checkpoint's scheme) and the cache its plan allocates for the printed prompt and
generation; the rest of the peak, the largest step's activations and temporaries, is shown as the
unexplained remainder.
"""

from __future__ import annotations

import re

from calculators.engines.mlx_lm.plan import MlxLmSettings, plan_mlx_lm
from calculators.hardware.machine import Machine
from calculators.i18n import _, ngettext
from calculators.model.weights import estimate_weights
from calculators.reconcile.log.figures import Figure
from calculators.reconcile.result import Prediction, RowStatus, judge
from calculators.reconcile.rows import EngineRun, Outcome, unused_figures
from calculators.units import GB, TIB, number
from knowledge import load_knowledge

_MLX_BITS_IN_NAME = re.compile(r"(?i)(?:^|[-_/])(\d)bit(?:$|[-_])")
_MLX_MXFP4_IN_NAME = re.compile(r"(?i)mxfp4")


def _mlx_scheme(model_name: str | None) -> str | None:
    """mlx-community repo names say the quantization: '…-4bit' -> mlx-affine-4, '…-mxfp4' -> mlx-mxfp4."""
    if not model_name:
        return None
    if match := _MLX_BITS_IN_NAME.search(model_name):
        return f"mlx-affine-{match.group(1)}"
    if _MLX_MXFP4_IN_NAME.search(model_name):
        return "mlx-mxfp4"
    return None


def mlx_rows(run: EngineRun) -> Outcome:
    """MLX LM's `Peak memory` against weights + KV cache (+ recurrent state) at the printed token counts.

    The peak also holds activations and temporary buffers that servewise does not model; whatever the
    printed peak holds beyond weights + cache is reported as that unexplained remainder.
    """
    parsed = run.parsed
    out = Outcome(settings=run.settings)
    peaks = parsed.figures_named("peak_memory_bytes")
    if not peaks:
        out.plan_notes.append(_("the log prints no 'Peak memory' / 'peak_memory=' figure"))
        out.not_compared = list(parsed.figures)
        return out
    named = parsed.settings.get("model")
    model_name = named if isinstance(named, str) else None
    scheme = _mlx_scheme(model_name) or _mlx_scheme(str(parsed.settings.get("weights_scheme") or ""))
    if scheme is None and isinstance(parsed.settings.get("weights_scheme"), str):
        scheme = str(parsed.settings["weights_scheme"])
    kb = load_knowledge()
    if scheme is None or not run.arch.params_total:
        out.plan_notes.append(_("the weights' quantization is not stated (an mlx-community name ending in -4bit, "
                              "-8bit or -mxfp4 says it): the peak is not compared"))
        out.not_compared = list(parsed.figures)
        return out
    weights = estimate_weights(kb.formats, run.arch.params_total, scheme)
    machine = run.machine or Machine(device_memory_bytes=TIB, unified_memory=True)
    used: list[Figure] = []

    def before(name: str, line: int) -> Figure | None:  # the run a peak belongs to: the last print above it
        found = [f for f in parsed.figures_named(name) if f.line <= line]
        return found[-1] if found else None

    for peak in peaks:
        prompt_fig, gen_fig = before("prompt_tokens", peak.line), before("generation_tokens", peak.line)
        batch_fig = before("batch_sequences", peak.line)
        if prompt_fig is None:
            out.plan_notes.append(_("line {line}: the prompt length of this run is not stated ('Prompt: N "
                                    "tokens' or -p), so its peak is not compared").format(line=peak.line))
            continue
        prompt, generated = int(prompt_fig.value), int(gen_fig.value) if gen_fig else 0
        n_seq = int(batch_fig.value) if batch_fig else 1
        settings = run.settings if isinstance(run.settings, MlxLmSettings) else MlxLmSettings()
        plan = plan_mlx_lm(run.arch, settings, machine, weights.bytes, prompt_tokens=prompt,
                                             generated_tokens=generated, n_sequences=n_seq)
        state = sum(c.bytes for c in plan.components if c.kind.value == "recurrent_state")
        accounted = weights.bytes + plan.kv_cache_bytes + state
        used += [f for f in (prompt_fig, gen_fig, batch_fig) if f is not None]
        remainder = peak.value - accounted
        basis = ngettext("weights {weights}\u00a0GB ({scheme}, {basis}) + KV cache {kv}\u00a0GB for "
                         "{prompt}+{generated}\u00a0tokens × {n_seq} sequence",
                         "weights {weights}\u00a0GB ({scheme}, {basis}) + KV cache {kv}\u00a0GB for "
                         "{prompt}+{generated}\u00a0tokens × {n_seq} sequences", n_seq).format(
                      weights=number(weights.bytes / GB, 3), scheme=weights.scheme, basis=weights.basis,
                      kv=number(plan.kv_cache_bytes / GB, 3), prompt=number(prompt), generated=number(generated),
                      n_seq=number(n_seq))
        if state:
            basis += " + " + _("recurrent state {state}\u00a0GB").format(state=number(state / GB, 3))
        row = judge(peak, _("peak memory (weights + cache + working buffers)"),
                    Prediction(low=accounted, high=accounted, basis=basis))
        if row.status is RowStatus.UNEXPLAINED and remainder < 0:
            row = row.model_copy(update={"explanation": _(
                "the printed peak is {below}\u00a0GB below servewise's weights + cache: its weights estimate "
                "(parameters × the scheme's bits) is too high for this checkpoint").format(
                    below=number(-remainder / GB, 3))})
        elif row.status is RowStatus.UNEXPLAINED:
            row = row.model_copy(update={"explanation": _(
                "{beyond}\u00a0GB of the printed peak is beyond weights + cache: activations and temporary buffers "
                "of the largest step, which servewise does not model (unexplained remainder)").format(
                    beyond=number(remainder / GB, 3))})
        out.rows.append(row)
        used.append(peak)
    if model_name and _mlx_scheme(model_name):
        out.assumptions.append(_("weights as {scheme} from the model name {name}").format(
            scheme=weights.scheme, name=model_name))
    else:
        out.assumptions.append(_("weights as {scheme} (as set)").format(scheme=weights.scheme))
    out.not_compared = unused_figures(parsed, used)
    return out
