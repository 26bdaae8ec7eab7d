"""Reader for GuideLLM's report JSON (`guidellm benchmark ... --output kind=json,path=...`, default benchmarks.json).

Field names follow GuideLLM v0.7.3's schema (vllm-project/guidellm@39383552, src/guidellm/benchmark/schemas):
each benchmark has `config.strategy` and `metrics.<name>.successful.{median, mean, percentiles.p99}`.
"""

from __future__ import annotations

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.speed.imports.run import ImportedRun, ImportResult, load_json, number, positive_or_none


def _stat(metrics: dict, name: str, where: str, stat: str = "median") -> float | None:
    block = metrics.get(name)
    if block is None:
        return None
    if not isinstance(block, dict):
        raise ServewiseInputError(_("{where}: metrics.{name} should be an object").format(where=where, name=name))
    successful = block.get("successful", block)
    if not isinstance(successful, dict):
        raise ServewiseInputError(_("{where}: metrics.{name}.successful should be an object").format(
                                    where=where, name=name))
    if stat == "p99":
        percentiles = successful.get("percentiles") or {}
        return (
            number(percentiles, "p99", f"{where}: metrics.{name}.successful.percentiles")
            if isinstance(percentiles, dict)
            else None
        )
    return number(successful, stat, f"{where}: metrics.{name}.successful")


def read_guidellm_json(text: str) -> ImportResult:
    """Every benchmark (one per load level) of a GuideLLM report."""
    data = load_json(text.strip(), "GuideLLM report")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ServewiseInputError(_("GuideLLM report: expected an object with a 'benchmarks' list"))
    runs = []
    for index, bench in enumerate(data["benchmarks"]):
        where = f"GuideLLM report: benchmarks[{index}]"
        if not isinstance(bench, dict) or not isinstance(bench.get("metrics"), dict):
            raise ServewiseInputError(_("{where}: has no 'metrics' object").format(where=where))
        config = bench.get("config") or bench.get("args") or {}
        strategy = config.get("strategy") if isinstance(config, dict) else None
        strategy = strategy if isinstance(strategy, dict) else {}
        kind_name = str(strategy.get("type_", ""))
        if kind_name in ("constant", "poisson"):
            kind, load = "rate", number(strategy, "rate", f"{where}: config.strategy")
        elif kind_name == "concurrent":
            kind, load = "concurrency", number(strategy, "streams", f"{where}: config.strategy")
        elif kind_name == "synchronous":
            kind, load = "concurrency", 1.0
        else:
            kind, load = "concurrency", None  # throughput: as many as the server takes
        metrics = bench["metrics"]
        runs.append(ImportedRun(
            tool="guidellm",
            load_kind=kind,
            load=positive_or_none(load),
            n_requests=None,
            prompt_tokens=_stat(metrics, "prompt_token_count", where, "mean"),
            output_tokens=_stat(metrics, "output_token_count", where, "mean"),
            ttft_ms_p50=positive_or_none(_stat(metrics, "time_to_first_token_ms", where)),
            ttft_ms_p99=positive_or_none(_stat(metrics, "time_to_first_token_ms", where, "p99")),
            itl_ms_p50=positive_or_none(_stat(metrics, "inter_token_latency_ms", where)),
            tpot_ms_p50=positive_or_none(_stat(metrics, "time_per_output_token_ms", where)),
            output_tokens_per_s=positive_or_none(_stat(metrics, "output_tokens_per_second", where, "mean")),
            line_no=1,
        ))
    if not runs:
        raise ServewiseInputError(_("GuideLLM report: the 'benchmarks' list is empty"))
    return ImportResult(tool="guidellm", runs=tuple(runs))
