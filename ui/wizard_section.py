"""Draw the wizard's recommendation: ranking, score breakdown with cited facts, caveats, what would change it."""

from __future__ import annotations

import shlex

import pandas as pd
import streamlit as st

from calculators.i18n import _
from calculators.launch.render import render_launch_command
from calculators.units import GIB
from calculators.wizard.fit_check import FitCheck
from calculators.wizard.plans import plans_for_top_choices
from calculators.wizard.scoring import Recommendation
from reports.memory_readouts import engine_readout
from reports.wizard import engine_names, fact_label, ranking_rows
from ui.links import page_link


def render_recommendation(result: Recommendation, kb) -> None:
    """The ranking table, then one expander per engine with its points, cited facts and caveats."""
    names = engine_names(kb)
    top = result.top
    if top is None:
        st.error(_("No engine meets the hard constraints of these answers; see the exclusions below."))
    else:
        st.success(f"First candidate: **{names[top.engine]}** (score {top.score:+d})", icon=":material/recommend:")
    table = pd.DataFrame(ranking_rows(result, names))
    st.dataframe(table, hide_index=True, width="stretch")
    if result.fit_check is not None:
        _render_fit_check(result.fit_check)

    st.subheader(_("Why each engine scored as it did"))
    for index, verdict in enumerate(result.ranking):
        with st.expander(f"{names[verdict.engine]} · {verdict.score:+d}", expanded=index < 2):
            for exclusion in verdict.exclusions:
                st.error(exclusion.reason, icon=":material/block:")
            for contribution in verdict.contributions:
                st.markdown(f"**{contribution.points:+d}** — {contribution.reason}")
                st.caption("Rests on: " + "; ".join(fact_label(r, kb) for r in contribution.rests_on))
            if not verdict.contributions:
                st.caption(_("No rule gave or took points for these answers."))
            for caveat in verdict.caveats:
                st.warning(caveat.text, icon=":material/warning:")

    st.subheader(_("What would change this answer"))
    if result.changes:
        st.dataframe(
            pd.DataFrame(
                [
                    {"answer": c.field, "now": str(c.current), "if instead": str(c.alternative), "first would be": names[c.new_top]}
                    for c in result.changes
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption(_("No single different answer changes the first candidate."))


def _render_fit_check(fit: FitCheck) -> None:
    """Say how 'fits one card' was derived, with the figures (GiB = 2^30 bytes)."""
    verdict = "fits" if fit.fits else "does not fit"
    st.info(
        f"**{fit.model} {verdict} on one {fit.device}** (derived, first-order): weights "
        f"{fit.weights_bytes / GIB:,.1f} GiB at {fit.weights_scheme} + KV for one {fit.context_tokens:,}-token "
        f"sequence {fit.kv_bytes / GIB:,.2f} GiB against {fit.usable_bytes / GIB:,.1f} GiB "
        f"(90 % of {fit.device_bytes / GIB:,.1f} GiB). The memory page gives each engine's exact plan.",
        icon=":material/memory:",
    )


# The plans include a short simulation per engine (hundreds of milliseconds): memoised per set of answers.
def _answers_key(result: Recommendation) -> str:
    return result.answers.model_dump_json()


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
    st.caption(
        f"Workload read off your answers: {first.workload.sequences} active sequence(s) x "
        f"{first.workload.context_tokens:,} retained tokens, weights as {first.weights_scheme}, 16-bit KV cache. "
        "An estimate from the memory model, not a measurement."
    )
    names = engine_names(kb)
    for plan in plans:
        row = plan.comparison
        with st.container(border=True):
            st.markdown(f"**{names[plan.engine]}**")
            if row.plan is None:
                st.info(row.not_applicable or row.error, icon=":material/block:")
                continue
            if row.plan.refusal:
                st.error(f"Would refuse to start: {row.plan.refusal}", icon=":material/dangerous:")
            held = "holds" if row.holds else "does not hold"
            st.markdown(f"This plan **{held}** the whole workload on the GPU(s).")
            st.markdown("\n".join(f"- {line}" for line in engine_readout(row)))
            if plan.users is not None:
                users = plan.users
                st.markdown(
                    f"About **{users.users:,} users** per instance within p{users.slo.ttft_percentile:g} TTFT "
                    f"≤ {users.slo.ttft_s:g} s and inter-token latency ≤ {users.slo.itl_s * 1000:g} ms "
                    f"({users.think_time_s:g} s between a user's requests; simulated estimate)."
                    if users.users is not None
                    else f"Users within the latency target: not estimated ({users.reason})."
                )
            command = render_launch_command(plan.engine, row.settings, plan.model_ref)
            env = " ".join(f"{k}={shlex.quote(v)}" for k, v in command.env.items())
            st.code((env + " " if env else "") + shlex.join(command.words), language="bash", wrap_lines=True)
    if not page_link("pages/memory.py", label=_("Open this model and machine on the memory page"),
                     icon=":material/memory:", query_params=first.memory_page_query):
        st.caption("Open the memory page with: ?" + "&".join(f"{k}={v}" for k, v in first.memory_page_query.items()))
