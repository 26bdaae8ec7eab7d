"""What a team tells the engine-selection wizard: one validated record, the same for page, URL and CLI.

Field values are stable slugs (they travel in shared links and JSON answer files). Contradictions a
person could plausibly type (Apple silicon on Windows, NVLink without NVIDIA GPUs...) are rejected
with a message that says which answers disagree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from calculators.errors import ServewiseInputError, validation_problem
from calculators.i18n import _

Use = Literal["occasional-local", "local-dev", "shared-api", "public-multitenant", "batch", "embeddings"]
Hardware = Literal["nvidia", "amd", "intel", "apple", "cpu"]
WeightFormat = Literal["any", "gguf", "safetensors", "awq", "gptq", "fp8", "mxfp4", "nvfp4", "mlx"]
Length = Literal["short", "long"]
Arrival = Literal["steady", "bursty", "batch"]
Exposure = Literal["localhost", "internal", "internet"]
Skill = Literal["low", "medium", "high"]
OperatingSystem = Literal["linux", "macos", "windows"]
FitsOneCard = Literal["yes", "no", "unknown"]

#: Every answer with the slugs it accepts; pages build their widgets from this, the CLI documents it.
ANSWER_FIELDS_DOC = {
    "use": "occasional-local | local-dev | shared-api | public-multitenant | batch | embeddings",
    "hardware": "nvidia | amd | intel | apple | cpu",
    "gpu_id": "GPU catalog id (knowledge/gpus.yaml) or null",
    "n_gpus": "GPUs per host (0 for CPU-only)",
    "nvlink": "true when the GPUs are linked by NVLink/XGMI",
    "apple_memory_gb": "unified memory of the Mac in GB (Apple silicon only)",
    "host_ram_gb": "host RAM in GB",
    "hosts": "number of hosts",
    "model_id": "model catalog id (knowledge/models.yaml) or null",
    "weight_format": "any | gguf | safetensors | awq | gptq | fp8 | mxfp4 | nvfp4 | mlx",
    "fits_one_card": "yes | no | unknown (computed from the memory model when a model and GPU are given)",
    "concurrent_users": "people or clients sending requests at the same time",
    "prompt_length": "short | long",
    "output_length": "short | long",
    "shared_prefixes": "long common system prompts, multi-turn chat or agents with common histories",
    "tool_calling": "the service must return tool calls",
    "structured_output": "JSON-schema / grammar constrained output is needed",
    "languages": "number of natural languages to serve",
    "arrival": "steady | bursty | batch",
    "slo_metrics": "queue time / TTFT / inter-token latency must be measured against targets",
    "exposure": "localhost | internal | internet",
    "multi_model": "several models must be loaded or switched",
    "lora": "LoRA adapters must be served",
    "cancellation": "requests that have not started answering must be cancellable inside the engine",
    "on_prem": "data must stay on premises",
    "ops_skill": "low | medium | high: the team's experience running GPU services",
    "os": "linux | macos | windows",
}


class WizardAnswers(BaseModel):
    """A team's needs, as slugs and small numbers; defaults describe a small internal shared API."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    use: Use = "shared-api"
    hardware: Hardware = "nvidia"
    gpu_id: str | None = None
    n_gpus: int = Field(default=1, ge=0, le=64)
    nvlink: bool = False
    apple_memory_gb: int | None = Field(default=None, ge=8, le=1024)
    host_ram_gb: int | None = Field(default=None, ge=1, le=65536)
    hosts: int = Field(default=1, ge=1, le=1024)
    model_id: str | None = None
    weight_format: WeightFormat = "any"
    fits_one_card: FitsOneCard = "unknown"
    concurrent_users: int = Field(default=10, ge=1, le=1_000_000)
    prompt_length: Length = "short"
    output_length: Length = "short"
    shared_prefixes: bool = False
    tool_calling: bool = False
    structured_output: bool = False
    languages: int = Field(default=1, ge=1, le=500)
    arrival: Arrival = "steady"
    slo_metrics: bool = False
    exposure: Exposure = "internal"
    multi_model: bool = False
    lora: bool = False
    cancellation: bool = False
    on_prem: bool = False
    ops_skill: Skill = "medium"
    os: OperatingSystem = "linux"

    @model_validator(mode="after")
    def _consistent(self) -> WizardAnswers:
        problems = []
        if self.hardware == "apple" and self.os != "macos":
            problems.append(_("Apple silicon GPUs are used from macOS; set os to macos or pick other hardware"))
        if self.os == "macos" and self.hardware not in ("apple", "cpu"):
            problems.append(_("{hardware} GPUs are not used from macOS here; set os to linux or windows").format(
                              hardware=self.hardware))
        if self.hardware == "cpu" and self.n_gpus > 0:
            problems.append(_("CPU-only hardware with GPUs counted: set n_gpus to 0 or pick the GPU vendor"))
        if self.hardware in ("nvidia", "amd", "intel") and self.n_gpus == 0:
            problems.append(_("{hardware} hardware needs at least one GPU (n_gpus >= 1), or choose cpu").format(
                              hardware=self.hardware))
        if self.nvlink and (self.hardware not in ("nvidia", "amd") or self.n_gpus < 2):
            problems.append(_("NVLink/XGMI links two or more NVIDIA or AMD GPUs; set nvlink to false"))
        if self.apple_memory_gb is not None and self.hardware != "apple":
            problems.append(_("apple_memory_gb only applies to Apple silicon"))
        if self.use == "embeddings" and self.tool_calling:
            problems.append(_("an embeddings/reranking service does not produce tool calls; untick tool_calling"))
        if self.use in ("occasional-local", "local-dev") and self.exposure == "internet":
            problems.append(_("a local tool exposed to the internet is a shared service: pick shared-api or public"))
        if problems:
            raise ValueError("; ".join(problems))
        return self


def parse_answers(data: object) -> WizardAnswers:
    """Validate answers from a dict (JSON file, URL); raise ServewiseInputError naming each bad field."""
    if not isinstance(data, dict):
        raise ServewiseInputError(_("answers must be a JSON object of field: value pairs"))
    try:
        return WizardAnswers.model_validate(data)
    except ValidationError as exc:
        parts = []
        for error in exc.errors():
            field = ".".join(str(p) for p in error["loc"]) or "answers"
            message = validation_problem(error)
            parts.append(f"{field}: {message}" if error["loc"] else message)
        raise ServewiseInputError("; ".join(parts)) from exc
