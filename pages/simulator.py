"""How many requests run, how many wait, and what latency they see under each engine's scheduler."""

import streamlit as st

from calculators.engines import ENGINES
from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _
from calculators.simulator.checked import checked
from calculators.simulator.engines import SIMULATED_ENGINES
from calculators.simulator.loops import open_loop_twin
from calculators.simulator.model_inputs import simulator_inputs
from calculators.simulator.policy import StaticBatchPolicy
from calculators.simulator.results import Slo
from calculators.simulator.roofline import (
    DEFAULT_COMPUTE_EFFICIENCY,
    DEFAULT_MEMORY_EFFICIENCY,
    POPE_PREFILL_MFU,
    StepCostModel,
)
from calculators.simulator.run import simulate
from calculators.simulator.sweep import sweep_arrival_rates
from calculators.simulator.workload import LengthDistribution, WorkloadSpec, draw_requests, parse_length_pairs_csv
from calculators.speed.inputs import hardware_class_of
from calculators.speed.model import HARDWARE_CLASS_NAMES, Accelerator, ModelShape, hardware_class_name
from calculators.speed.predict import engine_step_costs, step_cost_model, unfitted_params
from knowledge import load_knowledge
from reports.names import namer
from reports.numbers import compact, number, percent
from reports.simulator_charts import (
    comparison_table,
    distribution_table,
    engine_label,
    engines_as_columns,
    loop_comparison_table,
    records_csv,
    sweep_figures,
    timeline_figure,
)
from reports.speed_text import step_basis_lines, ttft_models_line
from reports.tables import frame_markdown, localized_frame
from ui import deferred, uploads, url_widgets
from ui.background import section_result, wait_for_section
from ui.markdown_text import literal
from ui.run_control import end_run
from ui.speed_link import link_calibration
from ui.state_cache import drawn_per_input_state, per_input_state, state_key
from ui.tables import pin_first_column

#: The example machine: a 24 GB card an 8B BF16 model fits on.
ARRIVAL_LABELS = {"poisson": N_("Poisson (open loop)"), "closed": N_("closed loop")}
DEFAULT_GPU_ID = "rtx-4090-24gb"
# The page opens on a catalog model, its figures from the memory model; typed figures are one choice away.
DEFAULT_MODEL_ID = "llama-3.1-8b"
#: Requests a run simulates unless the reader (or a link) says otherwise.
DEFAULT_REQUESTS = 1000
#: Most requests one page run simulates per engine (keeps a first run within a few seconds).
MAX_PAGE_REQUESTS = 20_000
#: Sweep points as multiples of the chosen arrival rate.
SWEEP_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
#: Requests per sweep point (fewer than the main run keeps the sweep quick).
SWEEP_REQUESTS = 300


def changed_input(label: str, value: object, default: object) -> list[str]:
    """`label = value` (as Markdown, read as literal text) when a folded input's value is not its default, else []."""
    if value == default:
        return []
    shown = (_("on") if value else _("off")) if isinstance(value, bool) else (
        compact(value, 6) if isinstance(value, int | float) else str(value))
    return [literal(f"{label} = {shown}")]


def show_changed(changed: list[str]) -> None:
    """Under a folded box: which of its inputs a reader or a link changed, so they stay in sight while it is shut."""
    if changed:
        st.caption(_("Changed in the box above: {inputs}.").format(inputs="; ".join(changed)))


# A run takes tens to hundreds of milliseconds and building a plotly figure tens more, so results and
# figures are cached by their inputs and the reader's language (the tables and figures hold text in it). They
# are never mutated, so sharing them between sessions is safe.
@per_input_state(max_entries=8, copy=False, show_spinner=_("Simulating…"))
def run_engines(workload: WorkloadSpec, policies: tuple, costs: tuple[StepCostModel, ...], kv_tokens: int, slo: Slo):
    """Each policy with its own step costs on the same drawn requests: results, their tables and timeline figures."""
    requests = draw_requests(workload)
    results = [simulate(workload, policy, cost, kv_tokens, slo, requests)
               for policy, cost in zip(policies, costs, strict=True)]
    return results, comparison_table(results), distribution_table(results), timeline_figure(results)


@per_input_state(max_entries=8, copy=False, show_spinner=_("Replaying the closed loop as independent arrivals…"))
def run_open_twins(workload: WorkloadSpec, policies: tuple, costs: tuple[StepCostModel, ...], kv_tokens: int, slo: Slo):
    """Each engine's closed-loop run replayed open loop at its own closed-loop rate: (closed, open) results."""
    closed = run_engines(workload, policies, costs, kv_tokens, slo)[0]
    twins = [simulate(open_loop_twin(workload, c), p, cost, kv_tokens, slo)
             for c, p, cost in zip(closed, policies, costs, strict=True)]
    return loop_comparison_table(closed, twins)


@per_input_state(max_entries=16, copy=False)
def model_inputs(model_id: str, gpu_id: str):
    """The memory model's figures for `model_id` on one `gpu_id` (vLLM's plan); the same on every rerun."""
    return simulator_inputs(load_knowledge(), model_id, gpu_id)


# Kept per state by ui/background.py, which runs it off the script thread.
def run_sweep(workload: WorkloadSpec, policies: tuple, costs: tuple[StepCostModel, ...], kv_tokens: int, slo: Slo,
              rates: tuple):
    """Goodput and p99 TTFT figures per engine over `rates` (requests per second), each with its own step costs."""
    points = []
    for policy, cost in zip(policies, costs, strict=True):
        points += sweep_arrival_rates(workload, {policy.engine: (policy, kv_tokens)}, cost, list(rates), slo)
    return sweep_figures(points)


st.title(_("Concurrency & queueing"))
st.caption(
    _("Open connections are not running requests: the engine admits a few sequences, the rest wait, and "
    "every running sequence holds KV cache. This page simulates each engine's scheduler step by step "
    "(iteration-level batching) on your workload. Step times come from a roofline of the GPU — "
    "**every figure here is an estimate, not a measurement.**")
)

engines = url_widgets.multiselect(
    _("Engines to compare (same workload)"), list(SIMULATED_ENGINES), key="sim_engines",
    labels=namer(load_knowledge(), {"static": _("static batching (baseline)")}),
    default=[engine.id for engine in ENGINES.values() if engine.simulator_default],
    help=_("Static batching is a baseline without iteration-level scheduling: a batch starts when the previous one "
           "ends."),
)

# Two input columns and the engines' knobs below them, two engines to a row: in three columns at 1024 px the GPU's
# name, the toggles' labels and OLLAMA_NUM_PARALLEL were cut or split mid-word.
machine_col, workload_col = st.columns(2)
with machine_col:
    st.subheader(_("Machine and model"))
    catalog = load_knowledge().gpus
    gpu_ids = [gpu.id for gpu in catalog.all_gpus]
    gpu_id = url_widgets.selectbox(_("GPU (catalog)"), ["custom", *gpu_ids], key="sim_gpu",
                                   # the option's words, not its slug; short, so it is not cut at 1024 px in Spanish
                                   labels=namer(load_knowledge(), {"custom": _("Typed figures")}),
                                   index=1 + gpu_ids.index(DEFAULT_GPU_ID),
                                   help=_("“Typed figures” lets you type the bandwidth and TFLOPS."))
    gpu = catalog.get(gpu_id) if gpu_id != "custom" else None
    bandwidth_gbs = gpu.memory_bandwidth_gb_per_s if gpu else "unknown"
    tflops = gpu.dense_bf16_tflops if gpu else "unknown"
    if gpu:
        shown_bandwidth = compact(bandwidth_gbs) if isinstance(bandwidth_gbs, int | float) else _("unknown")
        shown_tflops = compact(tflops) if isinstance(tflops, int | float) else _("unknown")
        st.caption(_("{gpu}: {bandwidth}\u00a0GB/s, dense BF16 {tflops}\u00a0TFLOPS ([source]({url})).").format(
            gpu=gpu.name, bandwidth=shown_bandwidth, tflops=shown_tflops, url=gpu.source))
    if not isinstance(bandwidth_gbs, int | float):
        bandwidth_gbs = url_widgets.number(_("Memory bandwidth (GB/s)"), key="sim_bw", min_value=0.0, value=1008.0)
    if not isinstance(tflops, int | float):
        tflops = url_widgets.number(_("Dense TFLOPS at the weights' precision"), key="sim_tflops", min_value=0.0,
                                    value=165.0, help=_("The catalog has no figure for this device; type one."))
    model_choices = ["typed", *load_knowledge().models.ids]
    model_id = url_widgets.selectbox(
        _("Model"), model_choices, key="sim_model", index=model_choices.index(DEFAULT_MODEL_ID),
        labels=namer(load_knowledge(), {"typed": _("Typed figures")}),
        help=_("A catalog model takes its figures from the memory model (vLLM's KV capacity on the GPU above); "
        "“Typed figures” lets you type them."),
    )
    from_memory_model = None
    if model_id != "typed" and gpu is not None:
        try:
            from_memory_model = model_inputs(model_id, gpu_id)
        except ServewiseInputError as exc:
            st.error(literal(str(exc)), icon=":material/error:")
        if from_memory_model is not None and from_memory_model.kv_capacity_tokens == 0:
            st.error(_("{model} leaves no KV cache on one {gpu} in BF16 (vLLM would refuse); pick a larger GPU or "
                       "type the figures.").format(model=from_memory_model.model, gpu=gpu.name),
                     icon=":material/error:")
            from_memory_model = None
    elif model_id != "typed":
        st.info(_("A catalog model needs a catalog GPU; using the typed figures."), icon=":material/info:")
    if from_memory_model is not None:
        params_b = from_memory_model.active_params / 1e9
        weights_gb = from_memory_model.weights_bytes / 1e9
        kv_kib = from_memory_model.kv_bytes_per_token / 1024
        kv_tokens = from_memory_model.kv_capacity_tokens
        st.caption(_("From the memory model: {params}\u00a0B active parameters, {weights}\u00a0GB of weights, "
                     "{kib}\u00a0KiB of KV per token, KV capacity {tokens}\u00a0tokens — {basis}.").format(
            params=number(params_b, 2), weights=number(weights_gb, 2), kib=number(kv_kib), tokens=number(kv_tokens),
            basis=from_memory_model.basis))
    else:
        params_b = url_widgets.number(_("Active parameters (billions)"), key="sim_params", min_value=0.0,
                                      max_value=100_000.0, value=8.0,
                                      help=_("For MoE models, the parameters used per token."))
        weights_gb = url_widgets.number(_("Weights (GB, 10^9\u00a0bytes)"), key="sim_weights", min_value=0.0,
                                        value=16.0)
        kv_kib = url_widgets.number(_("KV cache per token (KiB)"), key="sim_kv_kib", min_value=0.0, value=128.0,
                                    help=_("128\u00a0KiB: 32 layers × 8 KV heads × 128 dims × 2\u00a0bytes × K and V."))
        kv_tokens = url_widgets.number(_("KV capacity (tokens) for vLLM / SGLang / static"), key="sim_kv_tokens",
                                       min_value=0, value=32768, step=1024,
                                       help=_("What the engine reports as its KV cache size; pick a catalog model "
                                       "to take it from the memory model."))
    hardware_class = (
        hardware_class_of(gpu)
        if gpu
        else url_widgets.selectbox(
            _("Hardware class (custom GPU)"),
            list(HARDWARE_CLASS_NAMES),
            key="sim_hw_class",
            labels=hardware_class_name,
            help=_("Which fitted speed parameters apply to the typed device."),
        )
    )
    # The step-time efficiencies and every engine's knobs fold into one box under the model, each engine's knobs in a
    # box of its own (drawn in every run, so each keeps its link value): unfolded, two engines to a row, they were a
    # screen of their own above the result at 1024 px.
    simulated = [engine for engine in ENGINES.values()
                 if engine.id in engines and engine.scheduler_policy is not None]
    changed_knobs: list[str] = []
    policies = []
    with st.expander(_("Step times and engine knobs")):
        typed_efficiency = url_widgets.toggle(
            _("Type the step-time efficiencies"), key="sim_typed_eff", value=False,
            help=_("Off: each engine's efficiencies and overheads come from the speed model (fitted to public "
                   "measurements, or your calibration from the Speed page's link). On: one typed pair for every "
                   "engine."),
        )
        memory_eff, compute_eff = DEFAULT_MEMORY_EFFICIENCY, DEFAULT_COMPUTE_EFFICIENCY
        if typed_efficiency:
            memory_eff = url_widgets.number(_("Decode bandwidth efficiency"), key="sim_mem_eff", min_value=0.0,
                                            max_value=1.0, value=DEFAULT_MEMORY_EFFICIENCY, step=0.05,
                                            help=_("Share of peak bandwidth reached while decoding."))
            compute_eff = url_widgets.number(_("Prefill compute efficiency (MFU)"), key="sim_mfu", min_value=0.0,
                                             max_value=1.0, value=DEFAULT_COMPUTE_EFFICIENCY, step=0.05,
                                             help=_("An assumption; Pope et al. (MLSys 2023) report {share} for "
                                                    "large-batch prefill of PaLM 540B on TPU v4.").format(
                                                 share=percent(POPE_PREFILL_MFU)))
        changed_knobs += changed_input(_("Type the step-time efficiencies"), typed_efficiency, False)
        if typed_efficiency:
            changed_knobs += changed_input(_("Decode bandwidth efficiency"), memory_eff, DEFAULT_MEMORY_EFFICIENCY)
            changed_knobs += changed_input(_("Prefill compute efficiency (MFU)"), compute_eff,
                                           DEFAULT_COMPUTE_EFFICIENCY)
        for engine in simulated:
            fields = engine.scheduler_policy.model_fields
            values = {}
            with st.container(border=True):
                st.markdown(f"**{engine.simulator_label}**")
                for knob in engine.simulator_knobs:
                    default = fields[knob.field].default
                    if knob.default_for_gpu is not None and gpu is not None:
                        default = knob.default_for_gpu(gpu.memory_bytes, gpu.id)
                    if isinstance(default, bool):
                        # an inverted knob's toggle shows the opposite of its field (Radix prefix cache on:
                        # disable_radix_cache False); the caption says what the toggle shows
                        shown_default = default != knob.invert
                        shown = url_widgets.toggle(_(knob.label), key=knob.key, value=shown_default,
                                                   help=knob.help_text())
                        values[knob.field] = shown != knob.invert
                    else:
                        shown_default = default
                        shown = values[knob.field] = url_widgets.number(_(knob.label), key=knob.key,
                                                                        min_value=knob.min_value, value=default,
                                                                        help=knob.help_text())
                    changed_knobs += changed_input(f"{engine.simulator_label} {_(knob.label)}", shown,
                                                   shown_default)
            policies.append((engine.scheduler_policy, values))
        if "static" in engines:
            static_name, batch_label = _("Static batching baseline"), _("Batch size")
            with st.container(border=True):
                st.markdown(f"**{static_name}**")
                static_batch = url_widgets.number(batch_label, key="sim_static_batch", min_value=1, value=8)
                changed_knobs += changed_input(f"{static_name} {batch_label}", static_batch, 8)
                policies.append((StaticBatchPolicy, dict(batch_size=static_batch)))
    show_changed(changed_knobs)

with workload_col:
    st.subheader(_("Workload"))
    arrival = url_widgets.segmented(_("Arrivals"), ["poisson", "closed"], key="sim_arrival", default="poisson",
                                    labels=lambda kind: _(ARRIVAL_LABELS[kind]),
                                    help=_("Poisson: open loop, independent users at a mean rate. Closed loop: N "
                                    "clients that wait for each answer (a slow server slows them down too)."))
    if arrival == "closed":
        n_clients = url_widgets.number(_("Clients"), key="sim_clients", min_value=0, value=16, step=1)
        think_s = url_widgets.number(_("Mean think time (s)"), key="sim_think", min_value=0.0, value=2.0)
        rate = url_widgets.number(_("Arrival rate for the sweep (requests/s)"), key="sim_rate", min_value=0.0,
                                  value=1.0)
    else:
        rate = url_widgets.number(_("Arrival rate (requests/s)"), key="sim_rate", min_value=0.0, value=1.0)
        n_clients, think_s = 16, 0.0
    url_widgets.note_unused(
        ("sim_clients", "sim_think"),
        _("clients and think time describe closed-loop arrivals, and this link's arrivals are open loop (Poisson), "
          "at the arrival rate. Pick closed loop under Arrivals to use them."),
        unused=arrival != "closed",
    )
    # The inputs that matter first; the lengths' shape, the CSV, prefix, cancellation, SLOs and seed fold away
    # (drawn in every run, so each keeps its link value): unfolded they put the first result three screens down at
    # 1024 px.
    lengths: dict[str, LengthDistribution] = {}
    length_words = {
        "prompt": (_("Prompt length"), _("Prompt tokens (value or median)"), _("Prompt min tokens"),
                   _("Prompt max tokens"), _("Prompt spread (lognormal sigma)")),
        "output": (_("Output length"), _("Output tokens (value or median)"), _("Output min tokens"),
                   _("Output max tokens"), _("Output spread (lognormal sigma)")),
    }
    length_defaults = {"prompt": 512, "output": 256}
    typicals = {name: url_widgets.number(length_words[name][1], key=f"sim_{name}", min_value=0, value=default_value,
                                         step=64)
                for name, default_value in length_defaults.items()}
    more_workload = st.expander(_("More workload settings"))
    kind_labels = {"fixed": _("fixed"), "uniform": _("uniform"), "lognormal": "lognormal"}
    with more_workload:
        n_requests = url_widgets.number(_("Requests"), key="sim_n", min_value=0, max_value=MAX_PAGE_REQUESTS,
                                        value=DEFAULT_REQUESTS, step=100)
        changed = changed_input(_("Requests"), n_requests, DEFAULT_REQUESTS)  # the folded inputs not at defaults
        for name, default_value in length_defaults.items():
            length_label, typical_label, min_label, max_label, sigma_label = length_words[name]
            typical = typicals[name]
            kind = url_widgets.segmented(length_label, ["fixed", "uniform", "lognormal"],
                                         key=f"sim_{name}_kind", default="lognormal", labels=kind_labels)
            low, high, sigma = 1, max(1, typical), 0.8
            changed += changed_input(length_label, kind_labels[kind], kind_labels["lognormal"])
            if kind == "uniform":
                low = url_widgets.number(min_label, key=f"sim_{name}_min", min_value=0, value=1)
                high = url_widgets.number(max_label, key=f"sim_{name}_max", min_value=0,
                                          value=2 * default_value)
                changed += changed_input(min_label, low, 1) + changed_input(max_label, high, 2 * default_value)
            elif kind == "lognormal":
                sigma = url_widgets.number(sigma_label, key=f"sim_{name}_sigma",
                                           min_value=0.0, max_value=4.0, value=0.8, step=0.1)
                changed += changed_input(sigma_label, sigma, 0.8)
            lengths[name] = (kind, typical, low, high, sigma)
        csv_text = st.text_area(
            _("Or paste a CSV of lengths (prompt_tokens,output_tokens) — not kept in the link"), key="sim_csv_text",
            height=80, placeholder=_("prompt_tokens,output_tokens\n812,120\n95,640"),
        )
        uploaded = uploads.file_uploader(_("…or upload it"), type=["csv"], key="sim_csv_file")
        prefix_label = _("Shared prefix (% of each prompt, token-identical)")
        prefix_pct = url_widgets.number(prefix_label, key="sim_prefix", min_value=0, max_value=100, value=0, step=5)
        warm_label = _("Prefix already cached at start")
        prefix_warm = url_widgets.toggle(warm_label, key="sim_warm", value=True)
        cancel_label = _("Cancel requests without a first token after (s; 0 = never)")
        cancel_s = url_widgets.number(cancel_label, key="sim_cancel", min_value=0.0, value=0.0)
        ttft_label = _("SLO: time to first token (s)")
        ttft_slo = url_widgets.number(ttft_label, key="sim_slo_ttft", min_value=0.0, value=2.0)
        itl_label = _("SLO: mean inter-token latency (ms)")
        itl_slo_ms = url_widgets.number(itl_label, key="sim_slo_itl", min_value=0.0, value=100.0)
        seed_label = _("Random seed")
        seed = url_widgets.number(seed_label, key="sim_seed", min_value=0, max_value=2**31 - 1, value=0, step=1)
    if csv_text.strip() or uploaded is not None:
        changed.append(_("lengths from a CSV"))
    for label, value, default in ((prefix_label, prefix_pct, 0), (warm_label, prefix_warm, True),
                                  (cancel_label, cancel_s, 0.0), (ttft_label, ttft_slo, 2.0),
                                  (itl_label, itl_slo_ms, 100.0), (seed_label, seed, 0)):
        changed += changed_input(label, value, default)
    show_changed(changed)

url_widgets.show_url_notes()

if not engines:
    st.info(_("Pick at least one engine to simulate."))
    end_run()

try:
    upload = uploaded.getvalue() if uploaded is not None else None
    pairs = parse_length_pairs_csv(upload if upload is not None else csv_text) if (upload or csv_text.strip()) else None
    if upload is not None and not upload.strip():
        raise ServewiseInputError(_("the uploaded length CSV is empty: it needs a header and at least one row"))
    length_models = {
        name: checked(LengthDistribution, f"{name} length", kind=kind, value=typical, median=max(typical, 1),
                      low=low, high=high, sigma=sigma)
        for name, (kind, typical, low, high, sigma) in lengths.items()
    }
    workload = WorkloadSpec.checked(
        n_requests=n_requests, arrival=arrival, rate_per_s=rate, n_clients=n_clients, think_time_s=think_s,
        prompt=length_models["prompt"], output=length_models["output"], length_pairs=pairs,
        shared_prefix_fraction=prefix_pct / 100, prefix_warm=prefix_warm,
        cancel_after_s=cancel_s if cancel_s > 0 else None, seed=seed,
    )
    cost = checked(
        StepCostModel, "machine",
        memory_bandwidth_bytes_per_s=bandwidth_gbs * 1e9, flops_per_s=tflops * 1e12,
        weights_bytes=weights_gb * 1e9, active_params=params_b * 1e9, kv_bytes_per_token=kv_kib * 1024,
        memory_efficiency=memory_eff, compute_efficiency=compute_eff,
    )
    slo = checked(Slo, "SLO", ttft_s=ttft_slo, itl_s=itl_slo_ms / 1000)
    built = tuple(checked(cls, cls.model_fields["engine"].default, **knobs) for cls, knobs in policies)
    step_costs = ()
    # A catalog model brings its real shape (MoE experts apart, attention layers); typed figures are a dense read
    # of the typed weights.
    shape = from_memory_model.shape if from_memory_model is not None else ModelShape(
        weights_read_bytes=cost.weights_bytes, params_active=cost.active_params, n_layers=1,
        attention_q_dim=1, kv_bytes_per_token=cost.kv_bytes_per_token)
    accelerator = Accelerator(hardware_class=hardware_class, flops_per_s=cost.flops_per_s,
                              memory_bandwidth_bytes_per_s=cost.memory_bandwidth_bytes_per_s)
    if typed_efficiency:
        typed = cost if from_memory_model is None else step_cost_model(shape, accelerator,
                                                                        unfitted_params(memory_eff, compute_eff))
        costs = tuple(typed for _ in built)
    else:
        calibration = link_calibration()
        step_costs = engine_step_costs(tuple(p.engine for p in built), shape, accelerator, calibration)
        costs = tuple(c.cost for c in step_costs)
    results, comparison, distributions, timeline = run_engines(
        workload, built, costs, kv_tokens, slo
    )
except ServewiseInputError as exc:
    st.error(_("Cannot simulate: {why}").format(why=literal(str(exc))), icon=":material/error:")
    end_run()

st.header(_("Side by side on the same workload"))
if workload.length_pairs:
    st.caption(_("Lengths sampled from {rows} CSV rows.").format(rows=number(len(workload.length_pairs))))
# A Markdown table: read, not sorted, and on screen without the browser loading the dataframe grid first (the
# latency distributions below stay a dataframe). Engines as columns: one row per engine did not fit the page.
# The elements below depend on the run's inputs only: built once per state and language, replayed on later runs.
run_state = state_key(workload, built, costs, kv_tokens, slo)
drawn_per_input_state(f"simulator comparison {run_state}", lambda: st.markdown(
    frame_markdown(engines_as_columns(comparison), index=True, literal=True)))
st.caption(
    _("Goodput counts finished requests with TTFT ≤ {ttft}\u00a0s and mean inter-token latency ≤ {itl}\u00a0ms, per "
      "second of the run. Step times are roofline estimates.").format(
        ttft=compact(slo.ttft_s, 3), itl=compact(slo.itl_s * 1000, 1))
)
if step_costs:
    st.markdown("\n".join(f"- {line}" for line in step_basis_lines(step_costs)))
    st.caption(ttft_models_line())
else:
    st.caption(_("Step times from the typed efficiencies (the same for every engine), not the fitted speed model."))
# The distributions grid, the timelines and the sweep follow once the comparison is on screen (their scripts
# delayed it on a shared link).
deferred.rest_follows()

st.subheader(_("Latency distributions"))
drawn_per_input_state(f"simulator distributions {run_state}", lambda: st.dataframe(
    localized_frame(distributions), hide_index=True, width="stretch", column_config=pin_first_column(distributions)))
st.download_button(
    _("Download every simulated request (CSV)"),
    data=lambda: records_csv(results),
    file_name="servewise-simulation.csv",
    mime="text/csv",
    on_click="ignore",
    icon=":material/download:",
    key="sim_download",
)

st.subheader(_("Queue, running sequences and KV over time"))
drawn_per_input_state(f"simulator timeline {run_state}",
                      lambda: st.plotly_chart(timeline, width="stretch", key="sim_chart_timeline"))
st.caption(_("Each point is the maximum over its slice of the run, so short peaks stay visible."))

st.subheader(_("What the knobs did"))
# One engine under another: in a column each (a third of the page at 1024 px) the notes ran a word per line and
# split knob names such as gpu_memory_utilization mid-word.
for result in results:
    st.markdown(f"**{engine_label(result.engine)}**")
    st.markdown("\n".join(f"- {note.message}" for note in result.notes if note.code != "estimate"))

if workload.arrival == "closed":
    st.subheader(_("What the closed loop hides"))
    twins = run_open_twins(workload, built, costs, kv_tokens, slo)
    st.dataframe(localized_frame(twins), hide_index=True, width="stretch", column_config=pin_first_column(twins))
    st.caption(
        _("{clients} clients that wait for each answer can never queue more than {clients} requests, and they send "
          "less when the server slows down. The same mean rate from independent users (Poisson arrivals) shows the "
          "queue that external demand would build.").format(clients=workload.n_clients)
    )

with st.expander(_("What the simulation assumes (and leaves out)"), icon=":material/info:"):
    st.markdown(
        _("- **Step time** is the larger of a memory bound (weights once per step plus the KV the batch reads, "
        "over bandwidth × decode efficiency) and a compute bound (2 × active parameters FLOPs per token, over "
        "TFLOPS × prefill efficiency). Attention FLOPs, kernel launch gaps and sampling are left out, so long "
        "prompts and small models look faster than they are.\n"
        "- **Inter-token latency** is each request's mean gap after its first token (what vLLM's benchmark "
        "calls TPOT); single long stalls are averaged in.\n"
        "- **vLLM**: running requests first, then waiting ones within the token budget; when KV runs out the "
        "newest request is preempted and recomputed, and nothing new is admitted in that step.\n"
        "- **SGLang**: admission keeps 0.7 of each running request's remaining output free (the engine lowers "
        "this ratio over time; here it stays fixed); prefill batches run alone unless mixed chunks are on.\n"
        "- **llama-server / Ollama**: each slot owns its share of the context; the unified KV of "
        "llama-server's automatic `-np` mode is not modelled. Prompts of a slot's context or longer are "
        "refused; answers stop at the slot's context.\n"
        "- **Prefix cache**: the shared part of each prompt is token-identical across requests; cached "
        "prefixes are never evicted, and a shared copy counts against KV only while a running request uses it.\n"
        "- **Lengths are known** to the simulator; engines only see max_tokens, so real admission is "
        "more conservative or preempts more.")
    )

st.subheader(_("Where each engine saturates"))
rates = tuple(round(rate * factor, 4) for factor in SWEEP_FACTORS)
if rate <= 0:
    st.info(_("Set a positive arrival rate to sweep around it."))
else:
    sweep_workload = workload.model_copy(update={"n_requests": min(workload.n_requests, SWEEP_REQUESTS)})
    # A dozen simulations: computed off the script thread, so the tables above are final and every widget answers
    # at once; the charts replace the note when the sweep is done (ui/background.py).
    sweep_state = state_key(sweep_workload, built, costs, kv_tokens, slo, rates)
    sweep = section_result(sweep_state, lambda: run_sweep(sweep_workload, built, costs, kv_tokens, slo, rates))
    if not sweep.done():
        wait_for_section(sweep, _("Sweeping arrival rates…"))
        end_run()
    try:
        goodput_fig, ttft_fig = sweep.result()
    except ServewiseInputError as exc:
        st.error(_("Cannot sweep: {why}").format(why=literal(str(exc))), icon=":material/error:")
    else:
        def draw_sweep() -> None:
            left, right = st.columns(2)
            left.plotly_chart(goodput_fig, width="stretch", key="sim_chart_sweep_goodput")
            right.plotly_chart(ttft_fig, width="stretch", key="sim_chart_sweep_ttft")

        drawn_per_input_state(f"simulator sweep {sweep_state}", draw_sweep)
        st.caption(
            _("Open-loop Poisson arrivals at {rates}\u00a0requests/s, {requests} requests per point, same lengths as "
              "above. Goodput flattening while p99 TTFT climbs marks where the engine saturates.").format(
                rates="; ".join(compact(r, 4) for r in rates), requests=sweep_workload.n_requests)
        )
