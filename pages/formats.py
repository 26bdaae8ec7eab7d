"""Which engine runs which file format and quantization, and why format, precision and compatibility are separate."""

import pandas as pd
import streamlit as st

from calculators.hardware.compat import HardwareChoice, format_verdict, matrix_on_hardware
from calculators.i18n import N_, _
from calculators.model.ggml_types import ggml_block
from calculators.model.weights import estimate_weights, scheme_bits_per_weight
from calculators.units import GIB
from knowledge.formats import CompatStatus, Quantization
from knowledge.loader import load_knowledge
from knowledge.sources import source_url
from reports.engines_tables import item_name
from reports.formats_figures import (
    DESCRIBES_WORDS,
    SCOPE_WORDS,
    SHORT_LABELS,
    STATUS_WORDS,
    compatibility_grid_svg,
)
from reports.names import namer
from reports.numbers import compact, number
from reports.tables import columns_markdown, localized_frame
from ui import deferred, url_widgets
from ui.markdown_text import literal
from ui.markup import show_svg
from ui.state_cache import drawn_per_input_state

kb = load_knowledge()
formats = kb.formats
engine_ids = [e.id for e in formats.engines]
column_ids = [c.id for c in formats.columns]
ANY_HARDWARE = "any"
hardware_ids = [ANY_HARDWARE, *(g.id for g in kb.gpus.all_gpus)]

STATUS_BADGE = {
    CompatStatus.NATIVE: ("green", N_("loads and runs it in-tree")),
    CompatStatus.EXPERIMENTAL: ("orange", N_("in-tree, but the project labels it experimental")),
    CompatStatus.VIA_PLUGIN: ("blue", N_("needs an extra out-of-tree package")),
    CompatStatus.CONVERT_FIRST: ("violet", N_("a documented conversion step comes before serving")),
    CompatStatus.NOT_SUPPORTED: ("gray", N_("no loader found in its source or docs")),
    CompatStatus.UNKNOWN: ("gray", N_("servewise could not establish it")),
}

st.title(_("Formats & compatibility"))
st.write(
    _("Which engine can serve which weights, and what each format or quantization actually stores. "
    "Every cell below names where it was read and the version it was read from.")
)

# Closed at first: open, its ~600 px of prose pushed the matrix (what a link to this page is for) below the fold at
# 1024 px.
with st.expander(_("Three separate decisions: file format, precision, compatibility"), expanded=False):
    bf16 = estimate_weights(formats, 8_030_261_248, "bf16")
    q4km = estimate_weights(formats, 8_030_261_248, "q4_k_m")
    st.markdown(
        _(
            """
- **File format** is the container: how tensors and metadata are laid out on disk. GGUF keeps everything,
  tokenizer and chat template included, in one file, and each tensor carries its own type, so a GGUF can be
  F16 as easily as 2-bit. Safetensors is a plain tensor archive: the architecture and any quantization are
  described next to it (config.json), not by the extension. The format decides *which loader can open the
  file*, not how precise the weights are.
- **Precision or quantization** is how each weight is represented: BF16, FP8 with its scales, AWQ or GPTQ
  integers with a scale and zero point per group, ggml's Q4_K blocks, MLX's affine groups. It decides bytes
  per parameter and, for some schemes, which arithmetic the GPU performs. Two "4-bit" schemes differ in
  layout, overhead, kernels and quality.
- **Compatibility** is whether a given engine, at a given version and on a given hardware backend, has a
  loader *and* kernels for that pair. The same Q4_K_M GGUF is native in llama.cpp, goes through a plugin
  marked experimental in vLLM, and does not load in MLX LM at all.

**Why Q4 in one engine against BF16 in another is not an engine comparison.** An 8B model as a Q4_K_M GGUF
weighs about {q4km}\u00a0GiB; the same model in BF16 about {bf16}\u00a0GiB
({ratio}x more). Token generation mostly streams the weights from memory, so the smaller
file is faster for that reason alone; it also leaves more memory for KV cache (more concurrent sequences),
runs different kernels, and answers with different quality. A gap measured that way mixes all of these.
To compare engines, give them the same checkpoint at the same precision, or compare each at its best format
and say so in the result.
"""
        ).format(
            q4km=number(q4km.bytes / GIB, 2), bf16=number(bf16.bytes / GIB, 2), ratio=number(bf16.bytes / q4km.bytes, 1)
        )
    )

st.subheader(_("Compatibility matrix"))
left, middle, right = st.columns(3)
with left:
    engine_id = url_widgets.selectbox(_("Engine"), engine_ids, key="formats_engine", labels=namer(kb))
with middle:
    column_id = url_widgets.selectbox(_("Format or quantization"), column_ids, key="formats_format", labels=namer(kb))
with right:
    hardware_id = url_widgets.selectbox(
        _("Hardware"),
        hardware_ids,
        key="formats_gpu",
        labels=namer(kb, {ANY_HARDWARE: _("any")}),
        help=_("A catalog accelerator: cells that depend on the GPU generation or backend are read for it."),
    )
url_widgets.show_url_notes()


def show_verdict(engine_id: str, column_id: str, hardware_id: str) -> None:
    """The matrix on the chosen hardware and the chosen cell's verdict and note."""
    choice = HardwareChoice(gpu_id=None if hardware_id == ANY_HARDWARE else hardware_id)
    gpu_name = namer(kb)(choice.gpu_id or "")  # what the captions below call the chosen GPU
    verdicts = matrix_on_hardware(kb, choice)
    show_svg(compatibility_grid_svg(formats, highlight=(engine_id, column_id), verdicts=verdicts))
    if choice.gpu_id is not None:
        st.caption(_("Statuses read for {gpu}; cells marked * depend on the hardware.").format(gpu=gpu_name))
    st.caption(" · ".join(f"**{_(SHORT_LABELS[status])}**: {_(meaning)}"
                          for status, (_colour, meaning) in STATUS_BADGE.items()))

    cell = formats.cell(engine_id, column_id)
    engine = formats.engine(engine_id)
    column = formats.column(column_id)
    st.markdown(f"#### {engine.name} × {_(column.name)}")
    if cell is None:
        st.info(_("The knowledge base has no entry for this pair."))
    else:
        verdict = format_verdict(kb, engine_id, column_id, choice)
        colour, meaning = STATUS_BADGE[verdict.status]
        st.badge(_(STATUS_WORDS[verdict.status]), color=colour)
        st.caption(
            _(meaning) if choice.gpu_id is None else _("{meaning} (on {gpu})").format(meaning=_(meaning), gpu=gpu_name)
        )
        if verdict.refused_by == "compute-capability":
            st.warning(
                _("Needs compute capability {need} or newer; {gpu} has {have}.").format(
                    need=verdict.required_compute_capability, gpu=gpu_name, have=verdict.actual_compute_capability
                ),
                icon=":material/block:",
            )
        elif verdict.refused_by == "gpu-arch":
            st.warning(
                _("Only on {archs}; not on {gpu}.").format(archs=", ".join(verdict.required_gpu_archs), gpu=gpu_name),
                icon=":material/block:",
            )
        elif verdict.path is not None and verdict.path.kernel:
            st.caption(_("Path on this hardware: {kernel}").format(kernel=verdict.path.kernel))
        st.write(_(cell.note))


def show_cell_details(engine_id: str, column_id: str) -> None:
    """The chosen cell's hardware paths, accepted layouts and source, and what its column covers."""
    cell = formats.cell(engine_id, column_id)
    if cell is not None:
        if cell.hardware:
            paths = pd.DataFrame(
                {
                    _("backend"): [item_name(p.backend) for p in cell.hardware],
                    _("status"): [_(STATUS_WORDS[p.status]) for p in cell.hardware],
                    _("min compute capability"): [
                        "" if p.min_compute_capability is None else f"{p.min_compute_capability:g}"
                        for p in cell.hardware
                    ],
                    _("GPU archs"): [", ".join(p.gpu_archs) for p in cell.hardware],
                    _("path"): [p.kernel or "" for p in cell.hardware],
                    _("note"): [_(p.note) if p.note else "" for p in cell.hardware],
                }
            )
            # Columns blank in every row are left out: with all six the Spanish table scrolled sideways at 1024 px.
            st.dataframe(paths.loc[:, (paths != "").any()], hide_index=True, height="content")
            st.caption(_("Backends not listed: {status}.").format(status=_(STATUS_WORDS[cell.other_backends])))
        layout = []  # "Accepted layouts: bit widths 4" read as a word puzzle; each limit is said on its own
        if cell.bit_widths:
            layout.append(_("Bit widths it accepts: {widths}").format(
                widths=", ".join(compact(b, 3) for b in cell.bit_widths)))
        if cell.group_sizes:
            sizes = ", ".join(_("per channel") if g == -1 else str(g) for g in cell.group_sizes)
            layout.append(_("Group sizes it accepts: {sizes}").format(sizes=sizes))
        if layout:
            st.markdown(" · ".join(layout))
        if cell.how_to_enable:
            st.markdown(_("How to enable: `{how}`").format(how=cell.how_to_enable))
        url = source_url(cell.source, cell.verified.version)
        source_text = f"[{cell.source}]({url})" if url else cell.source
        st.markdown(_("Source: {source} — read at {version} on {date}").format(
            source=source_text, version=cell.verified.version, date=f"{cell.verified.date:%Y-%m-%d}"))

    members = formats.members(column_id)
    if members:
        st.markdown(_("**What {column} covers**").format(column=namer(kb)(column_id)))
        # A Markdown table: its long cells wrap (as a dataframe the block layout ran off the side at 1024 px).
        st.markdown(columns_markdown({
            _("scheme"): [_(q.name) for q in members],
            _("bits per weight"): [
                float(bits) if (bits := scheme_bits_per_weight(q)) is not None else _("varies") for q in members
            ],
            _("what one block or group holds"): [_(q.layout_note) if q.layout_note else "" for q in members],
        }, literal=True))
    else:
        fmt = formats.file_format(column_id)
        st.markdown(_("**{format} stores:**").format(format=_(fmt.name)) + " " + _(fmt.stores))
        st.markdown(_("**It does not tell you:**") + " " + _(fmt.does_not_imply))


# Below the widgets everything depends on the three choices (and the reader's language) only: built once per
# choice and replayed on later runs (ui/state_cache.py); the tables at the end depend on the knowledge base only.
drawn_per_input_state(f"formats verdict {engine_id} {column_id} {hardware_id}",
                      lambda: show_verdict(engine_id, column_id, hardware_id))
# A shared link's first run ends with the cell's verdict and note (ui/deferred.py): the tables below it need the
# browser's dataframe scripts (~1.2 MB), which it fetched and parsed while the matrix above was still to be drawn.
deferred.rest_follows()
drawn_per_input_state(f"formats cell details {engine_id} {column_id}", lambda: show_cell_details(engine_id, column_id))


def derivation(quant: Quantization) -> str:
    """How the bits per weight of one scheme follow from its block layout (display text)."""
    if quant.ggml_type is not None:
        block = ggml_block(quant.ggml_type)
        if block.block_values == 1:
            return _("{bytes}\u00a0bytes per value (gguf GGML_QUANT_SIZES)").format(bytes=block.block_bytes)
        return _("{bytes}\u00a0bytes per {values} values (gguf GGML_QUANT_SIZES)").format(
            bytes=block.block_bytes, values=block.block_values)
    if quant.layout is None:
        return _("set by the scheme stored inside")
    layout = quant.layout
    if layout.group_size is None:
        return _("{bits} bits; one scale per tensor or row (counted as 0)").format(bits=compact(layout.weight_bits, 3))
    extra = layout.scale_bits + layout.zero_bits
    return _("{bits} + {extra}/{group} bits (weight + scale/zero per group)").format(
        bits=compact(layout.weight_bits, 3), extra=compact(extra, 3), group=layout.group_size)


#: Width of the bits-per-weight grid's scheme column, in px (the grid is the page column's 564 px at 1024 px).
SCHEME_COLUMN_PX = 290


def show_scheme_tables() -> None:
    """Bits per weight of every scheme, how each is derived, and the measured GGUF file types."""
    st.subheader(_("Bits per weight"))
    st.write(
        _("Per tensor, as each scheme defines it. Scales, zero points and biases count: Q8_0 is 8.5 bits, not 8. "
        "Schemes marked *linear layers* keep embeddings and lm_head in 16-bit, so a whole model lands higher.")
    )
    # Three narrow columns fit at 1024 px; how each figure is derived and its source are one click away (all seven
    # columns scrolled sideways, with the bits per weight out of sight behind the slug column).
    bits_per_weight = [
        float(bits) if (bits := scheme_bits_per_weight(q)) is not None else None for q in formats.quantizations
    ]
    # A container of schemes (compressed-tensors) defines no bits per weight of its own: its cell reads "varies"
    # (the grid drew the missing number as Streamlit's grey "None"), and the knowledge base's reason is said under
    # the table. The number stays missing underneath, so the column still sorts as numbers.
    varies = _("varies")
    st.dataframe(
        localized_frame(pd.DataFrame(
            {
                _("scheme"): [_(q.name) for q in formats.quantizations],
                _("bits per weight"): bits_per_weight,
                _("applies to"): [_(SCOPE_WORDS[q.scope]) for q in formats.quantizations],
            }
        )),
        hide_index=True,
        height="content",  # every row in view: the default height (ten rows) cut the eleventh row in half
        placeholder=varies,  # what a missing value reads as; only the bits per weight can be missing
        # room for the longest name at 1024 px ("compressed-tensors (container of schemes)" was cut at "schemes")
        column_config={_("scheme"): st.column_config.Column(width=SCHEME_COLUMN_PX)},
    )
    for quant in (q for q, bits in zip(formats.quantizations, bits_per_weight, strict=True) if bits is None):
        reason = _(quant.layout_note) if quant.layout_note else derivation(quant)
        st.caption(_("“Varies” for {scheme}: {reason}.").format(scheme=literal(_(quant.name)), reason=literal(reason)))
    with st.expander(_("How each figure is derived, and its source")):
        st.dataframe(
            localized_frame(pd.DataFrame(
                {
                    _("scheme"): [_(q.name) for q in formats.quantizations],
                    _("bits per weight"): bits_per_weight,
                    _("derived from"): [derivation(q) for q in formats.quantizations],
                    _("describes"): [_(DESCRIBES_WORDS[q.describes]) for q in formats.quantizations],
                    _("source"): [source_url(q.source, q.verified.version) or q.source for q in formats.quantizations],
                    "id": [q.id for q in formats.quantizations],
                }
            )),
            hide_index=True,
            height="content",
            placeholder=varies,
            column_config={_("scheme"): st.column_config.Column(pinned=True)},  # wide: the scheme stays in view
        )

    st.markdown(_("**GGUF file types are recipes, not one type**"))
    st.write(
        _("llama-quantize gives some tensors a larger type and keeps norms in F32, so a Q4_K_M file averages more "
        "than Q4_K's 4.5 bits. Only measurements exist, and they depend on the model.")
    )
    mixes = formats.file_mixes_by_bits()
    st.dataframe(
        localized_frame(pd.DataFrame(
            {
                _("file type"): [m.name for m in mixes],
                _("measured bits per weight"): [m.measured_bits_per_weight for m in mixes],
                _("main tensor type"): [m.main_type for m in mixes],
            }
        )),
        hide_index=True,
        height="content",
    )
    # Where and on what each was measured, once (one value for every row, as two more columns it scrolled sideways).
    measured_on = sorted({_(m.measured_on) for m in formats.file_mixes})
    sources = sorted({f"{m.source} @ {m.verified.version}" for m in formats.file_mixes})
    st.caption(_("Measured on {models}; source: {sources}.").format(models=", ".join(measured_on),
                                                                     sources=literal("; ".join(sources))))


drawn_per_input_state("formats scheme tables", show_scheme_tables)
