"""Draw the wizard's recommendation: ranking, score breakdown with cited facts, caveats, what would change it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calculators.recommend import Recommendation
from knowledge.references import resolve_reference
from reports.recommendation import recommendation_markdown as _markdown


def engine_names(kb) -> dict[str, str]:
    """Engine id -> display name from the knowledge base."""
    return {engine.id: engine.name for engine in kb.engines}


def _fact_label(reference: str, kb) -> str:
    """'reference — source (version)' for a rule's cited fact, as Markdown with a link where possible."""
    from knowledge.sources import source_url

    fact = resolve_reference(reference, {e.id: e for e in kb.engines}, kb.formats)
    source = getattr(fact, "source", None) or getattr(getattr(fact, "license", None), "source", "")
    verified = getattr(fact, "verified", None) or getattr(getattr(fact, "latest_version_read", None), "verified", None)
    version = verified.version if verified else ""
    url = source_url(source, version) if source else None
    where = f"[{source}]({url})" if url else source
    return f"`{reference}` — {where} ({version})" if source else f"`{reference}`"


def render_recommendation(result: Recommendation, kb) -> None:
    """The ranking table, then one expander per engine with its points, cited facts and caveats."""
    names = engine_names(kb)
    top = result.top
    if top is None:
        st.error("No engine meets the hard constraints of these answers; see the exclusions below.")
    else:
        st.success(f"First candidate: **{names[top.engine]}** (score {top.score:+d})", icon=":material/recommend:")
    table = pd.DataFrame(
        [
            {
                "rank": index,
                "engine": names[v.engine],
                "score": v.score,
                "status": "excluded" if v.excluded else "eligible",
                "why excluded": "; ".join(e.reason for e in v.exclusions),
            }
            for index, v in enumerate(result.ranking, start=1)
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")

    st.subheader("Why each engine scored as it did")
    for index, verdict in enumerate(result.ranking):
        with st.expander(f"{names[verdict.engine]} · {verdict.score:+d}", expanded=index < 2):
            for exclusion in verdict.exclusions:
                st.error(exclusion.reason, icon=":material/block:")
            for contribution in verdict.contributions:
                st.markdown(f"**{contribution.points:+d}** — {contribution.reason}")
                st.caption("Rests on: " + "; ".join(_fact_label(r, kb) for r in contribution.rests_on))
            if not verdict.contributions:
                st.caption("No rule gave or took points for these answers.")
            for caveat in verdict.caveats:
                st.warning(caveat.text, icon=":material/warning:")

    st.subheader("What would change this answer")
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
        st.caption("No single different answer changes the first candidate.")


def recommendation_markdown(result: Recommendation, kb) -> str:
    """The Markdown export, with engine display names from the knowledge base."""
    return _markdown(result, engine_names(kb))
