"""How much memory one model needs on one machine under each engine, and how many sequences fit at once."""

import shlex

import streamlit as st

from calculators.checks.embedding_memory import embedding_server_memory
from calculators.engines import ENGINE_IDS, ENGINES, display_name
from calculators.hardware.compat import HardwareChoice, format_verdict, scheme_column
from calculators.i18n import _, ngettext
from calculators.launch.render import render_launch_command
from calculators.memory.capacity import context_grid, most_sequences
from calculators.memory.compare import (
    ComparisonInputs,
    EngineNotApplicable,
    plan_without_speculation,
    valid_tensor_parallel_sizes,
    why_not_held,
    workload_settings,
)
from calculators.memory.plan import ComponentKind
from calculators.model.catalog import catalog_id_for_repo
from knowledge.loader import load_knowledge
from reports.formats_figures import STATUS_WORDS
from reports.memory_readouts import (
    RAW_BYTES_PER_ELEMENT,
    architecture_warnings,
    arithmetic_markdown,
    arithmetic_rows,
    engine_readout,
    export_data,
    export_json,
    export_markdown,
    human_bytes,
    offload_rows,
    plan_readout,
    replica_layout_text,
    speculation_rows,
)
from reports.names import namer
from reports.numbers import compact, number
from reports.speed_text import speed_readout_line, ttft_models_line, users_missed_target_line, users_readout_line
from reports.tables import markdown_table
from ui import deferred, url_widgets
from ui.command_text import show_command
from ui.downloads import in_reader_language
from ui.links import page_link
from ui.markdown_text import code_span, literal
from ui.markup import show_svg
from ui.memory_compute import analyse, figures, speed_readouts, users_readouts
from ui.memory_inputs import (
    read_draft_model,
    read_engine_knobs,
    read_launch_command,
    read_machine,
    read_model,
    read_weights,
    read_workload,
)
from ui.reconcile_section import render_reconcile_section
from ui.run_control import end_run
from ui.speed_link import CALIBRATION_PARAM, link_calibration
from ui.state_cache import drawn_per_input_state, state_key

CURVE_POINTS = 6
CURVE_SEQUENCES_LIMIT = 256
SEQUENCES_LIMIT = 4096

kb = load_knowledge()
name = namer(kb)
st.title(_("Memory & capacity"))
st.caption(_(
    "One model, one machine, every engine under its own settings. All figures are **estimates** from each "
    "engine's published allocation rules; measure before you commit. GiB = 2^30\u00a0bytes."
))

inputs_box = st.container(border=True)
# The machine column a little wider: at 1024 px a third of the box cut the GPU's name ('NVIDIA A100 SXM4 8').
model_col, machine_col, workload_col = inputs_box.columns([1, 1.4, 1])
with model_col:
    st.markdown(_("**Model**"))
    model = read_model(kb)
    weights = read_weights(kb, model.arch)
with machine_col:
    st.markdown(_("**Machine**"))
    machine_choice = read_machine(kb)
with workload_col:
    st.markdown(_("**Workload**"))
    workload = read_workload()

st.markdown(_("**Engine settings** — the workload fills each engine's context and concurrency knobs; "
              "these change the rest."))
pasted = read_launch_command(kb)
draft = read_draft_model(kb, weights) if pasted is not None else None
overrides: dict[str, dict] = {}
# Rows of three: five expanders in one row split "Ollama" and "SGLang" over two lines at 1024 px.
ENGINES_PER_ROW = 3
engine_columns = [column for start in range(0, len(ENGINE_IDS), ENGINES_PER_ROW)
                  for column in st.columns(ENGINES_PER_ROW)][:len(ENGINE_IDS)]
for engine, column in zip(ENGINE_IDS, engine_columns, strict=True):
    with column, st.expander(name(engine)):
        overrides[engine] = read_engine_knobs(kb, engine)
        if not isinstance(workload, str):
            try:
                mapped = workload_settings(engine, workload)
            except EngineNotApplicable as exc:
                st.caption(str(exc))
            else:
                st.caption(_("From the workload:") + " " + ", ".join(f"`{k}={v}`" for k, v in mapped.items()))
url_widgets.show_url_notes(exclude_prefix="mem_log_")

if pasted is not None:
    if pasted.message:
        st.warning(literal(pasted.message), icon=":material/terminal:")
    if pasted.engine and pasted.overrides:
        overrides[pasted.engine] = {**overrides.get(pasted.engine, {}), **pasted.overrides}
        shown = ", ".join(code_span(f"{k}={v}") for k, v in pasted.overrides.items())
        st.success(_("Your command set these {engine} settings (they win over the workload and the boxes above): "
                     "{shown}").format(engine=name(pasted.engine), shown=shown), icon=":material/terminal:")
    if pasted.unknown_flags:
        st.warning(_("Flags servewise did not understand (not applied):") + " "
                   + " ".join(code_span(flag) for flag in pasted.unknown_flags))
    if pasted.ignored:
        st.caption(_("Understood but no effect on memory:") + " " + ", ".join(pasted.ignored))
    if pasted.model:
        # the model as typed, in a code span it cannot close (a backtick in it drew what followed as Markdown)
        served = (_("Your command serves {model}: catalog model {name}.").format(
            model=code_span(pasted.model), name=name(pasted.catalog_match)) if pasted.catalog_match
            else _("Your command serves {model}.").format(model=code_span(pasted.model)))
        st.caption(served + " " + _("The model planned below is the one chosen under Model."))

draft_error = draft.error if draft is not None else None
for problem in (model.error, weights.error, machine_choice.error, workload if isinstance(workload, str) else None,
                draft_error):
    if problem:
        st.error(problem, icon=":material/error:")
for note in model.notes + machine_choice.notes:
    st.caption(note)
if model.arch is None or machine_choice.machine is None or isinstance(workload, str):
    end_run()
arch, machine = model.arch, machine_choice.machine
if weights.bytes is None:
    st.info(_("Weight bytes are unknown: vLLM and SGLang cannot size their KV budget without them. "
              "Give an exact file size (Weights from: file-size)."))

# ---- every engine side by side ----------------------------------------------------------------------------------
inputs = ComparisonInputs(arch, machine, weights.bytes, overrides, draft.draft if draft is not None else None)
# The capacity chart passes through the workload's own context, so its value at the "your context" mark is the
# Capacity table's figure (a geometric grid alone drew a line between two other contexts there).
contexts = tuple(context_grid(arch.max_context_tokens or 131_072, CURVE_POINTS, through=workload.context_tokens))
# Below the inputs, every section is determined by this state and the reader's language, except the embedding
# server's inputs, the downloads and the log check (widgets, drawn live): each is drawn once per state and replayed
# on later runs (ui/state_cache.py), as the plans behind them are computed once per state (ui/memory_compute.py).
page_state = state_key(inputs.arch, inputs.machine, inputs.weights_bytes, inputs.overrides, inputs.draft, workload,
                       weights, model.model_ref, machine_choice.label)


def show_comparison() -> tuple[list, list, str]:
    """The bars and the table of every engine's plan; the plans, capacities and capacity chart for the sections
    below (kept with the recorded elements: never mutated)."""
    rows, capacities, _curves = analyse(inputs, workload, SEQUENCES_LIMIT, contexts, CURVE_SEQUENCES_LIMIT)
    bars_svg, capacity_svg = figures(inputs, workload, SEQUENCES_LIMIT, contexts, CURVE_SEQUENCES_LIMIT)
    st.header(_("Every engine on this machine"))
    st.caption(_("{machine}: per-GPU memory under each engine for {sequences} sequences × {tokens}\u00a0tokens ({kv} "
                 "KV cache). The black mark is the memory the engine can use on one device.").format(
        machine=machine_choice.label, sequences=number(workload.sequences), tokens=number(workload.context_tokens),
        kv=workload.kv_cache_type))
    # Inline SVG (reports/svg_charts.py), not plotly: the first picture of a shared link appears without the browser
    # fetching and compiling plotly's 4.7 MB script first. Hovering a bar segment shows its value.
    show_svg(bars_svg)
    summary = []
    # (engine, reason): under the table, a paragraph-long cell made rows ~500 px tall
    why_not: list[tuple[str, str]] = []
    for row in rows:
        plan = row.plan
        per_gpu = {kind: sum(c.bytes for c in plan.components if c.kind in kinds) if plan else 0
                   for kind, kinds in (("weights", (ComponentKind.WEIGHTS,)),
                                       ("kv", (ComponentKind.KV_CACHE, ComponentKind.RECURRENT_STATE)))}
        summary.append({
            _("engine"): name(row.engine),
            _("holds the workload"): (_("refuses to start") if plan.refusal else (_("yes") if row.holds else _("no")))
            if plan else "—",
            _("weights / GPU"): human_bytes(per_gpu["weights"]) if plan else "—",
            _("KV cache / GPU"): human_bytes(per_gpu["kv"]) if plan else "—",
        })
        why_not.append((name(row.engine), row.not_applicable or row.error
                        or (why_not_held(row.engine, plan, workload, machine) if plan else "") or ""))
    column = scheme_column(kb.formats, weights.scheme) if weights.scheme else None
    if column is not None:
        # The formats matrix read for this GPU, the same answer the Formats page and the wizard give.
        choice = HardwareChoice(gpu_id=machine.gpu_id)
        matrix_column = kb.formats.column(column)
        column_name = _(matrix_column.name) if matrix_column is not None else column  # BF16/FP16/FP32, not 'float'
        for row, entry in zip(rows, summary, strict=True):
            verdict = format_verdict(kb, row.engine, column, choice)
            entry[_("loads {column} here").format(column=column_name)] = _(STATUS_WORDS[verdict.status])
        for engine_id in ENGINE_IDS:
            verdict = format_verdict(kb, engine_id, column, choice)
            if verdict.status == "not-supported" and verdict.refused_by is not None:
                st.warning(
                    _("{engine} cannot load {column} weights on {gpu}: {note} (source: {source} at {version})").format(
                        engine=display_name(engine_id),
                        column=column_name, gpu=name(machine.gpu_id), note=verdict.note, source=verdict.source,
                        version=verdict.verified.version,
                    ),
                    icon=":material/block:",
                )
    st.markdown(markdown_table(summary))
    reasons = [f"- {engine}: {reason}" for engine, reason in why_not if reason]  # Markdown, as the cell was
    if reasons:
        st.markdown(_("Why not:") + "\n\n" + "\n".join(reasons))
    if machine.n_devices > 1:
        st.caption(_("With several GPUs, llama.cpp splits layers over all of them (Ollama only when the model does not "
                     "fit one); vLLM and SGLang use one GPU per instance unless you set tensor/pipeline parallelism in "
                     "their settings. The bars show the busiest GPU."))
    return rows, capacities, capacity_svg


rows, capacities, capacity_svg = drawn_per_input_state(f"memory comparison {page_state}", show_comparison)

# A shared link's first run ends here, with the bars and their table; the rest of the page follows (ui/deferred.py).
deferred.rest_follows()

def show_arithmetic_and_capacity() -> None:
    """The brief's arithmetic for this model and the capacity of every engine, with its chart."""
    # ---- the brief's arithmetic -------------------------------------------------------------------------------------
    st.header(_("The arithmetic, step by step"))
    trained = (_("{n}\u00a0tokens").format(n=number(arch.max_context_tokens)) if arch.max_context_tokens
               else _("unknown"))
    st.markdown(_("**{model}** · {layers} layers · trained context {trained} · weights {weights}").format(
        model=arch.name, layers=arch.n_layers, trained=trained,
        weights=human_bytes(weights.bytes) if weights.bytes else _("unknown"))
        + (f" ({weights.basis})" if weights.basis else ""))
    st.markdown(markdown_table(arithmetic_rows(arch, RAW_BYTES_PER_ELEMENT[workload.kv_cache_type])))
    st.markdown(arithmetic_markdown(arch, workload))
    for warning in architecture_warnings(arch):
        st.warning(warning, icon=":material/layers:")
    for approximation in weights.approximations:
        st.caption(_("Weights: {note}").format(note=approximation))

    # ---- capacity ----------------------------------------------------------------------------------------------------
    st.header(_("Capacity"))
    longest = _("longest context for {n} sequences (tokens)").format(n=number(workload.sequences))
    most = _("most sequences at {n}\u00a0tokens").format(n=number(workload.context_tokens))
    st.markdown(markdown_table([{
        _("engine"): name(c.engine),
        longest: "—" if c.reason else number(c.max_context_tokens),
        most: "—" if c.reason else number(c.max_sequences),
        _("note"): c.reason or "",
    } for c in capacities]))
    st.caption(_("Longest context in whole 256-token steps (or the trained context), searched over each engine's own "
                 "plan with your other settings kept, up to the model's trained context. 0 = not even one fits."))
    show_svg(capacity_svg)
    st.caption(_("Capped at {n} sequences. Memory capacity only: it says nothing about the speed at which that many "
                 "sequences decode.").format(n=CURVE_SEQUENCES_LIMIT))


drawn_per_input_state(f"memory arithmetic {page_state}", show_arithmetic_and_capacity)

# ---- embedding server ----------------------------------------------------------------------------------------------
if arch.is_embedding_model:
    st.header(_("Embedding server"))
    st.markdown(_(
        "An embedding request is one forward pass over its input: nothing is generated, so no KV cache grows "
        "with a conversation. What the server needs is the weights plus one batch's activations. The estimate "
        "below bounds those by the largest tensors one layer holds per token (servewise's estimate, not an "
        "engine's figure; vLLM still reserves its --gpu-memory-utilization share whatever the model needs)."
    ))
    emb_catalog_id = catalog_id_for_repo(kb, model.model_ref)
    catalog_entry = next((m for m in kb.models.models if m.id == emb_catalog_id), None)
    mlp_default = catalog_entry.config.get("intermediate_size") if catalog_entry else None
    emb_batch_col, emb_mlp_col = st.columns(2)
    with emb_batch_col:
        emb_batch = url_widgets.number(_("Tokens per batch"), key="mem_emb_batch", min_value=1,
                                       max_value=10_000_000, value=8192)
    with emb_mlp_col:
        emb_mlp = url_widgets.number(_("MLP width (config.json intermediate_size)"), key="mem_emb_mlp", min_value=1,
                                     max_value=10_000_000, value=mlp_default)
    if emb_mlp is None or weights.bytes is None:
        st.info(_("Give the MLP width (and the weights) to estimate the embedding server's memory."),
                icon=":material/info:")
    else:
        server = embedding_server_memory(arch, weights.bytes, int(emb_mlp), int(emb_batch))
        weights_metric, activations_metric, total_metric = st.columns(3)
        weights_metric.metric(_("Weights"), human_bytes(server.weights_bytes))
        activations_metric.metric(_("Activations, one batch"), human_bytes(server.activation_bytes),
                                  help=_("{per}\u00a0bytes per token × {tokens}\u00a0tokens").format(
                                      per=number(server.activation_bytes_per_token),
                                      tokens=number(server.batch_tokens)))
        total_metric.metric(_("Total (no KV cache)"), human_bytes(server.total_bytes))
        page_link(
            "pages/compatibility.py",
            label=_("Will the engine's vectors match your index?"),
            icon=":material/handyman:",
            query_params={"cmp_emb_model": catalog_entry.id} if catalog_entry and catalog_entry.embedding else None,
        )

# ---- users at a latency target ---------------------------------------------------------------------------------
st.header(_("How many users at a latency target"))
# A shared link's calibration (from the Speed page) sets the step times of the users readout and the speed below.
calibration = link_calibration()  # live: a link's unreadable calibration draws a note here


def show_readouts_and_engines() -> dict:
    """Users at a latency target, speed, each engine's readout and command, several GPUs, offload and the
    warnings; the plan's export data (with the commands drawn here)."""
    readouts = users_readouts(inputs, workload, calibration)
    if readouts:
        first = readouts[0]
        st.caption(_(
            "One instance of each plan above, simulated with {prompt}-token prompts and {output}-token answers, users "
            "pausing {think}\u00a0s between requests, p{ttft_pct} time to first token ≤ {ttft}\u00a0s and p{itl_pct} "
            "inter-token latency ≤ {itl}\u00a0ms. An estimate from the scheduler simulation on a roofline of the GPU; "
            "the capacity planner searches for the cheapest configuration at your own load and target."
        ).format(prompt=number(first.prompt_tokens), output=number(first.output_tokens),
            think=compact(first.think_time_s, 3),
                 ttft_pct=compact(first.slo.ttft_percentile, 2), ttft=compact(first.slo.ttft_s, 3),
                 itl_pct=compact(first.slo.itl_percentile, 2), itl=compact(first.slo.itl_s * 1000, 3)))
        missed = users_missed_target_line(readouts)
        if missed:
            st.markdown(missed)
        st.markdown("\n".join(f"- {users_readout_line(ENGINES[r.engine].display_name, r)}" for r in readouts))
        planner_query = {key: value for key, value in (("plan_model", catalog_id_for_repo(kb, model.model_ref)),
                                                       ("plan_gpus", machine.gpu_id)) if value}
        page_link("pages/planner.py", label=_("Plan the cheapest configuration for a load in the capacity planner"),
                  icon=":material/price_check:", query_params=planner_query)

    # ---- speed ----------------------------------------------------------------------------------------------------
    st.header(_("Speed"))
    speeds = speed_readouts(inputs, workload, calibration)
    if speeds:
        st.caption(_(
            "Decode and first-token speed of each plan above from servewise's speed model (fitted to public "
            "measurements per engine and hardware class; your calibration where the link carries one). In "
            "brackets: the 10th-90th percentile band of the fit's leave-one-out errors. Calibrate with your own "
            "benchmark run on the Speed page."
        ))
        st.markdown("\n".join(f"- {speed_readout_line(ENGINES[engine].display_name, estimate)}"
                               for engine, estimate in speeds))
        st.caption(ttft_models_line())
        page_link("pages/speed.py", label=_("Speed estimate and calibration"), icon=":material/speed:",
                  query_params={CALIBRATION_PARAM: st.query_params[CALIBRATION_PARAM]} if calibration is not None
                  else None)

    # ---- each engine in its own words --------------------------------------------------------------------------------
    st.header(_("Each engine in its own words"))
    commands: dict[str, str] = {}
    for row, tab in zip(rows, st.tabs([name(e) for e in ENGINE_IDS]), strict=True):
        with tab:
            if row.plan is None:
                st.info(row.not_applicable or row.error, icon=":material/block:")
                continue
            plan = row.plan
            if plan.refusal:
                st.error(_("Would refuse to start: {why}").format(why=plan.refusal), icon=":material/dangerous:")
            st.markdown("\n".join(f"- {line}" for line in engine_readout(row)))
            plain = plan_without_speculation(row.engine, arch, machine, weights.bytes, row.settings, workload)
            if plain is not None:
                st.markdown("**" + _("Speculative decoding: this run with its drafter and without it") + "**")
                st.markdown(markdown_table(speculation_rows(plan, plain)))
                st.markdown("\n".join("- " + _("without the drafter: {line}").format(line=line)
                                       for line in plan_readout(plain)[:3]))
            for note in plan.notes:
                st.caption(f":material/info: {note.message}")
            rendered = render_launch_command(row.engine, row.settings,
                                             ENGINES[row.engine].model_file or model.model_ref)
            env = " ".join(f"{k}={shlex.quote(v)}" for k, v in rendered.env.items())
            commands[row.engine] = (env + " " if env else "") + shlex.join(rendered.words)
            show_command(commands[row.engine])
            for remark in rendered.remarks:
                st.caption(remark)

    # ---- multi-GPU ---------------------------------------------------------------------------------------------------
    st.header(_("Several GPUs"))
    degrees = valid_tensor_parallel_sizes(arch, max(machine.n_devices, 8))
    st.markdown(_("Tensor-parallel degrees that split this model's {heads} attention heads evenly: **{degrees}** "
                  "(vLLM and SGLang refuse others).").format(heads=arch.n_heads, degrees=", ".join(map(str, degrees))))
    replicas_engine = next((e for e in ENGINES.values() if e.replica_study_key), None)
    replicas_row = next((r for r in rows if replicas_engine and r.engine == replicas_engine.id), None)
    if machine.n_devices > 1 and replicas_row is not None and replicas_row.plan is not None:
        options = []
        tp_key, study_engine = replicas_engine.replica_study_key, replicas_engine.display_name
        for tp in [d for d in degrees if machine.n_devices % d == 0]:
            replicas = machine.n_devices // tp
            per_tp = ComparisonInputs(arch, machine, weights.bytes,
                                      {**overrides, replicas_row.engine: {**overrides.get(replicas_row.engine, {}),
                                                                          tp_key: tp}})
            per_replica = most_sequences(per_tp, replicas_row.engine, workload, SEQUENCES_LIMIT) or 0
            options.append({
                _("layout"): replica_layout_text(replicas, tp),
                _("weights per GPU"): human_bytes(weights.bytes / tp) if weights.bytes else _("unknown"),
                _("sequences per replica ({engine})").format(engine=study_engine): per_replica,
                _("sequences in all"): per_replica * replicas,
            })
        st.markdown(markdown_table(options))
        st.caption(_("Replicas need the whole model plus working memory on each card; TP splits one instance. "
                     "Replicas on one host still share its failure: losing the host loses them all. Without NVLink, "
                     "pipeline parallelism (-pp) moves less data between cards than TP. More cards do not multiply "
                     "throughput by themselves."))
    else:
        st.caption(_("Pick more than one GPU to compare replicas with tensor/pipeline parallelism."))

    # ---- offload -----------------------------------------------------------------------------------------------------
    st.header(_("Offload to host RAM (llama.cpp, Ollama)"))
    offloaded = []
    for row in rows:
        if row.plan is not None and getattr(row.plan, "devices", None) is not None:
            # the GPUs the plan uses: Ollama keeps a model that fits one GPU on one ("on the GPUs" read for 2 cards)
            gpus = sum(1 for d in row.plan.devices if d.device != "host")
            st.markdown(ngettext("**{engine}**: `-ngl {ngl}` of {layers} layers on the GPU",
                                 "**{engine}**: `-ngl {ngl}` of {layers} layers on the GPUs", gpus).format(
                engine=name(row.engine), ngl=row.plan.n_gpu_layers, layers=arch.n_layers + 1))
            st.markdown(markdown_table(offload_rows(row)))
            offloaded += [name(row.engine) for d in row.plan.devices if d.device == "host" and d.repeating_layers]
    vram_speed = (_("this GPU's {n}\u00a0GB/s").format(n=number(machine.memory_bandwidth_bytes_per_s / 1e9))
                  if machine.memory_bandwidth_bytes_per_s else _("VRAM's hundreds or thousands of GB/s"))
    warning = _("Layers left in host RAM run at host-memory bandwidth (tens of GB/s) instead of {vram}: every "
                "generated token reads them, so a partly offloaded model decodes far slower.").format(vram=vram_speed)
    if offloaded:
        st.warning(_("{engines} keep layers in host RAM here.").format(engines=_(" and ").join(offloaded)) + " "
                   + warning, icon=":material/speed:")
    else:
        st.caption(ngettext("Every layer stays on the GPU here.", "Every layer stays on the GPUs here.",
                            machine.n_devices) + " " + warning)

    # ---- warnings ----------------------------------------------------------------------------------------------------
    st.header(_("Read before tuning"))
    st.markdown(_(
        "- **A memory fraction is not a compute limit.** vLLM's `gpu_memory_utilization` and SGLang's "
        "`mem_fraction_static` are different fractions of memory; neither caps GPU compute, and a high reservation "
        "can sit next to an idle model.\n"
        "- **A high concurrency cap is not capacity.** `max_num_seqs` / `max_running_requests` / `-np` above what the "
        "KV cache holds leads to preemption and recomputation (vLLM, SGLang) or to short per-slot contexts "
        "(llama.cpp).\n"
        "- **Concurrent requests share one copy of the weights**; only the KV cache grows with sequences."
    ))
    return export_data(arch.name, machine_choice.label, workload, weights.bytes, rows, capacities, commands)


calibration_param = st.query_params.get(CALIBRATION_PARAM)  # the Speed page link below carries it as it came
data = drawn_per_input_state(f"memory readouts {page_state} {calibration_param}", show_readouts_and_engines)

# ---- export --------------------------------------------------------------------------------------------------------
left, right = st.columns(2)
# Built when downloaded, not on every rerun: in the reader's language (Streamlit calls it in a later request).
left.download_button(_("Download the plan (Markdown)"), in_reader_language(export_markdown, data),
                     "servewise-memory-plan.md",
                     mime="text/markdown", icon=":material/description:", on_click="ignore")
right.download_button(_("Download the plan (JSON)"), lambda: export_json(data), "servewise-memory-plan.json",
                      mime="application/json", icon=":material/data_object:", on_click="ignore")

# ---- the engine's own accounting -------------------------------------------------------------------------------
render_reconcile_section(kb, key_prefix="mem_log")
url_widgets.show_url_notes(prefix="mem_log_")
