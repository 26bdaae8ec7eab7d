"""What running an engine as a service involves: API differences, metrics, lifecycle, security, and a benchmark plan."""

from functools import partial

import streamlit as st
from babel import Locale

from calculators.engines import ENGINE_IDS, ENGINES
from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _, current_language
from calculators.operations.bench_plan import WORKLOADS, BenchPlanRequest, build_bench_plan, parse_number_list
from knowledge import load_knowledge
from knowledge.engines import Engine
from knowledge.sources import source_url
from reports.bench_plan import engine_script, plan_json, plan_markdown, plan_yaml
from reports.engines_tables import kb_word
from reports.names import namer
from reports.operations_tables import (
    APP_MEASURES,
    embeddings_table,
    endpoints_table,
    hardening_steps,
    lacking_metrics,
    lifecycle_table,
    metrics_table,
    practice_table,
    security_table,
    tool_calling_table,
)
from reports.tables import literal_markdown
from ui import deferred, url_widgets
from ui.downloads import in_reader_language
from ui.markdown_text import literal
from ui.sourced_facts import short_version, show_facts, show_table
from ui.state_cache import drawn_per_input_state, per_input_state, state_key

LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "ru", "ar", "hi", "zh", "ja", "ko")
WHAT, WHY = N_("What"), N_("Why")
CODE_HEIGHT_PX = 520  # a scrolling box per engine: a plan can hold hundreds of commands


kb = load_knowledge()
engines_by_id = {engine.id: engine for engine in kb.engines}

st.title(_("Operations"))
st.markdown(
    _("Choosing an engine is also choosing what you can observe, secure and compare. This page turns the "
    "knowledge base into a checklist for going live and a benchmark plan to run on your own hardware. Every "
    "value links to the engine source it was read from, at the version read; nothing here is a measurement.")
)
show_url_notes = url_widgets.url_notes_slot()  # filled at the end: the widgets below can add notes
selected = url_widgets.multiselect(
    _("Engines"), list(ENGINE_IDS), key="ops_engines", placeholder=_("pick engines"), labels=namer(kb),
    default=[e.id for e in sorted(ENGINES.values(), key=lambda e: e.operations_default or 0) if e.operations_default],
)
chosen = [engines_by_id[engine_id] for engine_id in selected]
#: What the engine sections below show depends on the engines picked only (and the reader's language): they are
#: built once per choice and replayed on later runs (ui/state_cache.py).
engines_state = "operations " + ",".join(selected)


def language_name(code: str) -> str:
    """A language code's name in the reader's language ("Italian" / "italiano")."""
    return Locale.parse(code).get_display_name(current_language()) or code


def engines_picked() -> bool:
    """True when engines are selected; otherwise a hint in place of the section."""
    if not chosen:
        st.info(_("Pick at least one engine above."), icon=":material/touch_app:")
    return bool(chosen)


def show_api_sections(chosen: list[Engine]) -> None:
    """The API tab below the endpoints: practice, tool calling and embeddings facts per engine."""
    st.subheader(_("What differs in practice"))
    st.markdown(
        _("A compatible endpoint reduces client changes, but the prompt the model sees, the sampling it uses "
        "and when it stops can differ. Set `max_tokens`, `temperature` and stop sequences explicitly in every "
        "request, and compare a streamed answer chunk by chunk with your client before switching.")
    )
    show_facts(practice_table(chosen))
    st.subheader(_("Tool calling and structured output"))
    st.markdown(
        _("Tool calls work only when **model, chat template, parser and client** agree: the model must be "
        "trained for the format, the template must render the tools, the engine's parser must read the "
        "model's output, and the client must send `tools` and handle `tool_calls`. Valid JSON is not a "
        "correct action.")
    )
    show_facts(tool_calling_table(chosen))
    st.subheader(_("Embeddings and reranking"))
    st.markdown(
        _("An embedding service must reproduce the vectors already in your index: same model, **same pooling, "
        "same normalisation, same output dimension**. Otherwise similarity scores are meaningless. Generation "
        "speed says nothing of retrieval quality, and a separate embeddings service keeps ingestion from "
        "interrupting chats.")
    )
    show_facts(embeddings_table(chosen))


def show_metrics_sections(chosen: list[Engine]) -> None:
    """The metrics tab: engine metrics, what the application measures, cancellation."""
    st.subheader(_("Engine metrics"))
    st.caption(_("The Prometheus metric name for each figure worth a latency target; `— lacks it`: not exported."))
    show_table(metrics_table(chosen))
    for engine in chosen:
        missing = lacking_metrics(engine)
        if missing:
            st.warning(_("**{engine}** lacks: {metrics}. Measure these in the client or gateway.").format(
                engine=engine.name, metrics=", ".join(missing)), icon=":material/visibility_off:")  # fmt: skip
    st.subheader(_("What the application must measure itself"))
    st.markdown(_("Engine metrics start when a request reaches the engine and end when it leaves. They never see:"))
    st.markdown("\n".join(f"- **{_(name)}**: {_(what)}" for name, what in APP_MEASURES))
    st.subheader(_("Cancellation: does a closed connection stop the work?"))
    st.markdown(
        _("A client that gives up (a timeout, a closed tab, a gateway cancelling requests that have not started "
        "answering) should free the engine's slot and KV cache. If it does not, abandoned requests keep "
        "consuming capacity.")
    )
    show_facts(lifecycle_table(chosen))


def show_security_sections(chosen: list[Engine]) -> None:
    """The security tab's facts per engine and the hardening steps they call for."""
    show_facts(security_table(chosen))
    st.subheader(_("Steps these defaults call for"))
    st.markdown(
        _("In front of every engine: a reverse proxy with TLS and authentication that allow-lists only the "
        "routes clients need, per-client rate and token limits, request logs kept as your policy says, and "
        "a network policy so that only the proxy reaches the engine's port.")
    )
    source_word = _("source")
    for engine in chosen:
        steps = hardening_steps(engine)
        lines = [
            f"- {literal_markdown(text)} "
            f"[{source_word}]({source_url(fact.source, fact.verified.version) or fact.source})"
            f" ({short_version(fact.verified.version)})"
            for text, fact in steps
        ]
        none_extra = "- " + _("No extra step beyond the common ones.")
        st.markdown(f"**{engine.name}**\n\n" + ("\n".join(lines) or none_extra))


@per_input_state(max_entries=16, copy=False)
def bench_plan(request: BenchPlanRequest):
    """The benchmark plan for `request` (the same on every rerun of the same choices and language)."""
    return build_bench_plan(request, load_knowledge())


def show_plan(plan) -> None:
    """The plan's phases, what to record and each engine's commands (no widgets: replayed per plan)."""
    st.subheader(_("Phases"))
    st.markdown("\n".join(f"- **{phase}**: {plan.phase_purpose[phase]}" for phase in plan.phases))
    for note in plan.notes:
        st.caption(note)
    st.subheader(_("Record with every result"))
    rows = (f"| {literal_markdown(r.item)} | {literal_markdown(r.why)} |" for r in plan.record)
    st.markdown(f"| {_(WHAT)} | {_(WHY)} |\n|---|---|\n" + "\n".join(rows))
    st.subheader(_("Commands per engine"))
    st.caption(_("{runs} runs per engine, identical parameters for every engine.").format(runs=len(plan.runs)))
    generic_client = _("generic OpenAI-compatible client")
    for section in plan.engines:
        with st.expander(f"{section.name} · {section.load_tool or generic_client}",
                         expanded=len(plan.engines) == 1):  # fmt: skip
            for warning in section.warnings:
                st.warning(warning, icon=":material/warning:")
            if section.tool_call_setup:
                st.markdown(section.tool_call_setup)
            if section.metrics_to_scrape:
                st.markdown(_("Scrape during each run: ") + ", ".join(f"`{m}`" for m in section.metrics_to_scrape))
            tool_notes = ([section.load_tool_note] if section.load_tool_note else []) + list(section.other_tools)
            for note in tool_notes:
                url = source_url(note.source, note.version) or note.source
                why = literal_markdown(note.why)
                source_word = _("source")
                kind = kb_word(note.kind)
                st.markdown(f"**{note.tool}** ({kind}): {why} [{source_word}]({url}) ({note.version})")
            if section.generic_recipe:
                st.markdown("**" + _("Generic recipe") + "**\n\n" + "\n".join(
                    f"{i}. {step}" for i, step in enumerate(section.generic_recipe, start=1)))  # fmt: skip
            st.code(engine_script(section), language="bash", height=CODE_HEIGHT_PX)


api_tab, metrics_tab, security_tab, bench_tab = st.tabs(
    [_("API compatibility"), _("Metrics and lifecycle"), _("Security"), _("Benchmark plan")]
)

with api_tab:
    if engines_picked():
        st.subheader(_("Endpoints"))
        st.caption(
            _("**yes** = always there; **with a flag** = only when a launch flag (or a model for that task) enables it")
        )
        drawn_per_input_state(f"{engines_state} endpoints", lambda: show_table(endpoints_table(chosen)))
        deferred.rest_follows(page_end=show_url_notes)
        drawn_per_input_state(f"{engines_state} api", lambda: show_api_sections(chosen))

with metrics_tab:
    if engines_picked():
        drawn_per_input_state(f"{engines_state} metrics", lambda: show_metrics_sections(chosen))

with security_tab:
    st.info(
        _("Exposing an inference port does not create an access boundary. Decide the network, proxy and endpoint "
        "policy explicitly; data that must stay on premises needs a verified local path (weights, tokenizer, "
        "template and every tool or retrieval call served from inside), not just a local engine."),
        icon=":material/shield:",
    )
    if engines_picked():
        drawn_per_input_state(f"{engines_state} security", lambda: show_security_sections(chosen))

with bench_tab:
    st.markdown(
        _("A plan to **rebuild a comparison**: the same workload parameters for every engine, three phases (cold "
        "start, warm, warm prefix cache), and a fixed arrival rate (open loop) as well as a client cap. It is "
        "what to measure, not a measurement.")
    )
    model_ids = list(kb.models.ids)
    gpu_ids = [gpu.id for gpu in kb.gpus.all_gpus]
    left, middle, right = st.columns(3)
    with left:
        model_id = url_widgets.selectbox(_("Model"), model_ids, key="ops_model", labels=namer(kb),
                                         index=model_ids.index("llama-3.1-8b"))  # fmt: skip
        gpu_id = url_widgets.selectbox(
            _("GPU"), gpu_ids, key="ops_gpu", labels=namer(kb), index=gpu_ids.index("h100-sxm-80gb")
        )
        gpu_count = url_widgets.number(_("GPUs"), key="ops_gpus", min_value=1, max_value=64, value=1, step=1)
    with middle:
        workloads = url_widgets.multiselect(_("Workload categories"), list(WORKLOADS), key="ops_workloads",
                                            default=["short-in-short-out", "long-in-short-out"])  # fmt: skip
        languages = url_widgets.multiselect(_("Languages"), list(LANGUAGES), key="ops_languages", default=["en"],
                                            labels=language_name)
        tool_calls = url_widgets.toggle(_("Include tool calls"), key="ops_tools")
    with right:
        rates_text = url_widgets.text(_("Arrival rates (requests/s, comma-separated)"), key="ops_rates", value="1, 4")
        clients_text = url_widgets.text(_("Client caps (requests in flight)"), key="ops_clients", value="16")
        num_prompts = url_widgets.number(_("Requests per run"), key="ops_prompts", min_value=1, max_value=100_000,
                                         value=200, step=10)  # fmt: skip
    with st.expander(_("Token lengths, warm-up, seed and shared prefix")):
        a, b, c, d = st.columns(4)
        with a:
            short_in = url_widgets.number(_("Short input tokens"), key="ops_short_in", min_value=1, max_value=1_000_000,
                                          value=256, step=1)  # fmt: skip
            long_in = url_widgets.number(_("Long input tokens"), key="ops_long_in", min_value=1, max_value=1_000_000,
                                         value=8192, step=1)  # fmt: skip
        with b:
            short_out = url_widgets.number(_("Short output tokens"), key="ops_short_out", min_value=1,
                                           max_value=1_000_000, value=128, step=1)  # fmt: skip
            long_out = url_widgets.number(_("Long output tokens"), key="ops_long_out", min_value=1, max_value=1_000_000,
                                          value=1024, step=1)  # fmt: skip
        with c:
            warmup = url_widgets.number(_("Warm-up requests"), key="ops_warmup", min_value=0, max_value=10_000,
                                        value=10, step=1)  # fmt: skip
            seed = url_widgets.number(_("Seed"), key="ops_seed", min_value=1, max_value=2**31 - 1, value=1, step=1)
        with d:
            prefix_share = url_widgets.number(_("Shared prefix share"), key="ops_prefix", min_value=0.05,
                                              max_value=0.95,
                                              value=0.5, step=0.05)  # fmt: skip

    try:
        request = BenchPlanRequest(
            engines=tuple(selected),
            model_id=model_id,
            gpu_id=gpu_id,
            gpu_count=int(gpu_count),
            workloads=tuple(workloads),
            languages=tuple(languages),
            tool_calls=bool(tool_calls),
            request_rates_per_s=parse_number_list(rates_text, _("arrival rate")),
            client_counts=tuple(int(n) for n in parse_number_list(clients_text, _("client cap"), integers=True)),
            num_prompts=int(num_prompts),
            warmup_requests=int(warmup),
            seed=int(seed),
            prefix_share=float(prefix_share),
            short_input_tokens=int(short_in),
            long_input_tokens=int(long_in),
            short_output_tokens=int(short_out),
            long_output_tokens=int(long_out),
        )
        plan = bench_plan(request)
    except ServewiseInputError as exc:
        st.error(_("No plan yet: {reason}").format(reason=literal(str(exc))), icon=":material/error:")
        plan = None

    if plan is not None:
        drawn_per_input_state(f"operations plan {state_key(request)}", lambda: show_plan(plan))
        left, middle, right = st.columns(3)
        left.download_button(_("Download plan (Markdown)"), in_reader_language(plan_markdown, plan),
                             file_name="servewise-bench-plan.md", mime="text/markdown",
                             icon=":material/download:")  # fmt: skip
        middle.download_button(_("Download plan (YAML)"), partial(plan_yaml, plan),
                               file_name="servewise-bench-plan.yaml", mime="application/yaml",
                               icon=":material/download:")  # fmt: skip
        right.download_button(_("Download plan (JSON)"), partial(plan_json, plan),
                              file_name="servewise-bench-plan.json", mime="application/json",
                              icon=":material/download:")  # fmt: skip
        st.caption(_("Share this plan: the page's URL carries every choice."))

show_url_notes()
