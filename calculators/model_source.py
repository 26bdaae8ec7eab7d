"""One entry point for "which model?": a config.json file, a hub repo id, a GGUF file or a catalog id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from calculators.architecture import ModelArchitecture
from calculators.errors import ServewiseInputError


@dataclass(frozen=True)
class ResolvedModel:
    """A model's architecture and, when its file says so exactly, its weight bytes."""

    architecture: ModelArchitecture
    weights_bytes: int | None  # exact only from a GGUF header; None means estimate from parameters
    tensor_types: dict[str, int] | None = None  # GGUF storage types in use (e.g. {"Q4_K": 193, "F32": 65})


def resolve_model(
    *,
    hf_config: str | Path | None = None,
    hf_model: str | None = None,
    gguf: str | Path | None = None,
    model: str | None = None,
) -> ResolvedModel:
    """Architecture from exactly one source, as the CLI's --hf-config / --hf-model / --gguf / --model."""
    given = {
        name: value
        for name, value in (("hf_config", hf_config), ("hf_model", hf_model), ("gguf", gguf), ("model", model))
        if value
    }
    if len(given) != 1:
        raise ServewiseInputError(
            "give exactly one model source: a config.json path, a Hugging Face repo id, a .gguf path or a catalog id"
            + (f" (got {', '.join(given)})" if given else "")
        )
    if hf_config:
        from calculators.hf_config import architecture_from_config_file

        return ResolvedModel(architecture_from_config_file(hf_config), weights_bytes=None)
    if hf_model:
        from calculators.hf_hub import architecture_from_hub

        return ResolvedModel(architecture_from_hub(hf_model), weights_bytes=None)
    if gguf:
        from calculators.gguf_header import read_gguf_header

        header = read_gguf_header(gguf)
        return ResolvedModel(header.architecture, weights_bytes=header.weights_bytes, tensor_types=header.tensor_types)
    from calculators.catalog import architecture_from_catalog

    return ResolvedModel(architecture_from_catalog(str(model)), weights_bytes=None)
