"""MLX LM: settings, memory plan, launch flags, start-up-log reader, reconciliation of its peak memory,
scheduler policy (mlx_lm.server's BatchGenerator)."""

from calculators.engines.base import EngineAdapter, LogReader, MemoryKnob
from calculators.engines.mlx_lm import launch, speculative, startup_log, tools, workload
from calculators.engines.mlx_lm.plan import ENGINE_ID, MlxLmSettings, plan_mlx_lm
from calculators.engines.mlx_lm.reconcile import mlx_rows
from calculators.engines.mlx_lm.scheduler import SIMULATOR_KNOBS, SIMULATOR_LABEL, MlxLmPolicy, policy_from_plan
from calculators.engines.mlx_lm.speed import SPEED
from calculators.i18n import N_
from knowledge.engines import SHARED_SETTING_KEYS

ADAPTER = EngineAdapter(
    id=ENGINE_ID,
    display_name="MLX LM",
    short_key="mlx",
    colour="#66a61e",
    settings_type=MlxLmSettings,
    plan=plan_mlx_lm,
    kv_settings=workload.KV_SETTINGS,
    workload_keys=workload.WORKLOAD_KEYS,
    workload_settings=workload.workload_settings,
    not_applicable=workload.not_applicable,
    why_not_held=workload.why_not_held,
    run_plan=workload.run_plan,
    draft_plan=speculative.plan_with_draft_model,
    without_speculation=workload.without_speculation,
    workload_plan=workload.plan_for_work,
    # mlx_lm.server's cache of earlier prompts, and the batch a prompt-processing step pads to
    unmodelled_settings=frozenset({"prompt_cache_size", "prompt_cache_bytes", "prompt_concurrency"}),
    needs_machine=False,  # the cache grows with the work, not with device memory
    # free bytes over a per-sequence cache that does not change with the sequence count (as llama.cpp's)
    sequences_guess_quality="trusted",
    command_start=launch.command_start,
    launch_example=launch.EXAMPLE,
    render_command=launch.render,
    log_setting_keys=SHARED_SETTING_KEYS[ENGINE_ID] | startup_log.LOG_ONLY_SETTING_KEYS,
    log_reader=LogReader(startup_log.MARKERS, startup_log.EXPECTED, startup_log.read_log,
                         line_starts=startup_log.LINE_STARTS),
    reconcile_rows=mlx_rows,
    row_setting_keys=frozenset({"weights_scheme"}),
    memory_knobs=(
        MemoryKnob("max_kv_size", N_("--max-kv-size (0 = unbounded)"), "int0"),
        MemoryKnob("kv_group_size", "--kv-group-size", "int"),
    ),
    scheduler_policy=MlxLmPolicy,
    simulator_knobs=SIMULATOR_KNOBS,
    simulator_label=SIMULATOR_LABEL,
    # the cache is not checked before admission, so a plan must hold every sequence at the full context
    concurrency_key="decode_concurrency",
    pooled_kv_cache=False,
    policy_from_plan=policy_from_plan,
    tool_call_rule=tools.tool_call_rule,
    speed=SPEED,
)
