"""From a launch command and a model source to an engine's memory plan (what the `memory` CLI verb runs).

The model comes from an explicit source (config.json, hub repo id, GGUF header, catalog id) or, when
none is given, from the command itself: a `.gguf` path, or a repo id that matches a catalog entry
(otherwise it is fetched from the hub). Weight bytes are exact from a GGUF header or when given;
otherwise estimated from parameters x bits per weight, and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from calculators.engines import ENGINES, adapter
from calculators.engines.base import DraftModel
from calculators.errors import ServewiseInputError
from calculators.hardware.catalog import machine_for_gpu_id
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.launch.flags import flag_spelling
from calculators.launch.settings import LaunchSettings, settings_from_command
from calculators.memory.compare import Workload
from calculators.memory.plan import ComponentKind, MemoryPlan
from calculators.model.architecture import ModelArchitecture

DEFAULT_WEIGHTS_SCHEME = "bf16"


@dataclass(frozen=True)
class ResolvedModel:
    """The architecture a plan is made for, where it came from, and exact weight bytes when known."""

    arch: ModelArchitecture
    source: str
    exact_weights_bytes: int | None = None


@dataclass
class MemoryCommandResult:
    """Everything the `memory` verb reports: the engine's plan and how its inputs were obtained."""

    plan: MemoryPlan
    launch: LaunchSettings
    model: ResolvedModel
    machine: Machine | None
    weights_basis: str
    notes: list[str] = field(default_factory=list)
    #: weight bytes of the whole model (the plan's weights_bytes is per device); None when unknown
    model_weights_bytes: int | None = None


def resolve_model(
    kb,
    *,
    hf_config: str | None = None,
    hf_model: str | None = None,
    gguf: str | None = None,
    catalog_id: str | None = None,
    command_model: str | None = None,
) -> ResolvedModel:
    """The model architecture from the first source given, else from the launch command's model argument."""
    from calculators.model.catalog import architecture_from_catalog
    from calculators.model.gguf import read_gguf_header
    from calculators.model.hf_config import architecture_from_config_file
    from calculators.model.hf_hub import architecture_from_hub

    if hf_config:
        return ResolvedModel(architecture_from_config_file(hf_config), _("config.json {hf_config}").format(
            hf_config=hf_config))
    if hf_model:
        return ResolvedModel(architecture_from_hub(hf_model), _("hub {hf_model}").format(hf_model=hf_model))
    if gguf or (command_model and command_model.lower().endswith(".gguf")):
        path = gguf or command_model
        assert path is not None  # the condition above: gguf, or a command model ending in .gguf
        header = read_gguf_header(path)
        return ResolvedModel(header.architecture, _("GGUF header {path}").format(path=path), header.weights_bytes)
    if catalog_id:
        return ResolvedModel(architecture_from_catalog(catalog_id, kb), _("catalog {catalog_id}").format(
            catalog_id=catalog_id))
    if command_model:
        match = next((m for m in kb.models.models if m.hf_repo.lower() == command_model.lower()), None)
        if match is not None:
            return ResolvedModel(architecture_from_catalog(match.id, kb), _("catalog {id} (from "
                "{command_model})").format(id=match.id, command_model=command_model))
        if Path(command_model).exists():
            config = Path(command_model) / "config.json"
            return ResolvedModel(architecture_from_config_file(config), _("config.json {config}").format(config=config))
        return ResolvedModel(architecture_from_hub(command_model), _("hub {command_model}").format(
            command_model=command_model))
    raise ServewiseInputError(
        _("name the model: --model CATALOG_ID, --hf-config PATH, --hf-model REPO_ID or --gguf PATH"))


def resolve_machine(kb, engine: str, settings: BaseModel, gpu_id: str | None, n_gpus: int | None,
                    cpu_memory_bytes: int | None = None, cpu_features: frozenset[str] = frozenset()) -> Machine | None:
    """The Machine for a catalog GPU (device count from --gpus, else the command's parallelism), or a CPU host."""
    if cpu_memory_bytes is not None:
        if gpu_id is not None:
            raise ServewiseInputError(_("give either --gpu or --cpu-memory-gib, not both"))
        if not adapter(engine).plans_cpu_build:
            raise ServewiseInputError(_("servewise plans {engine} on GPUs only; give --gpu CATALOG_ID").format(
                                        engine=engine))
        return Machine(device_memory_bytes=cpu_memory_bytes, device_kind="cpu", cpu_features=cpu_features)
    if gpu_id is None:
        if adapter(engine).needs_machine:
            raise ServewiseInputError(_("{engine} sizes its cache from GPU memory: give --gpu CATALOG_ID").format(
                                        engine=engine))
        return None
    devices = n_gpus if n_gpus is not None else adapter(engine).devices_from_settings(settings)
    return machine_for_gpu_id(kb, gpu_id, devices)


def resolve_weights(
    kb, model: ResolvedModel, scheme: str | None, exact_bytes: int | None
) -> tuple[int | None, str, bool]:
    """Weight bytes, a sentence saying how they were obtained, and whether they are exact (None: unknown)."""
    from calculators.model.weights import estimate_weights

    if exact_bytes is not None:
        if exact_bytes <= 0:
            raise ServewiseInputError(_("--weights-bytes must be a positive number of bytes"))
        return exact_bytes, _("exact, as given"), True
    if model.exact_weights_bytes is not None and scheme is None:
        return model.exact_weights_bytes, _("exact, summed from the GGUF header's tensors"), True
    if model.arch.params_total is None:
        return None, _("unknown: the model's parameter count could not be derived"), False
    estimate = estimate_weights(kb.formats, model.arch.params_total, scheme or DEFAULT_WEIGHTS_SCHEME)
    if scheme:
        return estimate.bytes, _("estimated: {basis}").format(basis=estimate.basis), False
    return estimate.bytes, _("estimated: {basis} (no --weights given: {scheme} assumed)").format(
        basis=estimate.basis, scheme=DEFAULT_WEIGHTS_SCHEME), False


def _mark_weights_exactness(plan: MemoryPlan, exact: bool, basis: str) -> MemoryPlan:
    """Engines take weight bytes as given; say on the weights slice whether they were exact or estimated."""
    components = [
        c.model_copy(update={"exact": exact, "basis": basis}) if c.kind is ComponentKind.WEIGHTS else c
        for c in plan.components
    ]
    return plan.model_copy(update={"components": components})


def _resolve_draft(kb, model: ResolvedModel, weights_scheme: str | None, catalog_id: str | None,
                   config: str | None) -> DraftModel | None:
    """The drafter given on the command line, its weights at the target's scheme (unknown for a GGUF target)."""
    from calculators.memory.draft import draft_model
    from calculators.model.catalog import architecture_from_catalog
    from calculators.model.hf_config import architecture_from_config_file

    if catalog_id and config:
        raise ServewiseInputError(_("give the drafter once: --draft-model CATALOG_ID or --draft-config PATH"))
    if not (catalog_id or config):
        return None
    arch = architecture_from_catalog(catalog_id, kb) if catalog_id else architecture_from_config_file(config or "")
    scheme = weights_scheme or (None if model.exact_weights_bytes is not None else DEFAULT_WEIGHTS_SCHEME)
    return draft_model(arch, kb.formats, scheme, catalog_id or arch.name)


def plan_from_command(
    command: str,
    kb,
    *,
    hf_config: str | None = None,
    hf_model: str | None = None,
    gguf: str | None = None,
    catalog_id: str | None = None,
    gpu_id: str | None = None,
    n_gpus: int | None = None,
    weights_scheme: str | None = None,
    weights_bytes: int | None = None,
    prompt_tokens: int | None = None,
    generated_tokens: int | None = None,
    sequences: int | None = None,
    cpu_memory_bytes: int | None = None,
    cpu_features: frozenset[str] = frozenset(),
    draft_catalog_id: str | None = None,
    draft_config: str | None = None,
) -> MemoryCommandResult:
    """Parse the command, resolve model, machine and weights, and run the engine's memory plan.

    `prompt_tokens`, `generated_tokens` and `sequences` describe the work, for engines whose cache grows with it
    (an engine that sizes its cache up front refuses them with a ServewiseInputError). `draft_catalog_id` or
    `draft_config` (a config.json path) is the speculative drafter the command loads: engines that load one plan
    its weights (at the target's scheme) and cache with the target's.
    """
    launch = settings_from_command(command, kb)
    model = resolve_model(
        kb, hf_config=hf_config, hf_model=hf_model, gguf=gguf, catalog_id=catalog_id, command_model=launch.model
    )
    machine = resolve_machine(kb, launch.engine, launch.settings, gpu_id, n_gpus, cpu_memory_bytes, cpu_features)
    weights, basis, exact = resolve_weights(kb, model, weights_scheme, weights_bytes)
    engine = adapter(launch.engine)
    draft = _resolve_draft(kb, model, weights_scheme, draft_catalog_id, draft_config)
    draft_plan = engine.draft_plan
    if draft is not None and draft_plan is None:
        reason = f" {_(engine.draft_not_planned)}" if engine.draft_not_planned else ""
        raise ServewiseInputError(_("{display_name} takes no drafter model this way; --draft-model and "
                                    "--draft-config are for {engines}.").format(
            display_name=engine.display_name,
            engines=", ".join(a.display_name for a in ENGINES.values() if a.draft_plan is not None)) + reason)
    if draft is not None and draft_plan is not None:
        if machine is None:
            raise ServewiseInputError(_("give --gpu CATALOG_ID to plan the drafter with the model"))
        context = (prompt_tokens or model.arch.max_context_tokens or 0) + (generated_tokens or 0)
        plan = draft_plan(model.arch, launch.settings, machine, weights,
                          Workload(context_tokens=context, sequences=sequences or 1), draft)
    elif (prompt_tokens, generated_tokens, sequences) == (None, None, None):
        plan = engine.plan(model.arch, launch.settings, machine, weights)
    elif engine.workload_plan is None:
        growing = ", ".join(a.display_name for a in ENGINES.values() if a.workload_plan is not None)
        raise ServewiseInputError(
            _("{display_name} sizes its cache before any request arrives, so --prompt-tokens, "
              "--generated-tokens and --sequences do not change its plan (they are for {growing})").format(
              display_name=engine.display_name, growing=growing)
        )
    else:
        plan = engine.workload_plan(model.arch, launch.settings, machine, weights, prompt_tokens=prompt_tokens,
                                    generated_tokens=generated_tokens or 0, sequences=sequences or 1)
    plan = _mark_weights_exactness(plan, exact, basis)
    notes = []
    if launch.unknown_flags:
        notes.append(_("flags servewise does not model (not ignored silently): {unknown_flags}").format(
                       unknown_flags=' '.join(launch.unknown_flags)))
    unmodelled = [k for k in launch.settings.model_fields_set if k in engine.unmodelled_settings]
    if unmodelled:
        spelling = flag_spelling(kb, launch.engine)
        flags = " ".join(sorted(spelling.flags.get(k, k) for k in unmodelled))
        notes.append(_("flags servewise reads but does not model (the memory they take is not in the plan): "
                       "{flags}").format(flags=flags))
    return MemoryCommandResult(plan=plan, launch=launch, model=model, machine=machine, weights_basis=basis, notes=notes,
                               model_weights_bytes=weights)
