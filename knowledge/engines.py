"""Schema of knowledge/engines.yaml: what each inference engine is, runs on, loads and lets you tune.

Every group of facts names its `source` and the version it was `verified` at; a value that could not be
established at the source is written `unknown`. The knob records double as the vocabulary other modules
use to read launch commands: `Engine.flag_index()` maps every spelling of a flag (aliases and `--no-`
forms included) to the shared setting key, so keep flags exact.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from knowledge.common import Frozen, KnowledgeError, Sourced, Unknown, Verified

#: Lower-case identifiers that may end up in URLs (`?engines_backend=cuda`): never rename lightly.
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=40)]
SettingKey = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)]

EngineId = Literal["ollama", "llama-cpp", "vllm", "sglang", "mlx-lm", "tensorrt-llm", "tgi", "lmdeploy"]
PRIMARY_ENGINE_IDS: tuple[str, ...] = ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm")
SECONDARY_ENGINE_IDS: tuple[str, ...] = ("tensorrt-llm", "tgi", "lmdeploy")

#: The shared setting keys (COMMON.md) every primary engine's knob table must cover. Engines may add keys.
SHARED_SETTING_KEYS: dict[str, frozenset[str]] = {
    "llama-cpp": frozenset(
        {
            "ctx_size", "parallel", "cache_type_k", "cache_type_v", "flash_attn", "n_gpu_layers", "kv_unified",
            "swa_full", "batch_size", "ubatch_size", "cont_batching", "cache_reuse", "cache_ram", "fit", "metrics",
            "api_key", "host", "port",
        }
    ),
    "ollama": frozenset(
        {
            "num_parallel", "context_length", "kv_cache_type", "flash_attention", "max_loaded_models", "max_queue",
            "keep_alive", "host", "gpu_overhead", "num_gpu",
        }
    ),
    "vllm": frozenset(
        {
            "max_model_len", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "block_size",
            "kv_cache_dtype", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
            "kv_cache_memory_bytes", "enable_prefix_caching", "enable_chunked_prefill", "cpu_offload_gb",
            "quantization", "api_key", "host", "port",
        }
    ),
    "sglang": frozenset(
        {
            "mem_fraction_static", "max_running_requests", "max_total_tokens", "chunked_prefill_size",
            "context_length", "tp_size", "dp_size", "page_size", "kv_cache_dtype", "disable_radix_cache",
            "enable_metrics", "api_key", "host", "port",
        }
    ),
    "mlx-lm": frozenset(
        {
            "max_kv_size", "kv_bits", "kv_group_size", "decode_concurrency", "prompt_concurrency",
            "prompt_cache_size", "host", "port",
        }
    ),
}

#: How directly an engine supports a backend, OS, file format or quantization family. Same words as the
#: formats matrix: native (maintained in-tree path), experimental (in-tree, labelled experimental),
#: via-plugin (out-of-tree package), convert-first (a documented conversion step), not-supported, unknown.
SupportStatus = Literal["native", "experimental", "via-plugin", "convert-first", "not-supported", "unknown"]
USABLE_STATUSES: frozenset[str] = frozenset({"native", "experimental", "via-plugin"})

HardwareBackend = Literal[
    "cuda", "rocm", "metal", "vulkan", "cpu", "intel-xpu", "sycl", "tpu", "ascend-npu", "musa", "opencl", "webgpu",
    "rpc",
]
OperatingSystem = Literal["linux", "macos", "windows"]

#: Which backends drive each hardware vendor (how a wizard answer like "amd" maps onto backend facts).
VENDOR_BACKENDS: dict[str, tuple[str, ...]] = {
    "nvidia": ("cuda", "vulkan"),
    "amd": ("rocm", "vulkan"),
    "intel": ("intel-xpu", "sycl", "vulkan"),
    "apple": ("metal",),
    "cpu": ("cpu",),
}
#: Support statuses from most to least direct, to pick the best of several paths.
STATUS_ORDER: tuple[str, ...] = ("native", "experimental", "via-plugin", "convert-first", "unknown", "not-supported")
#: File formats and quantization families use the ids of the formats knowledge base's matrix columns.
FormatKind = Literal["file-format", "quantization"]

#: Whether an endpoint or capability exists: yes, only when a launch flag enables it, no, or unknown.
Availability = Literal["yes", "needs-flag", "no", "unknown"]
PrefixCacheKind = Literal[
    "automatic-prefix-caching", "radix-attention", "hierarchical-cache", "slot-prompt-cache", "prompt-cache-lru",
    "none", "unknown",
]
MultiGpuMode = Literal["tensor", "pipeline", "data", "expert", "context", "layer-split", "row-split", "replicas"]
KnobType = Literal["int", "float", "bool", "str", "enum", "duration", "size"]
DefaultValue = bool | int | float | str | None


class Support(Frozen):
    """One backend/OS/format the engine was checked against; may carry its own source when it differs."""

    id: Slug
    status: SupportStatus
    note: str = ""
    source: str | None = Field(default=None, min_length=3)
    verified: Verified | None = None

    @model_validator(mode="after")
    def _source_and_version_together(self) -> Support:
        if (self.source is None) != (self.verified is None):
            raise ValueError("an item-level source needs its own verified version and date, and vice versa")
        return self


def _unique_ids(items: tuple[Support, ...]) -> tuple[Support, ...]:
    """Reject a list that names the same id twice."""
    ids = [item.id for item in items]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate ids {duplicates}")
    return items


def _status_of(items: tuple[Support, ...], item_id: str) -> str:
    for item in items:
        if item.id == item_id:
            return item.status
    return "unknown"


class SupportList(Sourced):
    """A group of support facts read at one source (items may override it)."""

    items: tuple[Support, ...] = Field(min_length=1)

    _ids_unique = field_validator("items")(_unique_ids)

    def status_of(self, item_id: str) -> str:
        """Support status of one id, `unknown` when the engine was not checked against it."""
        return _status_of(self.items, item_id)


class FormatSupport(Support):
    """A file format or quantization family (formats-matrix column id) the engine loads."""

    kind: FormatKind


class FormatList(Sourced):
    """File formats and quantization families, each with how directly the engine runs them."""

    items: tuple[FormatSupport, ...] = Field(min_length=1)

    _ids_unique = field_validator("items")(_unique_ids)

    def status_of(self, item_id: str) -> str:
        """Support status of one id, `unknown` when the engine was not checked against it."""
        return _status_of(self.items, item_id)


class Knob(Sourced):
    """One setting that shapes memory or concurrency, with every spelling a launch command may use."""

    key: SettingKey = Field(description="shared setting key; the engine Settings field and parser output")
    name: str = Field(min_length=2, description="canonical spelling shown to users")
    programs: tuple[str, ...] = Field(min_length=1, description="commands that accept it, e.g. 'vllm serve'")
    flags: tuple[str, ...] = Field(default=(), description="every positive CLI spelling, aliases included")
    negative_flags: tuple[str, ...] = Field(default=(), description="spellings that turn a boolean off")
    takes_value: bool = Field(description="True: the flag is followed by a value; False: a presence switch")
    value_forms: tuple[str, ...] = Field(default=(), description="accepted literal values, when enumerated")
    env: tuple[str, ...] = Field(default=(), description="environment variables that set it")
    api_option: str | None = Field(default=None, description="per-request or Modelfile option name, if any")
    type: KnobType
    default: DefaultValue = Field(description="value when unset; None = unset/none; 'unknown' = not established")
    default_rule: str = Field(default="", description="plain words for a computed default")
    unit: str = Field(min_length=1, description="tokens, sequences, requests, fraction, MiB, GiB, bytes, ...")
    controls: str = Field(min_length=10, description="what it changes, in our own words")
    see_also: tuple[str, ...] = Field(default=(), description="further files read at the same version")

    @field_validator("flags", "negative_flags")
    @classmethod
    def _flags_look_like_flags(cls, flags: tuple[str, ...]) -> tuple[str, ...]:
        bad = [flag for flag in flags if not flag.startswith("-") or " " in flag]
        if bad:
            raise ValueError(f"flags must start with '-' and contain no spaces: {bad}")
        return flags

    @model_validator(mode="after")
    def _has_a_spelling(self) -> Knob:
        if not (self.flags or self.env or self.api_option):
            raise ValueError(f"knob {self.key!r} has no flag, env var or API option")
        if self.negative_flags and self.takes_value:
            raise ValueError(f"knob {self.key!r}: a valued flag cannot also have --no- forms")
        if self.default is None and self.default_rule == "" and self.type not in {"str"}:
            raise ValueError(f"knob {self.key!r}: a None default needs a default_rule saying what happens")
        return self

    @property
    def all_flags(self) -> tuple[str, ...]:
        """Every CLI spelling, positive first."""
        return self.flags + self.negative_flags

    @property
    def is_unknown_default(self) -> bool:
        """True when the default could not be established at the source."""
        return self.default == "unknown"


class VersionRead(Sourced):
    """The newest release or commit the facts were read from, and what was seen beside it."""

    version: str = Field(min_length=1)
    note: str = ""


class License(Sourced):
    """SPDX identifier of the engine's license."""

    spdx: str = Field(min_length=2)


class HttpApi(Sourced):
    """OpenAI-compatible endpoints and the rest of the HTTP surface."""

    chat_completions: Availability
    completions: Availability
    embeddings: Availability
    rerank: Availability
    responses: Availability
    anthropic_messages: Availability = "unknown"
    other: tuple[str, ...] = Field(default=(), description="notable non-OpenAI routes")
    note: str = ""


class ToolCalling(Sourced):
    """Whether tool calls are parsed into OpenAI `tool_calls`, and which launch flags choose the parser."""

    supported: Availability
    parser_flags: tuple[str, ...] = ()
    parsers: tuple[str, ...] = Field(default=(), description="a sample of parser names, not exhaustive")
    note: str = ""


class StructuredOutput(Sourced):
    """Constrained decoding: JSON schema, grammar, regex."""

    supported: Availability
    how: str = Field(min_length=3)


class Metrics(Sourced):
    """Prometheus endpoint and the metric names for the latencies the product asks teams to collect.

    A metric the engine lacks is written `none`; one we could not establish is `unknown`.
    """

    endpoint: str = Field(min_length=3, description="path, or 'none'")
    enabled_by: str = Field(min_length=3)
    queue_time: str
    time_to_first_token: str
    inter_token_latency: str
    e2e_latency: str
    requests_running: str
    requests_waiting: str
    kv_cache_usage: str
    note: str = ""


class Auth(Sourced):
    """API-key support and what it actually guards."""

    api_key_flags: tuple[str, ...] = ()
    api_key_env: tuple[str, ...] = ()
    guards: str = Field(min_length=3)
    open_paths: tuple[str, ...] = Field(default=(), description="paths reachable without the key")


class Network(Sourced):
    """Where the server listens when nobody says otherwise."""

    default_host: str = Field(min_length=1)
    default_port: int | Unknown
    note: str = ""


class PrefixCaching(Sourced):
    """How the engine reuses the KV of a prompt prefix it has already seen."""

    kinds: tuple[PrefixCacheKind, ...] = Field(min_length=1)
    on_by_default: bool | Unknown
    note: str = ""


class MultiGpu(Sourced):
    """Ways one instance spreads over several devices (replicas are always possible by running more)."""

    modes: tuple[MultiGpuMode, ...] = ()
    note: str = ""


class MultiModel(Sourced):
    """Whether one server process serves several models."""

    supported: Availability
    how: str = Field(min_length=3)


class Point(Sourced):
    """A strength or limit in our own words, tied to the product brief's numbered ideas."""

    text: str = Field(min_length=10)
    ideas: tuple[int, ...] = Field(default=(), description="idea numbers in shared/PRODUCT.md")


class CliConventions(Sourced):
    """How the launch-command parser accepts spellings, so a command line reads the way the engine reads it."""

    program: str = Field(min_length=2)
    underscores_equal_dashes: bool | Unknown
    equals_form: bool | Unknown = Field(description="--flag=value accepted")
    prefix_abbreviations: bool | Unknown = Field(description="argparse-style unambiguous prefixes accepted")
    note: str = ""


#: What happens to a request's work in the engine when its HTTP client goes away.
CancelBehaviour = Literal["aborts", "aborts-when-streaming", "continues", "unknown"]
#: What a benchmark tool exercises: a server under open-loop load, a fixed client pool, or the engine offline.
BenchKind = Literal["serving-load", "closed-loop-load", "sequential-requests", "offline-throughput"]
#: Workload parameters a benchmark plan fixes; a tool's `flags` map each it accepts to its own spelling.
BenchParameter = Literal[
    "base_url", "model", "tokenizer", "num_prompts", "input_len", "output_len", "range_ratio", "request_rate",
    "max_concurrency", "seed", "ignore_eos", "result_file", "prefix_len", "repetitions", "warmup",
]
#: Parameters of a tool's shared-prefix dataset (used for the warm prefix-cache phase).
PrefixParameter = Literal["prefix_len", "suffix_len", "output_len", "groups", "prompts_per_group", "range_ratio"]


class Cors(Sourced):
    """Which browser origins may call the server cross-origin when nobody configures it."""

    default: str = Field(min_length=3, description="plain words for the default policy")
    any_origin_by_default: bool | Unknown
    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    note: str = ""


class InterNode(Sourced):
    """Traffic between the hosts of one multi-host instance, and what protects it."""

    mechanism: str = Field(min_length=3, description="how hosts talk, or 'none' for single-host engines")
    protection: str = Field(min_length=3, description="authentication/encryption the engine offers, in plain words")
    flags: tuple[str, ...] = ()


class Cancellation(Sourced):
    """How a client disconnect propagates into the engine's scheduler."""

    on_disconnect: CancelBehaviour
    how: str = Field(min_length=10)


class SamplingDefaults(Sourced):
    """Where default sampling parameters and the default output limit come from."""

    defaults_from: str = Field(min_length=3)
    engine_defaults: str = Field(min_length=3, description="the engine's own values when the model gives none")
    default_max_output: str = Field(min_length=3, description="output-token limit when a request sets none")
    flags: tuple[str, ...] = ()
    note: str = ""


class ChatTemplate(Sourced):
    """Which chat template turns messages into a prompt, and how to override it."""

    default: str = Field(min_length=3)
    flags: tuple[str, ...] = ()
    note: str = ""


class EmbeddingsConfig(Sourced):
    """How the engine pools and normalises embeddings and whether the output dimension can change."""

    supported: Availability
    pooling: str = Field(min_length=2)
    normalisation: str = Field(min_length=2)
    dimensions: str = Field(min_length=2)
    flags: tuple[str, ...] = ()


class BenchTool(Sourced):
    """A load or throughput tool the engine ships, with the spelling of each workload parameter it takes."""

    name: str = Field(min_length=3)
    command: str = Field(min_length=3, description="how it is invoked, e.g. 'vllm bench serve'")
    kind: BenchKind
    open_loop: bool = Field(description="True: sends at a fixed arrival rate regardless of replies")
    flags: dict[BenchParameter, str] = Field(default_factory=dict)
    fixed_args: tuple[str, ...] = Field(default=(), description="arguments every plan passes (dataset, backend)")
    fixed_length_range_ratio: float | None = Field(
        default=None, description="range-ratio value that makes every prompt/output exactly the asked length"
    )
    prefix_flags: dict[PrefixParameter, str] = Field(default_factory=dict)
    prefix_fixed_args: tuple[str, ...] = ()
    how_to_get: str = Field(default="", description="install or build step when it is not on PATH")
    note: str = ""

    @field_validator("flags", "prefix_flags")
    @classmethod
    def _flags_look_like_flags(cls, flags: dict[str, str]) -> dict[str, str]:
        bad = [flag for flag in flags.values() if not flag.startswith("-") or " " in flag]
        if bad:
            raise ValueError(f"benchmark flags must start with '-' and contain no spaces: {bad}")
        return flags


class Operations(Frozen):
    """What running the engine as a service involves beyond its endpoints: browsers, hosts, lifecycle, tools."""

    cors: Cors
    inter_node: InterNode
    cancellation: Cancellation
    sampling: SamplingDefaults
    chat_template: ChatTemplate
    embeddings: EmbeddingsConfig
    bench_tools: tuple[BenchTool, ...] = ()


class Engine(Frozen):
    """One inference engine. Secondary rows may leave detailed sections out (shown as unknown)."""

    id: EngineId
    name: str = Field(min_length=2)
    tier: Literal["primary", "secondary"]
    summary: str = Field(min_length=10)
    license: License
    latest_version_read: VersionRead
    hardware: SupportList
    operating_systems: SupportList
    formats: FormatList | None = None
    cli: CliConventions | None = None
    knobs: tuple[Knob, ...] = ()
    http_api: HttpApi | None = None
    tool_calling: ToolCalling | None = None
    structured_output: StructuredOutput | None = None
    metrics: Metrics | None = None
    auth: Auth | None = None
    network: Network | None = None
    prefix_caching: PrefixCaching | None = None
    multi_gpu: MultiGpu | None = None
    multi_model: MultiModel | None = None
    operations: Operations | None = None
    strengths: tuple[Point, ...] = ()
    limits: tuple[Point, ...] = ()

    @model_validator(mode="after")
    def _primary_rows_are_complete(self) -> Engine:
        if self.tier == "primary":
            missing = [name for name in _DETAIL_SECTIONS if getattr(self, name) in (None, ())]
            if missing:
                raise ValueError(f"primary engine {self.id!r} lacks {missing}")
        keys = [knob.key for knob in self.knobs]
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        if duplicates:
            raise ValueError(f"engine {self.id!r}: duplicate knob keys {duplicates}")
        self._check_flags_unique()
        return self

    def _check_flags_unique(self) -> None:
        owner: dict[tuple[str, str], str] = {}
        for knob in self.knobs:
            for program in knob.programs:
                for flag in knob.all_flags:
                    previous = owner.setdefault((program, flag), knob.key)
                    if previous != knob.key:
                        raise ValueError(
                            f"engine {self.id!r}: {program} flag {flag} claimed by {previous} and {knob.key}"
                        )

    def knob(self, key: str) -> Knob:
        """The knob with this shared setting key; KeyError names the engine and the keys it has."""
        for knob in self.knobs:
            if knob.key == key:
                return knob
        raise KeyError(f"engine {self.id!r} has no knob {key!r}; it has {sorted(k.key for k in self.knobs)}")

    def flag_index(self, program: str | None = None) -> dict[str, str]:
        """Map every CLI spelling (aliases and negations) to its setting key, optionally for one program."""
        return {
            flag: knob.key
            for knob in self.knobs
            if program is None or program in knob.programs
            for flag in knob.all_flags
        }

    def env_index(self) -> dict[str, str]:
        """Map every environment variable that sets a knob to its setting key."""
        return {env: knob.key for knob in self.knobs for env in knob.env}

    def vendor_status(self, vendor: str) -> str:
        """Most direct support status over the backends that drive `vendor` (see VENDOR_BACKENDS)."""
        statuses = [self.hardware.status_of(backend) for backend in VENDOR_BACKENDS[vendor]]
        return min(statuses, key=STATUS_ORDER.index)

    def negates(self, flag: str) -> bool:
        """True when `flag` is a `--no-` style spelling that turns its knob off."""
        return any(flag in knob.negative_flags for knob in self.knobs)


_DETAIL_SECTIONS = (
    "formats", "cli", "knobs", "http_api", "tool_calling", "structured_output", "metrics", "auth", "network",
    "prefix_caching", "multi_gpu", "multi_model", "operations", "strengths", "limits",
)


class EnginesFile(Frozen):
    """Top level of engines.yaml: the version each primary engine was read at, then the engines."""

    versions_read: dict[EngineId, Verified] = Field(default_factory=dict)
    engines: tuple[Engine, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _versions_agree(self) -> EnginesFile:
        for engine in self.engines:
            read = self.versions_read.get(engine.id)
            if read is not None and read.version != engine.latest_version_read.version:
                raise ValueError(
                    f"engine {engine.id!r}: versions_read says {read.version!r} but latest_version_read says "
                    f"{engine.latest_version_read.version!r}"
                )
        return self

    @field_validator("engines")
    @classmethod
    def _ids_unique_and_primaries_complete(cls, engines: tuple[Engine, ...]) -> tuple[Engine, ...]:
        ids = [engine.id for engine in engines]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate engine ids {duplicates}")
        missing = [engine_id for engine_id in PRIMARY_ENGINE_IDS if engine_id not in ids]
        if missing:
            raise ValueError(f"primary engines missing: {missing}")
        for engine in engines:
            required = SHARED_SETTING_KEYS.get(engine.id, frozenset())
            absent = sorted(required - {knob.key for knob in engine.knobs})
            if absent:
                raise ValueError(f"engine {engine.id!r} lacks shared setting keys {absent}")
        return engines


def engine_by_id(engines: tuple[Engine, ...], engine_id: str) -> Engine:
    """The engine with this id; KnowledgeError lists the ids that exist."""
    for engine in engines:
        if engine.id == engine_id:
            return engine
    raise KnowledgeError(f"no engine {engine_id!r}; known: {[engine.id for engine in engines]}")


__all__ = [
    "PRIMARY_ENGINE_IDS",
    "SECONDARY_ENGINE_IDS",
    "SHARED_SETTING_KEYS",
    "USABLE_STATUSES",
    "VENDOR_BACKENDS",
    "BenchTool",
    "Engine",
    "EnginesFile",
    "Knob",
    "engine_by_id",
]
