"""What does it take to serve this load within this latency target, and what does it cost, per engine?"""

from dataclasses import dataclass

import streamlit as st

from calculators.engines import ENGINES
from calculators.errors import ServewiseInputError
from calculators.i18n import _, current_language
from calculators.operations.bench_plan import build_bench_plan
from calculators.planner.search import PlannerResult, plan_capacity
from calculators.planner.spec import PlannerSpec
from calculators.planner.verify import bench_request, launch_command
from knowledge import load_knowledge
from reports.bench_plan import plan_markdown
from reports.chart_layout import align_titles
from reports.json_text import json_document
from reports.names import names_by_slug
from reports.numbers import dollars, significant
from reports.planner_figures import latency_figure, pareto_figure
from reports.planner_report import (
    concurrency_settings_line,
    planner_json,
    planner_markdown,
    rejections_table,
    winners_table,
)
from reports.tables import frame_markdown, localized_frame
from ui import deferred, url_widgets
from ui.markdown_text import literal
from ui.planner_inputs import read_spec
from ui.run_control import end_run
from ui.tables import pin_first_column


@dataclass(frozen=True)
class PlannerView:
    """Everything the page draws for one spec, built once: searching and rendering take seconds."""

    result: PlannerResult
    winners_markdown: str
    settings_line: str
    rejections: object
    pareto: object
    latency: object
    why_markdown: str
    full_markdown: str
    json_text: str
    command: str
    command_remarks: tuple[str, ...]
    bench_markdown: str | None
    bench_error: str | None


# Memoised per spec and language (the text is translated); results and figures are never mutated.
@st.cache_resource(max_entries=16, show_spinner=False)
def planner_view(spec_json: str, language: str) -> PlannerView:
    """Search one spec (the JSON text of a PlannerSpec) and render every table, figure and text of the page."""
    kb = load_knowledge()
    names = {engine.id: engine.display_name for engine in ENGINES.values()}
    colours = {engine.id: engine.colour for engine in ENGINES.values()}
    gpus = {gpu.id: gpu.name for gpu in kb.gpus.all_gpus}
    schemes = names_by_slug(kb)
    result = plan_capacity(PlannerSpec.model_validate_json(spec_json), kb)
    command, remarks, bench_md, bench_error = "", (), None, None
    if result.best is not None:
        launch = launch_command(result, result.best, kb)
        command = " ".join([*(f"{k}={v}" for k, v in launch.env.items()), *launch.words])
        remarks = tuple(launch.remarks)
        try:
            bench_md = plan_markdown(build_bench_plan(bench_request(result, result.best), kb))
        except ServewiseInputError as exc:
            bench_error = str(exc)
    pareto, latency = pareto_figure(result, names, colours, gpus), latency_figure(result, names, colours)
    align_titles(pareto, latency)  # drawn side by side
    return PlannerView(
        result=result,
        # "$" escaped: Streamlit's Markdown reads the text between two dollar signs as LaTeX (the costs).
        winners_markdown=frame_markdown(winners_table(result, names, gpus, schemes), index=True).replace("$", "\\$"),
        settings_line=concurrency_settings_line(result, names),
        rejections=rejections_table(result, names, gpus, schemes), pareto=pareto, latency=latency,
        why_markdown=planner_markdown(result, names, gpus, sections=("why",), schemes=schemes),
        full_markdown=planner_markdown(result, names, gpus, schemes=schemes),
        json_text=json_document(planner_json(result, names=schemes), indent=2, default=str),
        command=command, command_remarks=remarks, bench_markdown=bench_md, bench_error=bench_error,
    )


kb = load_knowledge()
names = {engine.id: engine.display_name for engine in ENGINES.values()}
gpu_names = {gpu.id: gpu.name for gpu in kb.gpus.all_gpus}

st.title(_("Capacity planner"))
st.caption(_("The cheapest configuration per engine that meets your latency target at your load, with what it "
             "costs. Memory comes from each engine's own plan, latency from servewise's scheduler simulation on a "
             "roofline of the GPU: **every figure is an estimate to verify with the benchmark below before "
             "buying.** Prices change: each one says whose it is and when it was read; type your own."))
spec = read_spec(kb)
url_widgets.show_url_notes(prefix="plan_")
if isinstance(spec, str):
    st.error(literal(spec))
    end_run()
with st.spinner(_("Searching engines, GPUs, parallelism and concurrency…")):
    try:
        view = planner_view(spec.model_dump_json(), current_language())
    except ServewiseInputError as exc:
        st.error(literal(str(exc)))
        end_run()

result = view.result
best = result.best
if best is None or best.cost is None:
    st.warning(_("No configuration meets this target with the hardware allowed. The table below says why each one "
                 "was turned down."))
else:
    # "$" escaped as in the cost line below: in Spanish "1,95 US$/h, 1.425,35 US$/mes" came out as LaTeX math.
    st.success(_("Cheapest: **{engine}** on {replicas} × {per} {gpu} — {hour}/h, {month}/month, "
                 "{mtok} per million output tokens at {rate}\u00a0requests/s.").format(
        engine=names[best.shape.engine], replicas=best.replicas, per=best.shape.gpus_per_instance,
        gpu=gpu_names[best.shape.gpu_id], hour=dollars(best.cost.usd_per_hour),
        month=dollars(best.cost.usd_per_month), mtok=dollars(best.cost.usd_per_million_output_tokens or 0.0),
        rate=significant(result.load_rate_per_s)).replace("$", "\\$"))
# A Markdown table, engines as columns: as a dataframe with one row per engine it scrolled sideways at 1024 px.
st.markdown(view.winners_markdown)
if view.settings_line:
    st.caption(view.settings_line)
# The rest (two charts, the arithmetic, the command and the rejections grid) follows once the answer is on screen:
# the charts' and the grid's scripts delayed the answer on a shared link.
deferred.rest_follows()

left, right = st.columns(2)
left.plotly_chart(view.pareto, width="stretch")
right.plotly_chart(view.latency, width="stretch")

if best is not None:
    # "$" escaped: Streamlit's Markdown reads the text between two dollar signs as LaTeX, and a Spanish cost line
    # ("1,95 US$/GPU-hora = 1,95 US$/h") came out as italic math. The downloadable Markdown keeps plain "$".
    st.markdown(view.why_markdown.replace("$", "\\$"))
    # Folded: a dozen assumption lines (one speed basis per engine and hardware class) stood between the
    # arithmetic and the command to verify it; the downloadable Markdown keeps them in full.
    with st.expander(_("Assumptions ({count})").format(count=len(result.notes))):
        st.markdown("\n".join(f"- {note}" for note in result.notes).replace("$", "\\$"))
    st.subheader(_("Verify it before buying"))
    st.code(view.command, language="bash")
    for remark in view.command_remarks:
        st.caption(literal(remark))
    if view.bench_markdown is not None:
        with st.expander(_("Benchmark plan at the planned workload and rates")):
            st.markdown(view.bench_markdown)
    elif view.bench_error:
        st.info(literal(view.bench_error))

with st.expander(_("Rejected configurations ({count})").format(count=len(result.rejections))):
    st.dataframe(localized_frame(view.rejections), hide_index=True, width="stretch",
                 column_config=pin_first_column(view.rejections))
st.caption(_("{sims} simulations searched.").format(sims=result.n_simulations))
a, b = st.columns(2)
a.download_button(_("Download the plan (Markdown)"), view.full_markdown, "servewise-capacity-plan.md", "text/markdown")
b.download_button(_("Download the plan (JSON)"), view.json_text, "servewise-capacity-plan.json", "application/json")
