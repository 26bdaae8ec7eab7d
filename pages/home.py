"""What servewise answers, and the layers and request states of an LLM service it reasons about."""

from pathlib import Path

import streamlit as st

from calculators.i18n import N_, _, ngettext
from calculators.memory.kv import raw_kv_estimate, uniform_gqa_architecture
from calculators.simulator.request_states import RequestStates, request_states
from calculators.units import GIB
from reports.numbers import number
from reports.svg_charts import Edge, Node, flow_diagram_svg
from reports.tables import columns_markdown, markdown_table
from ui import url_widgets
from ui.links import page_link
from ui.markup import show_svg

REPO_ROOT = Path(__file__).resolve().parents[1]
# The product brief's worked example: 32 layers, 8 KV heads, head dim 128, 2-byte cache elements.
EXAMPLE_MODEL = uniform_gqa_architecture(n_layers=32, n_kv_heads=8, head_dim=128)
EXAMPLE_TOKENS = 8_192
MAX_CONNECTIONS = 1_000
MAX_ACTIVE = 256
# The two inputs' arguments, shared by the widget and by the look at its value taken before it is drawn (below).
CONNECTIONS_INPUT = {"key": "home_connections", "min_value": 0, "max_value": MAX_CONNECTIONS, "value": 100, "step": 1}
ACTIVE_INPUT = {"key": "home_active", "min_value": 1, "max_value": MAX_ACTIVE, "value": 8, "step": 1}

# One line per tool page: (page file, link label, Material icon, what it answers), in the sidebar's order and
# under the sidebar's names (tests/pages/test_home.py checks both). Pages app.py does not register are skipped.
TOOLS = [
    ("pages/engines.py", N_("Engines"), ":material/compare_arrows:",
     N_("The five engines side by side, with sources.")),
    ("pages/formats.py", N_("Formats & compatibility"), ":material/grid_on:", N_("Which engine runs which format.")),
    ("pages/memory.py", N_("Memory & capacity"), ":material/memory:",
     N_("Every engine's memory for one model and machine, and how many sequences fit.")),
    ("pages/wizard.py", N_("Engine wizard"), ":material/assistant:", N_("From a workload to engines and settings.")),
    ("pages/simulator.py", N_("Concurrency & queueing"), ":material/queue:",
     N_("How a queue builds when arrivals outpace it.")),
    ("pages/planner.py", N_("Capacity planner"), ":material/price_check:",
     N_("The cheapest configuration that meets a latency target at your load, and what it costs.")),
    ("pages/speed.py", N_("Speed & calibration"), ":material/speed:",
     N_("Decode and first-token speed per engine, calibrated with your own benchmark.")),
    ("pages/operations.py", N_("Operations"), ":material/monitoring:",
     N_("Metrics, security, lifecycle before going live.")),
    ("pages/compatibility.py", N_("Tool calls & embeddings"), ":material/handyman:",
     N_("Will tool calls parse and embeddings match on each engine?")),
    ("pages/reconcile.py", N_("Check against your engine"), ":material/fact_check:",
     N_("Paste a start-up log: servewise's numbers next to your engine's.")),
]  # fmt: skip


def show_request_states(connections: int, max_active: int) -> RequestStates:
    """The four request-state figures for `connections` open connections and `max_active` admitted sequences.

    One Markdown table, not four st.metric: a shared link's figures are then drawn with the page's first render
    (the Markdown element's script is loaded by every page), where each metric waited for its own element script,
    fetched only once the page had rendered everything above it (bench/bench_shared_link.py, docs/performance.md).
    In one row the four labels wrap instead of being cut at 1024 px ("Waiting in the q…" in four metric columns).
    """
    states = request_states(connections, max_active)
    st.markdown(markdown_table([
        {_("Open connections"): f"**{number(states.open_connections)}**",
         _("Waiting in the queue"): f"**{number(states.queued_requests)}**",
         _("Active sequences"): f"**{number(states.active_sequences)}**",
         _("Copies of the weights"): f"**{number(states.weight_copies)}**"},
        {_("Open connections"): "", _("Waiting in the queue"): _("No KV cache held yet."),
         _("Active sequences"): _("Each holds its own KV cache."), _("Copies of the weights"): ""},
    ]))
    return states


# A shared link's figures reach the browser before the page's text and inputs: those are drawn into `above` after
# the figures, from the values the inputs are about to return (the browser paints the first message it gets first;
# bench/bench_shared_link.py). Where an input then returns something else, the figures are drawn again.
above = st.container()
figures = st.empty()
peeked = (int(url_widgets.peek_number(**CONNECTIONS_INPUT)), int(url_widgets.peek_number(**ACTIVE_INPUT)))
with figures.container():
    states = show_request_states(*peeked)
with above:
    st.title("servewise")
    st.markdown(
        _("Getting a model to answer once says little about serving it. servewise helps a team **choose an "
        "inference engine and size it**: Ollama, llama.cpp's llama-server, vLLM, SGLang or MLX LM. "
        "The choice is one of architecture (how memory and compute time are shared out), not a speed ranking."))
    st.warning(
        _("Every figure servewise shows is an **estimate** from published specifications and arithmetic, "
        "never a measurement. Benchmark your own workload before committing."),
        icon=":material/calculate:",
    )

    st.header(_("What it answers"))
    st.markdown(
        _("- **Which engine fits how the model will be used?** A shared API with latency targets points to "
        "vLLM or SGLang; local development and mixed hardware favour Ollama or llama.cpp; on Apple "
        "silicon, MLX LM is a first-class path.\n"
        "- **Does it fit, and for how many conversations at once?** Weights, KV cache per active sequence, "
        "and what each engine reserves on top.\n"
        "- **What do the settings really control?** `gpu_memory_utilization` and `mem_fraction_static` are "
        "different fractions; llama-server splits `--ctx-size` across its `--parallel` slots.\n"
        "- **Which file format and quantization does each engine accept?** Format, precision and "
        "compatibility are separate decisions."))

    st.header(_("Four layers, four decisions"))
    st.markdown(
        _("A chat service is a stack. Each layer can change without the others: a team can keep the chat "
        "interface people like and swap the engine behind it, or put an API gateway in front without "
        "changing how much memory the model needs."))
    # Inline SVG (reports/svg_charts.py), not st.graphviz_chart: no diagram library to load before the page reads.
    show_svg(flow_diagram_svg([
        # Two boxes a row (a U: across, down, back): four across would shrink the text to ~7 px at 1024 px.
        Node("ui", _("Chat UI\\n(Open WebUI, an IDE plug-in, your app)"), "#eef3fb", 0, 0),
        Node("http", _("HTTP server / API gateway\\n(OpenAI-compatible endpoint, auth, routing)"), "#eef3fb", 1, 0),
        Node("engine", _("Inference engine\\n(scheduler, KV cache, batching)"), "#dceafc", 1, 1),
        Node("weights", _("Model weights\\n(one copy per replica)"), "#eef3fb", 0, 1),
    ], [Edge("ui", "http"), Edge("http", "engine"), Edge("engine", "weights")], "sw-flow home-layers"))
    st.markdown(columns_markdown(
        {
            _("Layer"): [_("Chat UI"), _("HTTP server / gateway"), _("Inference engine"), _("Weights")],
            _("Decides"): [
                _("What users see; how conversations are stored"),
                _("Who may call, limits, which worker gets a request"),
                _("How many sequences run together, how KV memory is shared, queue order"),
                _("Quality, and the fixed part of the memory bill"),
            ],
            _("Can change without touching"): [
                _("the engine and the model"),
                _("the model's memory needs"),
                _("the UI, if the API stays compatible"),
                _("the UI and the gateway"),
            ],
        }
    ))

    st.header(_("Connections, queued requests, active sequences"))
    st.markdown(
        _("These are three different numbers. A server can hold many open HTTP connections while the engine "
        "admits only a few requests into its batch; the rest wait in a queue and hold no KV cache yet. "
        "Each **active sequence** holds its own KV cache, and all of them read the **same single copy of the "
        "weights**: 100 concurrent requests do not load the model 100 times."))
    left, right = st.columns(2)
    with left:
        connections = url_widgets.number(_("Open connections (one request each)"), **CONNECTIONS_INPUT)
    with right:
        max_active = url_widgets.number(
            _("Sequences the engine admits at once"), **ACTIVE_INPUT,
            help="vLLM max_num_seqs, llama-server --parallel, OLLAMA_NUM_PARALLEL, SGLang max_running_requests.",
        )

    url_widgets.show_url_notes()
if (int(connections), int(max_active)) != peeked:
    with figures.container():
        states = show_request_states(int(connections), int(max_active))
kv = raw_kv_estimate(
    EXAMPLE_MODEL, tokens_per_sequence=EXAMPLE_TOKENS, n_sequences=states.active_sequences, bytes_per_element=2
)
active = number(states.active_sequences)
# counts in the singular for one (a link or the inputs may set 1): "1 open connection", "1 active sequence"
conn_label = ngettext("{n} open connection", "{n} open connections", states.open_connections).format(
    n=number(states.open_connections))
queue_label = _("{n} queued\\n(no KV cache yet)").format(n=number(states.queued_requests))
active_label = ngettext("{n} active sequence\\n({n} KV cache)", "{n} active sequences\\n({n} KV caches)",
                        states.active_sequences).format(n=active)
weights_label, over, admitted = _("1 copy of the weights"), _("over the limit"), _("admitted")
finishes, all_read = _("when a sequence finishes"), _("all read")
# Two columns, top to bottom: in three columns the diagram was scaled to 2/3 at 1024 px and its labels read at 8 px.
show_svg(flow_diagram_svg([
    Node("conn", conn_label, "#eef3fb", 0.5, 0),
    Node("queue", queue_label, "#fdf0d5", 0, 1),
    Node("active", active_label, "#dceafc", 1, 1),
    Node("weights", weights_label, "#e3f4e1", 1, 2),
], [Edge("conn", "queue", over), Edge("conn", "active", admitted), Edge("queue", "active", finishes, dashed=True),
    Edge("active", "weights", all_read)], "sw-flow home-requests"))
st.caption(
    ngettext(
        "Worked example from the product brief (an estimate, not a measurement): a model with 32 layers, "
        "8 KV heads and head dimension 128 stores {kib}\u00a0KiB of KV per token at 2\u00a0bytes per element. {active} "
        "active sequence that reaches {tokens}\u00a0tokens holds {gib}\u00a0GiB of raw KV cache, on top of one copy "
        "of the weights; queued requests add none until they are admitted.",
        "Worked example from the product brief (an estimate, not a measurement): a model with 32 layers, "
        "8 KV heads and head dimension 128 stores {kib}\u00a0KiB of KV per token at 2\u00a0bytes per element. {active} "
        "active sequences that each reach {tokens}\u00a0tokens hold {gib}\u00a0GiB of raw KV cache, on top of one copy "
        "of the weights; queued requests add none until they are admitted.",
        states.active_sequences,
    ).format(
        kib=number(kv.bytes_per_token_unbounded_layers / 1024),
        active=active,
        tokens=number(EXAMPLE_TOKENS),
        gib=number(kv.total_bytes / GIB),
    )
)

st.header(_("How an engine shares its batch"))
st.markdown(
    _("Engines built for shared serving schedule **per iteration**: after every generated token the "
    "batch is reconsidered, so a finished request leaves at once and a waiting one can take its place, "
    "instead of everyone waiting for the longest answer. How much this helps depends on the "
    "scheduler's policy and on how much request lengths vary.\n\n"
    "Feature names act at different layers: PagedAttention is about how KV memory is allocated (in "
    "blocks), FlashAttention about how the attention kernel computes. Two engines that both list them "
    "do not therefore behave alike under the same load."))

st.header(_("Where to start"))
st.markdown(columns_markdown(
    {
        _("Situation"): [
            _("Switching between models on a workstation, local apps"),
            _("Local GGUF files, CPU or mixed GPUs, a model larger than VRAM"),
            _("A shared API with latency targets, many concurrent users"),
            _("Apple silicon"),
        ],
        _("First candidates"): [
            "Ollama",
            "llama.cpp (llama-server)",
            "vLLM, SGLang",
            _("MLX LM (also llama.cpp, Ollama)"),
        ],
    }
))
st.markdown(
    _("Keep the interface your users rely on and change the layer that is actually limiting. A migration "
    "pays off when it raises the work the service accepts, or lowers its cost, at the same quality and "
    "latency target."))

st.header(_("Tools"))
linked = 0
for path, label, icon, blurb in TOOLS:
    if not (REPO_ROOT / path).is_file():
        continue
    if not page_link(path, label=_(label), icon=icon):
        continue  # the file exists but app.py does not register it yet
    st.caption(_(blurb))
    linked += 1
if not linked:
    st.caption(_("The tool pages will be listed here as they are added."))
