"""Schema of knowledge/formats.yaml: file formats, precisions/quantizations, and the engine compatibility matrix.

Three separate things live here on purpose:
- a **file format** says how tensors and metadata are laid out on disk (GGUF, Safetensors, MLX's
  Safetensors layout) and nothing about how many bits a weight has;
- a **quantization** (or plain precision) says how one weight is represented: bits, groups, scales,
  zero points, and whether it is only a storage encoding or also what the kernels execute;
- a **compatibility cell** says what one engine does with one format or quantization family.

Bits per weight are not typed here: ggml types name their `ggml_type` and the figure comes from
`gguf.constants.GGML_QUANT_SIZES`; group schemes give their block layout and the calculators derive the
figure (see `calculators.model.weights`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from gguf import GGMLQuantizationType
from pydantic import Field, StringConstraints, model_validator

from knowledge.common import Frozen, Sourced, Verified
from knowledge.engines import STATUS_ORDER, HardwareBackend

#: Stable lower-case identifiers: they end up in URLs (`?formats_format=q4_k`), so never rename lightly.
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40)]

#: The shared engine vocabulary (COMMON.md); secondary engines may appear as optional matrix rows.
PRIMARY_ENGINE_IDS = ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm")
SECONDARY_ENGINE_IDS = ("tensorrt-llm", "tgi", "lmdeploy")


class CompatStatus(StrEnum):
    """What an engine does with a format or quantization, from most to least direct."""

    NATIVE = "native"  # loads and runs it as a maintained, in-tree path
    EXPERIMENTAL = "experimental"  # in-tree but labelled experimental/beta by the project
    VIA_PLUGIN = "via-plugin"  # needs an out-of-tree package the project points to
    CONVERT_FIRST = "convert-first"  # a documented conversion step turns it into something the engine runs
    NOT_SUPPORTED = "not-supported"  # no loader found in the engine's source or docs
    UNKNOWN = "unknown"  # looked, could not establish


class Describes(StrEnum):
    """Whether a representation is only how bytes are stored, or also what the kernels compute with."""

    STORAGE = "storage"  # decoded (dequantized) before or while computing; memory saving only
    EXECUTION = "execution"  # the arithmetic itself runs in this type (e.g. FP8 tensor cores)
    STORAGE_AND_EXECUTION = "storage-and-execution"  # dedicated kernels consume the packed form directly


class Scope(StrEnum):
    """Which weights a scheme quantizes; the rest stay in 16-bit (or the checkpoint's float type)."""

    ALL = "all"  # every weight tensor at this type (plain precisions, pure ggml types)
    LINEAR_LAYERS = "linear-layers"  # transformer linear layers only: embeddings and lm_head stay 16-bit
    MOE_EXPERTS = "moe-experts"  # only the routed experts' weights (gpt-oss MXFP4)


class FileFormat(Sourced):
    """A container on disk: what it stores, and what it does NOT tell you."""

    id: Slug
    name: str = Field(min_length=1)
    extensions: tuple[str, ...] = ()
    stores: str = Field(min_length=10, description="what the file holds, in our own words")
    does_not_imply: str = Field(min_length=10, description="the common misreading this format invites")


class GroupLayout(Frozen):
    """How one quantized weight and its share of group metadata are stored.

    Bits per weight = weight_bits + (scale_bits + zero_bits) / group_size; a scheme with one scale per
    tensor (group_size None) is counted as weight_bits, which is exact to far below 0.01 bit.
    """

    weight_bits: float = Field(gt=0, le=32)
    group_size: int | None = Field(default=None, gt=0, description="weights sharing one scale; None = per tensor/row")
    scale_bits: float = Field(default=0, ge=0, description="bits of scale metadata per group (incl. 2nd-level scales)")
    zero_bits: float = Field(default=0, ge=0, description="bits of zero point / bias per group")


class Quantization(Sourced):
    """One precision or quantization scheme, with the layout its bits per weight follow from."""

    id: Slug
    name: str = Field(min_length=1)
    family: Slug = Field(description="matrix column this scheme belongs to")
    describes: Describes
    scope: Scope = Scope.ALL
    ggml_type: str | None = Field(default=None, description="GGMLQuantizationType member; size from GGML_QUANT_SIZES")
    layout: GroupLayout | None = None
    layout_note: str = Field(min_length=10, description="what one block/group holds, in our own words")
    containers: tuple[Slug, ...] = Field(min_length=1, description="file format ids that carry this scheme")
    note: str = ""

    @model_validator(mode="after")
    def _one_size_rule(self) -> Quantization:
        if self.ggml_type is not None and self.layout is not None:
            raise ValueError("give either ggml_type (sizes come from gguf) or layout, not both")
        if self.ggml_type is not None and self.ggml_type not in GGMLQuantizationType.__members__:
            raise ValueError(f"ggml_type {self.ggml_type!r} is not a gguf.GGMLQuantizationType member")
        return self

    @property
    def bits_defined(self) -> bool:
        """True when the scheme fixes its bits per weight (a ggml type or a group layout)."""
        return self.ggml_type is not None or self.layout is not None


class FileMix(Sourced):
    """A GGUF file type such as Q4_K_M: a recipe mixing ggml types per tensor, so only a measured bpw exists."""

    id: Slug
    name: str = Field(min_length=1)
    main_type: Slug = Field(description="quantization id of the type most tensors get")
    measured_bits_per_weight: float = Field(gt=0, le=32)
    measured_on: str = Field(min_length=3, description="model the figure was measured on")
    note: str = ""


class MatrixEngine(Frozen):
    """A row of the compatibility matrix."""

    id: str
    name: str
    secondary: bool = False


class MatrixColumn(Frozen):
    """A column of the compatibility matrix: a file format or a quantization family."""

    id: Slug
    name: str
    kind: Literal["file-format", "quantization"]


class HardwarePath(Frozen):
    """One way a cell's path runs on one hardware backend, with the limits the engine's source enforces.

    Several paths may name the same backend, most capable first (e.g. FP8 tensor-core kernels from
    compute capability 8.9, weight-only kernels from 7.5): the first path the hardware satisfies wins.
    """

    backend: HardwareBackend
    status: CompatStatus
    min_compute_capability: float | None = Field(
        default=None, ge=1, le=20, description="NVIDIA CUDA compute capability as major.minor (7.5 = Turing)"
    )
    gpu_archs: tuple[str, ...] = Field(
        default=(), description="GPU architecture targets the source restricts this path to (AMD gfx names)"
    )
    kernel: str = Field(default="", description="the engine's name for the path or kernel, when it has one")
    note: str = ""

    @model_validator(mode="after")
    def _limits_fit_the_backend(self) -> HardwarePath:
        if self.min_compute_capability is not None and self.backend != "cuda":
            raise ValueError(f"min_compute_capability only applies to cuda, not {self.backend!r}")
        return self


class HardwareVerdict(Frozen):
    """What a cell means for one machine: the status of the best path it satisfies, and why.

    `refused_by` says which limit ruled the path out when the status is not-supported because of the
    hardware ("compute-capability", "gpu-arch", or "backend" when no path exists for it).
    """

    engine: str
    target: str
    status: CompatStatus
    hardware_dependent: bool
    path: HardwarePath | None = None
    refused_by: Literal["compute-capability", "gpu-arch", "backend"] | None = None
    required_compute_capability: float | None = None
    actual_compute_capability: float | None = None
    required_gpu_archs: tuple[str, ...] = ()
    note: str
    source: str
    verified: Verified


class CompatibilityCell(Sourced):
    """What one engine does with one format/quantization family, with the reason in our words.

    `status` is the most direct path the engine has anywhere. When it depends on the hardware,
    `hardware` lists each backend's path with its limits, and `other_backends` is the status of every
    backend not listed; `bit_widths` and `group_sizes` are the weight layouts the loader accepts
    (group size -1 = one group per output channel). `how_to_enable` says what a user must do first.
    """

    engine: str
    target: Slug
    status: CompatStatus
    note: str = Field(min_length=10)
    hardware: tuple[HardwarePath, ...] = ()
    other_backends: CompatStatus = CompatStatus.UNKNOWN
    bit_widths: tuple[float, ...] = ()
    group_sizes: tuple[int, ...] = ()
    how_to_enable: str = ""

    @model_validator(mode="after")
    def _headline_is_the_best_path(self) -> CompatibilityCell:
        if self.hardware:
            best = min((path.status for path in self.hardware), key=STATUS_ORDER.index)
            if best != self.status:
                raise ValueError(
                    f"status {self.status.value!r} but the most direct hardware path is {best.value!r}"
                )
        bad = [g for g in self.group_sizes if g == 0 or g < -1]
        if bad:
            raise ValueError(f"group sizes must be positive or -1 (per channel): {bad}")
        return self

    @property
    def hardware_dependent(self) -> bool:
        """True when the cell's answer changes with the hardware backend or GPU generation."""
        return bool(self.hardware)

    def on_hardware(
        self,
        backends: tuple[str, ...] | None,
        compute_capability: float | None = None,
        gpu_arch: str | None = None,
    ) -> HardwareVerdict:
        """The cell's verdict for a machine driven by `backends` (best first), e.g. ("cuda", "vulkan").

        `compute_capability` (NVIDIA, e.g. 8.9) and `gpu_arch` (AMD gfx target) narrow the paths; when
        they are None the first path of a backend is taken. Backends the cell lists decide before any it
        does not list (those get `other_backends`). `backends` None = no hardware chosen, which gives the
        headline status.
        """
        if backends is None or not self.hardware:
            return self._verdict(self.status, None, self.note)
        listed = {path.backend for path in self.hardware}
        # A backend the cell lists was read; an unlisted one only decides when no listed backend applies.
        chosen: list[str] = [b for b in backends if b in listed] or list(backends)
        verdicts = [self._on_backend(backend, compute_capability, gpu_arch) for backend in chosen]
        return min(verdicts, key=lambda v: STATUS_ORDER.index(v.status)) if verdicts else self._verdict(
            self.other_backends, None, self.note, refused_by="backend"
        )

    def _on_backend(self, backend: str, compute_capability: float | None, gpu_arch: str | None) -> HardwareVerdict:
        paths = [path for path in self.hardware if path.backend == backend]
        if not paths:
            return self._verdict(self.other_backends, None, self.note, refused_by="backend")
        refusal: dict = {}
        for path in paths:
            if (
                path.min_compute_capability is not None
                and compute_capability is not None
                and compute_capability < path.min_compute_capability
            ):
                refusal = refusal or {
                    "refused_by": "compute-capability",
                    "required_compute_capability": path.min_compute_capability,
                    "actual_compute_capability": compute_capability,
                }
                refusal["required_compute_capability"] = min(
                    refusal["required_compute_capability"], path.min_compute_capability
                )
                continue
            if path.gpu_archs and gpu_arch is not None and gpu_arch not in path.gpu_archs:
                refusal = refusal or {"refused_by": "gpu-arch", "required_gpu_archs": path.gpu_archs}
                continue
            return self._verdict(path.status, path, path.note or self.note,
                                 actual_compute_capability=compute_capability)
        return self._verdict(CompatStatus.NOT_SUPPORTED, None, self.note, **refusal)

    def _verdict(self, status: CompatStatus, path: HardwarePath | None, note: str, **extra) -> HardwareVerdict:
        return HardwareVerdict(
            engine=self.engine, target=self.target, status=status, hardware_dependent=self.hardware_dependent,
            path=path, note=note, source=self.source, verified=self.verified, **extra,
        )


class FormatsSection(Frozen):
    """knowledge/formats.yaml, validated and cross-checked."""

    file_formats: tuple[FileFormat, ...] = Field(min_length=1)
    quantizations: tuple[Quantization, ...] = Field(min_length=1)
    file_mixes: tuple[FileMix, ...] = ()
    engines: tuple[MatrixEngine, ...] = Field(min_length=1)
    columns: tuple[MatrixColumn, ...] = Field(min_length=1)
    cells: tuple[CompatibilityCell, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _cross_check(self) -> FormatsSection:
        format_ids = _unique("file_formats", [f.id for f in self.file_formats])
        quant_ids = _unique("quantizations", [q.id for q in self.quantizations])
        _unique("file_mixes", [m.id for m in self.file_mixes])
        engine_ids = _unique("engines", [e.id for e in self.engines])
        column_ids = _unique("columns", [c.id for c in self.columns])
        for engine in self.engines:
            allowed = SECONDARY_ENGINE_IDS if engine.secondary else PRIMARY_ENGINE_IDS
            if engine.id not in allowed:
                raise ValueError(f"engine {engine.id!r} is not in the shared vocabulary {allowed}")
        families = {q.family for q in self.quantizations}
        for column in self.columns:
            if column.kind == "file-format" and column.id not in format_ids:
                raise ValueError(f"column {column.id!r} is a file-format column but no file format has that id")
            if column.kind == "quantization" and column.id not in families:
                raise ValueError(f"column {column.id!r} is a quantization column but no quantization has that family")
        for quant in self.quantizations:
            if quant.family not in column_ids:
                raise ValueError(f"quantization {quant.id!r}: family {quant.family!r} is not a matrix column")
            for container in quant.containers:
                if container not in format_ids:
                    raise ValueError(f"quantization {quant.id!r}: container {container!r} is not a file format id")
        for mix in self.file_mixes:
            if mix.main_type not in quant_ids:
                raise ValueError(f"file mix {mix.id!r}: main_type {mix.main_type!r} is not a quantization id")
        seen: set[tuple[str, str]] = set()
        for cell in self.cells:
            if cell.engine not in engine_ids:
                raise ValueError(f"cell {cell.engine}/{cell.target}: engine {cell.engine!r} is not a matrix engine")
            if cell.target not in column_ids:
                raise ValueError(f"cell {cell.engine}/{cell.target}: target {cell.target!r} is not a matrix column")
            if (cell.engine, cell.target) in seen:
                raise ValueError(f"cell {cell.engine}/{cell.target} appears twice")
            seen.add((cell.engine, cell.target))
        for engine in self.engines:
            if engine.secondary:
                continue
            missing = [c for c in column_ids if (engine.id, c) not in seen]
            if missing:
                raise ValueError(f"engine {engine.id!r} has no cell for {missing} (write status: unknown instead)")
        return self

    def cell(self, engine: str, target: str) -> CompatibilityCell | None:
        """The matrix cell for an engine and a column id, or None when the matrix has no such cell."""
        return next((c for c in self.cells if c.engine == engine and c.target == target), None)

    def file_format(self, format_id: str) -> FileFormat | None:
        """The file format with this id, or None."""
        return next((f for f in self.file_formats if f.id == format_id), None)

    def quantization(self, quant_id: str) -> Quantization | None:
        """The quantization with this id, or None."""
        return next((q for q in self.quantizations if q.id == quant_id), None)

    def file_mixes_by_bits(self) -> tuple[FileMix, ...]:
        """The GGUF file mixes from fewest to most measured bits per weight (Q2_K ... F16), the order of llama.cpp's
        tools/quantize/README.md table within each family; a reader compares sizes down a list."""
        return tuple(sorted(self.file_mixes, key=lambda m: m.measured_bits_per_weight))

    def weight_scheme_ids(self) -> list[str]:
        """Ids a weight precision can be chosen from: the quantizations in the knowledge base's order, then the
        GGUF file mixes by bits per weight (`file_mixes_by_bits`)."""
        return [q.id for q in self.quantizations] + [m.id for m in self.file_mixes_by_bits()]

    def file_mix(self, mix_id: str) -> FileMix | None:
        """The GGUF file mix with this id, or None."""
        return next((m for m in self.file_mixes if m.id == mix_id), None)

    def column(self, column_id: str) -> MatrixColumn | None:
        """The matrix column with this id, or None."""
        return next((c for c in self.columns if c.id == column_id), None)

    def engine(self, engine_id: str) -> MatrixEngine | None:
        """The matrix engine row with this id, or None."""
        return next((e for e in self.engines if e.id == engine_id), None)

    def members(self, column_id: str) -> tuple[Quantization, ...]:
        """Quantizations grouped under a quantization column (empty for file-format columns)."""
        return tuple(q for q in self.quantizations if q.family == column_id)


def _unique(section: str, ids: list[str]) -> set[str]:
    """Return the ids as a set, refusing duplicates with a message naming the section."""
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{section}: duplicate ids {duplicates}")
    return set(ids)


__all__ = [
    "PRIMARY_ENGINE_IDS",
    "SECONDARY_ENGINE_IDS",
    "CompatStatus",
    "CompatibilityCell",
    "Describes",
    "FileFormat",
    "FileMix",
    "FormatsSection",
    "GroupLayout",
    "HardwarePath",
    "HardwareVerdict",
    "MatrixColumn",
    "MatrixEngine",
    "Quantization",
    "Scope",
]
