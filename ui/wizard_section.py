"""Draw the wizard's recommendation: ranking, score breakdown with cited facts, caveats, what would change it."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from calculators.i18n import N_, _, current_language, ngettext, translated_word
from calculators.launch.render import render_launch_command
from calculators.units import GIB
from calculators.wizard.fit_check import FitCheck
from calculators.wizard.plans import plans_for_top_choices
from calculators.wizard.scoring import Recommendation
from reports.memory_readouts import engine_readout
from reports.names import name_of
from reports.numbers import compact, number, percent, signed
from reports.shell import continued_command
from reports.tables import markdown_table
from reports.wizard import engine_names, fact_label, ranking_rows, reason_text
from reports.wizard_figures import concern_svg
from ui.links import page_link
from ui.markup import show_svg

#: The wizard's answers as a person reads them in "What would change this answer" (the field names stay in links).
ANSWER_NAMES: dict[str, str] = {
    "use": N_("use"), "hardware": N_("accelerator"), "gpu_id": N_("GPU model"), "n_gpus": N_("GPUs"),
    "nvlink": N_("NVLink"), "apple_memory_gb": N_("Apple memory (GB)"), "host_ram_gb": N_("host RAM (GB)"),
    "hosts": N_("hosts"), "model_id": N_("model"), "weight_format": N_("weight format"),
    "fits_one_card": N_("fits one card"), "concurrent_users": N_("concurrent users"),
    "prompt_length": N_("prompts"), "output_length": N_("answers"), "shared_prefixes": N_("shared prefixes"),
    "tool_calling": N_("tool calling"), "structured_output": N_("structured output"), "languages": N_("languages"),
    "arrival": N_("arrival"), "slo_metrics": N_("latency metrics"), "exposure": N_("exposure"),
    "multi_model": N_("several models"), "lora": N_("LoRA adapters"), "cancellation": N_("cancellation"),
    "on_prem": N_("on premises"), "ops_skill": N_("operations skill"), "os": N_("operating system"),
}


def _answer_value(value: object, words: Callable[[str], str] | None) -> str:
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if value is None:
        return _("none")
    if isinstance(value, str) and words is not None:
        return words(value)
    return str(value)


def render_first_candidate(result: Recommendation, kb) -> None:
    """The answer in one line: the first candidate and its score, or that no engine meets the hard constraints."""
    top = result.top
    if top is None:
        st.error(_("No engine meets the hard constraints of these answers; see the exclusions below."))
    else:
        first = _("First candidate: **{engine}** (score {score})").format(engine=engine_names(kb)[top.engine],
            score=signed(top.score))
        st.success(first, icon=":material/recommend:")


def render_recommendation(result: Recommendation, kb, answer_words: Callable[[str], str] | None = None) -> None:
    """The ranking table, then one expander per engine with its points, cited facts and caveats.

    Drawn under `render_first_candidate`. `answer_words` gives an answer value's words (the page's labels); without
    it values show as they are.
    """
    names = engine_names(kb)
    # The chart is inline SVG: it appears without the browser loading plotly's script first (a shared link opens
    # in a fresh browser). The ranking is a Markdown table: as a dataframe half the page wide at 1024 px, its score
    # column was out of sight (the grid scrolled sideways); as Markdown a long engine name wraps instead.
    ranking_col, chart_col = st.columns([1, 1])
    ranking_col.markdown(markdown_table(ranking_rows(result, names), literal=True))
    with chart_col:
        show_svg(_concern_chart(result, kb))
    if result.fit_check is not None:
        _render_fit_check(result.fit_check, kb)

    st.subheader(_("Why each engine scored as it did"))
    for index, verdict in enumerate(result.ranking):
        with st.expander(f"{names[verdict.engine]} · {verdict.score:+d}", expanded=index < 2):
            for exclusion in verdict.exclusions:
                st.error(_(exclusion.reason), icon=":material/block:")
            for contribution in verdict.contributions:
                st.markdown(f"**{contribution.points:+d}** — {reason_text(contribution.reason, contribution.checked)}")
                st.caption(_("Rests on:") + " " + "; ".join(fact_label(r, kb) for r in contribution.rests_on))
            if not verdict.contributions:
                st.caption(_("No rule gave or took points for these answers."))
            for caveat in verdict.caveats:
                st.warning(reason_text(caveat.text, caveat.checked), icon=":material/warning:")

    st.subheader(_("What would change this answer"))
    if result.changes:
        st.markdown(markdown_table([
            {_("answer"): translated_word(ANSWER_NAMES, c.field),
             _("now"): _answer_value(c.current, answer_words),
             _("if instead"): _answer_value(c.alternative, answer_words),
             _("first would be"): names[c.new_top]}
            for c in result.changes
        ], literal=True))
    else:
        st.caption(_("No single different answer changes the first candidate."))


def _render_fit_check(fit: FitCheck, kb) -> None:
    """Say how 'fits one card' was derived, with the figures (GiB = 2^30 bytes)."""
    headline = (_("**{model} fits on one {device}**") if fit.fits else _("**{model} does not fit on one {device}**"))
    st.info(
        headline.format(model=fit.model, device=name_of(kb, fit.device)) + " " + _(
            "(derived, first-order): weights {weights}\u00a0GiB at {scheme} + KV for one {tokens}-token sequence "
            "{kv}\u00a0GiB "
            "against {usable}\u00a0GiB ({share} of {device}\u00a0GiB). The memory page gives each engine's exact plan."
        ).format(weights=number(fit.weights_bytes / GIB, 1), scheme=name_of(kb, fit.weights_scheme),
                 share=percent(fit.usable_bytes / fit.device_bytes, 0),
                 tokens=number(fit.context_tokens), kv=number(fit.kv_bytes / GIB, 2),
                 usable=number(fit.usable_bytes / GIB, 1), device=number(fit.device_bytes / GIB, 1)),
        icon=":material/memory:",
    )


# The plans include a short simulation per engine (hundreds of milliseconds): memoised per set of answers.
def _answers_key(result: Recommendation) -> str:
    return current_language() + result.answers.model_dump_json()  # plans hold notes in the reader's language


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs={Recommendation: _answers_key})
def _concern_chart(result: Recommendation, _kb):
    """The points-by-concern chart (SVG markup) for one set of answers in one language."""
    return concern_svg(result, _kb.wizard.rules, engine_names(_kb))


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs={Recommendation: _answers_key})
def _top_choice_plans(result: Recommendation, _kb) -> list:
    """plans_for_top_choices for one set of answers (results are never mutated)."""
    return plans_for_top_choices(result, _kb)


def render_top_choice_plans(result: Recommendation, kb) -> None:
    """Each top engine's memory plan for the team's model and GPUs, its launch command and a memory-page link."""
    st.subheader(_("Memory plan for the top choices"))
    plans = _top_choice_plans(result, kb)
    if not plans:
        st.caption(_("Pick a catalog model and a GPU (steps 2 and 3) to see each top engine's memory plan here."))
        return
    first = plans[0]
    st.caption(_(
        "Workload read off your answers: {sequences} × {tokens} retained tokens, weights as {scheme}, 16-bit KV "
        "cache. An estimate from the memory model, not a measurement."
    ).format(sequences=ngettext("{n} active sequence", "{n} active sequences", first.workload.sequences).format(
        n=number(first.workload.sequences)), tokens=number(first.workload.context_tokens),
        scheme=name_of(kb, first.weights_scheme)))
    names = engine_names(kb)
    for plan in plans:
        row = plan.comparison
        with st.container(border=True):
            st.markdown(f"**{names[plan.engine]}**")
            if row.plan is None:
                st.info(row.not_applicable or row.error, icon=":material/block:")
                continue
            if row.plan.refusal:
                st.error(_("Would refuse to start: {why}").format(why=row.plan.refusal), icon=":material/dangerous:")
            if row.holds:
                st.markdown(ngettext("This plan **holds** the whole workload on the GPU.",
                                     "This plan **holds** the whole workload on the GPUs.", plan.gpus))
            else:
                st.markdown(ngettext("This plan **does not hold** the whole workload on the GPU.",
                                     "This plan **does not hold** the whole workload on the GPUs.", plan.gpus))
            st.markdown("\n".join(f"- {line}" for line in engine_readout(row)))
            if plan.users is not None:
                users = plan.users
                st.markdown(
                    _("About **{users} users** per instance within p{pct} TTFT ≤ {ttft}\u00a0s and inter-token "
                      "latency ≤ {itl}\u00a0ms ({think}\u00a0s between a user's requests; simulated estimate).").format(
                        users=number(users.users), pct=compact(users.slo.ttft_percentile, 2),
                            ttft=compact(users.slo.ttft_s, 3),
                        itl=compact(users.slo.itl_s * 1000, 3), think=compact(users.think_time_s, 3))
                    if users.users is not None
                    else _("Users within the latency target: not estimated ({why}).").format(why=users.reason)
                )
            command = render_launch_command(plan.engine, row.settings, plan.model_ref)
            # One flag per line, never wrapped: wrapped, "--context-length" broke after its "--" at 1024 px.
            st.code(continued_command(command.words, command.env), language="bash")
    if not page_link("pages/memory.py", label=_("Open this model and machine on the memory page"),
                     icon=":material/memory:", query_params=first.memory_page_query):
        query = "&".join(f"{k}={v}" for k, v in first.memory_page_query.items())
        st.caption(_("Open the memory page with:") + " ?" + query)
