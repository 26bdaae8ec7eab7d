"""A benchmark plan a team can rerun on its own hardware: phases, load points, what to record, and commands.

The plan fixes every workload parameter once (prompt and output tokens, request count, arrival rate,
client cap, seed) and renders the same values through each engine's own load tool, spelling each flag
the way the knowledge base says that tool spells it. Engines without a serving load tool get a generic
OpenAI-compatible recipe with the same parameters. Nothing here is a measurement: it is what to measure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines import ENGINES
from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _, ngettext
from knowledge.engines import USABLE_STATUSES, BenchTool, Engine, engine_by_id

Phase = Literal["cold-start", "warm", "warm-prefix"]
PHASES: tuple[Phase, ...] = ("cold-start", "warm", "warm-prefix")

#: Workload categories a plan can include: (input size, output size) classes.
WORKLOADS: dict[str, tuple[str, str]] = {
    "short-in-short-out": ("short", "short"),
    "short-in-long-out": ("short", "long"),
    "long-in-short-out": ("long", "short"),
    "long-in-long-out": ("long", "long"),
}
#: servewise's suggested lengths for each class (plan defaults, not engine facts); the user can change them.
DEFAULT_INPUT_TOKENS = {"short": 256, "long": 8_192}
DEFAULT_OUTPUT_TOKENS = {"short": 128, "long": 1_024}
#: Requests sent in the cold-start phase: one, so the first token's wait is all load and compile time.
COLD_START_PROMPTS = 1
OFFLINE_REPETITIONS = 5  # llama-bench's and mlx_lm.benchmark's own default count
MAX_PLAN_RUNS = 400  # guard against a URL that multiplies into thousands of commands


class _Data(BaseModel):
    """Frozen result records; they dump to JSON/YAML as they are."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class BenchPlanRequest(_Data):
    """What the user asked for; validated by `build_bench_plan`, which raises ServewiseInputError."""

    engines: tuple[str, ...]
    model_id: str
    gpu_id: str
    gpu_count: int = 1
    workloads: tuple[str, ...] = ("short-in-short-out", "long-in-short-out")
    languages: tuple[str, ...] = ("en",)
    tool_calls: bool = False
    request_rates_per_s: tuple[float, ...] = (1.0, 4.0)
    client_counts: tuple[int, ...] = (16,)
    num_prompts: int = 200
    warmup_requests: int = 10
    seed: int = Field(default=1, description="1, not 0: ollama-bench reads seed 0 as 'random'")
    prefix_share: float = Field(default=0.5, description="fraction of each prompt shared in the warm-prefix phase")
    short_input_tokens: int = DEFAULT_INPUT_TOKENS["short"]
    long_input_tokens: int = DEFAULT_INPUT_TOKENS["long"]
    short_output_tokens: int = DEFAULT_OUTPUT_TOKENS["short"]
    long_output_tokens: int = DEFAULT_OUTPUT_TOKENS["long"]


class Workload(_Data):
    """One workload category with its token counts (identical for every engine)."""

    id: str
    input_tokens: int
    output_tokens: int
    prefix_tokens: int = Field(description="tokens every prompt shares in the warm-prefix phase")


class LoadPoint(_Data):
    """An open-loop arrival rate together with a cap on requests in flight."""

    request_rate_per_s: float
    max_clients: int


class Run(_Data):
    """One measurement: a phase, a workload and a load point, with the fixed request count and seed."""

    id: str
    phase: Phase
    workload: Workload
    point: LoadPoint
    num_prompts: int
    warmup_requests: int
    seed: int


class Command(_Data):
    """One tool invocation for one run, as an argv list (reports quote and join it)."""

    run_id: str
    tool: str
    argv: tuple[str, ...]
    program_length: int = Field(default=1, description="how many leading argv words name the program")
    generic_client: bool = Field(default=False, description="True: another engine's client as a plain OpenAI client")


class ToolNote(_Data):
    """An engine tool the plan does not drive for served load, and why, with the KB source."""

    tool: str
    kind: str
    why: str
    source: str
    version: str


class EngineSection(_Data):
    """Everything the plan says for one engine."""

    engine: str
    name: str
    base_url: str
    load_tool: str | None = Field(description="the engine's own open-loop load tool, None when it has none")
    load_tool_note: ToolNote | None = Field(default=None, description="what the KB says about that tool")
    commands: tuple[Command, ...]
    other_tools: tuple[ToolNote, ...] = ()
    generic_recipe: tuple[str, ...] = ()
    metrics_to_scrape: tuple[str, ...] = ()
    tool_call_setup: str = ""
    warnings: tuple[str, ...] = ()


class RecordItem(_Data):
    """Something to write down with every result, and why it changes the numbers."""

    item: str
    why: str


class BenchPlan(_Data):
    """The whole plan: inputs, phases, runs, what to record and per-engine commands."""

    request: BenchPlanRequest
    model_name: str
    hf_repo: str
    gpu_name: str
    phases: tuple[Phase, ...]
    phase_purpose: dict[str, str]
    runs: tuple[Run, ...]
    record: tuple[RecordItem, ...]
    engines: tuple[EngineSection, ...]
    notes: tuple[str, ...] = ()


PHASE_PURPOSE: dict[str, str] = {
    "cold-start": N_(
        "Start the server from nothing and send one request: time from launch to a healthy /health, then to "
        "the first token. Covers weight loading, compilation/graph capture and cache allocation."
    ),
    "warm": N_(
        "After the warm-up requests, send the workload at a fixed arrival rate (open loop) with a cap on "
        "clients. Prompts are random tokens, so the prefix cache cannot help."
    ),
    "warm-prefix": N_(
        "The same load, but every prompt starts with the same prefix, so engines with prefix caching reuse "
        "it. Compare with the warm phase; read the cache-hit counters where the engine exports them."
    ),
}

#: What to write down with every result (item, why it changes the numbers).
_RECORD_PAIRS: tuple[tuple[str, str], ...] = (
    (N_("Weights revision (repository commit or file hash)"),
     N_("a re-uploaded checkpoint is a different model")),
    (N_("Tokenizer revision and the tokenizer the client counted with"),
     N_("token counts, and so every per-token figure, depend on it")),
    (N_("Engine version and commit, and how it was installed"),
     N_("schedulers and kernels change between releases")),
    (N_("Quantization of weights and KV cache (e.g. Q4_K_M, AWQ, FP8 KV)"),
     N_("Q4 in one engine against BF16 in another compares more than engines")),
    (N_("Chat template used (file or hash) and any template kwargs"),
     N_("a different template changes prompt length and answers")),
    (N_("Attention/kernel backend actually selected"),
     N_("the same engine runs different kernels on different hardware")),
    (N_("Dependencies: driver, CUDA/ROCm/Metal, PyTorch/MLX, OS"),
     N_("they select kernels and memory behaviour")),
    (N_("The full startup log"),
     N_("startup messages reveal fallback kernels, disabled features and the memory actually reserved")),
    (N_("The full launch command and environment variables"),
     N_("defaults differ between engines and versions")),
    (N_("Hardware: GPU model and count, interconnect, power limit, host RAM"),
     N_("the plan's numbers only hold on this machine")),
    (N_("Load tool, its version and the exact command"),
     N_("tools count time and tokens differently")),
    (N_("Latency distributions: queue time, TTFT, inter-token latency, end-to-end (p50/p90/p99)"),
     N_("means hide the tail users feel")),
    (N_("Errors, rejected and timed-out requests, and output-token counts per request"),
     N_("throughput only counts if the work was accepted and complete")),
    (N_("Accepted throughput: completed requests/s and output tokens/s at each arrival rate"),
     N_("the rate where latency targets still hold is the capacity")),
)
#: The English items (machine-readable exports translate them where shown; see `record_items`).
RECORD: tuple[RecordItem, ...] = tuple(RecordItem(item=item, why=why) for item, why in _RECORD_PAIRS)


def record_items() -> tuple[RecordItem, ...]:
    """What to write down with every result, in the current language."""
    return tuple(RecordItem(item=_(item), why=_(why)) for item, why in _RECORD_PAIRS)


def parse_number_list(text: str, what: str, *, integers: bool = False) -> tuple[float, ...]:
    """Numbers from a comma- or space-separated list such as '1, 4, 16'; ServewiseInputError names the bad item."""
    items = [item for item in text.replace(",", " ").split() if item]
    if not items:
        raise ServewiseInputError(_("Give at least one {what}, e.g. '1, 4, 16'.").format(what=what))
    numbers = []
    for item in items:
        try:
            number = float(item)
        except ValueError:
            message = _("{item!r} is not a number; list each {what} as a number, e.g. '1, 4, 16'.").format(
                item=item, what=what)
            raise ServewiseInputError(message) from None
        if integers and not number.is_integer():
            raise ServewiseInputError(_("Each {what} is a whole number; {item!r} is not.").format(what=what, item=item))
        numbers.append(number)
    return tuple(numbers)


def _positive_finite(values: tuple[float, ...], what: str) -> None:
    if not values:
        raise ServewiseInputError(_("Give at least one {what}.").format(what=what))
    for value in values:
        if not math.isfinite(value) or value <= 0:
            raise ServewiseInputError(
                _("Every {what} must be a positive, finite number; {value!r} is not. An open-loop plan "
                  "needs a real arrival rate (requests per second), not 0 or 'infinite'.").format(
                  what=what, value=value)
            )


def _check_request(request: BenchPlanRequest, engines: tuple[Engine, ...], kb) -> None:
    if not request.engines:
        raise ServewiseInputError(_("Pick at least one engine to benchmark."))
    known = {engine.id for engine in engines}
    unknown = [engine_id for engine_id in request.engines if engine_id not in known]
    if unknown:
        raise ServewiseInputError(ngettext("Unknown engine id {unknown}; choose from {known}.",
                                           "Unknown engine ids {unknown}; choose from {known}.", len(unknown)).format(
                                    unknown=", ".join(unknown), known=", ".join(sorted(known))))
    if kb.models.get(request.model_id) is None:
        example = kb.models.ids[0]
        raise ServewiseInputError(_("Unknown model {model_id!r}; pick a catalog id such as {example!r}.").format(
                                    model_id=request.model_id, example=example))
    try:
        kb.gpus.get(request.gpu_id)
    except KeyError as exc:
        raise ServewiseInputError(_("Unknown GPU {gpu_id!r}; pick an id from the GPU catalog.").format(
                                    gpu_id=request.gpu_id)) from exc
    if request.gpu_count < 1:
        raise ServewiseInputError(_("The GPU count must be at least 1."))
    if not request.workloads:
        raise ServewiseInputError(_("Pick at least one workload category."))
    bad = [workload for workload in request.workloads if workload not in WORKLOADS]
    if bad:
        raise ServewiseInputError(_("Unknown workload categories {bad}; choose from {workloads}.").format(
                                    bad=bad, workloads=list(WORKLOADS)))
    _positive_finite(request.request_rates_per_s, _("arrival rate (requests per second)"))
    if not request.client_counts or any(count < 1 for count in request.client_counts):
        raise ServewiseInputError(_("Give at least one client count, each at least 1."))
    if request.num_prompts < 1:
        raise ServewiseInputError(_("Each run needs at least one request (num_prompts ≥ 1)."))
    if request.seed < 1:
        raise ServewiseInputError(_("Use a seed of 1 or more: ollama-bench reads seed 0 as 'pick a random seed'."))
    if request.warmup_requests < 0:
        raise ServewiseInputError(_("Warm-up requests cannot be negative."))
    if not 0 < request.prefix_share < 1:
        raise ServewiseInputError(_("The shared-prefix share must be between 0 and 1 (exclusive), e.g. 0.5."))
    lengths = (request.short_input_tokens, request.long_input_tokens, request.short_output_tokens,
               request.long_output_tokens)  # fmt: skip
    if any(length < 1 for length in lengths):
        raise ServewiseInputError(_("Prompt and output lengths must be at least 1\u00a0token."))
    if not request.languages:
        raise ServewiseInputError(_("Name at least one language the service must handle (e.g. 'en')."))


def _workloads(request: BenchPlanRequest, context_tokens: int) -> tuple[Workload, ...]:
    inputs = {"short": request.short_input_tokens, "long": request.long_input_tokens}
    outputs = {"short": request.short_output_tokens, "long": request.long_output_tokens}
    workloads = []
    for workload_id in request.workloads:
        input_class, output_class = WORKLOADS[workload_id]
        input_tokens, output_tokens = inputs[input_class], outputs[output_class]
        if input_tokens + output_tokens > context_tokens:
            raise ServewiseInputError(
                _("Workload {workload_id}: {input_tokens} input + {output_tokens} output tokens exceed the "
                  "model's trained context of {context_tokens}\u00a0tokens; shorten the long lengths.").format(
                  workload_id=workload_id,
                  input_tokens=input_tokens,
                  output_tokens=output_tokens,
                  context_tokens=context_tokens)
            )
        prefix = max(1, min(input_tokens - 1, round(input_tokens * request.prefix_share)))
        workloads.append(Workload(id=workload_id, input_tokens=input_tokens, output_tokens=output_tokens,
                                  prefix_tokens=prefix))  # fmt: skip
    return tuple(workloads)


def _runs(request: BenchPlanRequest, workloads: tuple[Workload, ...]) -> tuple[Run, ...]:
    points = [LoadPoint(request_rate_per_s=rate, max_clients=clients)
              for rate in request.request_rates_per_s for clients in request.client_counts]  # fmt: skip
    runs = []
    for workload in workloads:
        runs.append(
            Run(
                id=f"cold-start-{workload.id}",
                phase="cold-start",
                workload=workload,
                point=LoadPoint(request_rate_per_s=points[0].request_rate_per_s, max_clients=1),
                num_prompts=COLD_START_PROMPTS,
                warmup_requests=0,
                seed=request.seed,
            )
        )
        for phase in ("warm", "warm-prefix"):
            for point in points:
                rate = f"{point.request_rate_per_s:g}"
                runs.append(
                    Run(
                        id=f"{phase}-{workload.id}-r{rate}-c{point.max_clients}",
                        phase=phase,
                        workload=workload,
                        point=point,
                        num_prompts=request.num_prompts,
                        warmup_requests=request.warmup_requests,
                        seed=request.seed,
                    )
                )
    if len(runs) > MAX_PLAN_RUNS:
        raise ServewiseInputError(
            _("This plan has {n_runs} runs per engine (over {max_plan_runs}); use fewer rates, client "
              "counts or workloads.").format(n_runs=len(runs), max_plan_runs=MAX_PLAN_RUNS)
        )
    return tuple(runs)


def _serving_tool(engine: Engine) -> BenchTool | None:
    tools = engine.operations.bench_tools if engine.operations else ()
    return next((tool for tool in tools if tool.kind == "serving-load" and tool.open_loop), None)


def _value(number: float) -> str:
    return f"{number:g}"


def tool_argv(tool: BenchTool, run: Run, *, base_url: str, model: str, tokenizer: str) -> tuple[str, ...]:
    """The argv for `tool` measuring `run` (same parameters for every tool; only the spellings differ)."""
    flags = tool.flags
    workload = run.workload
    use_prefix_dataset = run.phase == "warm-prefix" and "suffix_len" in tool.prefix_flags
    argv: list[str] = tool.command.split()
    argv += list(tool.prefix_fixed_args if use_prefix_dataset else tool.fixed_args)

    # the tables are keyed by the KB's parameter literals (flags, prefix_flags); looked up by name here
    def add(parameter: str, value: str, table: Mapping[Any, str] = flags) -> None:
        if parameter in table:
            argv.extend([table[parameter], value])

    add("base_url", base_url)
    add("model", model)
    add("tokenizer", tokenizer)
    add("num_prompts", str(run.num_prompts))
    add("request_rate", _value(run.point.request_rate_per_s))
    add("max_concurrency", str(run.point.max_clients))
    add("seed", str(run.seed))
    add("warmup", str(run.warmup_requests))
    if use_prefix_dataset:
        prefix = tool.prefix_flags
        add("groups", "1", prefix)
        add("prompts_per_group", str(run.num_prompts), prefix)
        add("prefix_len", str(workload.prefix_tokens), prefix)
        add("suffix_len", str(workload.input_tokens - workload.prefix_tokens), prefix)
        add("output_len", str(workload.output_tokens), prefix)
        if tool.fixed_length_range_ratio is not None:
            add("range_ratio", _value(tool.fixed_length_range_ratio), prefix)
    else:
        with_prefix = run.phase == "warm-prefix" and "prefix_len" in flags
        prefix_tokens = workload.prefix_tokens if with_prefix else 0
        add("input_len", str(workload.input_tokens - prefix_tokens))
        if with_prefix:
            add("prefix_len", str(prefix_tokens))
        add("output_len", str(workload.output_tokens))
        if tool.fixed_length_range_ratio is not None:
            add("range_ratio", _value(tool.fixed_length_range_ratio))
    if "ignore_eos" in flags:
        argv.append(flags["ignore_eos"])
    add("result_file", f"{run.id}.json")
    return tuple(argv)


def _offline_argv(tool: BenchTool, workload: Workload, model: str, seed: int) -> tuple[str, ...]:
    """Argv for an engine-level tool (no server load): same token counts, OFFLINE_REPETITIONS repetitions."""
    argv = tool.command.split() + list(tool.fixed_args)
    values = {"model": model, "input_len": str(workload.input_tokens), "output_len": str(workload.output_tokens),
              "repetitions": str(OFFLINE_REPETITIONS), "seed": str(seed)}  # fmt: skip
    for parameter, value in values.items():
        if parameter in tool.flags:
            argv += [tool.flags[parameter], value]
    return tuple(argv)


def _generic_recipe(base_url: str, *, generic_client: bool, tool_calls: bool) -> tuple[str, ...]:
    """Steps for an open-loop OpenAI-compatible client with the plan's parameters (text, our own words)."""
    steps = []
    if generic_client:
        steps.append(_("Point an OpenAI-compatible client at {base_url}/v1/completions; the vLLM-client commands "
                       "below are one such client, already set to the plan's parameters.").format(base_url=base_url))
    if tool_calls:
        steps.append(_("For the tool-call set, send real conversations with `tools` attached to "
                       "{base_url}/v1/chat/completions at the same rates and caps; count parse failures and wrong "
                       "actions as errors.").format(base_url=base_url))
    return (
        *steps,
        _("Draw every send time in advance from exponential gaps at the run's arrival rate, seeded with the "
          "plan's seed; send on schedule whether or not earlier replies have arrived (open loop)."),
        _("Cap requests in flight at the run's client count; a request that finds the cap full waits in the "
          "client and that wait is reported separately, not hidden."),
        _("Build prompts of exactly the run's input tokens with the model's tokenizer; ask for exactly the output "
          "tokens (max_tokens plus ignore_eos where the engine honours it) and check the returned counts."),
        _("Stream every response; record per request the send time, first-token time, each chunk's time, end "
          "time, HTTP status and token counts, then report p50/p90/p99 of TTFT, inter-token gaps and end-to-end "
          "latency with errors and accepted throughput."),
    )


def _metrics_to_scrape(engine: Engine) -> tuple[str, ...]:
    metrics = engine.metrics
    if metrics is None:
        return ()
    names = (metrics.queue_time, metrics.time_to_first_token, metrics.inter_token_latency, metrics.e2e_latency,
             metrics.requests_running, metrics.requests_waiting, metrics.kv_cache_usage)  # fmt: skip
    return tuple(name for name in names if name not in {"none", "unknown"})


def _engine_section(engine: Engine, runs: tuple[Run, ...], request: BenchPlanRequest, kb) -> EngineSection:
    model = kb.models.get(request.model_id)
    gpu = kb.gpus.get(request.gpu_id)
    port = engine.network.default_port if engine.network else "unknown"
    base_url = f"http://127.0.0.1:{port}"
    spec = ENGINES.get(engine.id)
    served_name = (spec.bench_served_name if spec else None) or model.hf_repo
    tool = _serving_tool(engine)
    warnings: list[str] = []
    status = engine.vendor_status(gpu.vendor)
    if status not in USABLE_STATUSES:
        warnings.append(_("{engine} has no usable path on {vendor} hardware in the knowledge base ({status}).").format(
            engine=engine.name, vendor=gpu.vendor, status=status))
    generic = tool is None
    client = tool or _serving_tool(
        engine_by_id(kb.engines, next(e.id for e in ENGINES.values() if e.generic_bench_client))
    )
    if client is None:
        raise ServewiseInputError(
            _("the knowledge base gives the generic benchmark client's engine no open-loop serving-load tool "
              "(knowledge/engines.yaml operations.bench_tools)")
        )
    commands = [
        Command(
            run_id=run.id,
            tool=client.name,
            argv=tool_argv(client, run, base_url=base_url, model=served_name, tokenizer=model.hf_repo),
            program_length=len(client.command.split()),
            generic_client=generic,
        )
        for run in runs
    ]
    other_tools = [t for t in (engine.operations.bench_tools if engine.operations else ()) if t is not tool]
    model_file = f"<{spec.model_file}>" if spec and spec.model_file else served_name
    commands += _engine_check_commands(other_tools, runs, model_file, request.seed)
    if generic:
        warnings.append(
            _("{engine} ships no open-loop serving load tool; the commands use vLLM's benchmark client as a plain "
              "OpenAI-compatible client (pip install vllm on the client machine), or follow the generic "
              "recipe.").format(engine=engine.name)
        )
    if spec and spec.bench_served_name_note:
        warnings.append(_(spec.bench_served_name_note))
    tool_call_setup = ""
    if request.tool_calls and engine.tool_calling is not None:
        calling = engine.tool_calling
        flags = ", ".join(calling.parser_flags) or _("no launch flag (chosen from the model's template)")
        tool_call_setup = _(
            "Tool calling: {supported}; parser flags: {flags}. The model, its chat template, the parser and the "
            "client must agree; score correct actions, not just valid JSON.").format(
            supported=calling.supported, flags=flags)
    return EngineSection(
        engine=engine.id,
        name=engine.name,
        base_url=base_url,
        load_tool=tool.name if tool else None,
        load_tool_note=_tool_note(tool) if tool else None,
        commands=tuple(commands),
        other_tools=tuple(_tool_note(t) for t in other_tools),
        generic_recipe=(_generic_recipe(base_url, generic_client=generic, tool_calls=request.tool_calls)
                        if generic or request.tool_calls else ()),
        metrics_to_scrape=_metrics_to_scrape(engine),
        tool_call_setup=tool_call_setup,
        warnings=tuple(warnings),
    )


def _engine_check_commands(tools: list[BenchTool], runs: tuple[Run, ...], model: str, seed: int) -> list[Command]:
    """Engine-level checks (no served load) with each workload's token counts, for tools that take them."""
    workloads = {run.workload.id: run.workload for run in runs}.values()
    return [
        Command(
            run_id=f"engine-check-{workload.id}",
            tool=tool.name,
            argv=_offline_argv(tool, workload, model, seed),
            program_length=len(tool.command.split()),
        )
        for tool in tools
        if tool.kind in {"offline-throughput", "sequential-requests"} and tool.flags
        for workload in workloads
    ]


def _tool_note(tool: BenchTool) -> ToolNote:
    # the knowledge base's prose in the reader's language (knowledge/engines.yaml bench_tools notes are in the catalog)
    return ToolNote(tool=tool.name, kind=tool.kind, why=_(tool.note), source=tool.source, version=tool.verified.version)


def build_bench_plan(request: BenchPlanRequest, kb) -> BenchPlan:
    """The benchmark plan for `request` against the knowledge base `kb`; ServewiseInputError on bad input."""
    _check_request(request, kb.engines, kb)
    model = kb.models.get(request.model_id)
    gpu = kb.gpus.get(request.gpu_id)
    workloads = _workloads(request, model.native_context_tokens)
    runs = _runs(request, workloads)
    notes = [
        _("Every run fixes both the arrival rate (open loop: requests are sent on schedule even when the server "
          "slows down) and a cap on requests in flight. A client that waits for replies before sending hides "
          "the queue real demand would build."),
        _("All engines get the same token counts, request count, rates, client caps and seed, and every client "
          "counts tokens with the same tokenizer."),
    ]
    if any(language != "en" for language in request.languages) or len(request.languages) > 1:
        notes.append(
            _("Languages {languages}: random-token prompts have no language. Run a set of real prompts per "
              "language through the generic recipe, cut to the same token counts with the model's tokenizer "
              "(a word costs a different number of tokens in each language).").format(
              languages=', '.join(request.languages))
        )
    if request.tool_calls:
        notes.append(
            _("Tool calls: the load tools send plain completions. Run the tool-call set through the chat endpoint with "
            "tools attached (generic recipe), and count parse failures and wrong actions as errors.")
        )
    return BenchPlan(
        request=request,
        model_name=model.name,
        hf_repo=model.hf_repo,
        gpu_name=f"{request.gpu_count} × {gpu.name}",
        phases=PHASES,
        phase_purpose={phase: _(purpose) for phase, purpose in PHASE_PURPOSE.items()},
        runs=runs,
        record=record_items(),
        engines=tuple(_engine_section(engine_by_id(kb.engines, e), runs, request, kb) for e in request.engines),
        notes=tuple(notes),
    )


__all__ = ["PHASES", "WORKLOADS", "BenchPlan", "BenchPlanRequest", "build_bench_plan", "parse_number_list", "tool_argv"]
