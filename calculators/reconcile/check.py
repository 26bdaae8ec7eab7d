"""Check a start-up log against servewise's memory model: the same inputs, the engine's figures side by side.

    parsed = parse_startup_log(text)
    result = reconcile_log(parsed, arch=None, machine=None)        # geometry from the log (llama.cpp, Ollama)
    result = reconcile_log(parsed, arch=architecture_from_catalog("qwen3-14b"))   # vLLM / SGLang logs
    [(row.figure, row.status) for row in result.rows]

The settings are the log's own (shared key vocabulary), validated into the engine's Settings model;
`overrides` adds what the log did not print (e.g. `tensor_parallel_size=4`). Where an engine sizes its
cache from figures it profiled (vLLM, SGLang), the log's printed figures are the plan's inputs, so the
rows test the engine's block and token arithmetic rather than servewise's estimates of those peaks.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ValidationError

from calculators.engines import ENGINES, display_name
from calculators.errors import ServewiseInputError, validation_problem
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture, MoEGeometry
from calculators.reconcile.log.figures import LogGeometry, ParsedLog
from calculators.reconcile.result import Reconciliation, RowStatus, Rule
from calculators.reconcile.rows import EngineRun

SettingValue = int | float | bool | str
#: Log values that mean "the engine decides" rather than a setting.
_AUTO_VALUES = {"auto", "none", ""}


def architecture_from_log(parsed: ParsedLog) -> ModelArchitecture:
    """The model geometry a llama.cpp / Ollama log states, as a `ModelArchitecture` (element counts).

    Which layers slide is read from the caches the log prints (the `kv_swa` cache's layer count); layers
    the log lists with 0 KV heads are recurrent. Raises ServewiseInputError naming what is missing.
    """
    geo = parsed.geometry
    missing = [name for name, value in (("n_layer", geo.n_layers), ("n_head_kv", geo.n_kv_heads or
               geo.n_kv_heads_per_layer), ("n_embd_head_k", geo.head_dim_k)) if not value]
    if missing:
        raise ServewiseInputError(
            _("the log does not state the model geometry ({missing} missing from its print_info / "
              "llm_load_print_meta lines): add the model's config.json or pick a catalog model").format(
              missing=', '.join(missing))
        )
    assert geo.n_layers is not None and geo.head_dim_k is not None
    # n_kv_heads is set whenever the per-layer list is empty (the `missing` check above); `or 0` is for mypy
    heads = geo.n_kv_heads_per_layer or (geo.n_kv_heads or 0,) * geo.n_layers
    if len(heads) != geo.n_layers:
        raise ServewiseInputError(
            _("the log lists {n_heads} per-layer KV head counts for {n_layers} layers; add the model's "
              "config.json").format(n_heads=len(heads), n_layers=geo.n_layers)
        )
    head_dim_v = geo.head_dim_v or geo.head_dim_k
    sliding = _sliding_layers(parsed, geo)
    layers = []
    for index, n_kv in enumerate(heads):
        if not n_kv:
            layers.append(LayerGeometry(kind=LayerKind.RECURRENT))
        elif index in sliding:
            layers.append(LayerGeometry(kind=LayerKind.SLIDING, n_kv_heads=n_kv, head_dim_k=geo.head_dim_k,
                                        head_dim_v=head_dim_v, sliding_window_tokens=geo.sliding_window_tokens))
        else:
            layers.append(LayerGeometry(kind=LayerKind.FULL, n_kv_heads=n_kv, head_dim_k=geo.head_dim_k,
                                        head_dim_v=head_dim_v))
    notes = []
    if not geo.head_dim_v:
        notes.append(_("the log does not state n_embd_head_v; taken equal to n_embd_head_k"))
    if any(layer.kind is LayerKind.RECURRENT for layer in layers):
        notes.append(_("layers with 0 KV heads are recurrent; their state size is not in the log"))
    moe = MoEGeometry(n_experts=geo.n_expert, n_active=geo.n_expert_used or 1) if geo.n_expert else None
    return ModelArchitecture(
        name=geo.model_name or geo.architecture or _("model from the log"),
        family="generic",  # trust the layer kinds as read: the log's own caches said which layers slide
        layers=tuple(layers),
        n_heads=geo.n_heads or max(heads),
        hidden_size=geo.n_embd or 0,
        vocab_size=0,
        max_context_tokens=geo.context_train_tokens,
        params_total=geo.params_total,
        moe=moe,
        source=_("start-up log (GGUF metadata dump)"),
        notes=tuple(notes),
    )


def _sliding_layers(parsed: ParsedLog, geo: LogGeometry) -> set[int]:
    """Indices of sliding-window layers: as many as the log's `kv_swa` cache holds, spread evenly."""
    if not geo.sliding_window_tokens:
        return set()
    swa = parsed.figure("layers", cache="kv_swa")
    if swa is None or not swa.value:
        return set()
    n_swa, n_layers = int(swa.value), geo.n_layers or 0
    if n_swa >= n_layers:
        return set(range(n_layers))
    # Which indices slide does not change the cache sizes; spread them like the usual interleaved patterns.
    n_full = n_layers - n_swa
    step = n_layers / n_full
    full = {min(n_layers - 1, int((i + 1) * step) - 1) for i in range(n_full)}
    return set(range(n_layers)) - full


def log_settings(parsed: ParsedLog) -> tuple[str | None, dict[str, SettingValue]]:
    """(registry engine id, settings in its key vocabulary) the log states; a relayed runner (Ollama's
    llama-server) is planned as the engine it is, when the log shows how it was sized."""
    spec = ENGINES.get(parsed.engine or "")
    relays = spec.log_reader.relays if spec and spec.log_reader else None
    if relays in ENGINES and _runner_sized(parsed):
        return relays, dict(parsed.runner_settings)
    return parsed.engine, dict(parsed.settings)


def _runner_sized(parsed: ParsedLog) -> bool:
    """True when the log shows the runner its engine launched (the runner's command or its cache lines)."""
    return bool(parsed.runner_settings) or parsed.figure("cells") is not None


def validated_settings(
    engine: str, values: dict[str, SettingValue], overrides: dict[str, SettingValue] | None = None
) -> tuple[BaseModel, list[str]]:
    """The engine's Settings model from log values (+ overrides); returns it and the log keys it does not take."""
    spec = ENGINES[engine]
    settings_type = spec.settings_type
    fields = settings_type.model_fields
    merged = {**values, **(overrides or {})}
    if spec.settle_log_settings is not None:
        merged = spec.settle_log_settings(merged)
    kept = {
        key: value
        for key, value in merged.items()
        if key in fields and not (isinstance(value, str) and value.strip().lower() in _AUTO_VALUES)
    }
    ignored = sorted(key for key in merged if key not in fields)
    unknown = sorted(key for key in (overrides or {}) if key not in fields)
    if unknown:
        raise ServewiseInputError(
            _("{unknown} is not a {display_name} setting servewise models; known: {fields}").format(
              unknown=', '.join(unknown), display_name=display_name(engine), fields=', '.join(sorted(fields)))
        )
    try:
        return settings_type(**kept), ignored
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = _("the log's setting {where}={value} is not valid: {problem}").format(
            where=where, value=repr(kept.get(where)), problem=validation_problem(first))
        raise ServewiseInputError(message) from exc


def resolve_model(
    kb,
    *,
    hf_config_path: str | None = None,
    hf_config_text: str | None = None,
    model_id: str | None = None,
    log_model: object = None,
) -> ModelArchitecture | None:
    """The architecture from the first model source given (config.json file, pasted text, catalog id), else the
    catalog model whose Hugging Face repo the log names (vLLM/SGLang print `model=`), else None."""
    from calculators.model.catalog import architecture_from_catalog
    from calculators.model.hf_config import architecture_from_config_file, architecture_from_config_text

    if hf_config_path:
        return architecture_from_config_file(hf_config_path)
    if hf_config_text and hf_config_text.strip():
        return architecture_from_config_text(hf_config_text)
    if model_id:
        return architecture_from_catalog(model_id, kb)
    if isinstance(log_model, str) and log_model:
        match = next((m for m in kb.models.models if m.hf_repo.lower() == log_model.lower()), None)
        if match is not None:
            arch = architecture_from_catalog(match.id, kb)
            return replace(arch, source=f"catalog:{match.id} " + _("(the log's model {model})").format(
                model=log_model))
    return None


def resolve_gpu(kb, gpu_id: str | None) -> Machine | None:
    """One device of catalog GPU `gpu_id` (None when not given); an unknown id is a ServewiseInputError."""
    from calculators.hardware.catalog import machine_for_gpu_id

    if not gpu_id:
        return None
    return machine_for_gpu_id(kb, gpu_id)


def parse_overrides(text: str) -> dict[str, SettingValue]:
    """'tensor_parallel_size=4, kv_cache_dtype=fp8' as typed settings; a malformed item is a ServewiseInputError."""
    values: dict[str, SettingValue] = {}
    for item in text.replace(";", ",").replace("\n", ",").split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key or not raw:
            raise ServewiseInputError(_("'{item}' is not a setting: write key=value, e.g. "
                                        "tensor_parallel_size=4").format(item=item))
        values[key] = _typed(raw)
    return values


def _typed(raw: str) -> SettingValue:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            continue
    return raw


def _apply_version_defaults(parsed: ParsedLog, plan_engine: str, values: dict[str, SettingValue],
                            overrides: dict[str, SettingValue] | None, estimate_overrides: dict[str, SettingValue]):
    """Settings the log did not print, taken at the default of the release it states (knowledge/version_defaults).

    A default of the engine whose plan runs goes into its settings; one of an engine that relays another's
    runner (Ollama) goes to that engine's estimate rows. Returns (applied defaults, assumption texts).
    """
    from calculators.reconcile.version_defaults import version_defaults

    if parsed.engine is None or parsed.version is None:
        return [], []
    printed = set(values) | set(parsed.settings) | set(overrides or {}) | set(estimate_overrides)
    applied, notes = [], []
    for default in version_defaults(parsed.engine, parsed.version, printed):
        if not isinstance(default.value, int) or isinstance(default.value, bool) or default.value <= 0:
            if default.fact.rule:
                notes.append(_("{setting} is not printed; at {version} its default was {value} ({rule}), "
                               "which servewise does not model here").format(
                               setting=default.setting,
                               version=parsed.version,
                               value=default.value,
                               rule=default.fact.rule))
            continue
        if parsed.engine != plan_engine:
            estimate_overrides[default.setting] = default.value
        applied.append(default)
        notes.append(_("{setting} {value}: the default at {display_name} {version} ({meaning}; {source} @ "
                       "{version_2})").format(
                       setting=default.setting,
                       value=default.value,
                       display_name=display_name(parsed.engine),
                       version=parsed.version,
                       meaning=default.meaning,
                       source=default.fact.source,
                       version_2=default.fact.verified.version))
    return applied, notes


def _name_version_rows(rows: list, today_rows: list, applied: list) -> None:
    """Rows exact only thanks to a version default become `explained` by the `version` rule."""
    def key(row):
        return row.figure, row.line, row.device, row.cache

    today = {key(row): row for row in today_rows}
    names = ", ".join(f"{a.setting}={a.value}" for a in applied)
    for index, row in enumerate(rows):
        other = today.get(key(row))
        if row.status is RowStatus.EXACT and other is not None and other.status is not RowStatus.EXACT:
            rows[index] = row.model_copy(update={
                "status": RowStatus.EXPLAINED, "rule": Rule.VERSION,
                "explanation": f"matches with the defaults of the version the log states ({names}); with "
                               f"today's defaults servewise would predict {other.predicted_low}"})


def _add_estimate_rows(extra, outcome) -> None:
    """The engine's own printed prediction, judged (rows, inputs, notes), added to the plan's outcome."""
    judged = {(row.figure, row.line, row.device) for row in extra.rows}
    used = {(f.name, f.line, f.device) for f in extra.inputs} | judged
    summed = {row.figure for row in extra.rows if row.device is None}  # a per-device print judged as its sum
    outcome.rows.extend(extra.rows)
    outcome.not_compared = [f for f in outcome.not_compared if (f.name, f.line, f.device) not in used
                            and not (f.name in summed and f.basis.startswith("allocated by "))]
    outcome.plan_notes.extend(extra.notes)
    outcome.assumptions.extend(extra.assumptions)


def reconcile_log(
    parsed: ParsedLog,
    *,
    arch: ModelArchitecture | None = None,
    machine: Machine | None = None,
    overrides: dict[str, SettingValue] | None = None,
) -> Reconciliation:
    """Run the engine's memory plan on the log's inputs and compare every figure it predicts (rows).

    `arch` is required when the log has no geometry (vLLM, SGLang, MLX LM) and wins over the log's own
    when given. `machine` is optional: the log's printed totals are used where the plan needs memory.
    A log with no recognised engine, or an engine without a plan, gives a Reconciliation without rows
    whose notes say why; an unusable input (no geometry and no model) raises ServewiseInputError.
    """
    base = Reconciliation(
        engine=parsed.engine,
        engine_name=ENGINES[parsed.engine].display_name if parsed.engine in ENGINES else None,
        runner=parsed.runner,
        version=parsed.version,
        found_geometry=parsed.geometry.known(),
        found_settings={**parsed.settings, **{f"runner.{k}": v for k, v in parsed.runner_settings.items()}},
        missing=list(parsed.missing),
        log_notes=list(parsed.notes),
        lines=list(parsed.lines),
    )
    plan_engine, values = log_settings(parsed)
    if plan_engine is None:
        return base
    if any(note.code == "no_figures" for note in parsed.notes):
        return base.model_copy(update={"plan_engine": plan_engine, "not_compared": list(parsed.figures)})
    spec = ENGINES.get(plan_engine)
    if spec is not None and spec.reconcile_rows is None and spec.not_compared_reason:
        return base.model_copy(update={"not_compared": list(parsed.figures),
                                       "plan_notes": [spec.not_compared_reason]})
    if spec is None or spec.reconcile_rows is None:
        return base.model_copy(update={
            "not_compared": list(parsed.figures),
            "plan_notes": [f"servewise has no memory plan for {display_name(plan_engine)} yet; "
                           "the printed figures are listed unchecked"],
        })
    if arch is None:
        if not spec.geometry_in_log:
            raise ServewiseInputError(
                _("a {display_name} log does not state the model geometry: add the model's config.json or "
                  "pick a catalog model").format(display_name=spec.display_name)
            )
        arch = architecture_from_log(parsed)
    own = ENGINES.get(parsed.engine or "")
    estimate_overrides: dict[str, SettingValue] = {}
    if own is not None and own.estimate_rows is not None and plan_engine != parsed.engine and overrides:
        estimate_overrides = {k: v for k, v in overrides.items() if k in own.estimate_setting_keys}
        overrides = {k: v for k, v in overrides.items() if k not in own.estimate_setting_keys}
    if overrides and spec.row_setting_keys & set(overrides):
        row_values = {k: v for k, v in overrides.items() if k in spec.row_setting_keys}
        parsed = parsed.model_copy(update={"settings": {**parsed.settings, **row_values}})
        overrides = {k: v for k, v in overrides.items() if k not in spec.row_setting_keys}
    applied, version_notes = _apply_version_defaults(parsed, plan_engine, values, overrides, estimate_overrides)
    plan_defaults = {a.setting: a.value for a in applied if a.setting not in estimate_overrides}
    settings, ignored = validated_settings(plan_engine, {**values, **plan_defaults}, overrides)
    run = EngineRun(parsed=parsed, arch=arch, settings=settings, machine=machine)
    outcome = spec.reconcile_rows(run)
    if plan_defaults:
        today = spec.reconcile_rows(replace(run, settings=validated_settings(plan_engine, values, overrides)[0]))
        _name_version_rows(outcome.rows, today.rows, applied)
    outcome.assumptions.extend(version_notes)
    if own is not None and own.estimate_rows is not None:
        _add_estimate_rows(own.estimate_rows(parsed, arch, {**(overrides or {}), **estimate_overrides}), outcome)
    return base.model_copy(update={
        "plan_engine": plan_engine,
        "model_source": arch.source or arch.name,
        "settings_used": outcome.settings.model_dump(mode="json", exclude_defaults=True),
        "settings_ignored": ignored,
        "assumptions": outcome.assumptions,
        "rows": outcome.rows,
        "not_compared": outcome.not_compared,
        "plan_notes": [*arch.notes, *outcome.plan_notes],
        "refusal": outcome.refusal,
    })
