"""Ollama: settings, memory plan (its own prediction, then llama.cpp's), launch environment,
start-up-log reader, reconciliation rows, scheduler policy."""

from calculators.engines.base import EngineAdapter, LogReader, MemoryKnob
from calculators.engines.llama_cpp.plan import ENGINE_ID as LLAMA_CPP_ID
from calculators.engines.ollama import embeddings, launch, startup_log, tools, workload
from calculators.engines.ollama.estimate_rows import estimate_rows
from calculators.engines.ollama.plan import DRAFT_NOT_PLANNED, ENGINE_ID, OllamaSettings, plan_ollama
from calculators.engines.ollama.reconcile import ollama_rows
from calculators.engines.ollama.scheduler import SIMULATOR_KNOBS, SIMULATOR_LABEL, OllamaPolicy, policy_from_plan
from calculators.engines.ollama.speed import SPEED
from calculators.i18n import N_
from knowledge.engines import SHARED_SETTING_KEYS

ADAPTER = EngineAdapter(
    id=ENGINE_ID,
    display_name="Ollama",
    short_key="ollama",
    colour="#1b9e77",
    settings_type=OllamaSettings,
    plan=plan_ollama,
    draft_not_planned=DRAFT_NOT_PLANNED,
    kv_settings=workload.KV_SETTINGS,
    workload_keys=workload.WORKLOAD_KEYS,
    workload_settings=workload.workload_settings,
    not_applicable=workload.not_applicable,
    why_not_held=workload.why_not_held,
    capacity_search=workload.capacity_search,
    clamp_sequences_guess=workload.clamp_sequences_guess,
    clamp_context_guess=workload.clamp_context_guess,
    # not trusted: Ollama's pre-flight surcharge grows with the batch, so its guess runs high
    command_start=launch.command_start,
    launch_example=launch.EXAMPLE,
    render_command=launch.render,
    log_setting_keys=SHARED_SETTING_KEYS[ENGINE_ID] | startup_log.LOG_ONLY_SETTING_KEYS,
    log_reader=LogReader(startup_log.MARKERS, startup_log.EXPECTED, startup_log.read_log, relays=LLAMA_CPP_ID,
                         program_prefix="ollama", line_starts=startup_log.LINE_STARTS),
    geometry_in_log=True,
    reconcile_rows=ollama_rows,
    estimate_rows=estimate_rows,
    estimate_setting_keys=frozenset(OllamaSettings.model_fields),
    scheduler_policy=OllamaPolicy,
    simulator_knobs=SIMULATOR_KNOBS,
    simulator_label=SIMULATOR_LABEL,
    simulator_default=True,
    bench_served_name="<ollama-model-tag>",
    bench_served_name_note=N_("Replace <ollama-model-tag> with the tag you pulled (ollama list shows it)."),
    memory_knobs=(
        MemoryKnob("num_gpu", N_("num_gpu layers (-1 = automatic)"), "int"),
        MemoryKnob("gpu_overhead", N_("OLLAMA_GPU_OVERHEAD (bytes)"), "int"),
    ),
    multi_gpu_split="layer",
    concurrency_key="num_parallel",
    pooled_kv_cache=False,
    policy_from_plan=policy_from_plan,
    tool_call_rule=tools.tool_call_rule,
    embedding_rule=embeddings.EMBEDDING_RULE,
    speed=SPEED,
)
