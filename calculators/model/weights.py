"""Weight memory of a model, in bytes: exact when a file or header gives it, else parameters x bits per weight.

Bits per weight come from the formats knowledge base: ggml types through gguf's GGML_QUANT_SIZES, group
schemes (AWQ, GPTQ, FP8, bitsandbytes, MLX, MXFP4, NVFP4) from their block layout (weight bits plus scale
and zero/bias bits shared by a group), GGUF file mixes (Q4_K_M...) from a figure measured on a named model.
Schemes that leave some tensors in 16-bit (AWQ/GPTQ keep embeddings and lm_head; gpt-oss's MXFP4 covers
only the experts) count those parts at 16 bits when the caller says how many parameters they hold.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.model.ggml_types import ggml_block
from calculators.units import compact, number, percent
from knowledge.formats import FormatsSection, Quantization, Scope

#: Bits of the parts a scheme leaves unquantized (the checkpoints' BF16/FP16).
SIXTEEN_BITS = 16


@dataclass(frozen=True)
class WeightPart:
    """A slice of the weights stored at one bit width."""

    label: str
    params: int
    bits_per_weight: float
    bytes: int


@dataclass(frozen=True)
class WeightsEstimate:
    """Weight bytes of a model with how the figure was obtained.

    `exact` is True only when the bytes were read (file or tensor header), never for parameters x bits.
    `bits_per_weight` is the effective figure over all parameters (None when the parameter count is unknown).
    """

    bytes: int
    bits_per_weight: float | None
    exact: bool
    scheme: str
    basis: str
    source: str
    params: int | None = None
    parts: tuple[WeightPart, ...] = ()
    approximations: tuple[str, ...] = ()


def scheme_bits_per_weight(quant: Quantization) -> Fraction | None:
    """Exact bits per weight a scheme defines (ggml block size or group layout), or None if it defines none.

    Group layouts give weight_bits + (scale_bits + zero_bits) / group_size; e.g. AWQ 4-bit group 128 with a
    16-bit scale and a 4-bit zero: 4 + 20/128 = 4.15625.
    """
    if quant.ggml_type is not None:
        return ggml_block(quant.ggml_type).bits_per_weight
    if quant.layout is None:
        return None
    layout = quant.layout
    overhead = Fraction(0)
    if layout.group_size:
        overhead = (Fraction(layout.scale_bits) + Fraction(layout.zero_bits)) / layout.group_size
    return Fraction(layout.weight_bits) + overhead


def weights_from_file_bytes(n_bytes: int, source: str = "file size") -> WeightsEstimate:
    """Weights as read from a file or header size (bytes, exact; includes whatever metadata the file holds)."""
    if n_bytes <= 0:
        raise ServewiseInputError(_("a weights file size must be a positive number of bytes"))
    return WeightsEstimate(
        bytes=n_bytes,
        bits_per_weight=None,
        exact=True,
        scheme="file",
        basis=_("bytes read from the file"),
        source=source,
    )


def weights_from_safetensors_header(path: str | Path) -> WeightsEstimate:
    """Exact tensor bytes of one .safetensors file from its JSON header (8-byte length, header, data).

    Each tensor's `data_offsets` [begin, end) is the safetensors library's own key (safetensors' TensorInfo).

    Sums each tensor's [begin, end) byte range; `params` counts stored elements, which for packed schemes
    (AWQ/GPTQ int32, MLX uint32) is fewer than the model's logical parameters, so no bits per weight is given.
    """
    try:
        with open(path, "rb") as handle:
            (header_len,) = struct.unpack("<Q", handle.read(8))
            if header_len > 100_000_000:
                raise ServewiseInputError(_("{path}: header length {header_len} is not plausible for "
                                            "Safetensors").format(path=path, header_len=header_len))
            header = json.loads(handle.read(header_len))
    except FileNotFoundError as exc:
        raise ServewiseInputError(_("{path}: no such file").format(path=path)) from exc
    except (struct.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ServewiseInputError(_("{path}: not a Safetensors file ({exc})").format(path=path, exc=exc)) from exc
    if not isinstance(header, dict):
        raise ServewiseInputError(_("{path}: Safetensors header is not a JSON object").format(path=path))
    total_bytes = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, end = entry["data_offsets"]
        except (KeyError, TypeError, ValueError) as exc:
            raise ServewiseInputError(_("{path}: tensor {name!r} has no valid data_offsets").format(
                                        path=path, name=name)) from exc
        total_bytes += end - begin
    return WeightsEstimate(
        bytes=total_bytes,
        bits_per_weight=None,
        exact=True,
        scheme="safetensors-header",
        basis=_("sum of tensor byte ranges in the Safetensors header"),
        source=_("Safetensors header of {name}").format(name=Path(path).name),
    )


def estimate_weights(
    formats: FormatsSection,
    params_total: int,
    scheme_id: str,
    *,
    high_precision_params: int | None = None,
    expert_params: int | None = None,
) -> WeightsEstimate:
    """Weight bytes for `params_total` parameters stored with quantization or GGUF file mix `scheme_id`.

    - GGUF file mixes (q4_k_m...): parameters x the bits per weight measured on the mix's reference model.
    - Schemes quantizing linear layers only (AWQ, GPTQ, FP8, bitsandbytes, NVFP4): `high_precision_params`
      (embeddings + lm_head, see `embedding_params`) are counted at 16 bits; without it everything is
      counted at the quantized width and the result says so.
    - MXFP4 as gpt-oss uses it: `expert_params` (see `moe_expert_params`) at 4.25 bits, the rest at 16.
    Returns bytes rounded up per part; never exact.
    """
    if params_total <= 0:
        raise ServewiseInputError(_("the parameter count must be positive"))
    mix = formats.file_mix(scheme_id)
    if mix is not None:
        mix_bits = Fraction(str(mix.measured_bits_per_weight))
        part = _part(_("all weights (file mix)"), params_total, mix_bits)
        return WeightsEstimate(
            bytes=part.bytes,
            bits_per_weight=float(mix_bits),
            exact=False,
            scheme=mix.id,
            basis=_("{params_total} parameters × {measured_bits_per_weight} bits ({name} as measured)").format(
                    params_total=number(params_total),
                    measured_bits_per_weight=compact(mix.measured_bits_per_weight, 4), name=mix.name),
            source=mix.source,
            params=params_total,
            parts=(part,),
            approximations=(
                _("{name} mixes ggml types per tensor; {bits} bits per weight was measured on {measured_on} and "
                  "differs for other models (read the GGUF header for exact bytes)").format(
                    name=mix.name, bits=compact(mix.measured_bits_per_weight, 4), measured_on=mix.measured_on),
            ),
        )
    quant = formats.quantization(scheme_id)
    if quant is None:
        known = sorted([q.id for q in formats.quantizations] + [m.id for m in formats.file_mixes])
        raise ServewiseInputError(_("unknown quantization {scheme_id!r}; known: {known}").format(
                                    scheme_id=scheme_id, known=', '.join(known)))
    bits = scheme_bits_per_weight(quant)
    if bits is None:
        raise ServewiseInputError(
            _("{name} does not fix a bit width by itself; pick the scheme stored inside it (for example an "
              "FP8, AWQ/GPTQ-style int4 or NVFP4 entry)").format(name=quant.name)
        )
    parts, approximations = _split_by_scope(quant, params_total, bits, high_precision_params, expert_params)
    if quant.layout is not None and quant.layout.group_size is None:
        approximations.append(_("one scale per tensor or per row is counted as zero bytes"))
    if quant.ggml_type is not None:
        approximations.append(
            _("every tensor counted at this one ggml type; real files keep norms in F32 and often mix types")
        )
    total = sum(p.bytes for p in parts)
    return WeightsEstimate(
        bytes=total,
        bits_per_weight=total * 8 / params_total,
        exact=False,
        scheme=quant.id,
        basis=" + ".join(_("{params} × {bits} bits ({label})").format(params=number(p.params),
            bits=compact(float(p.bits_per_weight), 4),
                                                                          label=p.label) for p in parts),
        source=quant.source,
        params=params_total,
        parts=tuple(parts),
        approximations=tuple(approximations),
    )


def _split_by_scope(
    quant: Quantization,
    params_total: int,
    bits: Fraction,
    high_precision_params: int | None,
    expert_params: int | None,
) -> tuple[list[WeightPart], list[str]]:
    """Split the parameters into the quantized part and the part the scheme leaves at 16 bits."""
    approximations = [_("norms and biases are counted with their neighbours (well under {share} of a model)").format(
        share=percent(0.001, 1))]
    if quant.scope is Scope.ALL:
        return [_part(_("all weights"), params_total, bits)], approximations
    if quant.scope is Scope.MOE_EXPERTS:
        if expert_params is None:
            raise ServewiseInputError(
                _("{name} covers only the routed experts' weights; give the expert parameter count (a MoE "
                  "architecture provides it)").format(name=quant.name)
            )
        _check_share(_("expert parameters"), expert_params, params_total)
        return [
            _part(_("routed experts"), expert_params, bits),
            _part(_("attention, router, embeddings, lm_head (16-bit)"), params_total - expert_params, SIXTEEN_BITS),
        ], approximations
    if high_precision_params is None:
        approximations.append(
            _("embeddings and lm_head counted at the quantized width although the scheme keeps them 16-bit; "
            "give their parameter count for a closer figure")
        )
        return [_part(_("all weights"), params_total, bits)], approximations
    _check_share(_("16-bit parameters"), high_precision_params, params_total)
    return [
        _part(_("quantized linear layers"), params_total - high_precision_params, bits),
        _part(_("embeddings and lm_head (16-bit)"), high_precision_params, SIXTEEN_BITS),
    ], approximations


def _check_share(what: str, share: int, params_total: int) -> None:
    """Refuse a sub-count that is negative or larger than the whole model."""
    if not 0 <= share <= params_total:
        raise ServewiseInputError(_("{what} ({share}) must be between 0 and the model's {params_total} "
                                    "parameters").format(what=what, share=number(share),
                                        params_total=number(params_total)))


def _part(label: str, params: int, bits: Fraction | int) -> WeightPart:
    """A weight slice with its bytes rounded up to whole bytes."""
    exact_bits = Fraction(bits)
    return WeightPart(
        label=label,
        params=params,
        bits_per_weight=float(exact_bits),
        bytes=math.ceil(params * exact_bits / 8),
    )


def embedding_params(arch: ModelArchitecture, tied_embeddings: bool) -> int:
    """Parameters in the token embedding and lm_head: vocab x hidden, once if tied, twice if not."""
    if arch.vocab_size <= 0 or arch.hidden_size <= 0:
        raise ServewiseInputError(_("{name}: vocabulary and hidden size are needed to count embedding "
                                    "parameters").format(name=arch.name))
    return arch.vocab_size * arch.hidden_size * (1 if tied_embeddings else 2)


def moe_expert_params(arch: ModelArchitecture) -> int:
    """Parameters of the routed experts: MoE layers x experts x 3 projections x hidden x expert width.

    Gate, up and down projections only; expert biases (gpt-oss has them) and shared experts are left out.
    """
    moe = arch.moe
    if moe is None or moe.expert_intermediate_size <= 0:
        raise ServewiseInputError(_("{name}: not a mixture-of-experts model with a known expert width").format(
                                    name=arch.name))
    moe_layers = arch.n_layers - moe.n_dense_layers
    return moe_layers * moe.n_experts * 3 * arch.hidden_size * moe.expert_intermediate_size


