"""Read a local GGUF file's header: the model's attention geometry and its exact weight bytes.

`gguf.GGUFReader` memory-maps the file and parses only the key/value metadata and the tensor table;
tensor data is never read. Layer patterns that llama.cpp hard-codes per architecture instead of
storing in the file (which layers slide) follow src/llama-model.cpp (`set_swa_pattern` calls) and
src/llama-hparams.cpp, ggml-org/llama.cpp @01b77b57, read 2026-11-30.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture, MoEGeometry
from calculators.model.config_fields import MAX_LAYERS
from calculators.model.hf_config import mamba_state_elements

GGUF_MAGIC = b"GGUF"

#: llama.cpp's hard-coded sliding-window period per architecture: layer il slides when
#: il % n < n - 1 (llama_hparams::set_swa_pattern with dense_first false).
_SWA_PERIOD_BY_ARCH = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2, "cohere2": 4}


@dataclass(frozen=True)
class GgufHeader:
    """What a GGUF header says: architecture, exact weight bytes, and the tensor storage types used."""

    architecture: ModelArchitecture
    weights_bytes: int  # sum of every tensor's stored bytes (exact, as laid out in the file)
    tensor_count: int
    tensor_types: dict[str, int]  # ggml type name (e.g. "Q4_K") -> number of tensors stored that way
    file_bytes: int
    file_type: int | None  # general.file_type (llama.cpp's LLAMA_FTYPE), when present
    chat_template: str | None = None  # tokenizer.chat_template, the Jinja template llama-server and Ollama use
    pooling_type: str | None = None  # <arch>.pooling_type as a servewise pooling slug (embedding models)


def read_gguf_header(path: str | Path) -> GgufHeader:
    """Parse a GGUF file's metadata and tensor table (no tensor data) into a `GgufHeader`."""
    file = Path(path)
    _check_magic(file)
    from gguf import GGUFReader  # imported here: only this reader needs numpy's memmap machinery

    try:
        reader = GGUFReader(file, "r")
    except (ValueError, IndexError, OSError, KeyError) as exc:
        raise ServewiseInputError(_("{name} starts like a GGUF file but its header cannot be read ({exc})").format(
                                    name=file.name, exc=exc)) from exc
    fields = {name: field.contents() for name, field in reader.fields.items() if not name.startswith("tokenizer.")}
    arch_name = fields.get("general.architecture")
    if not isinstance(arch_name, str):
        raise ServewiseInputError(_("{name} has no general.architecture key; cannot tell which model it "
                                    "holds").format(name=file.name))
    types = Counter(tensor.tensor_type.name for tensor in reader.tensors)
    tokens = reader.fields.get("tokenizer.ggml.tokens")  # counted, not decoded: it can hold 250k strings
    token_count = len(tokens.data) if tokens is not None else None
    try:
        arch = _architecture(fields, arch_name, file, token_count)
    except ServewiseInputError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        # A key holding a string, a NaN/inf float or an array where llama.cpp stores one whole number.
        raise ServewiseInputError(
            _("{name}: a '{arch_name}.*' header value has the wrong type or range ({exc})").format(
              name=file.name, arch_name=arch_name, exc=exc)
        ) from exc
    total = sum(int(tensor.n_elements) for tensor in reader.tensors)
    # Routed experts are stored stacked in `*_exps` tensors (llama.cpp naming); per token only
    # n_active of n_experts of them run.
    experts = sum(int(tensor.n_elements) for tensor in reader.tensors if "_exps" in tensor.name)
    active = total
    if arch.moe and arch.moe.n_experts:
        active = total - experts * (arch.moe.n_experts - arch.moe.n_active) // arch.moe.n_experts
    return GgufHeader(
        architecture=replace(arch, params_total=total, params_active=active),
        weights_bytes=int(sum(int(tensor.n_bytes) for tensor in reader.tensors)),
        tensor_count=len(reader.tensors),
        tensor_types=dict(sorted(types.items())),
        file_bytes=file.stat().st_size,
        file_type=fields.get("general.file_type"),
        chat_template=_chat_template(reader),
        pooling_type=_POOLING_TYPES.get(fields.get(f"{arch_name}.pooling_type")),
    )


#: llama.cpp's enum llama_pooling_type (include/llama.h) -> servewise pooling slug; 0 (none) pools nothing
# Keyed by the file's value, absent (None) included: .get(None) is None.
_POOLING_TYPES: dict[int | None, str] = {1: "mean", 2: "cls", 3: "last_token", 4: "rank"}


def _chat_template(reader) -> str | None:
    """The GGUF's tokenizer.chat_template string, or None when the file carries none."""
    field = reader.fields.get("tokenizer.chat_template")
    if field is None:
        return None
    value = field.contents()
    return value if isinstance(value, str) and value.strip() else None


def _check_magic(file: Path) -> None:
    """Refuse anything that does not start with the 4-byte GGUF magic, with a message saying so."""
    try:
        with file.open("rb") as handle:
            head = handle.read(4)
    except OSError as exc:
        raise ServewiseInputError(_("cannot read {file}: {value}").format(
                                    file=file, value=exc.strerror or exc)) from exc
    if head != GGUF_MAGIC:
        raise ServewiseInputError(
            _("{name} is not a GGUF file (it does not start with 'GGUF'); give a .gguf model file, or a "
              "config.json for a Safetensors model").format(name=file.name)
        )


def _key(fields: dict[str, Any], arch: str, suffix: str, file: Path, required: bool = True) -> Any:
    """`{arch}.{suffix}` from the header; a missing required key names itself and the file."""
    value = fields.get(f"{arch}.{suffix}")
    if value is None and required:
        raise ServewiseInputError(
            _("{name}: GGUF key '{arch}.{suffix}' is missing; the file's header is incomplete").format(
              name=file.name, arch=arch, suffix=suffix)
        )
    return value


def _count(value: Any, name: str, file: Path) -> int:
    """A non-negative whole number from the header; anything else names the key and the file."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ServewiseInputError(_("{name}: {name_2} is {value!r}; expected a whole number").format(
                                    name=file.name, name_2=name, value=value))
    return value


def _per_layer(value: Any, n_layers: int, name: str, file: Path) -> list[int]:
    """A GGUF value that is either one number for every layer or an array with one entry per layer."""
    if isinstance(value, list):
        if len(value) != n_layers:
            raise ServewiseInputError(_("{name}: {name_2} has {count} entries for {n_layers} layers").format(
                                        name=file.name, name_2=name, count=len(value), n_layers=n_layers))
        return [int(v) for v in value]
    return [int(value)] * n_layers


def _sliding_layers(fields: dict[str, Any], arch: str, n_layers: int, file: Path) -> list[bool] | None:
    """Which layers slide: the file's own pattern key if present, else llama.cpp's per-architecture rule."""
    pattern = fields.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list):
        return [bool(p) for p in _per_layer(pattern, n_layers, "attention.sliding_window_pattern", file)]
    period = int(pattern) if pattern is not None else _SWA_PERIOD_BY_ARCH.get(arch)
    if period is None:
        return None
    return [period == 0 or i % period < period - 1 for i in range(n_layers)]


def _architecture(fields: dict[str, Any], arch: str, file: Path, token_count: int | None) -> ModelArchitecture:
    """Layer-by-layer geometry from llama.cpp's GGUF keys (`{arch}.block_count`, `.attention.*`, `.ssm.*`)."""
    n_layers = _count(_key(fields, arch, "block_count", file), "block_count", file)
    if n_layers > MAX_LAYERS:
        raise ServewiseInputError(
            _("{name}: block_count is {n_layers}; servewise accepts at most {max_layers} layers").format(
              name=file.name, n_layers=n_layers, max_layers=MAX_LAYERS)
        )
    n_heads_per_layer = _per_layer(
        _key(fields, arch, "attention.head_count", file, required=False) or 0, n_layers, "head_count", file
    )
    kv_raw = _key(fields, arch, "attention.head_count_kv", file, required=False)
    kv_per_layer = _per_layer(kv_raw if kv_raw is not None else n_heads_per_layer, n_layers, "head_count_kv", file)
    hidden = int(_key(fields, arch, "embedding_length", file))
    n_heads = max(n_heads_per_layer) if n_heads_per_layer else 0
    # llama.cpp: key/value length default to n_embd / n_head when the file has none.
    default_head = hidden // n_heads if n_heads else 0
    key_len = int(_key(fields, arch, "attention.key_length", file, required=False) or default_head)
    value_len = int(_key(fields, arch, "attention.value_length", file, required=False) or default_head)
    window = _key(fields, arch, "attention.sliding_window", file, required=False)
    notes: list[str] = []

    kv_lora = _key(fields, arch, "attention.kv_lora_rank", file, required=False)
    conv_kernel = _key(fields, arch, "ssm.conv_kernel", file, required=False)
    recurrent = None
    if conv_kernel:
        conv, state = mamba_state_elements(
            int(conv_kernel),
            int(_key(fields, arch, "ssm.state_size", file)),
            int(_key(fields, arch, "ssm.inner_size", file)),
            int(_key(fields, arch, "ssm.group_count", file, required=False) or 0),
        )
        recurrent = LayerGeometry(
            kind=LayerKind.RECURRENT, recurrent_conv_elements=conv, recurrent_state_elements=state
        )
    interval = _key(fields, arch, "full_attention_interval", file, required=False)

    sliding = _sliding_layers(fields, arch, n_layers, file) if window else None
    if window and sliding is None:
        notes.append(
            _("the file declares a {window}-token sliding window but not which layers use it; all layers "
              "are counted as full attention (an upper bound)").format(window=window)
        )
    layers: list[LayerGeometry] = []
    for i in range(n_layers):
        is_recurrent = recurrent is not None and (
            (interval and (i + 1) % int(interval) != 0) or (not interval and kv_per_layer[i] == 0)
        )
        if is_recurrent and recurrent is not None:  # is_recurrent already implies it; mypy cannot see that
            layers.append(recurrent)
        elif kv_lora:
            layers.append(
                LayerGeometry(
                    kind=LayerKind.MLA,
                    n_kv_heads=kv_per_layer[i],
                    head_dim_k=int(_key(fields, arch, "attention.key_length_mla", file, required=False) or key_len),
                    head_dim_v=int(_key(fields, arch, "attention.value_length_mla", file, required=False) or value_len),
                    kv_lora_rank=int(kv_lora),
                    qk_rope_head_dim=int(_key(fields, arch, "rope.dimension_count", file)),
                )
            )
        else:
            slides = bool(sliding and sliding[i])
            layers.append(
                LayerGeometry(
                    kind=LayerKind.SLIDING if slides else LayerKind.FULL,
                    n_kv_heads=kv_per_layer[i],
                    head_dim_k=key_len,
                    head_dim_v=value_len,
                    sliding_window_tokens=int(window) if slides else None,
                )
            )
    vocab = _key(fields, arch, "vocab_size", file, required=False) or token_count
    context = _key(fields, arch, "context_length", file, required=False)
    expert_count = _key(fields, arch, "expert_count", file, required=False)
    moe = None
    if expert_count:
        moe = MoEGeometry(
            n_experts=int(expert_count),
            n_active=int(_key(fields, arch, "expert_used_count", file)),
            n_shared=int(_key(fields, arch, "expert_shared_count", file, required=False) or 0),
            expert_intermediate_size=int(_key(fields, arch, "expert_feed_forward_length", file, required=False) or 0),
            n_dense_layers=int(_key(fields, arch, "leading_dense_block_count", file, required=False) or 0),
        )
    return ModelArchitecture(
        name=str(fields.get("general.name") or file.stem),
        family=arch,
        layers=tuple(layers),
        n_heads=n_heads,
        hidden_size=hidden,
        vocab_size=int(vocab or 0),
        max_context_tokens=int(context) if context is not None else None,
        moe=moe,
        is_embedding_model=fields.get(f"{arch}.pooling_type") not in (None, 0),
        source=str(file),
        notes=tuple(notes),
    )
