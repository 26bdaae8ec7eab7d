"""Readers for `llama-bench` output: `-o json` / `-o jsonl` and the default Markdown table.

A pp test (n_prompt > 0, n_gen = 0) is a prefill rate; a tg test (n_gen > 0, n_prompt = 0) is a
single-stream decode rate at context depth n_depth. Combined pg tests mix both and are kept as skipped.
"""

from __future__ import annotations

import re

from calculators.engines.llama_cpp.plan import ENGINE_ID
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.speed.imports.run import ImportedRun, ImportResult, SkippedLine, load_json, number
from calculators.units import compact


def _run(
    n_prompt: float, n_gen: float, depth: float, rate: float, model: str, hardware: str, where: str, line_no: int
) -> ImportedRun:
    if rate <= 0:
        raise ServewiseInputError(_("{where}: t/s is {rate}; a rate must be positive").format(where=where,
            rate=compact(rate, 3)))
    if n_prompt > 0 and n_gen == 0:
        return ImportedRun(tool="llama-bench", engine=ENGINE_ID, model_label=model, hardware_label=hardware,
                           prompt_tokens=n_prompt, context_tokens=depth, prefill_tokens_per_s=rate, line_no=line_no)
    if n_gen > 0 and n_prompt == 0:
        return ImportedRun(tool="llama-bench", engine=ENGINE_ID, model_label=model, hardware_label=hardware,
                           output_tokens=n_gen, context_tokens=depth, decode_tokens_per_s=rate, line_no=line_no)
    raise ServewiseInputError(
        _("{where}: a combined prompt+generation test (pg) mixes prefill and decode; servewise reads pp and "
          "tg tests").format(where=where)
    )


def read_llama_bench_json(text: str) -> ImportResult:
    """`llama-bench -o json` (an array) or `-o jsonl` (one object per line)."""
    stripped = text.strip()
    if not stripped:
        raise ServewiseInputError(_("llama-bench JSON: the text is empty"))
    if stripped.startswith("["):
        loaded = load_json(stripped, "llama-bench JSON")
        assert isinstance(loaded, list)  # the text starts with "[": JSON decodes it as an array
        rows = [(i + 1, r) for i, r in enumerate(loaded)]
        line_of = {i: 1 for i, _ in rows}
    else:
        rows, line_of = [], {}
        for line_no, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                rows.append((len(rows) + 1, load_json(line, f"llama-bench JSONL line {line_no}")))
                line_of[len(rows)] = line_no
    runs, skipped = [], []
    for index, row in rows:
        where = f"llama-bench result #{index}"
        if not isinstance(row, dict):
            raise ServewiseInputError(_("{where}: expected a JSON object").format(where=where))
        rate = number(row, "avg_ts", where, required=True)
        n_prompt = number(row, "n_prompt", where, required=True)
        n_gen = number(row, "n_gen", where, required=True)
        depth = number(row, "n_depth", where) or 0.0
        model = str(row.get("model_type") or row.get("model_filename") or "")
        hardware = str(row.get("gpu_info") or row.get("cpu_info") or "")
        try:
            runs.append(_run(n_prompt, n_gen, depth, rate, model, hardware, where, line_of[index]))
        except ServewiseInputError as exc:
            skipped.append(SkippedLine(line_no=line_of[index], text=str(row)[:500], reason=str(exc)))
    if not runs:
        raise ServewiseInputError(
            _("llama-bench JSON: no pp or tg result") + (f" ({skipped[0].reason})" if skipped else "")
        )
    return ImportResult(tool="llama-bench", runs=tuple(runs), skipped=tuple(skipped))


_TEST = re.compile(r"^(pp|tg)\s*(\d+)(?:\s*@\s*d\s*(\d+))?$")
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(?:\s*±\s*[0-9.]+)?$")


def read_llama_bench_markdown(text: str) -> ImportResult:
    """The Markdown table llama-bench prints by default (`| model | size | ... | test | t/s |`)."""
    runs, skipped, header = [], [], None
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line.startswith("|"):
            if line:
                skipped.append(SkippedLine(line_no=line_no, text=raw, reason="not a table row"))
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if "test" in cells and "t/s" in cells:
            header = cells
            continue
        if header is None or set("".join(cells)) <= set("-: "):
            if header is None:
                skipped.append(
                    SkippedLine(line_no=line_no, text=raw,
                        reason=_("table row before the header with 'test' and 't/s'"))
                )
            continue
        if len(cells) != len(header):
            skipped.append(
                SkippedLine(line_no=line_no, text=raw, reason=_("{cells} cells where the header has {header}").format(
                    cells=len(cells), header=len(header)))
            )
            continue
        row = dict(zip(header, cells, strict=True))  # lengths checked just above
        test = _TEST.match(row["test"])
        rate = _RATE.match(row["t/s"])
        if not test or not rate:
            what = "test" if not test else "t/s"
            skipped.append(
                SkippedLine(
                    line_no=line_no, text=raw,
                        reason=_("column '{what}' ({value!r}) is not a pp/tg test with a rate").format(
                        what=what, value=row[what])
                )
            )
            continue
        n = float(test.group(2))
        depth = float(test.group(3) or 0)
        prompt, gen = (n, 0.0) if test.group(1) == "pp" else (0.0, n)
        model = " ".join(x for x in (row.get("model", ""), row.get("size", "")) if x)
        runs.append(
            _run(prompt, gen, depth, float(rate.group(1)), model, row.get("backend", ""), f"line {line_no}", line_no)
        )
    if not runs:
        raise ServewiseInputError(
            _("llama-bench table: no row with a pp/tg test and a t/s value (is the header row included?)")
        )
    return ImportResult(tool="llama-bench", runs=tuple(runs), skipped=tuple(skipped))


def looks_like_json(text: str, first: dict | None) -> bool:
    """llama-bench JSON/JSONL objects carry avg_ts and n_gen."""
    return first is not None and ("avg_ts" in first or "n_gen" in first)


def looks_like_markdown(text: str, first: dict | None) -> bool:
    """llama-bench's table has a header row with 'test' and 't/s' columns."""
    return first is None and "|" in text and "t/s" in text and "test" in text
