"""ggml tensor types as ggml stores them: values per block and bytes per block, read from the `gguf` package.

The sizes are never retyped here: `gguf.constants.GGML_QUANT_SIZES` is the field's own table (q8_0 is 34
bytes per 32 values, q4_K 144 bytes per 256). Names are accepted case-insensitively ("q4_K", "Q4_K", "q4_k").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gguf import GGMLQuantizationType
from gguf.constants import GGML_QUANT_SIZES

from calculators.errors import ServewiseInputError
from calculators.i18n import _


@dataclass(frozen=True)
class GgmlBlock:
    """One ggml type's storage unit: `block_values` values take `block_bytes` bytes."""

    type_name: str
    block_values: int
    block_bytes: int

    @property
    def bits_per_weight(self) -> Fraction:
        """Exact bits per stored value (e.g. 34 * 8 / 32 = 17/2 for q8_0)."""
        return Fraction(self.block_bytes * 8, self.block_values)


def ggml_type(type_name: str) -> GGMLQuantizationType:
    """The gguf enum member for a ggml type name, case-insensitive; unknown names are a user error."""
    member = GGMLQuantizationType.__members__.get(type_name.strip().upper())
    if member is None:
        known = ", ".join(name.lower() for name in GGMLQuantizationType.__members__)
        raise ServewiseInputError(_("unknown ggml type {type_name!r}; known types: {known}").format(
                                    type_name=type_name, known=known))
    return member


def ggml_block(type_name: str) -> GgmlBlock:
    """Values per block and bytes per block for a ggml type, from gguf's GGML_QUANT_SIZES."""
    member = ggml_type(type_name)
    block_values, block_bytes = GGML_QUANT_SIZES[member]
    return GgmlBlock(type_name=member.name, block_values=block_values, block_bytes=block_bytes)


def ggml_tensor_bytes(type_name: str, n_elements: int) -> int:
    """Exact bytes of a tensor of `n_elements` values stored as `type_name` (whole blocks only, as ggml requires)."""
    if n_elements < 0:
        raise ServewiseInputError(_("a tensor cannot have a negative number of elements"))
    block = ggml_block(type_name)
    if n_elements % block.block_values:
        raise ServewiseInputError(
            _("{type_name} stores values in blocks of {block_values}; {n_elements} elements is not a whole "
              "number of blocks").format(
              type_name=block.type_name, block_values=block.block_values, n_elements=n_elements)
        )
    return n_elements // block.block_values * block.block_bytes
