"""Input widgets of the Memory & capacity page (all bound to the URL, keys `mem_*`) and what they resolve to.

Each reader draws its widgets and returns data the calculators take; problems the user can fix come back
as messages, never as exceptions. Only I/O (hub fetches) is cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from calculators.engines import adapter
from calculators.engines.base import DraftModel
from calculators.errors import LaunchCommandError, ServewiseInputError
from calculators.hardware.catalog import machine_for_gpu
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.launch.settings import settings_from_command
from calculators.memory.compare import KV_CACHE_TYPES, Workload, model_weights, settings_class
from calculators.memory.draft import draft_model
from calculators.memory.kv import uniform_gqa_architecture
from calculators.model.architecture import ModelArchitecture
from calculators.model.catalog import architecture_from_catalog, catalog_id_for_repo
from calculators.model.hf_config import NOT_MODELLED, architecture_from_config, load_config_text
from calculators.model.hf_hub import fetch_config
from calculators.model.weights import weights_from_file_bytes
from calculators.units import GIB, compact, number
from knowledge.loader import KnowledgeBase
from reports.names import namer, weight_scheme_namer
from ui import uploads, url_widgets

MODEL_SOURCES = ["catalog", "config-json", "hf-repo", "geometry"]
WEIGHT_SOURCES = ["precision", "file-size"]
DEFAULT_GPU = "h100-sxm-80gb"
DEFAULT_MODEL = "llama-3.1-8b"
HUB_TIMEOUT_S = 8.0


@dataclass
class ModelChoice:
    """The model to plan, the name to put in launch commands, and what went wrong (if anything)."""

    arch: ModelArchitecture | None
    model_ref: str
    error: str | None = None
    notes: list[str] = field(default_factory=list)


@st.cache_data(ttl=600, show_spinner=_("Fetching config.json from the Hugging Face hub…"))
def _fetch_hub_config(repo_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """config.json of a hub repo, or the reason it could not be fetched (failures are cached too)."""
    try:
        return fetch_config(repo_id, timeout_s=HUB_TIMEOUT_S), None
    except ServewiseInputError as exc:
        return None, str(exc)


def read_model(kb: KnowledgeBase) -> ModelChoice:
    """Model source widgets: catalog id, pasted/uploaded config.json, hub repo id, or typed geometry."""
    catalog = kb.models
    source = url_widgets.radio(_("Model from"), MODEL_SOURCES, key="mem_model_from", horizontal=True, labels={
        "catalog": _("catalog"), "config-json": "config.json", "hf-repo": _("Hugging Face repo"),
        "geometry": _("typed geometry")})
    if NOT_MODELLED:  # families engines serve that servewise cannot plan yet, said up front but folded away
        with st.expander(_("Model families servewise cannot plan yet"), icon=":material/info:"):
            for reason in NOT_MODELLED.values():
                st.caption(_(reason))
    if source == "catalog":
        ids = list(catalog.ids)
        model_id = url_widgets.selectbox(_("Catalog model"), ids, key="mem_model", labels=namer(kb),
                                         index=ids.index(DEFAULT_MODEL) if DEFAULT_MODEL in ids else 0)
        try:
            return ModelChoice(architecture_from_catalog(model_id, kb), catalog.get(model_id).hf_repo)
        except ServewiseInputError as exc:
            return ModelChoice(None, model_id, str(exc))
    if source == "config-json":
        text = url_widgets.text_area(_("Paste config.json"), key="mem_config", height=140,
                                     placeholder=_('{"model_type": "llama", "num_hidden_layers": 32, ...}'))
        upload = uploads.file_uploader(_("…or upload it (an upload is not part of the shared link)"), type=["json"],
                                  key="mem_config_upload")
        if upload is not None:
            text, name = upload.getvalue().decode("utf-8", errors="replace"), upload.name
        else:
            name = "pasted config.json"
        if not text.strip():
            return ModelChoice(None, "MODEL", "Paste a config.json (or upload one) to plan that model.")
        try:
            return ModelChoice(architecture_from_config(load_config_text(text, name), source=name), "MODEL")
        except ServewiseInputError as exc:
            return ModelChoice(None, "MODEL", str(exc))
    if source == "hf-repo":
        repo = url_widgets.text(_("Hugging Face repo id"), key="mem_repo", placeholder=_("Qwen/Qwen3-8B")).strip()
        if not repo:
            return ModelChoice(None, "MODEL", "Type a repo id such as Qwen/Qwen3-8B.")
        config, problem = _fetch_hub_config(repo)
        if problem:
            return ModelChoice(None, repo, f"{problem}. For a private or offline repo, paste its config.json "
                               "instead (Model from: config-json).")
        try:
            return ModelChoice(architecture_from_config(config, name=repo, source=f"hf:{repo}"), repo)
        except ServewiseInputError as exc:
            return ModelChoice(None, repo, str(exc))
    return _read_geometry()


def _read_geometry() -> ModelChoice:
    cols = st.columns(3)
    with cols[0]:
        layers = url_widgets.number(_("Layers"), key="mem_layers", min_value=1, max_value=1000, value=32, step=1)
        params_b = url_widgets.number(_("Parameters (billions)"), key="mem_params_b", min_value=0.01,
                                      max_value=5000.0, value=8.03, step=0.01)
    with cols[1]:
        kv_heads = url_widgets.number(_("KV heads"), key="mem_kv_heads", min_value=1, max_value=1024, value=8, step=1)
        heads = url_widgets.number(_("Query heads"), key="mem_heads", min_value=1, max_value=1024, value=32, step=1)
    with cols[2]:
        head_dim = url_widgets.number(_("Head dimension"), key="mem_head_dim", min_value=1, max_value=4096,
                                      value=128, step=1)
        trained = url_widgets.number(_("Trained context (tokens)"), key="mem_trained_ctx", min_value=1,
                                     max_value=10_000_000, value=131_072, step=1024)
    arch = uniform_gqa_architecture(int(layers), int(kv_heads), int(head_dim), name="typed geometry")
    arch = replace(arch, n_heads=int(heads), hidden_size=int(heads) * int(head_dim),
                   max_context_tokens=int(trained), params_total=int(params_b * 1e9))
    return ModelChoice(arch, "MODEL", notes=["Every layer is counted as full attention with these heads."])


@dataclass
class WeightsChoice:
    """Weight bytes of the whole model, with the basis shown to the user."""

    bytes: int | None
    basis: str
    exact: bool
    error: str | None = None
    approximations: tuple[str, ...] = ()
    scheme: str | None = None  # formats.yaml quantization or GGUF file mix id, when weights come from one


def read_weights(kb: KnowledgeBase, arch: ModelArchitecture | None) -> WeightsChoice:
    """Weight precision/quantization (formats.yaml slugs) or an exact file size in GiB."""
    # Radio buttons wrap in the narrow model column ("tamaño del archivo" was cut in a segmented control).
    source = url_widgets.radio(_("Weights from"), WEIGHT_SOURCES, key="mem_weights_from", horizontal=True,
                               index=list(WEIGHT_SOURCES).index("precision"),
                               labels={"precision": _("precision"), "file-size": _("file size")})
    if source == "file-size":
        gib = url_widgets.number(_("Exact weights size (GiB = 2^30\u00a0bytes)"), key="mem_weights_gib",
                                 min_value=0.001, max_value=100_000.0, value=15.0, step=0.5)
        estimate = weights_from_file_bytes(int(gib * GIB), source="typed file size")
        return WeightsChoice(estimate.bytes, "the file size you typed", True)
    schemes = kb.formats.weight_scheme_ids()
    scheme = url_widgets.selectbox(_("Weight precision / quantization"), schemes, key="mem_precision",
                                   labels=weight_scheme_namer(kb),
                                   index=schemes.index("bf16"))
    if arch is None:
        return WeightsChoice(None, "", False, None, scheme=scheme)
    try:
        estimate = model_weights(kb.formats, arch, scheme)
    except ServewiseInputError as exc:
        return WeightsChoice(None, "", False, str(exc), scheme=scheme)
    return WeightsChoice(estimate.bytes, estimate.basis, estimate.exact, None, estimate.approximations, scheme)


@dataclass
class MachineChoice:
    machine: Machine | None
    label: str
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def read_machine(kb: KnowledgeBase) -> MachineChoice:
    """GPU from the catalog (or custom memory/bandwidth), number of GPUs, host RAM for offload."""
    ids = ["custom"] + [gpu.id for gpu in kb.gpus.all_gpus]
    gpu_id = url_widgets.selectbox(_("GPU or Apple silicon"), ids, key="mem_gpu", index=ids.index(DEFAULT_GPU),
                                   labels=namer(kb, {"custom": _("Custom (type memory and bandwidth)")}))
    notes: list[str] = []
    # One under the other: side by side in a third of the page at 1024 px their labels wrapped to four lines.
    n_gpus = int(url_widgets.number(_("Number of GPUs"), key="mem_gpus", min_value=1, max_value=64, value=1, step=1))
    host_gib = url_widgets.number(_("Host RAM for offload (GiB; 0 = not given)"), key="mem_host_gib",
                                  min_value=0.0, max_value=100_000.0, value=0.0, step=16.0)
    host_bytes = int(host_gib * GIB) or None
    if gpu_id == "custom":
        cols = st.columns(3)
        with cols[0]:
            mem_gib = url_widgets.number(_("Memory per GPU (GiB)"), key="mem_vram_gib", min_value=0.5,
                                         max_value=100_000.0, value=24.0, step=1.0)
        with cols[1]:
            bw = url_widgets.number(_("Bandwidth (GB/s = 10^9 B/s; 0 = not given)"), key="mem_bw_gbs",
                                    min_value=0.0, max_value=100_000.0, value=0.0, step=10.0)
        with cols[2]:
            unified = url_widgets.toggle(_("Apple unified memory"), key="mem_unified", value=False)
        if unified and n_gpus > 1:
            notes.append(_("A Mac has one GPU: planning with 1."))
            n_gpus = 1
        machine = Machine(device_memory_bytes=int(mem_gib * GIB), n_devices=n_gpus,
                          memory_bandwidth_bytes_per_s=bw * 1e9 or None,
                          host_ram_bytes=host_bytes or (int(mem_gib * GIB) if unified else None),
                          unified_memory=unified)
        return MachineChoice(machine, _("{n} × custom {gib}\u00a0GiB").format(n=n_gpus, gib=compact(mem_gib, 3)), None,
            notes)
    gpu = kb.gpus.get(gpu_id)
    if gpu.unified_memory and n_gpus > 1:
        notes.append(_("An Apple silicon machine has one GPU: planning with 1."))
        n_gpus = 1
    try:
        machine = machine_for_gpu(gpu, n_gpus, host_bytes, kb.gpus.apple_working_set)
    except ServewiseInputError as exc:
        return MachineChoice(None, gpu.name, str(exc))
    if gpu.unified_memory:
        notes.append(_("The GPU may use {usable}\u00a0GiB of the {total}\u00a0GiB by default (Metal's working set, an "
                       "estimate from the closest observed Mac); raise it with `{command}`.").format(
                           usable=number(machine.device_memory_bytes / GIB, 1), total=number(gpu.memory_bytes / GIB),
                           command=kb.gpus.apple_working_set.raise_with))
    return MachineChoice(machine, f"{n_gpus} × {gpu.name}", None, notes)


def read_workload() -> Workload | str:
    """Context per sequence, concurrent active sequences and KV cache type (or a message when impossible)."""
    ctx = url_widgets.number(_("Context per sequence (prompt + output, tokens)"), key="mem_ctx", min_value=1,
                             max_value=10_000_000, value=8192, step=1024)
    seqs = url_widgets.number(_("Concurrent active sequences"), key="mem_seqs", min_value=1, max_value=4096,
                              value=8, step=1)
    # Radio buttons wrap in the narrow workload column (a segmented control's third option was cut at 1024 px).
    kv_type = url_widgets.radio(_("KV cache type"), list(KV_CACHE_TYPES), key="mem_kv", horizontal=True,
                                index=KV_CACHE_TYPES.index("16-bit"))
    try:
        return Workload(int(ctx), int(seqs), kv_type or "16-bit")
    except ServewiseInputError as exc:
        return str(exc)


def _knob_help(kb: KnowledgeBase, engine: str, key: str) -> str | None:
    """The knowledge base's description of a knob: name, what it controls, default and source."""
    entry = next((e for e in kb.engines if e.id == engine), None)
    knob = next((k for k in entry.knobs if k.key == key), None) if entry else None
    if knob is None:
        return None
    # a default rule is a sentence of its own: its full stop is the template's
    default = (_(knob.default_rule).rstrip(".") if knob.default_rule
               else _("unset") if knob.default is None else str(knob.default))
    return _("**{name}** ({unit}): {controls} Default: {default}. Source: {source}").format(
        name=knob.name, unit=_(knob.unit), controls=_(knob.controls), default=default, source=knob.source)


def read_engine_knobs(kb: KnowledgeBase, engine: str) -> dict[str, Any]:
    """Widgets for one engine's own knobs; returns only the values that differ from the engine's defaults."""
    fields = settings_class(engine).model_fields
    overrides: dict[str, Any] = {}
    spec = adapter(engine)
    for knob in spec.memory_knobs:
        key, label, kind = knob.key, knob.label, knob.kind
        if key not in fields:
            continue
        default = fields[key].default
        widget_key = f"mem_{spec.short_key}_{key}"
        if kind.startswith("choice:"):
            options = kind.split(":", 1)[1].split(",")
            shown = {None: "auto", True: "on", False: "off"}.get(default, getattr(default, "value", default))
            value = url_widgets.radio(_(label), options, key=widget_key, horizontal=True, index=options.index(shown),
                                      labels=_,
                                      help=_knob_help(kb, engine, key))
            chosen: Any = {"auto": None, "on": True, "off": False}[value] if key == "kv_unified" else value
            if chosen != shown and not (key == "kv_unified" and chosen is default):
                overrides[key] = chosen
            continue
        unset_is_zero = kind.endswith("0")
        is_float = kind.startswith("float")
        start = 0 if unset_is_zero else default
        value = url_widgets.number(_(label), key=widget_key, min_value=(0.0 if is_float else -1),
                                   max_value=(1.0 if is_float else 10**12),
                                   value=float(start) if is_float else int(start),
                                   step=0.01 if is_float else 1, help=_knob_help(kb, engine, key))
        if unset_is_zero and value == 0:
            continue
        if value != default:
            overrides[key] = value
    return overrides


@dataclass
class PastedCommand:
    """What a pasted launch command set for its engine (explicit keys only) and what it did not understand."""

    engine: str | None
    overrides: dict[str, Any]
    unknown_flags: list[str]
    message: str | None = None
    ignored: list[str] = field(default_factory=list)
    model: str | None = None
    catalog_match: str | None = None  # catalog id whose repo the command serves


def read_launch_command(kb: KnowledgeBase) -> PastedCommand | None:
    """The 'Paste your launch command' box: fills that engine's settings from the command's own flags."""
    command = url_widgets.text_area(_("Paste your launch command"), key="mem_command", height=90, max_chars=4000,
                                    placeholder=_("llama-server -m model.gguf -c 32768 -np 4 -fa on"))
    if not command.strip():
        return None
    try:
        parsed = settings_from_command(command, kb)
    except LaunchCommandError as exc:
        return PastedCommand(None, {}, [], str(exc))
    # In the settings' field order: `model_fields_set` is a set, whose order changed from process to process.
    explicit = {key: getattr(parsed.settings, key) for key in type(parsed.settings).model_fields
                if key in parsed.settings.model_fields_set}
    return PastedCommand(parsed.engine, explicit, parsed.unknown_flags, None,
                         parsed.ignored_keys + parsed.ignored_env, parsed.model, catalog_id_for_repo(kb, parsed.model))


@dataclass
class DraftChoice:
    """The speculative drafter checkpoint the user gives for a pasted command (None: none given)."""

    draft: DraftModel | None
    error: str | None = None


def read_draft_model(kb: KnowledgeBase, weights: WeightsChoice) -> DraftChoice:
    """The drafter a pasted command loads (MLX LM --draft-model, vLLM --speculative-config `model`, SGLang
    --speculative-draft-model-path): a catalog model or its config.json; weights at the target's scheme."""
    ids = list(kb.models.ids)
    choice = url_widgets.selectbox(
        _("Draft model the command loads (speculative decoding)"), ["none", "config-json", *ids], key="mem_draft",
        labels=namer(kb, {"none": _("none given"), "config-json": _("paste its config.json")}),
        help=_("Give the drafter a pasted command names to plan its weights and cache with the target's; the "
               "weights are estimated at the target's precision."))
    if choice == "none":
        return DraftChoice(None)
    try:
        if choice == "config-json":
            text = url_widgets.text_area(_("Draft model's config.json"), key="mem_draft_config", height=100)
            if not text.strip():
                return DraftChoice(None, _("Paste the draft model's config.json to plan it."))
            arch = architecture_from_config(load_config_text(text, "draft config.json"), source="draft config.json")
            label = arch.name
        else:
            arch, label = architecture_from_catalog(choice, kb), choice
        return DraftChoice(draft_model(arch, kb.formats, weights.scheme, label))
    except ServewiseInputError as exc:
        return DraftChoice(None, str(exc))
