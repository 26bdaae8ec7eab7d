"""llama.cpp's llama-server: settings, memory plan, launch flags, start-up-log reader,
reconciliation rows, scheduler policy."""

from calculators.engines.base import EngineAdapter, LogReader, MemoryKnob
from calculators.engines.llama_cpp import embeddings, launch, plan, startup_log, tools, workload
from calculators.engines.llama_cpp.plan import ENGINE_ID, LlamaCppSettings, plan_llamacpp
from calculators.engines.llama_cpp.reconcile import llamacpp_rows
from calculators.engines.llama_cpp.scheduler import SIMULATOR_KNOBS, SIMULATOR_LABEL, LlamaCppPolicy, policy_from_plan
from calculators.engines.llama_cpp.speed import SPEED
from calculators.i18n import N_
from knowledge.engines import SHARED_SETTING_KEYS


def _without_speculation(settings):
    """-md and --spec-type removed (None when the settings have neither)."""
    if settings.spec_draft_model is None and not settings.spec_type:
        return None
    return settings.model_copy(update={"spec_draft_model": None, "spec_type": ()})

ADAPTER = EngineAdapter(
    id=ENGINE_ID,
    display_name="llama.cpp (llama-server)",
    short_key="lcpp",
    colour="#d95f02",
    without_speculation=plan.without_speculation,
    settings_type=LlamaCppSettings,
    plan=plan_llamacpp,
    draft_plan=workload.plan_with_draft,
    kv_settings=workload.KV_SETTINGS,
    workload_keys=workload.WORKLOAD_KEYS,
    workload_settings=workload.workload_settings,
    not_applicable=workload.not_applicable,
    why_not_held=workload.why_not_held,
    needs_machine=False,
    capacity_search=workload.capacity_search,
    # free bytes over a per-sequence cache that does not change with the sequence count: the guess matched the
    # full search at all 150 points of a 25-context grid over three catalog models on one and two H100s
    sequences_guess_quality="trusted",
    command_start=launch.command_start,
    launch_example=launch.EXAMPLE,
    render_command=launch.render,
    switch_values={"flash_attn": "on"},
    model_file="model.gguf",
    log_setting_keys=SHARED_SETTING_KEYS[ENGINE_ID] | startup_log.LOG_ONLY_SETTING_KEYS,
    log_reader=LogReader(startup_log.MARKERS, startup_log.EXPECTED, startup_log.read_log,
                         line_starts=startup_log.LINE_STARTS),
    geometry_in_log=True,
    reconcile_rows=llamacpp_rows,
    settle_log_settings=startup_log.settle_settings,
    scheduler_policy=LlamaCppPolicy,
    simulator_knobs=SIMULATOR_KNOBS,
    simulator_label=SIMULATOR_LABEL,
    operations_default=2,
    memory_knobs=(
        MemoryKnob("n_gpu_layers", N_("-ngl GPU layers (-1 = all that fit)"), "int"),
        MemoryKnob("flash_attn", N_("-fa flash attention"), "choice:auto,on,off"),
        MemoryKnob("kv_unified", N_("-kvu one KV buffer shared by all slots"), "choice:auto,on,off"),
    ),
    multi_gpu_split="layer",
    concurrency_key="parallel",
    pooled_kv_cache=False,
    policy_from_plan=policy_from_plan,
    tool_call_rule=tools.tool_call_rule,
    embedding_rule=embeddings.EMBEDDING_RULE,
    speed=SPEED,
)
