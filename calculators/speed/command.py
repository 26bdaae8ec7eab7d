"""What the `speed` and `calibrate` CLI verbs run: speed inputs from a launch command's memory plan."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from calculators.engines import adapter, display_name
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.memory.command import MemoryCommandResult
from calculators.simulator.policy import SchedulerPolicy, lone_prompt_steps
from calculators.simulator.roofline import ONE_PASS, PrefillSteps
from calculators.speed.calibrate import CalibrationResult, calibrate
from calculators.speed.calibration import CalibrationProfile
from calculators.speed.imports.read import read_benchmark
from calculators.speed.imports.run import ImportedRun
from calculators.speed.inputs import accelerator_of_gpu, model_shape
from calculators.speed.model import Accelerator, ModelShape, hardware_class_name
from calculators.speed.predict import SpeedEstimate, estimate_speed

#: Figures of a start-up log that state the KV pool in tokens (the shared log vocabulary).
KV_TOKEN_FIGURES = ("kv_tokens", "max_total_num_tokens")


@dataclass(frozen=True)
class SpeedInputs:
    """The speed model's view of one launch: model shape, accelerator(s), the engine and its concurrency."""

    engine: str
    model: ModelShape
    hardware: Accelerator
    concurrency: int
    notes: tuple[str, ...]
    #: the scheduler the plan runs with (its limits, SGLang's CUDA-graph cap), for a serving calibration
    policy: SchedulerPolicy | None = None
    #: how that scheduler's steps prefill a prompt alone (one pass when there is no scheduler model)
    prefill_steps: PrefillSteps = ONE_PASS


def speed_inputs(result: MemoryCommandResult, kb) -> SpeedInputs:
    """Speed inputs from the memory plan of a launch command (KV bytes per token as the engine allocates them)."""
    weights = result.model_weights_bytes or (result.plan.weights_bytes or 0) * (result.machine.n_devices
                                                                               if result.machine else 1)
    return plan_speed_inputs(result.launch.engine, result.launch.settings, result.plan, result.machine,
                             result.model.arch, weights, kb)


def plan_speed_inputs(engine_id: str, settings, plan, machine, arch, weights_bytes: float | None, kb) -> SpeedInputs:
    """Speed inputs for one engine's memory plan on a machine (shared by the CLI and the memory page)."""
    engine = adapter(engine_id)
    if engine.speed is None:
        raise ServewiseInputError(_("{display_name} has no speed model").format(display_name=engine.display_name))
    if machine is None or machine.gpu_id is None:
        raise ServewiseInputError(_("speed needs the accelerator: give --gpu with a catalog id"))
    gpu = kb.gpus.get(machine.gpu_id)
    hw = accelerator_of_gpu(gpu)
    notes = []
    # only tensor parallelism splits one step across devices; devices holding different layers take turns (the
    # rule the simulator's step costs follow too: calculators/planner/search.instance_step_cost)
    n = engine.step_devices(settings)
    if n > 1:
        hw = hw.model_copy(update={
            "memory_bandwidth_bytes_per_s": hw.memory_bandwidth_bytes_per_s * n,
            "flops_per_s": hw.flops_per_s * n if hw.flops_per_s else None,
            "fp16_acc_flops_per_s": hw.fp16_acc_flops_per_s * n if hw.fp16_acc_flops_per_s else None,
            "label": f"{n} × {hw.label}",
        })
        notes.append(_("{n} devices: bandwidth and flop/s summed, communication between them not modelled").format(n=n))
    if machine.n_devices > n:
        notes.append(_("{used} of the {n} devices' bandwidth and flop/s count: devices holding different layers take "
                       "turns within a step, only tensor parallelism splits one step across devices").format(
                       used=n, n=machine.n_devices))
    if not weights_bytes:
        raise ServewiseInputError(_("the weight bytes are unknown; give --weights or --weights-bytes"))
    shape = model_shape(arch, weights_bytes, plan.kv_bytes_per_token * max(1, n))
    concurrency = engine.speed.concurrency(settings, plan, machine)
    policy, steps = _plan_policy(engine, settings, plan)
    return SpeedInputs(engine_id, shape, hw, max(1, int(concurrency)), tuple(notes), policy, steps)


def _plan_policy(engine, settings, plan) -> tuple[SchedulerPolicy | None, PrefillSteps]:
    """The scheduler the plan runs with and how its steps prefill a lone prompt; (None, one pass) when the engine
    has no scheduler model or the plan could not run (no running place, no KV pool: its policy does not validate)."""
    if engine.policy_from_plan is None:
        return None, ONE_PASS
    try:
        policy, kv_tokens = engine.policy_from_plan(settings, plan)
        return policy, lone_prompt_steps(policy, kv_tokens)
    except (ValidationError, ServewiseInputError):
        return None, ONE_PASS


def plan_speed(engine_id: str, settings, plan, machine, arch, weights_bytes: float | None, kb, prompt_tokens: int,
               calibration: CalibrationProfile | None = None) -> SpeedEstimate | str:
    """The speed estimate for one engine's plan, or why there is none (a calibration for another engine or
    hardware class is left out here: the page shows every engine, the calibration fits one)."""
    try:
        inputs = plan_speed_inputs(engine_id, settings, plan, machine, arch, weights_bytes, kb)
    except ServewiseInputError as exc:
        return str(exc)
    usable = calibration if calibration is not None and calibration.applies_to(
        engine_id, inputs.hardware.hardware_class) else None
    return speed_estimate(inputs, prompt_tokens, usable)


def speed_estimate(inputs: SpeedInputs, prompt_tokens: int, calibration: CalibrationProfile | None) -> SpeedEstimate:
    """The `speed` verb's answer; a calibration for another engine or class is refused, not silently ignored."""
    if calibration is not None and not calibration.applies_to(inputs.engine, inputs.hardware.hardware_class):
        raise ServewiseInputError(
            _("the calibration is for {engine} on {hardware_class}, not {engine_2} on {hardware_class_2}").format(
              engine=display_name(calibration.engine),
              hardware_class=hardware_class_name(calibration.hardware_class),
              engine_2=display_name(inputs.engine),
              hardware_class_2=hardware_class_name(inputs.hardware.hardware_class))
        )
    return estimate_speed(inputs.model, inputs.hardware, inputs.engine, concurrency=inputs.concurrency,
                          prompt_tokens=prompt_tokens, calibration=calibration,
                          prefill_steps=inputs.prefill_steps)


def kv_tokens_from_log(text: str) -> int | None:
    """The KV pool in tokens a start-up log printed (vLLM's 'GPU KV cache size', SGLang's max_total_num_tokens)."""
    from calculators.reconcile.log.parse import parse_startup_log

    parsed = parse_startup_log(text)
    for name in KV_TOKEN_FIGURES:
        found = parsed.figures_named(name)
        if found:
            return int(found[-1].value)
    return None


def calibrate_from_texts(inputs: SpeedInputs, bench_texts: list[str], log_text: str | None, fmt: str | None,
                         label: str, sources: list[str] | None = None) -> CalibrationResult:
    """Read every benchmark text, take the KV capacity from the log when given, and calibrate; the lines no
    reader used come back in the result, each with its source (`sources[i]` names text i) when several were read."""
    runs: list[ImportedRun] = []
    skipped = []
    for i, text in enumerate(bench_texts):
        imported = read_benchmark(text, fmt)
        runs.extend(imported.runs)
        source = sources[i] if sources and len(bench_texts) > 1 else ""
        skipped += [line.model_copy(update={"source": source}) for line in imported.skipped]
    kv_tokens = kv_tokens_from_log(log_text) if log_text else None
    if log_text and kv_tokens is None:
        raise ServewiseInputError(_("the start-up log states no KV capacity in tokens "
                                  "(vLLM 'GPU KV cache size' or SGLang #tokens)"))
    result = calibrate(runs, inputs.model, inputs.hardware, inputs.engine, kv_capacity_tokens=kv_tokens, label=label,
                       policy=inputs.policy)
    return result.model_copy(update={"skipped": tuple(skipped)})
