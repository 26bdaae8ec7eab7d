"""The benchmark plan: identical workload parameters across engines' tools, phases, what to record, bad input."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from calculators.errors import ServewiseInputError
from calculators.operations.bench_plan import (
    PHASES,
    BenchPlan,
    BenchPlanRequest,
    build_bench_plan,
    parse_number_list,
)
from knowledge import load_knowledge
from knowledge.engines import PRIMARY_ENGINE_IDS, engine_by_id
from reports.bench_plan import plan_json, plan_markdown, plan_yaml
from reports.json_text import plain_spaces

KB = load_knowledge()


def make_request(**changes) -> BenchPlanRequest:
    base = {"engines": PRIMARY_ENGINE_IDS, "model_id": "llama-3.1-8b", "gpu_id": "h100-sxm-80gb",
            "request_rates_per_s": (2.0, 8.0), "client_counts": (4, 32), "num_prompts": 120, "seed": 7}  # fmt: skip
    return BenchPlanRequest(**(base | changes))


@pytest.fixture(scope="module")
def plan() -> BenchPlan:
    return build_bench_plan(make_request(), KB)


def workload_of(command, plan: BenchPlan) -> dict[str, float]:
    """Read the workload parameters back out of one load command, using its tool's KB flag spellings."""
    engine_tools = [t for e in KB.engines if e.operations for t in e.operations.bench_tools]
    tool = next(t for t in engine_tools if t.name == command.tool)
    args = list(command.argv[command.program_length:])
    values: dict[str, str] = {}
    for index, word in enumerate(args[:-1]):
        if word.startswith("-") and not args[index + 1].startswith("-"):
            values[word] = args[index + 1]
    flags, prefix = tool.flags, tool.prefix_flags
    run = next(r for r in plan.runs if r.id == command.run_id)
    if run.phase == "warm-prefix" and "suffix_len" in prefix:
        input_tokens = int(values[prefix["prefix_len"]]) + int(values[prefix["suffix_len"]])
        output_tokens = int(values[prefix["output_len"]])
        num_prompts = int(values[prefix["groups"]]) * int(values[prefix["prompts_per_group"]])
        shared = int(values[prefix["prefix_len"]])
        ratio = float(values[prefix["range_ratio"]])
    else:
        shared = int(values.get(flags.get("prefix_len", "-"), 0))
        input_tokens = int(values[flags["input_len"]]) + shared
        output_tokens = int(values[flags["output_len"]])
        num_prompts = int(values[flags["num_prompts"]])
        ratio = float(values[flags["range_ratio"]])
    assert ratio == tool.fixed_length_range_ratio, f"{tool.name}: lengths are not fixed"
    return {
        "input": input_tokens,
        "output": output_tokens,
        "shared_prefix": shared,
        "prompts": num_prompts,
        "rate": float(values[flags["request_rate"]]),
        "clients": int(values[flags["max_concurrency"]]),
        "seed": int(values[flags["seed"]]),
    }


def test_every_engine_gets_identical_workload_parameters_for_every_run(plan):
    by_run: dict[str, dict[str, dict[str, float]]] = {}
    for section in plan.engines:
        for command in section.commands:
            if command.run_id.startswith("engine-check"):
                continue
            by_run.setdefault(command.run_id, {})[section.engine] = workload_of(command, plan)
    assert set(by_run) == {run.id for run in plan.runs}
    for run in plan.runs:
        per_engine = by_run[run.id]
        assert set(per_engine) == set(PRIMARY_ENGINE_IDS), run.id
        expected = {
            "input": run.workload.input_tokens,
            "output": run.workload.output_tokens,
            "shared_prefix": run.workload.prefix_tokens if run.phase == "warm-prefix" else 0,
            "prompts": run.num_prompts,
            "rate": run.point.request_rate_per_s,
            "clients": run.point.max_clients,
            "seed": 7,
        }
        for engine_id, values in per_engine.items():
            assert values == expected, (run.id, engine_id)


def test_vllm_and_sglang_fix_lengths_with_opposite_range_ratios(plan):
    # vllm/benchmarks/datasets/datasets.py draws from [len*(1-r), len*(1+r)]; sglang's compute_random_lens
    # from [len*r, len] (sglang/benchmark/datasets/common.py) — so fixed lengths are 0.0 in one, 1.0 in the other
    sections = {s.engine: s for s in plan.engines}
    vllm_warm = next(c for c in sections["vllm"].commands if c.run_id.startswith("warm-"))
    sglang_warm = next(c for c in sections["sglang"].commands if c.run_id.startswith("warm-"))
    assert vllm_warm.argv[vllm_warm.argv.index("--random-range-ratio") + 1] == "0"
    assert sglang_warm.argv[sglang_warm.argv.index("--random-range-ratio") + 1] == "1"
    assert "--ignore-eos" in vllm_warm.argv  # vLLM honours EOS unless told; SGLang ignores it by default


def test_own_tool_where_it_exists_and_generic_recipe_elsewhere(plan):
    sections = {s.engine: s for s in plan.engines}
    assert sections["vllm"].load_tool == "vllm bench serve"
    assert sections["sglang"].load_tool == "sglang.bench_serving"
    for engine_id in ("ollama", "llama-cpp", "mlx-lm"):
        section = sections[engine_id]
        assert section.load_tool is None
        assert section.generic_recipe and any("open loop" in step for step in section.generic_recipe)
        assert all(c.generic_client for c in section.commands if not c.run_id.startswith("engine-check"))
        network = engine_by_id(KB.engines, engine_id).network
        assert section.base_url.endswith(f":{network.default_port}")
    checks = {c.tool for c in sections["llama-cpp"].commands if c.run_id.startswith("engine-check")}
    assert checks == {"llama-bench"}
    assert {n.tool for n in sections["llama-cpp"].other_tools} == {"llama-bench", "server bench (k6)"}


def test_cold_warm_and_prefix_phases_are_all_present(plan):
    assert plan.phases == PHASES == ("cold-start", "warm", "warm-prefix")
    assert {run.phase for run in plan.runs} == set(PHASES)
    cold = [run for run in plan.runs if run.phase == "cold-start"]
    assert all(run.num_prompts == 1 and run.warmup_requests == 0 for run in cold)
    # 2 workloads × (1 cold start + 2 phases × 2 rates × 2 client caps)
    assert len(plan.runs) == 2 * (1 + 2 * 2 * 2)
    assert all(phase in plan.phase_purpose for phase in PHASES)


def test_record_list_names_what_changes_results(plan):
    text = " ".join(item.item.lower() for item in plan.record)
    for needed in ("weights revision", "tokenizer revision", "engine version", "quantization", "chat template",
                   "backend", "dependencies", "startup log", "errors", "throughput"):  # fmt: skip
        assert needed in text, needed


def test_tool_calls_and_languages_add_their_notes():
    plan = build_bench_plan(make_request(tool_calls=True, languages=("en", "ja")), KB)
    assert any("ja" in note and "tokenizer" in note for note in plan.notes)
    vllm = next(s for s in plan.engines if s.engine == "vllm")
    assert "--tool-call-parser" in vllm.tool_call_setup and vllm.generic_recipe
    assert any("/v1/chat/completions" in step for step in vllm.generic_recipe)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"engines": ()}, "at least one engine"),
        ({"request_rates_per_s": (0.0,)}, "positive"),
        ({"request_rates_per_s": (math.inf,)}, "positive"),
        ({"request_rates_per_s": ()}, "at least one arrival rate"),
        ({"client_counts": (0,)}, "client count"),
        ({"engines": ("vllm", "triton")}, "Unknown engine"),
        ({"model_id": "gpt-5"}, "Unknown model"),
        ({"gpu_id": "a99"}, "Unknown GPU"),
        ({"num_prompts": 0}, "at least one request"),
        ({"seed": 0}, "seed"),
        ({"workloads": ()}, "workload"),
        ({"prefix_share": 1.0}, "between 0 and 1"),
        ({"long_input_tokens": 200_000}, "trained context of 131072"),
    ],
)
def test_bad_inputs_raise_clear_errors(changes, message):
    with pytest.raises(ServewiseInputError, match=message):
        build_bench_plan(make_request(**changes), KB)


def test_number_lists_parse_and_reject_junk():
    assert parse_number_list("1, 4  16", "rate") == (1.0, 4.0, 16.0)
    with pytest.raises(ServewiseInputError, match="'fast' is not a number"):
        parse_number_list("1, fast", "rate")
    with pytest.raises(ServewiseInputError, match="whole number"):
        parse_number_list("2.5", "client cap", integers=True)
    with pytest.raises(ServewiseInputError, match="at least one"):
        parse_number_list(" , ", "rate")


def test_exports_are_valid_json_and_yaml_that_round_trip_the_schema(plan):
    from_json = BenchPlan.model_validate(json.loads(plan_json(plan)))
    from_yaml = BenchPlan.model_validate(yaml.safe_load(plan_yaml(plan)))
    # Files for programs carry plain spaces where the page joins a figure and its unit with a no-break space
    # (reports/json_text.py): the round trip is the plan with those read as plain spaces.
    as_written = BenchPlan.model_validate(plain_spaces(plan.model_dump(mode="json")))
    assert from_json == as_written == from_yaml
    markdown = plan_markdown(plan)
    assert markdown.startswith("# servewise benchmark plan")
    for section in plan.engines:
        assert f"### {section.name}" in markdown
    assert "vllm bench serve" in markdown and "python -m sglang.bench_serving" in markdown


def test_engine_without_a_path_on_the_chosen_hardware_is_flagged():
    # knowledge/engines.yaml: MLX LM has no ROCm (or Vulkan) build, so AMD reads not-supported
    plan = build_bench_plan(make_request(engines=("mlx-lm", "vllm"), gpu_id="mi300x-192gb"), KB)
    mlx, vllm = plan.engines
    assert any("no usable path on amd" in warning for warning in mlx.warnings)
    assert not any("usable path" in warning for warning in vllm.warnings)
