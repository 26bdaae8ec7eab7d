"""SGLang's printed KV pool and token capacity against `plan_sglang`, fed the log's free memory and weights."""

from __future__ import annotations

from dataclasses import replace

from calculators.engines.sglang.plan import SglangSettings, plan_sglang
from calculators.hardware.machine import Machine
from calculators.i18n import N_, _
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.reconcile.log.figures import Figure
from calculators.reconcile.result import Alternative, Prediction, Rule, judge
from calculators.reconcile.rows import (
    EngineRun,
    Outcome,
    first_figure,
    point,
    run_machine,
    setting_from_figure,
    unused_figures,
)


def sglang_rows(run: EngineRun[SglangSettings]) -> Outcome[SglangSettings]:
    """SGLang's K/V buffer sizes, request slots and token pool against `plan_sglang`, fed the log's figures."""
    parsed, plan_fn = run.parsed, plan_sglang
    out = Outcome(settings=run.settings)
    context = first_figure(parsed, "context_len")
    settings = setting_from_figure(out, "context_length", context, _("the log's context_len"))
    machine = run_machine(run, None, out.assumptions, _("it only sets SGLang's automatic chunk and graph sizes"))
    used: list[Figure] = []
    tokens = first_figure(parsed, "kv_tokens") or first_figure(parsed, "max_total_num_tokens")
    if tokens is not None:
        # The pool arithmetic given the printed token count: ample memory, the pool capped at that count.
        pool = settings.model_copy(update={"max_total_tokens": int(tokens.value),
                                           "mem_fraction_static": settings.mem_fraction_static or 0.9})
        plan = plan_fn(run.arch, pool, machine, 0, free_before_load_bytes=1 << 50)
        out.plan_notes = [n.message for n in plan.notes if n.code != "sglang_max_total_tokens_too_large"]
        for name, label, attribute in (("k_bytes", N_("K size"), "k_bytes"), ("v_bytes", N_("V size"), "v_bytes"),
                                       ("max_running_requests", N_("maximum running requests"),
                                        "max_running_requests")):
            figure = first_figure(parsed, name)
            if figure is None:
                continue
            if name == "max_running_requests" and context is None and settings.context_length is None:
                continue
            used.append(figure)
            shown = _("{label} for {value}\u00a0tokens").format(label=_(label), value=int(tokens.value))
            out.rows.append(judge(figure, shown,
                                  point(getattr(plan, attribute), _("plan_sglang .{attribute} with the "
                                      "printed #tokens as max_total_tokens").format(attribute=attribute)),
                                  _sglang_alternatives(name, run, pool, machine, plan)))
    used.extend(_sglang_mamba_rows(run, settings, machine, out))
    budget = _sglang_budget(run, settings, machine, out)
    if budget is not None and tokens is not None:
        prediction, inputs, alternatives = budget
        used.extend([tokens, *inputs])
        out.rows.append(judge(tokens, _("KV pool size in tokens"), prediction, alternatives))
    out.not_compared = unused_figures(parsed, used)
    return out


def _sglang_mamba_rows(run: EngineRun[SglangSettings], settings: SglangSettings, machine: Machine,
                       out: Outcome[SglangSettings]) -> list[Figure]:
    """The state pool a hybrid model's log prints (slots, conv and temporal bytes) against plan_sglang."""
    slots = first_figure(run.parsed, "mamba_cache_slots")
    if slots is None or not any(layer.recurrent for layer in run.arch.layers):
        return []
    fixed = settings.model_copy(update={"max_mamba_cache_size": int(slots.value) * settings.dp_size,
                                        "mem_fraction_static": settings.mem_fraction_static or 0.9})
    plan = plan_sglang(run.arch, fixed, machine, 0, free_before_load_bytes=1 << 50)
    used = [slots]
    for name, label, attribute in (("mamba_conv_state_bytes", N_("Mamba conv state"), "conv_state_bytes"),
                                   ("mamba_ssm_state_bytes", N_("Mamba temporal (SSM) state"), "ssm_state_bytes")):
        figure = first_figure(run.parsed, name)
        if figure is None or plan.mamba is None:
            continue
        used.append(figure)
        out.rows.append(judge(figure, _("{label} for {value} + 1 slots").format(
                                        label=_(label), value=int(slots.value)), point(
            getattr(plan.mamba, attribute), _("plan_sglang .mamba.{attribute} with the printed "
                                              "max_mamba_cache_size ({layers} layers × conv {conv_shape} "
                                              "{conv_dtype}, state {ssm_shape} {ssm_dtype})").format(
                                              attribute=attribute,
                                              layers=plan.mamba.layers,
                                              conv_shape=plan.mamba.conv_shape,
                                              conv_dtype=plan.mamba.conv_dtype,
                                              ssm_shape=plan.mamba.ssm_shape,
                                              ssm_dtype=plan.mamba.ssm_dtype))))
    return used


def _sglang_alternatives(name: str, run: EngineRun[SglangSettings], pool: SglangSettings, machine: Machine,
                         plan) -> tuple[Alternative, ...]:
    """SGLang releases before the hybrid sliding-window pool kept every layer at full size."""
    if name not in ("k_bytes", "v_bytes") or plan.swa_max_total_num_tokens is None:
        return ()
    plan_all_full = plan_sglang(_all_full(run.arch), pool, machine, 0, free_before_load_bytes=1 << 50)
    value = getattr(plan_all_full, name)
    return (Alternative(rule=Rule.VERSION, low=value, high=value,
                        explanation=_("this SGLang version allocated the sliding-window layers at full size "
                        "(no separate SWA pool): every layer holds every token")),)


def _sglang_budget(run: EngineRun[SglangSettings], settings: SglangSettings, machine: Machine,
                   out: Outcome[SglangSettings]):
    """The token pool SGLang sizes from the free memory it printed before and after loading, as a range."""
    parsed = run.parsed
    before = first_figure(parsed, "avail_before_weights_bytes")
    after, weights = first_figure(parsed, "avail_after_weights_bytes"), first_figure(parsed, "weights_bytes")
    if (weights is None and (before is None or after is None)) or (before is None and after is None):
        out.plan_notes.append(_("the log does not print the free memory before and after loading the weights, so "
                              "SGLang's token pool cannot be recomputed"))
        return None
    if settings.mem_fraction_static is None and run.machine is None:
        out.plan_notes.append(_("mem_fraction_static is not in the log: give it as a setting, or the GPU, to "
                              "recompute SGLang's token pool"))
        return None
    ranks = settings.tp_size * settings.pp_size
    all_full = _all_full(run.arch)
    values: list[int] = []
    full_values: list[int] = []
    for pick in (0, 1):
        if weights is not None:
            w = weights.interval()[1 - pick]
            if before is not None:
                free = before.interval()[pick]
            else:
                assert after is not None  # the early return above: one of before/after is printed
                free = after.interval()[pick] + w
        else:
            assert before is not None and after is not None  # the early return above: both are printed
            free, w = before.interval()[pick], before.interval()[pick] - after.interval()[1 - pick]
        for arch, into in ((run.arch, values), (all_full, full_values)):
            plan = plan_sglang(arch, settings, machine, int(w) * ranks,
                                                 free_before_load_bytes=int(free))
            into.append(plan.max_total_num_tokens)
    inputs = [f for f in (before, after, weights) if f is not None]
    alternatives: tuple[Alternative, ...] = ()
    if all_full is not run.arch:
        alternatives = (Alternative(rule=Rule.VERSION, low=min(full_values), high=max(full_values),
                                    explanation=_("this SGLang version sized one pool with every layer at full size "
                                    "(no separate sliding-window pool)")),)
    return Prediction(low=min(values), high=max(values), rounded_inputs=tuple(f"{f.printed} {f.printed_unit}"
                      for f in inputs), basis=_("plan_sglang .max_total_num_tokens from the printed free memory "
                      "and weights")), inputs, alternatives




def _all_full(arch: ModelArchitecture) -> ModelArchitecture:
    """The same model with its sliding-window layers treated as full attention (older engines' rule)."""
    if not arch.layers_of(LayerKind.SLIDING):
        return arch
    return replace(arch, layers=tuple(
        replace(layer, kind=LayerKind.FULL, sliding_window_tokens=None) if layer.kind is LayerKind.SLIDING else layer
        for layer in arch.layers))

