"""What every engine provides to the shared code: one `EngineAdapter` per engine, registered in `engines/__init__.py`.

Shared modules (memory.compare, memory.capacity, launch, reconcile, simulator, reports, ui, pages) look an
engine up in the registry and use these fields; they never ask which engine it is. An engine that lacks a
capability (MLX LM serves no embeddings, so it has no embedding rule) leaves the field None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from calculators.i18n import _

if TYPE_CHECKING:
    from calculators.hardware.machine import Machine
    from calculators.memory.compare import Workload
    from calculators.memory.plan import MemoryPlan
    from calculators.model.architecture import ModelArchitecture
    from calculators.simulator.policy import SchedulerPolicy


@dataclass(frozen=True)
class MemoryKnob:
    """An engine setting the memory page offers besides the workload.

    kind: "int"/"float" bind the field's default; "int0"/"float0" use 0 for "unset (engine decides)";
    "choice:a,b,c" a radio of the listed values.
    """

    key: str
    label: str
    kind: str


@dataclass(frozen=True)
class DraftModel:
    """A speculative drafter given as a model (a catalog entry or its config.json): geometry and weight bytes.

    Engines that load a drafter checkpoint (MLX LM --draft-model, vLLM --speculative-config `model`, SGLang
    --speculative-draft-model-path) plan its weights and cache from it; `weights_bytes` None = unknown.
    """

    arch: ModelArchitecture
    weights_bytes: int | None
    name: str


@dataclass(frozen=True)
class SimulatorKnob:
    """A scheduler-policy field the concurrency page offers as a widget (its default is the policy's own, or
    the engine's rule for the chosen GPU)."""

    field: str
    label: str
    #: widget key (URL parameter of shared links: keep it stable)
    key: str
    #: an N_-marked text, or a function writing it in the reader's language (help that quotes figures)
    help: str | Callable[[], str] | None = None
    min_value: int = 1
    #: the widget shows the opposite of the field ("Radix prefix cache" for disable_radix_cache)
    invert: bool = False
    #: (GPU memory in bytes, catalog id or None) -> what the engine picks on such a GPU when the knob is unset
    default_for_gpu: Callable[[int, str | None], Any] | None = None

    def help_text(self) -> str | None:
        """The widget's help in the reader's language (None: no help)."""
        if self.help is None:
            return None
        return self.help() if callable(self.help) else _(self.help)


@dataclass(frozen=True)
class CapacitySearch:
    """Settings a capacity search plans with instead of the user's, and the GPU margin it then requires."""

    overrides: dict[str, Any]
    gpu_margin_bytes: int = 0


@dataclass(frozen=True)
class LogReader:
    """An engine's start-up-log reader: lines only it prints, what a complete log states, and the reader."""

    #: a line matching this is evidence the log is this engine's
    markers: re.Pattern[str]
    #: what a complete log states: (kind: version/geometry/setting/figure, alternative names)
    expected: tuple[tuple[str, tuple[str, ...]], ...]
    #: (lines, collector, whole text) -> accelerator names the log lists; fills the collector
    read_log: Callable[..., list[str]]
    #: engine whose lines this engine relays (Ollama relays llama.cpp's runner); its settings are runner settings
    relays: str | None = None
    #: a syslog/docker program name starting with this is evidence too (e.g. "ollama")
    program_prefix: str | None = None
    #: how this engine's own lines begin (a regex alternation), found anywhere in a pasted line to remove
    #: whatever another program or the person pasting put in front of it
    line_starts: str = ""


@dataclass(frozen=True)
class BenchReader:
    """One benchmark output format an engine's own tool prints, and how to tell it from the others."""

    #: stable id of the format (CLI --format, page choices): "vllm-json", "llama-bench-markdown", ...
    format_id: str
    #: (text) -> calculators.speed.imports.run.ImportResult; ServewiseInputError names the bad line or field
    read: Callable[[str], Any]
    #: (text, first JSON object or None) -> True when the text looks like this format
    sniff: Callable[[str, dict | None], bool]


@dataclass(frozen=True)
class EngineSpeed:
    """What the speed model needs from an engine: whose fitted parameters it uses, its concurrency, its tools."""

    #: fit family: the engine whose measured efficiencies apply (an engine that wraps another's kernels names it)
    family: str
    #: (settings, plan or None, machine or None) -> sequences the launch command lets run at once
    concurrency: Callable[[Any, Any, Any], int]
    #: benchmark formats of this engine's own tools (readers in engines/<engine>/bench_import.py)
    bench_readers: tuple[BenchReader, ...] = ()
    #: `backend` values this engine's serving results carry (vllm bench serve / sglang.bench_serving output)
    bench_backends: tuple[str, ...] = ()
    #: family whose parameters apply on a hardware class this engine has no measurements on (a similar runtime)
    fallback_family: str | None = None
    #: engine version string -> fit family, for an engine whose core changed between versions so that old
    #: measurements must not set today's parameters; None = every version is `family`
    family_for_version: Callable[[str], str] | None = None
    #: True when the engine's prompt (prefill) matmuls run at the FP16-accumulate tensor rate rather than the BF16
    #: FP32-accumulate one the catalog stores: the rate that differs on GeForce cards (speed/families.py)
    prefill_fp16_accumulate: bool = False
    #: (n_layers, weights quantized, grouped-query attention) -> kernels the host launches for one decode token of a
    #: build that replays no GPU graph (each costs host time the fit's `graphless_launch_s` prices); None = the
    #: engine's measured steps are not modelled that way
    graphless_launches_per_token: Callable[[int, bool, bool], int] | None = None
    #: (engine version, backend, weights quantized or None) -> the fit family of a decode measurement whose weight
    #: mat-vecs ran through a kernel path today's builds no longer take, or None for the usual family (None: no rule)
    family_for_kernel_path: Callable[[str, str, bool | None], str | None] | None = None


@dataclass(frozen=True)
class EngineAdapter:
    """Everything particular to one engine that shared code needs. Sizes are bytes, lengths tokens."""

    id: str
    display_name: str
    #: widget-key fragment on the memory page (`mem_<short_key>_<setting>`); part of shared links
    short_key: str
    #: colour of this engine in every chart
    colour: str
    settings_type: type[BaseModel]
    #: the memory plan: plan(arch, settings, machine, weights_bytes, **engine keywords) -> MemoryPlan
    plan: Callable[..., MemoryPlan]
    # -- memory.compare: a workload in the engine's settings, and whether a plan holds it ----------------
    #: workload KV cache type slug ("16-bit"...) -> the engine's settings; None = no such cache type
    kv_settings: Mapping[str, Mapping[str, Any] | None]
    #: setting keys the workload mapping writes (capacity searches vary these, overrides keep the rest)
    workload_keys: tuple[str, ...]
    #: (context_tokens per sequence, sequences) -> the engine's settings that express them
    workload_settings: Callable[[int, int], dict[str, Any]]
    #: why the engine cannot run on this machine (None: it can)
    not_applicable: Callable[[Machine], str | None]
    #: why this plan does not hold the workload, in the engine's terms (None: it does); refusal checked before
    why_not_held: Callable[..., str | None]
    #: plan for the comparison (default: plan(arch, settings, machine, weights_bytes))
    run_plan: Callable[[ModelArchitecture, BaseModel, Machine, int | None, Workload], MemoryPlan] | None = None
    #: plan for the comparison when the user gives the drafter checkpoint the settings load:
    #: draft_plan(arch, settings, machine, weights_bytes, workload, draft) (None: the engine takes none this way;
    #: settings without a drafter plan as run_plan does)
    draft_plan: Callable[[ModelArchitecture, BaseModel, Machine, int | None, Workload, DraftModel],
                         MemoryPlan] | None = None
    #: why this engine's speculative drafter is not planned, when it has one servewise does not model (None: n/a)
    draft_not_planned: str | None = None
    #: plan for a workload whose length the cache grows with (prompt tokens, generated tokens, sequences):
    #: workload_plan(arch, settings, machine, weights_bytes, prompt_tokens=, generated_tokens=, sequences=);
    #: None = the engine sizes its cache before any request arrives, so the work does not change its plan
    workload_plan: Callable[..., MemoryPlan] | None = None
    #: settings the engine reads that change its memory but the plan does not model (the CLI lists them)
    unmodelled_settings: frozenset[str] = frozenset()
    #: the engine sizes its cache from GPU memory, so the CLI needs --gpu
    needs_machine: bool = True
    #: the plan models the engine's CPU build too (a Machine with device_kind "cpu")
    plans_cpu_build: bool = False
    #: GPUs one instance spans by its own parallelism settings
    devices_from_settings: Callable[[BaseModel], int] = lambda settings: 1
    # -- memory.capacity ------------------------------------------------------------------------------------
    #: the engine's own answer to most sequences / longest context from one plan (None: the shared guess from
    #: the bytes the plan leaves free)
    sequences_guess: Callable[..., int] | None = None
    context_guess: Callable[..., int] | None = None
    #: a limit the engine puts on the shared guess: (guess, plan, workload, machine) -> guess
    clamp_sequences_guess: Callable[..., int] | None = None
    clamp_context_guess: Callable[..., int] | None = None
    #: "exact": the first guess is the engine's own answer; "trusted": a guess that holds is checked once and
    #: searched around only if it does not hold (one that holds but is low would under-report by the
    #: difference; none was seen); "searched": searched around
    sequences_guess_quality: Literal["exact", "trusted", "searched"] = "searched"
    #: (user overrides minus workload keys, arch, machine) -> what a capacity search plans with
    capacity_search: Callable[[dict[str, Any], ModelArchitecture, Machine], CapacitySearch] | None = None
    # -- launch ---------------------------------------------------------------------------------------------
    #: (program basename, its second word: subcommand or `python -m` module) -> index where the engine's own
    #: arguments begin; None when the command is not this engine's (LaunchCommandError for a wrong subcommand)
    command_start: Callable[[str, str], int | None] = lambda program, second: None
    #: how a command for this engine starts, for messages ("vllm serve")
    launch_example: str = ""
    #: the model is a positional argument (`vllm serve MODEL`)
    positional_model: bool = False
    #: how a bare boolean switch is read, per setting key, when the knob's values are words
    switch_values: Mapping[str, str] = field(default_factory=dict)
    #: (setting values to write, model reference, knowledge base) -> (environment, words, remarks)
    render_command: Callable[[dict[str, Any], str, Any], tuple[dict[str, str], list[str], list[str]]] | None = None
    #: what a rendered command loads the model from, when not the model reference (llama.cpp: a GGUF file)
    model_file: str | None = None
    # -- operations (benchmark plan) ------------------------------------------------------------------------
    #: the model name a benchmark client sends, when not the Hugging Face repo, and what to replace it with
    #: the same settings with speculative decoding switched off, to plan the run without its drafter next to
    #: the run with it (None: the engine has no drafter settings, or these settings use none)
    without_speculation: Callable[[BaseModel], BaseModel | None] | None = None
    bench_served_name: str | None = None
    bench_served_name_note: str | None = None
    #: this engine's serving benchmark doubles as a plain OpenAI-compatible client for engines without one
    generic_bench_client: bool = False
    #: the operations page plans a benchmark for this engine before anyone picks, at this position (None: not)
    operations_default: int | None = None
    # -- reconcile ------------------------------------------------------------------------------------------
    log_reader: LogReader | None = None
    #: setting keys a start-up log of this engine can state (the shared setting vocabulary)
    log_setting_keys: frozenset[str] = frozenset()
    #: the log carries the model geometry (GGUF metadata dump), so no --model is needed
    geometry_in_log: bool = False
    #: reconciliation rows: (EngineRun) -> Outcome; None = the engine's figures are not compared
    reconcile_rows: Callable[..., Any] | None = None
    #: rows for the engine's own printed prediction, judged whichever plan ran (Ollama's msg=offload estimate):
    #: (ParsedLog, ModelArchitecture, overrides) -> an object with rows, inputs, notes and assumptions
    estimate_rows: Callable[..., Any] | None = None
    #: override keys those rows take instead of the plan (when the plan is the relayed runner's)
    estimate_setting_keys: frozenset[str] = frozenset()
    #: override keys the rows read from the log's settings rather than the plan's (MLX's weights_scheme)
    row_setting_keys: frozenset[str] = frozenset()
    #: why the engine's printed figures are not compared, when reconcile_rows is None
    not_compared_reason: str | None = None
    #: (settings read from the log) -> the settings the engine actually ran with
    settle_log_settings: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # -- simulator ------------------------------------------------------------------------------------------
    #: the scheduler policy model (a pydantic model with an `engine` literal), None = not simulated
    scheduler_policy: type[SchedulerPolicy] | None = None
    #: the concurrency page's widgets for the policy's knobs, and the title of their section
    simulator_knobs: tuple[SimulatorKnob, ...] = ()
    simulator_label: str = ""
    #: the concurrency page compares this engine before anyone picks
    simulator_default: bool = False
    #: the simulator's catalog-model inputs (KV capacity) are planned with this engine's plan; pages that
    #: simulate one engine start from it
    simulator_reference: bool = False
    # -- capacity planner -----------------------------------------------------------------------------------
    #: how one instance uses several GPUs: "tensor" (every step runs on all of them: tensor parallel),
    #: "layer" (layers spread over GPUs that take turns: memory grows, speed does not), "single" (one device)
    multi_gpu_split: Literal["tensor", "layer", "single"] = "single"
    #: setting key of the tensor-parallel degree the planner writes (tensor split only)
    tensor_parallel_key: str | None = None
    #: setting key of the concurrency knob the planner varies (slots, max running sequences...)
    concurrency_key: str | None = None
    #: True: one KV pool shared by all running requests (a plan need only start); False: fixed slots, each of
    #: which must hold the longest request
    pooled_kv_cache: bool = False
    #: (settings, the plan for them) -> (the scheduler policy they run, KV tokens the policy needs or None)
    policy_from_plan: Callable[[BaseModel, MemoryPlan], tuple[SchedulerPolicy, int | None]] | None = None
    # -- compatibility checks (calculators/checks) -----------------------------------------------------------
    #: how the engine picks a tool-call parser: (ToolDraft, CommandFlags) -> ToolCallCheck, from
    #: engines/<engine>/tools.py; None = tool calling not modelled (verdict unknown)
    tool_call_rule: Callable[..., Any] | None = None
    #: how the engine pools and normalises embeddings: (EmbeddingDraft) -> None, from engines/<engine>/embeddings.py;
    #: None = the engine serves no embeddings
    embedding_rule: Callable[..., Any] | None = None
    # -- memory page ----------------------------------------------------------------------------------------
    memory_knobs: tuple[MemoryKnob, ...] = ()
    #: setting key of the tensor-parallel degree, for the engine the "several GPUs" study plans replicas with
    replica_study_key: str | None = None
    # -- speed model ----------------------------------------------------------------------------------------
    #: fit family, concurrency and benchmark readers (engines/<engine>/speed.py); None = no speed model
    speed: EngineSpeed | None = None

    def step_devices(self, settings: BaseModel) -> int:
        """Devices whose bandwidth and flop/s add up in one step of one instance run with `settings`: every device
        of the instance when each step is split across them (tensor split: `devices_from_settings`), else one
        (layers spread over devices take turns within a step, so a single request goes at one device's speed)."""
        return max(1, int(self.devices_from_settings(settings))) if self.multi_gpu_split == "tensor" else 1
