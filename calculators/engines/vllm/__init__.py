"""vLLM (v1 engine): settings, memory plan split like vLLM's source, launch flags,
start-up-log reader, reconciliation rows, scheduler policy."""

from calculators.engines.base import EngineAdapter, LogReader, MemoryKnob
from calculators.engines.vllm import embeddings, launch, speculative, startup_log, tools, workload
from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.plan import ENGINE_ID, plan_vllm
from calculators.engines.vllm.reconcile import vllm_rows
from calculators.engines.vllm.scheduler import SIMULATOR_KNOBS, SIMULATOR_LABEL, VllmPolicy, policy_from_plan
from calculators.engines.vllm.speed import SPEED
from calculators.i18n import N_
from knowledge.engines import SHARED_SETTING_KEYS


def _without_speculation(settings):
    """--speculative-config removed (None when the settings have none)."""
    if settings.speculative_config is None:
        return None
    return settings.model_copy(update={"speculative_config": None})

ADAPTER = EngineAdapter(
    id=ENGINE_ID,
    display_name="vLLM",
    short_key="vllm",
    colour="#7570b3",
    without_speculation=speculative.without_speculation,
    settings_type=VllmSettings,
    plan=plan_vllm,
    draft_plan=workload.plan_with_draft,
    plans_cpu_build=True,
    kv_settings=workload.KV_SETTINGS,
    workload_keys=workload.WORKLOAD_KEYS,
    workload_settings=workload.workload_settings,
    not_applicable=workload.not_applicable,
    why_not_held=workload.why_not_held,
    devices_from_settings=workload.devices_from_settings,
    sequences_guess=workload.sequences_guess,
    context_guess=workload.context_guess,
    sequences_guess_quality="exact",
    command_start=launch.command_start,
    launch_example=launch.EXAMPLE,
    render_command=launch.render,
    positional_model=True,
    replica_study_key="tensor_parallel_size",
    log_setting_keys=SHARED_SETTING_KEYS[ENGINE_ID] | startup_log.LOG_ONLY_SETTING_KEYS,
    log_reader=LogReader(startup_log.MARKERS, startup_log.EXPECTED, startup_log.read_log,
                         line_starts=startup_log.LINE_STARTS),
    reconcile_rows=vllm_rows,
    scheduler_policy=VllmPolicy,
    simulator_knobs=SIMULATOR_KNOBS,
    simulator_label=SIMULATOR_LABEL,
    simulator_default=True,
    simulator_reference=True,
    generic_bench_client=True,
    operations_default=1,
    memory_knobs=(
        MemoryKnob("gpu_memory_utilization", "--gpu-memory-utilization", "float"),
        MemoryKnob("tensor_parallel_size", N_("--tensor-parallel-size (-tp)"), "int"),
        MemoryKnob("pipeline_parallel_size", N_("--pipeline-parallel-size (-pp)"), "int"),
        MemoryKnob("block_size", N_("--block-size (0 = engine default)"), "int0"),
        MemoryKnob("max_num_batched_tokens", N_("--max-num-batched-tokens (0 = engine default)"), "int0"),
    ),
    multi_gpu_split="tensor",
    tensor_parallel_key="tensor_parallel_size",
    concurrency_key="max_num_seqs",
    pooled_kv_cache=True,
    policy_from_plan=policy_from_plan,
    tool_call_rule=tools.TOOL_CALL_RULE,
    embedding_rule=embeddings.embedding_rule,
    speed=SPEED,
)
