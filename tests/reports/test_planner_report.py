"""The planner's Markdown shows the winner's arithmetic and every rejection; its JSON is plain data."""

import json

from calculators.planner import HardwareOption, LoadSpec, PlannerSpec, plan_capacity
from knowledge.loader import load_knowledge
from reports.planner_report import concurrency_settings_line, planner_json, planner_markdown, winners_table

KB = load_knowledge()
ENGINES = {e.id: e.name for e in KB.engines}
GPUS = {g.id: g.name for g in KB.gpus.gpus}
RESULT = plan_capacity(PlannerSpec(model_id="llama-3.1-8b", hardware=(HardwareOption(gpu_id="h100-sxm-80gb"),),
                                   engines=("vllm", "mlx-lm"), load=LoadSpec(arrival_rate_per_s=3.0),
                                   concurrency_options=(16,), requests_per_simulation=100), KB)


def test_markdown_names_the_winner_its_arithmetic_and_the_rejections():
    text = planner_markdown(RESULT, ENGINES, GPUS)
    best = RESULT.best
    assert best is not None
    assert "| vLLM | 1 × 1 NVIDIA H100 SXM5 80\u00a0GB, bf16, KV 16-bit, max_num_seqs 16 |" in text
    gpus = f"{best.cost.gpus} GPU" + ("" if best.cost.gpus == 1 else "s")  # counted, not "GPU(s)"
    assert f"{gpus} × ${best.cost.usd_per_gpu_hour:,.2f}/GPU-hour" in text
    assert "(s)" not in text.split("## Assumptions")[0]  # instances, hosts and GPUs are counted words
    assert "Lambda list price" in text and "2026-05-07" in text
    # rejected, with its reason
    assert "| MLX LM | NVIDIA H100 SXM5 80\u00a0GB |" in text and "Apple silicon only" in text
    assert "h100-sxm-80gb" not in text  # people read names, not slugs


def test_json_is_plain_data_with_the_best_configuration():
    data = json.loads(json.dumps(planner_json(RESULT)))
    assert data["best"]["shape"]["engine"] == "vllm"
    assert data["best"]["cost"]["basis"] == "cloud"
    assert "probes" not in data["best"]
    assert any(r["engine"] == "mlx-lm" and r["stage"] == "engine" for r in data["rejections"])
    with_probes = planner_json(RESULT, include_probes=True)
    assert with_probes["best"]["probes"]



def test_winners_are_engines_as_columns_with_names_and_the_json_carries_names_next_to_slugs():
    """Issue 19: as one row per engine the table scrolled sideways at 1024 px; weights showed slugs (bf16)."""
    from reports.names import names_by_slug

    names = names_by_slug(KB)
    table = winners_table(RESULT, names, names, names)
    assert list(table.columns) == ["vLLM"]  # mlx-lm is rejected on an H100
    assert table.loc["GPU", "vLLM"] == "NVIDIA H100 SXM5 80\u00a0GB" and table.loc["weights", "vLLM"] == "BF16"
    assert table.loc["concurrency", "vLLM"] == "16"
    settings = concurrency_settings_line(RESULT, names)
    assert settings == "Concurrency is each engine's own setting: `max_num_seqs` (vLLM)."
    assert table.loc["US$ per hour", "vLLM"].startswith("$")
    assert "users per instance" not in table.index  # an arrival rate was planned, not users
    data = planner_json(RESULT, names=names)
    assert data["best"]["shape"]["gpu_id"] == "h100-sxm-80gb"  # ids stay slugs
    assert data["names"]["h100-sxm-80gb"] == "NVIDIA H100 SXM5 80\u00a0GB" and data["names"]["mlx-lm"] == "MLX LM"
    assert "names" not in planner_json(RESULT)
