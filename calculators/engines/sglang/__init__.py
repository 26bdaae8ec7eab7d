"""SGLang: settings, memory pool plan, launch flags, start-up-log reader, reconciliation rows, scheduler policy."""

from calculators.engines.base import EngineAdapter, LogReader, MemoryKnob
from calculators.engines.sglang import embeddings, launch, plan, startup_log, tools, workload
from calculators.engines.sglang.plan import ENGINE_ID, SglangSettings, plan_sglang
from calculators.engines.sglang.reconcile import sglang_rows
from calculators.engines.sglang.scheduler import SIMULATOR_KNOBS, SIMULATOR_LABEL, SglangPolicy, policy_from_plan
from calculators.engines.sglang.speed import SPEED
from calculators.i18n import N_
from knowledge.engines import SHARED_SETTING_KEYS


def _without_speculation(settings):
    """--speculative-algorithm and its drafter removed (None when the settings have none)."""
    if settings.speculative_algorithm is None:
        return None
    return settings.model_copy(update={"speculative_algorithm": None, "speculative_draft_model_path": None,
                                       "speculative_num_draft_tokens": None})

ADAPTER = EngineAdapter(
    id=ENGINE_ID,
    display_name="SGLang",
    short_key="sglang",
    colour="#e7298a",
    without_speculation=plan.without_speculation,
    settings_type=SglangSettings,
    plan=plan_sglang,
    draft_plan=workload.plan_with_draft,
    kv_settings=workload.KV_SETTINGS,
    workload_keys=workload.WORKLOAD_KEYS,
    workload_settings=workload.workload_settings,
    not_applicable=workload.not_applicable,
    why_not_held=workload.why_not_held,
    devices_from_settings=workload.devices_from_settings,
    sequences_guess=workload.sequences_guess,
    context_guess=workload.context_guess,
    # SGLang's own pool divided by the context
    sequences_guess_quality="trusted",
    command_start=launch.command_start,
    launch_example=launch.EXAMPLE,
    render_command=launch.render,
    log_setting_keys=SHARED_SETTING_KEYS[ENGINE_ID] | startup_log.LOG_ONLY_SETTING_KEYS,
    log_reader=LogReader(startup_log.MARKERS, startup_log.EXPECTED, startup_log.read_log,
                         line_starts=startup_log.LINE_STARTS),
    reconcile_rows=sglang_rows,
    scheduler_policy=SglangPolicy,
    simulator_knobs=SIMULATOR_KNOBS,
    simulator_label=SIMULATOR_LABEL,
    simulator_default=True,
    memory_knobs=(
        MemoryKnob("mem_fraction_static", N_("--mem-fraction-static (0 = automatic)"), "float0"),
        MemoryKnob("tp_size", "--tp-size", "int"),
        MemoryKnob("page_size", "--page-size", "int"),
    ),
    multi_gpu_split="tensor",
    tensor_parallel_key="tp_size",
    concurrency_key="max_running_requests",
    pooled_kv_cache=True,
    policy_from_plan=policy_from_plan,
    tool_call_rule=tools.TOOL_CALL_RULE,
    embedding_rule=embeddings.embedding_rule,
    speed=SPEED,
)
