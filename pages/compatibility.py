"""Will tool calls parse, will embeddings match your index, and what does ingestion cost chat on a shared engine?"""

import json
from typing import Any

import streamlit as st

from calculators.checks.chat_template import chat_template_from_text
from calculators.checks.embeddings import (
    check_embeddings_on_engines,
    embedding_model_from_catalog,
    embedding_model_from_files,
)
from calculators.checks.tool_calls import check_tool_calls_on_engines, tool_model_from_catalog, tool_model_from_template
from calculators.engines import ENGINES
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.simulator.engines import SIMULATED_ENGINES
from knowledge import load_knowledge
from knowledge.engines import PRIMARY_ENGINE_IDS
from reports.compatibility import checks_json, embedding_checks_markdown, tool_checks_markdown
from reports.names import namer
from reports.numbers import number, signed
from reports.tables import frame_markdown
from ui import deferred, url_widgets
from ui.compatibility_view import (
    embedding_checks_table,
    ingestion_run,
    show_embedding_reasons,
    show_tool_reasons,
    tool_checks_table,
    tool_choice_line,
)
from ui.downloads import in_reader_language
from ui.markdown_text import literal
from ui.uploads import file_uploader as uploaded_file

kb = load_knowledge()
tools_kb = kb.tool_calling
embed_kb = kb.embedding_serving
chat_models = [m.id for m in kb.models.models if m.embedding is None]
embedding_models = [m.id for m in kb.models.models if m.embedding is not None]
models_by_id = {m.id: m for m in kb.models.models}
INGESTION_MODEL = "llama-3.1-8b"
TOOL_COMMAND_EXAMPLE = "vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice --tool-call-parser hermes"
ST_FILES = ("1_Pooling/config.json", "modules.json", "config.json", "2_Dense/config.json")

st.title(_("Tool calls and embeddings"))
st.markdown(_(
    "Two checks that decide whether a deployment works at all, read from each engine's source at the version "
    "the knowledge base pins: will the model's tool calls reach the client as `tool_calls`, and will the "
    "engine's embedding vectors match an index built with sentence-transformers? Then what ingestion on the "
    "chat engine costs conversations, in simulated numbers."
))
# Filled after the sections: their bound widgets record a bad link value when drawn.
show_url_notes = url_widgets.url_notes_slot("cmp_")
tools_tab, embed_tab, ingest_tab = st.tabs([_("Tool calls"), _("Embeddings"), _("Ingestion next to chat")])


def model_sources() -> dict[str, str]:
    """What the 'Model from' choices read as (the link keeps catalog / template / files)."""
    return {"catalog": _("the catalog"), "template": _("a pasted template"), "files": _("uploaded files")}


def tool_calls_section() -> None:
    """Verdicts for a catalog model or a pasted template on each chosen engine."""
    st.markdown(_(
        "A tool call parses when the model emits a syntax its chat template describes and the parser the engine "
        "picks reads that syntax. Valid JSON is still not a correct action: test the calls with your own tools."
    ))
    source = url_widgets.segmented(_("Model from"), ["catalog", "template"], key="cmp_tool_src", default="catalog",
                                   labels=model_sources())
    try:
        if source == "template":
            pasted = st.text_area(_("Chat template, or a tokenizer_config.json (not kept in the link)"), height=180,
                                  key="cmp_tool_template_text")
            if not pasted.strip():
                st.info(_("Paste a chat template to check it."), icon=":material/content_paste:")
                return
            text = chat_template_from_text(pasted, _("the pasted text"))
            model = tool_model_from_template(text, tools_kb, _("pasted template"), _("the pasted template"))
        else:
            model_id = url_widgets.selectbox(_("Chat model"), chat_models, key="cmp_tool_model", labels=namer(kb),
                                             index=chat_models.index("qwen3-8b") if "qwen3-8b" in chat_models else 0)
            model = tool_model_from_catalog(model_id, tools_kb)
            if model.template_of:
                st.caption(_("Template read: {what}").format(what=_(model.template_of)))
        engines = url_widgets.multiselect(
            _("Engines"),
            list(PRIMARY_ENGINE_IDS),
            key="cmp_tool_engines",
            labels=namer(kb),
            default=list(PRIMARY_ENGINE_IDS),
        )
        command = url_widgets.text(_("Launch command (optional; checked for the engine it starts)"), key="cmp_tool_cmd",
                                   max_chars=1000,
                                   placeholder=TOOL_COMMAND_EXAMPLE)
        checks = check_tool_calls_on_engines(model, engines, command, tools_kb)
    except ServewiseInputError as exc:  # it may quote what the link or the user typed: shown literally
        st.error(_("Cannot check: {reason}").format(reason=literal(str(exc))), icon=":material/error:")
        return
    # A Markdown table: read, not sorted, and on screen without the browser loading the dataframe grid first.
    table = tool_checks_table(checks)
    call_format = _("Call format")
    if table[call_format].nunique() == 1:
        # The template's call format is the same under every engine: said once, the table fits the page at 1024 px.
        st.caption(_("Call format the chat template writes: {format}").format(
            format=literal(str(table[call_format].iloc[0]))))
        table = table.drop(columns=call_format)
    st.markdown(frame_markdown(table, literal=True))
    st.caption(literal(tool_choice_line(checks)))
    deferred.rest_follows(page_end=show_url_notes)
    show_tool_reasons(checks)
    left, right = st.columns(2)
    left.download_button(_("Download the verdicts (Markdown)"), in_reader_language(tool_checks_markdown, checks),
                         file_name="tool-calls.md", key="cmp_tool_md", on_click="ignore", icon=":material/description:")
    right.download_button(_("Download the verdicts (JSON)"), lambda: checks_json(checks), file_name="tool-calls.json",
                          key="cmp_tool_json", on_click="ignore", icon=":material/data_object:")

def embeddings_section() -> None:
    """Pooling, normalisation and dimension on each chosen engine next to the sentence-transformers reference."""
    st.markdown(_(
        "An index built with sentence-transformers holds vectors made by the model's own pipeline: its pooling, "
        "any Dense projection, a Normalize module or not, inputs cut at max_seq_length. The engine must repeat "
        "each step, or similarity scores against the index mean nothing."
    ))
    source = url_widgets.segmented(_("Model from"), ["catalog", "files"], key="cmp_emb_src", default="catalog",
                                   labels=model_sources())
    try:
        if source == "files":
            st.caption(_("Upload the model's sentence-transformers files (not kept in the link)."))
            cols = st.columns(4)
            uploads: dict[str, Any] = {}
            for i, name in enumerate(ST_FILES):
                with cols[i]:
                    uploads[name] = uploaded_file(name, type=["json"], key=f"cmp_emb_{i}")
            if uploads["1_Pooling/config.json"] is None:
                st.info(_("Upload at least 1_Pooling/config.json."), icon=":material/upload_file:")
                return

            def _read(name: str):
                upload = uploads[name]
                if upload is None:
                    return None
                try:
                    return json.loads(upload.getvalue().decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise ServewiseInputError(_("{name} is not valid JSON ({exc})").format(name=name,
                        exc=exc)) from None

            embedding = embedding_model_from_files(
                _("uploaded files"), _("the uploaded sentence-transformers files"), _read("1_Pooling/config.json"),
                _read("modules.json"), _read("config.json"), _read("2_Dense/config.json"),
            )
        else:
            model_id = url_widgets.selectbox(
                _("Embedding model"), embedding_models, key="cmp_emb_model", labels=namer(kb)
            )
            embedding = embedding_model_from_catalog(models_by_id[model_id])
        engines = url_widgets.multiselect(
            _("Engines"),
            list(PRIMARY_ENGINE_IDS),
            key="cmp_emb_engines",
            labels=namer(kb),
            default=list(PRIMARY_ENGINE_IDS),
        )
        command = url_widgets.text(_("Launch command (optional)"), key="cmp_emb_cmd", max_chars=1000,
                                   placeholder="llama-server -m bge-m3-f16.gguf --embeddings -ub 8192 -b 8192")
        checks = check_embeddings_on_engines(embedding, engines, command, embed_kb)
    except ServewiseInputError as exc:
        st.error(_("Cannot check: {reason}").format(reason=literal(str(exc))), icon=":material/error:")
        return
    st.markdown(frame_markdown(embedding_checks_table(checks), literal=True))
    show_embedding_reasons(checks)
    left, right = st.columns(2)
    left.download_button(_("Download the verdicts (Markdown)"), in_reader_language(embedding_checks_markdown, checks),
                         file_name="embeddings.md", key="cmp_emb_md", on_click="ignore", icon=":material/description:")
    right.download_button(_("Download the verdicts (JSON)"), lambda: checks_json(checks), file_name="embeddings.json",
                          key="cmp_emb_json", on_click="ignore", icon=":material/data_object:")

def ingestion_section() -> None:
    """Chat latency with ingestion bursts on the engine versus on a separate server."""
    st.markdown(_(
        "Ingestion arrives in bursts of long prompts. On the chat engine those prefills take step time and batch "
        "room from running conversations; on a separate embedding server they do not. Both runs below serve the "
        "same chat requests; every figure is a simulator estimate, not a measurement."
    ))
    gpus = [g.id for g in kb.gpus.gpus if isinstance(g.memory_bandwidth_gb_per_s, int | float)
            and isinstance(g.dense_bf16_tflops, int | float)]
    c1, c2, c3 = st.columns(3)
    with c1:
        model_id = url_widgets.selectbox(_("Chat model"), chat_models, key="cmp_ing_model", labels=namer(kb),
                                         index=chat_models.index(INGESTION_MODEL))
    with c2:
        gpu_id = url_widgets.selectbox(_("GPU"), gpus, key="cmp_ing_gpu", labels=namer(kb),
                                       index=gpus.index("h100-sxm-80gb") if "h100-sxm-80gb" in gpus else 0)
    with c3:
        reference = next((e.id for e in ENGINES.values() if e.simulator_reference), SIMULATED_ENGINES[0])
        engine = url_widgets.selectbox(_("Engine"), list(SIMULATED_ENGINES), key="cmp_ing_engine", labels=namer(kb),
                                       index=list(SIMULATED_ENGINES).index(reference))
    d1, d2, d3, d4 = st.columns(4)
    with d1:
        rate = url_widgets.number(_("Chat requests per second"), key="cmp_ing_rate", min_value=0.1, max_value=500.0,
                                  value=5.0)
    with d2:
        docs = url_widgets.number(_("Documents per burst"), key="cmp_ing_docs", min_value=1, max_value=20_000,
                                  value=500)
    with d3:
        doc_tokens = url_widgets.number(_("Tokens per document"), key="cmp_ing_doc_tokens", min_value=1,
                                        max_value=32_768, value=512)
    with d4:
        every = url_widgets.number(_("Seconds between bursts"), key="cmp_ing_every", min_value=1.0, max_value=3600.0,
                                   value=60.0)
    try:
        basis, result = ingestion_run(model_id, gpu_id, engine, rate, int(docs), int(doc_tokens), every)
    except ServewiseInputError as exc:
        st.error(_("Cannot simulate: {reason}").format(reason=literal(str(exc))), icon=":material/error:")
        return
    st.caption(_("Basis: {basis}; chat: 600 requests, prompts ~800 and outputs ~250\u00a0tokens (lognormal); "
                 "two bursts from t = 20\u00a0s.").format(basis=basis))
    m1, m2, m3, m4 = st.columns(4)
    shared, separate = result.shared_chat, result.separate_chat
    m1.metric(_("Chat TTFT p50 (s), shared"), number(shared.ttft.p50, 3),
              signed(shared.ttft.p50 - separate.ttft.p50, 3), delta_color="inverse")
    m2.metric(_("Chat TTFT p99 (s), shared"), number(shared.ttft.p99, 3),
              signed(shared.ttft.p99 - separate.ttft.p99, 3), delta_color="inverse")
    if shared.itl and separate.itl:
        m3.metric(_("Chat ITL p99 (ms), shared"), number(shared.itl.p99 * 1000, 1),
                  signed((shared.itl.p99 - separate.itl.p99) * 1000, 1), delta_color="inverse")
    m4.metric(_("Ingestion e2e p99 (s), shared"), number(result.shared_ingestion.e2e.p99, 1))
    st.caption(_("Deltas are against the same chat traffic with the {n} ingestion requests ({tokens} prompt "
                 "tokens) served by a separate embedding server.").format(
        n=number(result.n_ingestion_requests), tokens=number(result.ingestion_prompt_tokens)))


with tools_tab:
    tool_calls_section()
with embed_tab:
    embeddings_section()
with ingest_tab:
    ingestion_section()
show_url_notes()
