"""Which engine fits this team's use, hardware, model, workload and operations — and why."""

import streamlit as st

from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _
from calculators.wizard.answers import WizardAnswers, parse_answers
from calculators.wizard.scoring import Recommendation, recommend
from knowledge import load_knowledge
from reports.names import namer
from reports.wizard import recommendation_markdown_for
from ui import deferred, url_widgets
from ui.markdown_text import literal
from ui.run_control import end_run
from ui.wizard_section import render_first_candidate, render_recommendation, render_top_choice_plans

kb = load_knowledge()
defaults = WizardAnswers()
# What a person reads for each answer's slug (the URL keeps the slug); formats and GPUs by their catalog names.
WORDS = {
    "occasional-local": N_("Occasional local use"), "local-dev": N_("Local development"),
    "shared-api": N_("Shared internal API"), "public-multitenant": N_("Public multi-tenant service"),
    "batch": N_("Offline batch jobs"), "embeddings": N_("Embeddings / reranking"),
    "nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple", "cpu": "CPU",
    "linux": "Linux", "macos": "macOS", "windows": "Windows", "mlx": "MLX",
    "any": N_("any"), "unknown": N_("unknown"), "yes": N_("yes"), "no": N_("no"), "none": N_("none"),
    "short": N_("short"), "long": N_("long"), "steady": N_("steady"), "bursty": N_("bursty"),
    "localhost": "localhost", "internal": N_("internal network"), "internet": N_("internet"),
    "low": N_("low"), "medium": N_("medium"), "high": N_("high"),
}
name = namer(kb)


def word(slug: str) -> str:
    """The answer's words in the reader's language (catalog names for formats and GPUs)."""
    return _(WORDS[slug]) if slug in WORDS else name(slug)


def read_answers() -> dict[str, object]:
    """Draw the five tabs of questions (each answer bound to the link) and return the answers parse_answers takes."""
    use_tab, hardware_tab, model_tab, workload_tab, ops_tab = url_widgets.tabs(
        [_("1 · Use"), _("2 · Hardware"), _("3 · Model"), _("4 · Workload"), _("5 · Operations")], key="wiz_step"
    )
    with use_tab:
        use = url_widgets.radio(
            _("What will the engine serve?"),
            ["occasional-local", "local-dev", "shared-api", "public-multitenant", "batch", "embeddings"],
            key="wiz_use",
            index=2,
            labels=word,
            captions=[
                # what each answer implies, not its label again in lower case
                _("one person, now and then: the model loads when asked and idles the rest of the time"),
                _("developers trying models on their own machines, switching often"),
                _("many users of one model, with latency targets"),
                _("outside users over the internet: isolation, authentication, rate limits, steady latency"),
                _("throughput over latency: nobody waits on any one answer"),
                _("vectors for search or RAG, not generated text"),
            ],
        )
    with hardware_tab:
        hardware = url_widgets.segmented(
            _("Accelerator"), ["nvidia", "amd", "intel", "apple", "cpu"], key="wiz_hardware", default="nvidia",
            labels=word,
        )
        operating_system = url_widgets.segmented(
            _("Operating system"), ["linux", "macos", "windows"], key="wiz_os", default="linux", labels=word
        )
        gpu_ids = ["none"] + [gpu.id for gpu in kb.gpus.all_gpus]
        gpu_id = url_widgets.selectbox(_("GPU model"), gpu_ids, key="wiz_gpu", labels=word)
        n_gpus = url_widgets.number(_("GPUs per host"), key="wiz_gpus", min_value=0, max_value=64, value=1, step=1)
        nvlink = url_widgets.toggle(_("GPUs linked by NVLink / XGMI"), key="wiz_nvlink")
        hosts = url_widgets.number(_("Hosts"), key="wiz_hosts", min_value=1, max_value=1024, value=1, step=1)
        apple_memory = url_widgets.number(
            _("Mac unified memory (GB, Apple silicon only; 0 = not a Mac)"),
            key="wiz_apple_gb", min_value=0, max_value=1024, value=0, step=8,
        )
    with model_tab:
        model_ids = ["none", *kb.models.ids]
        model_id = url_widgets.selectbox(_("Model"), model_ids, key="wiz_model", labels=word)
        weight_format = url_widgets.segmented(
            _("Weights you have or want"),
            ["any", "gguf", "safetensors", "awq", "gptq", "fp8", "mxfp4", "nvfp4", "mlx"],
            key="wiz_format",
            default="any",
            labels=word,
        )
        fits_one_card = url_widgets.segmented(
            _("Does the model (with its KV cache) fit one card?"),
            ["unknown", "yes", "no"],
            key="wiz_fits",
            default="unknown",
            labels=word,
            help=_("Leave 'unknown' and pick a model and GPU: servewise then works it out from the memory model."),
        )
    with workload_tab:
        users = url_widgets.number(
            _("Concurrent users or clients"), key="wiz_users", min_value=1, max_value=1_000_000, value=10, step=1
        )
        prompt_length = url_widgets.segmented(
            _("Prompts"), ["short", "long"], key="wiz_prompt", default="short", labels=word
        )
        output_length = url_widgets.segmented(
            _("Answers"), ["short", "long"], key="wiz_output", default="short", labels=word
        )
        arrival = url_widgets.segmented(
            _("Arrivals"), ["steady", "bursty", "batch"], key="wiz_arrival", default="steady",
            labels={"steady": _("steady"), "bursty": _("bursty"), "batch": _("all at once")},
        )
        shared_prefixes = url_widgets.toggle(
            _("Shared prefixes (long system prompts, multi-turn chat, agents with common histories)"),
            key="wiz_prefixes",
        )
        tool_calling = url_widgets.toggle(_("Tool calling"), key="wiz_tools")
        structured_output = url_widgets.toggle(_("Structured (JSON-schema) output"), key="wiz_structured")
        languages = url_widgets.number(_("Languages served"), key="wiz_languages", min_value=1, max_value=500, value=1)
    with ops_tab:
        slo_metrics = url_widgets.toggle(
            _("Latency targets measured (queue time, TTFT, inter-token latency)"), key="wiz_slo"
        )
        exposure = url_widgets.segmented(
            _("Who can reach the port"),
            ["localhost", "internal", "internet"],
            key="wiz_exposure",
            default="internal",
            labels=word,
        )
        multi_model = url_widgets.toggle(_("Several models loaded or switched"), key="wiz_multimodel")
        lora = url_widgets.toggle(_("LoRA adapters"), key="wiz_lora")
        cancellation = url_widgets.toggle(_("Cancel requests that have not started answering"), key="wiz_cancel")
        on_prem = url_widgets.toggle(_("Data must stay on premises"), key="wiz_onprem")
        ops_skill = url_widgets.segmented(
            _("Team's experience running GPU services"),
            ["low", "medium", "high"],
            key="wiz_skill",
            default="medium",
            labels=word,
        )
    return {
        "use": use,
        "hardware": hardware or defaults.hardware,
        "os": operating_system or defaults.os,
        "gpu_id": None if gpu_id == "none" else gpu_id,
        "n_gpus": int(n_gpus),
        "nvlink": nvlink,
        "hosts": int(hosts),
        "apple_memory_gb": int(apple_memory) or None,
        "model_id": None if model_id == "none" else model_id,
        "weight_format": weight_format or defaults.weight_format,
        "fits_one_card": fits_one_card or defaults.fits_one_card,
        "concurrent_users": int(users),
        "prompt_length": prompt_length or defaults.prompt_length,
        "output_length": output_length or defaults.output_length,
        "arrival": arrival or defaults.arrival,
        "shared_prefixes": shared_prefixes,
        "tool_calling": tool_calling,
        "structured_output": structured_output,
        "languages": int(languages),
        "slo_metrics": slo_metrics,
        "exposure": exposure or defaults.exposure,
        "multi_model": multi_model,
        "lora": lora,
        "cancellation": cancellation,
        "on_prem": on_prem,
        "ops_skill": ops_skill or defaults.ops_skill,
    }


def recommendation_for(raw_answers: dict[str, object]) -> Recommendation | str:
    """The recommendation for these answers, or why they contradict each other."""
    try:
        return recommend(parse_answers(raw_answers), kb)
    except ServewiseInputError as exc:
        return str(exc)


def show_first_candidate(slot, result: Recommendation | str) -> None:
    """The answer's first line, or the contradiction, drawn into `slot` (st.empty: a second call replaces it)."""
    with slot.container():
        if isinstance(result, str):
            st.error(_("These answers contradict each other: {why}").format(why=literal(result)),
                     icon=":material/error:")
        else:
            render_first_candidate(result, kb)


st.title(_("Engine selection wizard"))
st.caption(
    _("An architecture choice, not a speed ranking: hard constraints from each engine's documented support "
    "come first, then transparent points from rules that cite the facts they rest on. Nothing here is a "
    "measurement.")
)

# A shared link's answer reaches the browser before the questions: they are drawn into `questions` after the first
# candidate, which is computed from the values the widgets are about to return (the browser paints the first
# message it gets first; bench/bench_shared_link.py). Where a widget then returns something else, it is redrawn.
questions = st.container()
st.divider()
first_candidate = st.empty()
with url_widgets.values_only():
    peeked_answers = read_answers()
peeked = recommendation_for(peeked_answers)
if not isinstance(peeked, str):
    show_first_candidate(first_candidate, peeked)
with questions:
    raw_answers = read_answers()
    url_widgets.show_url_notes()
result = peeked if raw_answers == peeked_answers else recommendation_for(raw_answers)
if result is not peeked or isinstance(result, str):
    show_first_candidate(first_candidate, result)
if isinstance(result, str):
    end_run()
deferred.rest_follows()  # a shared link's first run ends with the first candidate; the rest follows
render_recommendation(result, kb, answer_words=word)
render_top_choice_plans(result, kb)
st.download_button(
    _("Download as Markdown (for a design document)"),
    recommendation_markdown_for(result, kb),
    file_name="servewise-recommendation.md",
    mime="text/markdown",
    icon=":material/download:",
)
st.caption(_("Share this recommendation: the page's URL carries every answer."))
