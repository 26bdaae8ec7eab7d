"""How fast will it decode and prefill, how sure is that, and how do you make it exact with your own run?"""

import json
from pathlib import Path

import streamlit as st

from calculators.engines import ENGINE_IDS, ENGINES, display_name
from calculators.errors import ServewiseInputError
from calculators.i18n import _, ngettext
from calculators.memory.compare import model_weights
from calculators.memory.kv import raw_kv_estimate
from calculators.model.catalog import architecture_from_catalog
from calculators.simulator.engines import policy_for_gpu
from calculators.simulator.policy import lone_prompt_steps
from calculators.speed.calibrate import calibrate
from calculators.speed.calibration import encode_profile
from calculators.speed.imports.read import read_benchmark
from calculators.speed.inputs import accelerator_of_gpu, model_shape
from calculators.speed.model import hardware_class_name
from calculators.speed.predict import decode_by_concurrency, estimate_speed, sweep_concurrencies
from knowledge import load_knowledge
from reports.names import namer, weight_scheme_namer
from reports.numbers import number, quantity
from reports.speed_figures import decode_charts_svg
from reports.speed_text import calibration_text, ledger_sections, speed_estimate_text
from ui import deferred, url_widgets
from ui.markdown_text import literal
from ui.markup import show_svg
from ui.run_control import end_run, rerun_app
from ui.speed_link import CALIBRATION_PARAM, link_calibration

LEDGER_FILE = Path(__file__).resolve().parents[1] / "bench" / "results" / "speed_accuracy.json"
#: URL parameter that carries a calibration profile in a shared link.

kb = load_knowledge()
st.title(_("Speed & calibration"))
st.caption(_(
    "Decode and prefill speed from bytes read, FLOPs and efficiencies fitted to public measurements. Every "
    "figure states its basis (default fit or your calibration) and a band from the fit's own errors; "
    "**estimates, not measurements** — the Operations page's benchmark plan is how to confirm them."
))

left, right = st.columns(2)
with left:
    speed_engines = [e for e in ENGINE_IDS if ENGINES[e].speed is not None]
    reference = next((i for i, e in enumerate(speed_engines) if ENGINES[e].simulator_reference), 0)
    engine = url_widgets.selectbox(_("Engine"), speed_engines, key="speed_engine", index=reference,
                                labels=namer(kb))
    gpu_ids = [g.id for g in kb.gpus.all_gpus]
    gpu_id = url_widgets.selectbox(_("Accelerator (catalog)"), gpu_ids, key="speed_gpu",
                                index=gpu_ids.index("h100-sxm-80gb"), labels=namer(kb))
    model_id = url_widgets.selectbox(_("Model (catalog)"), list(kb.models.ids), key="speed_model", labels=namer(kb),
                                     index=list(kb.models.ids).index("llama-3.1-8b"))
with right:
    schemes = kb.formats.weight_scheme_ids()
    scheme = url_widgets.selectbox(_("Weight precision / quantization"), schemes, key="speed_precision",
                                index=schemes.index("bf16"), labels=weight_scheme_namer(kb))
    concurrency = int(
        url_widgets.number(
            _("Concurrent sequences"), key="speed_concurrency", min_value=1, max_value=4096, value=32, step=1
        )
    )
    prompt_tokens = int(
        url_widgets.number(
            _("Prompt tokens (TTFT)"), key="speed_prompt", min_value=1, max_value=1_000_000, value=1024, step=1
        )
    )

url_widgets.show_url_notes("speed_")

calibration = link_calibration()

try:
    arch = architecture_from_catalog(model_id, kb)
    weights = model_weights(kb.formats, arch, scheme).bytes
    kv_per_token = raw_kv_estimate(arch, 1, 1, 2).bytes_per_token_unbounded_layers
    shape = model_shape(arch, weights, kv_per_token)
    hw = accelerator_of_gpu(kb.gpus.get(gpu_id))
    usable = (
        calibration
        if calibration and calibration.engine == engine and calibration.hardware_class == hw.hardware_class
        else None
    )
    if calibration and usable is None:
        st.info(_("The loaded calibration is for {engine} on {cls}; the default fit is used here.").format(
            engine=display_name(calibration.engine), cls=hardware_class_name(calibration.hardware_class)))
    policy = policy_for_gpu(engine, kb.gpus.get(gpu_id).memory_bytes, gpu_id)
    estimate = estimate_speed(
        shape, hw, engine, concurrency=concurrency, prompt_tokens=prompt_tokens, calibration=usable,
        prefill_steps=lone_prompt_steps(policy, prompt_tokens),  # an idle server holding the prompt
    )
except ServewiseInputError as exc:
    st.error(literal(str(exc)), icon=":material/error:")
    end_run()

st.subheader(_("Estimate"))
st.markdown(speed_estimate_text(estimate).replace("\n", "  \n"))

sweep = decode_by_concurrency(shape, hw, engine, sweep_concurrencies(concurrency),
                              context_tokens=estimate.context_tokens, calibration=usable)
for chart in decode_charts_svg(sweep, engine, concurrency):
    show_svg(chart)
st.caption(_(
    "Decode speed as more sequences generate at once, each holding {context} of KV cache; shaded: the estimate's "
    "band. Speed only: whether that many sequences fit in memory is the Memory & capacity page's answer."
).format(context=quantity(estimate.context_tokens, _("tokens"), 0)))

# A shared link's first run ends with the estimate and its pictures; calibration and the accuracy tables follow.
deferred.rest_follows()

st.subheader(_("Calibrate with your own run"))
st.caption(
    _(
        "Paste the output of vllm bench serve (JSON or console), sglang.bench_serving (JSONL or console), GuideLLM's "
        "report JSON, llama-bench (JSON or table), an Ollama response with eval_count/eval_duration, "
        "mlx_lm.benchmark or mlx_lm.generate --verbose. Lines servewise does not read are listed, never dropped."
    )
)
pasted = st.text_area(_("Benchmark output"), key="speed_bench_text", height=180)
kv_tokens = st.number_input(
    _("KV capacity in tokens from the start-up log (optional, serving runs)"),
    min_value=0,
    value=0,
    step=1024,
    key="speed_kv_tokens",
)
if pasted.strip():
    try:
        imported = read_benchmark(pasted)
        result = calibrate(list(imported.runs), shape, hw, engine, kv_capacity_tokens=kv_tokens or None,
                           label=f"{arch.name} {namer(kb)(scheme)}, {kb.gpus.get(gpu_id).name}", max_evals=40,
                           policy=policy)
    except ServewiseInputError as exc:
        st.error(_("No calibration from this output: {reason}").format(reason=literal(str(exc))),
                 icon=":material/error:")
    else:
        st.markdown(calibration_text(result))
        if imported.skipped:
            with st.expander(ngettext("{n} line not used", "{n} lines not used", len(imported.skipped)).format(
                n=number(len(imported.skipped)))):
                st.table([{_("line"): s.line_no, _("text"): s.text, _("reason"): s.reason}
                          for s in imported.skipped])
        if st.button(_("Use this calibration (the link will carry it)"), key="speed_use_cal"):
            url_widgets.write_params({CALIBRATION_PARAM: encode_profile(result.profile)})
            rerun_app()
if calibration is not None:
    st.caption(
        _("Calibration in use from the link: {label}.").format(label=literal(calibration.label or calibration.engine))
    )

st.subheader(_("How accurate is servewise?"))
if LEDGER_FILE.exists():
    ledger = json.loads(LEDGER_FILE.read_text(encoding="utf-8"))
    from calculators.speed.accuracy import Summary

    st.caption(
        _(
            "From `python -m bench.bench_speed_accuracy` at {commit} ({when}): {points} single-stream measurements, "
            "{sweeps} serving sweeps, and the held-out Apple scoreboard (llama.cpp discussion #4167), which the fit "
            "never sees."
        ).format(
            commit=ledger["commit"], when=ledger["generated"], points=ledger["n_points"], sweeps=ledger["n_sweeps"]
        )
    )
    # One small table per check: as one seven-column table it scrolled sideways at 1024 px (as Markdown it ran
    # off the page) and the error columns were out of sight.
    for title, table in ledger_sections([Summary(**row) for row in ledger["by_class"]]):
        st.markdown(f"**{title}**\n\n{table}")
    with st.expander(_("Sources")):
        st.markdown("\n".join(f"- {literal(s)}" for s in ledger["sources"]))
else:
    st.info(
        _("Run `python -m bench.bench_speed_accuracy --write bench/results/speed_accuracy.json` to produce the table.")
    )
