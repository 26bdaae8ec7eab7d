"""vLLM's printed blocks, token capacity, concurrency and KV budget against `plan_vllm`, fed the log's figures."""

from __future__ import annotations

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.plan import VllmPlan, plan_vllm
from calculators.engines.vllm.speculative import VllmSpeculativeConfig
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import N_, _
from calculators.model.architecture import LayerKind
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
from calculators.units import GIB, number, percent


def vllm_rows(run: EngineRun[VllmSettings]) -> Outcome[VllmSettings]:
    """vLLM's blocks, token capacity, concurrency and budget against `plan_vllm`, fed the log's printed figures."""
    from calculators.engines.vllm.gpu_worker import VllmOverheads

    parsed, plan_fn = run.parsed, plan_vllm
    out = Outcome(settings=run.settings)
    settings = setting_from_figure(out, "max_model_len", first_figure(parsed, "concurrency_request_tokens"),
                                    _("the 'Maximum concurrency for … tokens per request' line"))
    if settings.max_model_len is None and run.arch.max_context_tokens is None:
        raise ServewiseInputError(_("the log does not print max_model_len: add it as a setting (max_model_len=…)"))
    total = first_figure(parsed, "device_total_bytes")
    machine = run_machine(run, int(total.value) if total else None, out.assumptions, _("it only sets vLLM's default "
                       "batch limits"))
    used: list[Figure] = []

    available = first_figure(parsed, "available_kv_cache_bytes")
    pool = first_figure(parsed, "num_gpu_blocks") or first_figure(parsed, "kv_tokens")
    if available is not None or pool is not None:
        if available is not None:
            budgets = available.interval()
            rounded: tuple[str, ...] = (f"'Available KV cache memory {available.printed} {available.printed_unit}'",)
            source = _("the printed available KV memory")
            shown = available
        else:  # no budget printed: give the plan exactly the pool the engine printed, to check the rest
            assert pool is not None  # the enclosing `if`: one of the two is printed
            budgets = (_pool_budget_bytes(run, settings, machine, pool),) * 2
            source = _("the printed {name}").format(name=pool.name)
            shown = pool
            rounded = ()
            out.assumptions.append(_("KV budget set to the pool the log printed ({printed} {unit}); only "
                                     "the figures derived from it are checked").format(
                                     printed=pool.printed, unit=pool.unit))
        plans = [plan_fn(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": max(1, int(b))}), machine, None)
                 for b in budgets]
        out.refusal = plans[0].refusal
        out.plan_notes = [n.message for n in plans[0].notes if n.code != "vllm_kv_cache_memory_bytes"]
        for name, label, attribute in (("num_gpu_blocks", N_("KV blocks on the GPU"), "num_gpu_blocks"),
                                       ("kv_tokens", N_("KV cache size in tokens"), "kv_tokens"),
                                       ("max_concurrency", N_("maximum concurrency"), "max_concurrency"),
                                       ("estimated_max_model_len", N_("estimated maximum model length"),
                                        "estimated_max_model_len")):
            figure = first_figure(parsed, name)
            if figure is None or (available is None and figure is pool):
                continue
            values = [getattr(p, attribute) for p in plans]
            if None in values:
                out.plan_notes.append(_("servewise's plan has no {label} for these inputs").format(label=_(label)))
                continue
            used.append(figure)
            prediction = Prediction(low=min(values), high=max(values), basis=_("plan_vllm .{attribute} with "
                "kv_cache_memory_bytes = {source}").format(attribute=attribute, source=source), rounded_inputs=rounded)
            workers = len({f.device for f in parsed.figures_named("available_kv_cache_bytes")}) or 1
            out.rows.append(judge(figure, _(label), prediction, _vllm_alternatives(name, plans, settings, workers)
                                  + _vllm_hybrid_alternatives(name, run, settings, machine, plans)))
            if name == "num_gpu_blocks" and available is not None:
                # the printed block count pins the pool exactly: the figures derived from it need no rounding range
                exact = settings.model_copy(update={"kv_cache_memory_bytes": _pool_budget_bytes(run, settings,
                                                                                                 machine, figure)})
                plans, rounded, source = [plan_fn(run.arch, exact, machine, None)] * 2, (), _("the printed GPU blocks")
        used.append(shown)
        used.extend(_vllm_hybrid_rows(run, plans[0], out))
    else:
        out.plan_notes.append(_("the log does not print 'Available KV cache memory', so vLLM's block arithmetic "
                              "cannot be checked"))
    budget = _vllm_budget_row(run, settings, machine, VllmOverheads)
    if budget is not None and available is not None:
        row, inputs = budget
        out.rows.append(judge(available, _("available KV cache memory"), row))
        used.extend(inputs)
    elif available is not None:
        estimated = _vllm_estimated_budget(run, settings, machine, total is not None)
        if estimated is not None:
            prediction, alternative, inputs = estimated
            out.rows.append(judge(available, _("available KV cache memory"), prediction, (alternative,)))
            used.extend(inputs)
    requested, util = first_figure(parsed, "requested_memory_bytes"), settings.gpu_memory_utilization
    if requested is not None and total is not None and "gpu_memory_utilization" in settings.model_fields_set:
        lo, hi = total.interval()
        used.append(requested)
        out.rows.append(judge(requested, _("requested memory (total × gpu_memory_utilization)"), Prediction(
            low=int(lo * util), high=int(hi * util), basis=_("plan_vllm requested_memory_bytes"),
            rounded_inputs=(_("total GPU memory {printed} {unit}").format(printed=total.printed,
                                                                           unit=total.printed_unit),))))
        used.append(total)
    out.not_compared = unused_figures(parsed, used)
    return out


def _vllm_estimated_budget(run: EngineRun[VllmSettings], settings: VllmSettings, machine: Machine,
                           total_printed: bool):
    """The available KV memory from the printed weights and servewise's estimated profile peaks.

    Used when the log prints the weights but not vLLM's profile (activation peak, non-torch memory). The
    prediction rests on estimates, so a difference no larger than the estimated peaks is `explained`.
    """
    weights = first_figure(run.parsed, "weights_bytes")
    if weights is None or (run.machine is None and not total_printed):
        return None
    from calculators.engines.vllm.gpu_worker import default_vllm_overheads

    ranks = settings.tensor_parallel_size * settings.pipeline_parallel_size
    plan = plan_vllm(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": None}), machine,
                                      int(weights.value) * ranks)
    estimate = default_vllm_overheads(run.arch, settings.tensor_parallel_size)
    peaks = estimate.activation_peak_bytes + estimate.non_torch_bytes
    predicted = plan.available_kv_cache_bytes
    prediction = Prediction(low=predicted, high=predicted, basis=_("plan_vllm budget with the printed "
        "weights and servewise's estimated activation peak and non-torch memory ({basis})").format(
        basis=estimate.basis))
    alternative = Alternative(rule=Rule.ESTIMATE, low=predicted - peaks, high=predicted + peaks,
                              explanation=_("servewise estimates the activation peak and non-torch memory "
                                            "vLLM profiles ({peaks}\u00a0GiB together); the difference is "
                                            "within that estimate").format(peaks=number(peaks / GIB, 2)))
    return prediction, alternative, [weights]


def _pool_budget_bytes(run: EngineRun[VllmSettings], settings: VllmSettings, machine: Machine, pool: Figure) -> int:
    """Bytes of exactly the printed pool (blocks, or tokens / block size), from the plan's bytes per block."""
    probe = plan_vllm(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": GIB}),
                                        machine, None)
    if not probe.num_gpu_blocks:
        raise ServewiseInputError(_("servewise's vLLM plan has no KV blocks for this model"))
    per_block = probe.kv_cache_bytes // probe.num_gpu_blocks
    blocks = int(pool.value) if pool.name == "num_gpu_blocks" else int(pool.value) // probe.block_size
    return blocks * per_block


# servewise's tolerance (not an engine fact) for how much less another rank may have had: ranks differ by
# their own CUDA context, NCCL buffers and activation peak, small next to the KV budget.
_PER_RANK_TOLERANCE = 0.05


def _vllm_alternatives(name: str, plans: list, settings: VllmSettings, workers: int) -> tuple[Alternative, ...]:
    """Rules that make vLLM print another value: older versions' formulas, and the smallest worker's pool."""
    alternatives: list[Alternative] = []
    if name == "kv_tokens":
        # vLLM before the group-aware rule (kv_cache_utils.py @ 001cabc1) and v0: blocks x block size
        values = [p.num_gpu_blocks * p.block_size // max(1, len(p.kv_cache_groups)) for p in plans]
        alternatives.append(Alternative(rule=Rule.VERSION, low=min(values), high=max(values),
                                        explanation=_("older vLLM printed blocks × block size (per KV-cache group) "
                                        "rather than max concurrency × max_model_len")))
    if name == "max_concurrency":
        values = [p.num_gpu_blocks * p.block_size / p.max_model_len for p in plans]
        alternatives.append(Alternative(rule=Rule.VERSION, low=min(values), high=max(values),
                                        explanation=_("vLLM v0 divided the pool's tokens by max_model_len instead of "
                                        "counting whole blocks per request")))
    ranks = settings.tensor_parallel_size * settings.pipeline_parallel_size
    if name in ("kv_tokens", "num_gpu_blocks", "max_concurrency") and ranks > 1 and workers < ranks:
        # vllm/v1/core/kv_cache_utils.py unify_kv_cache_configs: every worker gets the smallest worker's block count
        low = min(getattr(p, name) for p in plans)
        alternatives.append(Alternative(
            rule=Rule.PER_RANK, low=low * (1 - _PER_RANK_TOLERANCE), high=low,
            explanation=_("with {ranks} workers vLLM keeps the smallest worker's pool "
                          "(unify_kv_cache_configs), and the log shows the available memory of {workers} of "
                          "them; a worker with up to {per_rank_tolerance} less memory gives the printed "
                          "value (not verifiable from this log)").format(
                          ranks=ranks, workers=workers, per_rank_tolerance=percent(_PER_RANK_TOLERANCE))))
    return tuple(alternatives)


def _vllm_hybrid_rows(run: EngineRun[VllmSettings], plan, out: Outcome[VllmSettings]) -> list[Figure]:
    """The raised block size and the state page's padding a hybrid model's log prints, against the plan."""
    used = []
    block = first_figure(run.parsed, "hybrid_block_size")
    if block is not None:
        used.append(block)
        out.rows.append(judge(block, _("attention block size raised for the Mamba state page"),
                              point(plan.block_size, _("plan_vllm .block_size (mamba.align_hybrid_block_size)"))))
    padding = first_figure(run.parsed, "mamba_page_padding_percent")
    if padding is not None and plan.mamba_state is not None:
        used.append(padding)
        out.rows.append(judge(padding, _("Mamba page padding (percent)"), point(
            round(plan.mamba_state.padding_percent, 2), _("plan_vllm .mamba_state.padding_percent"))))
    return used


def _vllm_hybrid_alternatives(name: str, run: EngineRun[VllmSettings], settings: VllmSettings, machine: Machine,
                              plans: list) -> tuple[Alternative, ...]:
    """Rules for hybrid and speculative runs that make vLLM print another token count or concurrency."""
    if name not in ("kv_tokens", "max_concurrency") or not plans:
        return ()
    out: list[Alternative] = []
    budgets = [p.available_kv_cache_bytes for p in plans]
    tokens = first_figure(run.parsed, "kv_tokens")
    if name == "max_concurrency" and plans[0].mamba_state is not None and tokens is not None:
        out.append(_v011_hybrid_concurrency(plans[0], int(tokens.value)))
    if plans[0].mamba_state is not None:
        other = "none" if plans[0].mamba_state.cache_mode == "align" else "align"
        flipped = settings.model_copy(update={"enable_prefix_caching": other == "align"})
        values = [getattr(plan_vllm(run.arch, flipped.model_copy(update={"kv_cache_memory_bytes": max(1, b)}),
                                    machine, None), name) for b in budgets]
        out.append(Alternative(rule=Rule.MAMBA_CACHE_MODE, low=min(values), high=max(values), explanation=(
            _("with mamba_cache_mode 'align' a request holds 2 state pages (+1 checkpoint) per state group "
              "instead: vLLM before prefix caching for hybrids (and runs with it on) gives this value")
            if other == "align" else
            _("with mamba_cache_mode 'none' a request holds 1 state page per state group instead: vLLM before "
              "prefix caching for hybrids (and runs with it off) gives this value"))))
    if getattr(settings, "speculative_config", None) is None and run.arch.layers_of(LayerKind.FULL, LayerKind.MLA):
        eagle = VllmSpeculativeConfig(method="eagle3", num_speculative_tokens=3)
        values = [getattr(plan_vllm(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": max(1, b),
                                                                             "speculative_config": eagle}),
                                    machine, None), name) for b in budgets]
        out.append(Alternative(rule=Rule.DRAFT_LAYERS, low=min(values), high=max(values), explanation=(
            _("the run had a speculative drafter (an EAGLE-style head of one layer like the model's own) whose KV "
            "shares the pool; the log's settings do not show it"))))
    return tuple(out)


def _v011_hybrid_concurrency(plan: VllmPlan, printed_tokens: int) -> Alternative:
    """vLLM v0.10-v0.11's hybrid concurrency from its own printed token count (Rule.VERSION).

    vllm/v1/core/kv_cache_utils.py of that era printed 'GPU KV cache size' as num_blocks // groups x block
    size (one group's share of the shared pool) and computed the concurrency as num_blocks over
    cdiv(layers_per_group x sum of every group's per-layer bytes per request, page x layers_per_group):
    a request's attention blocks plus one page per state group (get_max_concurrency_for_kv_cache_config),
    against all groups' blocks. So the printed tokens give the pool back as tokens // block size x groups
    (+ up to groups - 1 lost to the floor), with the block size of servewise's plan (the log shows neither
    the TP size nor the KV dtype; the result moves little with the block size).
    """
    groups = len(plan.kv_cache_groups)
    state_groups = sum(1 for g in plan.kv_cache_groups if g.kind == "mamba")
    per_request = -(-plan.max_model_len // plan.block_size) + state_groups
    low_blocks = printed_tokens // plan.block_size * groups
    low, high = low_blocks / per_request, (low_blocks + groups - 1) / per_request
    return Alternative(rule=Rule.VERSION, low=low, high=high, explanation=(
        _("vLLM v0.11 printed the tokens of one of its {groups} KV-cache groups (blocks // groups × block "
          "size) but divided all {low_blocks}-{low_blocks_2} blocks by a request's {per_request} attention "
          "blocks + {state_groups} state pages (block size {block_size} from servewise's plan; TP and KV "
          "dtype are not in the log)").format(
          groups=groups,
          low_blocks=low_blocks,
          low_blocks_2=low_blocks + groups - 1,
          per_request=per_request - state_groups,
          state_groups=state_groups,
          block_size=plan.block_size)))


def _vllm_budget_row(run: EngineRun[VllmSettings], settings: VllmSettings, machine: Machine, overheads_type: type):
    """The 'Available KV cache memory' vLLM computes from the profile the log printed, as a range."""
    parsed = run.parsed
    total, weights = first_figure(parsed, "device_total_bytes"), first_figure(parsed, "weights_bytes")
    non_torch = first_figure(parsed, "non_torch_bytes")
    activation = first_figure(parsed, "activation_peak_bytes")
    peak_torch = first_figure(parsed, "peak_torch_bytes")
    if total is None or weights is None or non_torch is None or (activation is None and peak_torch is None):
        return None
    if "gpu_memory_utilization" not in settings.model_fields_set:
        return None
    ranks = settings.tensor_parallel_size * settings.pipeline_parallel_size
    profile = activation or peak_torch
    assert profile is not None  # the early return above: one of the two is printed
    rounded = tuple(f"{f.printed} {f.printed_unit}" for f in (total, weights, non_torch, profile))
    values = []
    for pick in (0, 1):  # 0: the smallest budget the prints allow, 1: the largest
        t = total.interval()[pick]
        w = weights.interval()[1 - pick]
        n = non_torch.interval()[1 - pick]
        if activation is not None:
            a = activation.interval()[1 - pick]
        else:  # v0 printed the torch peak, weights included
            assert peak_torch is not None  # the early return above
            a = max(0, peak_torch.interval()[1 - pick] - weights.interval()[pick])
        over = overheads_type(activation_peak_bytes=int(a), non_torch_bytes=int(n), basis="printed by the log")
        plan = plan_vllm(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": None}),
                                           machine.model_copy(update={"device_memory_bytes": int(t)}),
                                           int(w) * ranks, overheads=over)
        values.append(plan.available_kv_cache_bytes)
    basis = "plan_vllm budget: total x gpu_memory_utilization - weights - activation peak - non-torch (as printed)"
    if activation is None:
        basis += "; activation peak = printed torch peak - weights (vLLM v0 printed the peak with the weights)"
    used = [f for f in (total, weights, non_torch, activation, peak_torch) if f is not None]
    return Prediction(low=min(values), high=max(values), basis=basis, rounded_inputs=rounded), used


