"""servewise's command line: memory plans, recommendations and start-up log checks for scripts and CI.

Exit statuses are listed once, in EXIT_CODES (printed by `--help`). Every FILE option reads standard
input when given `-`. Output never carries colour codes, so NO_COLOR and dumb terminals need nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from calculators.errors import ServewiseInputError, json_problem, validation_problem
from calculators.hardware.machine import CpuFeature
from calculators.i18n import (
    DEFAULT_LANGUAGE,
    N_,
    SUPPORTED_LANGUAGES,
    _,
    gettext,
    language,
    ngettext,
    supported_language,
)
from calculators.units import GIB
from knowledge.common import KnowledgeError
from reports.json_text import json_document

if TYPE_CHECKING:
    from calculators.checks.embeddings import EmbeddingCheck
    from calculators.checks.tool_calls import ToolCallCheck

#: The program's one-line description (the module docstring's first line), translated where shown.
DESCRIPTION = N_("servewise's command line: memory plans, recommendations and start-up log checks for scripts and CI.")

EXIT_OK, EXIT_BAD_INPUT, EXIT_REFUSED, EXIT_NO_PLAN, EXIT_CHECK_FAILED, EXIT_PIPE_CLOSED = 0, 2, 3, 4, 5, 141

#: Every exit status the command line uses, with its meaning (the one place they are documented).
EXIT_CODES: dict[int, str] = {
    EXIT_OK: N_("the result was printed"),
    EXIT_BAD_INPUT: N_("input servewise cannot use: one line on stderr, never a traceback"),
    EXIT_REFUSED: N_("memory: the engine itself would refuse to start with these settings (the plan is still printed, "
    "with its refusal)"),
    EXIT_NO_PLAN: N_("plan: no configuration meets the target (every rejection is still printed)"),
    EXIT_CHECK_FAILED: N_("check: the engine the launch command starts would not parse the tool calls or not match "
    "the index (the verdicts are still printed)"),
    EXIT_PIPE_CLOSED: N_("the reader closed the output pipe (`| head`): the rest is dropped quietly, as a Unix tool "
    "killed by SIGPIPE would"),
}


def _version() -> str:
    """The installed servewise version (the project's metadata), or 'unknown' when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("servewise")
    except metadata.PackageNotFoundError:
        return _("unknown (not installed: run make run or make test)")


def _exit_codes_epilog() -> str:
    return _("exit status:") + "\n" + "\n".join(f"  {code:<4} {_(meaning)}" for code, meaning in EXIT_CODES.items())


def _examples(*lines: str) -> str:
    """A verb's --help epilog: examples that run as written from the repository's top folder."""
    return _("examples (run from the repository's top folder):") + "\n" + "\n".join(f"  {line}" for line in lines)


def read_text_input(path: str, what: str, *, replace_bad_bytes: bool = False) -> str:
    """The text of file `path` (standard input for `-`), as UTF-8; ServewiseInputError naming `what` otherwise.

    With `replace_bad_bytes` (logs: a garbled line must not lose the rest) bytes that are not UTF-8 become U+FFFD."""
    if path == "-":
        data = sys.stdin.buffer.read()
        where = _("standard input")
    else:
        where = path
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ServewiseInputError(_("cannot read {path}: {value}").format(
                                        path=path, value=exc.strerror or exc)) from exc
    try:
        return data.decode("utf-8", errors="replace" if replace_bad_bytes else "strict")
    except UnicodeDecodeError as exc:
        raise ServewiseInputError(_("{where} is not a UTF-8 text file; expected {what}").format(
                                    where=where, what=what)) from exc


#: argparse's own messages (CPython 3.11 Lib/argparse.py) that a servewise user can see, marked so the catalog
#: holds their Spanish: argparse looks its texts up through the module's `_` / `ngettext` (gettext domain
#: 'argparse'), which `_speak_argparse` points at servewise's catalog.
ARGPARSE_MESSAGES = (
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("show program's version number and exit"), N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("argument %(argument_name)s: %(message)s"), N_("expected one argument"), N_("expected at most one argument"),
    N_("expected at least one argument"), N_("invalid %(type)s value: %(value)r"), N_("not allowed with argument %s"),
    N_("one of the arguments %s is required"), N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("ignored explicit argument %r"),
)


def _speak_argparse() -> None:
    """Make argparse's usage, help headings and errors follow servewise's language (English stays as it is)."""
    setattr(argparse, "_", gettext)  # noqa: B010 - argparse reads its module globals `_` and `ngettext`
    setattr(argparse, "ngettext", ngettext)  # noqa: B010


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one servewise line (status 2) instead of a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ServewiseInputError(_("{message} (see `{prog} --help`)").format(message=message, prog=self.prog))


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type for a count: a whole number of at least `minimum`.

    Checked while parsing, so the message names the flag the user typed ("argument --prompt-tokens: must be at least
    1, not -5"); checked later it named what the value became ("context must be zero or more tokens") or, for
    `--sequences 0`, was silently read as 1. Text that is no number fails as argparse's own `type=int` does.
    """

    def whole_number(text: str) -> int:
        value = int(text)  # ValueError: argparse says "invalid int value: 'x'"
        if value < minimum:
            raise argparse.ArgumentTypeError(_("must be at least {minimum}, not {value}").format(
                minimum=minimum, value=value))
        return value

    whole_number.__name__ = "int"  # the type argparse names in its own message
    return whole_number


def _add_model_source(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--hf-config", metavar="PATH", help=_("a Hugging Face config.json file"))
    source.add_argument("--hf-model", metavar="REPO_ID",
                        help=_("fetch config.json from the hub (HF_ENDPOINT, HF_TOKEN)"))
    source.add_argument("--gguf", metavar="PATH", help=_("a local GGUF file (header only; gives exact weight bytes)"))
    source.add_argument("--model", metavar="CATALOG_ID", help=_("a model from knowledge/models.yaml"))


def _add_json(parser: argparse.ArgumentParser, what: str | None = None) -> None:
    """The verb's --json switch; `what` says what the JSON holds (default: one JSON object)."""
    parser.add_argument("--json", action="store_true", help=what or _("print one JSON object"))


def _add_launch(parser: argparse.ArgumentParser) -> None:
    """The launch command after `--`, taken exactly as typed."""
    parser.add_argument("launch", nargs=argparse.REMAINDER, help=_("-- then the engine command exactly as you run it"))


def _launch_words(args: argparse.Namespace) -> list[str]:
    """The words of the launch command given after `--` (empty when none was given)."""
    return args.launch[1:] if args.launch[:1] == ["--"] else args.launch


def build_parser() -> argparse.ArgumentParser:
    """The `python -m calculators` argument parser with its subcommands."""
    parser = _Parser(prog="python -m calculators", description=_(DESCRIPTION), epilog=_exit_codes_epilog(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"servewise {_version()}",
                        help=_("show program's version number and exit"))
    parser.add_argument("--lang", choices=SUPPORTED_LANGUAGES, default=None,
                        help=_("language of the text servewise prints (default: LC_ALL / LC_MESSAGES / LANG, else en)"))
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    raw: dict[str, Any] = {"formatter_class": argparse.RawDescriptionHelpFormatter}

    memory = commands.add_parser(
        "memory",
        help=_("memory plan for one engine launch command"),
        description=_("Plan memory exactly as the engine would for the launch command given after `--`."),
        epilog=_examples(
            "python -m calculators memory --model llama-3.1-8b --gpu h100-sxm-80gb -- vllm serve "
            "meta-llama/Llama-3.1-8B --max-model-len 32768",
            "python -m calculators memory --model llama-3.1-8b -- llama-server -c 32768 -np 4 "
            "-ctk q8_0 -ctv q8_0 -fa on",
            "python -m calculators memory --hf-config tests/data/hf_configs/Llama-3.1-8B-Instruct.json "
            "--gpu rtx-4090-24gb --json -- OLLAMA_NUM_PARALLEL=4 ollama serve",
            "python -m calculators memory --model llama-3.1-8b --gpu m4-max-40c-128gb --draft-model llama-3.2-1b "
            "-- mlx_lm.server --model meta-llama/Llama-3.1-8B-Instruct --draft-model meta-llama/Llama-3.2-1B",
        ),
        **raw,
    )
    _add_model_source(memory)
    memory.add_argument("--gpu", metavar="CATALOG_ID", help=_("GPU from knowledge/gpus.yaml"))
    memory.add_argument("--gpus", type=_at_least(1), default=None, metavar="N",
                        help=_("GPUs (default: the command's TP × PP)"))
    memory.add_argument("--cpu-memory-gib", type=float, metavar="GIB",
                        help=_("plan the engine's CPU build on a host with this much memory (vLLM) instead of a GPU"))
    memory.add_argument(
        "--cpu-features",
        default="",
        metavar="LIST",
        help=_("with --cpu-memory-gib: the CPU's extensions the CPU build checks: avx512, avx512_bf16, amx"),
    )
    weights = memory.add_mutually_exclusive_group()
    weights.add_argument("--weights", metavar="QUANT", help=_("quantization id for estimated weight bytes (e.g. bf16)"))
    weights.add_argument("--weights-bytes", type=_at_least(1), metavar="N", help=_("exact weight bytes per model"))
    work = memory.add_argument_group(
        _("workload"), _("for engines whose cache grows with the work (MLX LM): what each sequence processes")
    )
    work.add_argument("--prompt-tokens", type=_at_least(1), metavar="N", help=_("prompt tokens per sequence "
                      "(default: the model's trained context)"))
    work.add_argument("--generated-tokens", type=_at_least(0), metavar="M",
                      help=_("tokens generated per sequence (default 0)"))
    work.add_argument("--sequences", type=_at_least(1), metavar="S", help=_("sequences served at once (default 1)"))
    drafter = memory.add_argument_group(
        _("speculative drafter"), _("the draft model the command loads (MLX LM --draft-model, vLLM "
                                    "--speculative-config `model`, SGLang --speculative-draft-model-path): its "
                                    "weights, at the target's precision, and cache are planned")
    )
    drafter_source = drafter.add_mutually_exclusive_group()
    drafter_source.add_argument("--draft-model", metavar="CATALOG_ID",
                                help=_("the drafter, a model from knowledge/models.yaml"))
    drafter_source.add_argument("--draft-config", metavar="PATH", help=_("the drafter's Hugging Face config.json"))
    _add_json(memory)
    _add_launch(memory)

    reconcile = commands.add_parser(
        "reconcile",
        help=_("compare an engine's start-up log with servewise's memory model"),
        description=_("Read an engine's start-up log, run servewise's plan on the same inputs and compare every "
        "memory figure the engine printed."),
        epilog=_examples(
            "python -m calculators reconcile --log tests/data/logs/llamacpp-2025-08-gptoss-20b-8x-cann-swa.log",
            "python -m calculators reconcile --log tests/data/logs/vllm-v0.11-enginecore-qwen3-14b.log "
            "--model qwen3-14b --json",
            "python -m calculators reconcile --model qwen3-235b-a22b --set tp_size=4 "
            "--log - < tests/data/logs/sglang-tp4-qwen3-235b.log",
        ),
        **raw,
    )
    reconcile.add_argument("--log", required=True, metavar="FILE",
                           help=_("the engine's console output from start-up (- reads standard input)"))
    source = reconcile.add_mutually_exclusive_group()
    source.add_argument("--hf-config", metavar="PATH", help=_("the model's config.json (when the log has no geometry)"))
    source.add_argument("--model", metavar="CATALOG_ID", help=_("a model from knowledge/models.yaml"))
    reconcile.add_argument("--gpu", metavar="CATALOG_ID", help=_("GPU from knowledge/gpus.yaml"))
    reconcile.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                           help=_("a setting the log does not print (engine key vocabulary), repeatable"))
    _add_json(reconcile)
    reconcile.add_argument("--lines", action="store_true",
                           help=_("also list every pasted line: read or skipped, and why"))

    recommend = commands.add_parser(
        "recommend",
        help=_("rank engines for a team's answers"),
        description=_("Rank engines for the answers in a JSON file (fields: see docs/cli.md, 'Wizard answers')."),
        epilog=_examples(
            "python -m calculators recommend --answers examples/answers.json",
            "python -m calculators recommend --answers - --json < examples/answers.json",
        ),
        **raw,
    )
    recommend.add_argument("--answers", required=True, metavar="FILE.json", help=_("answers (- reads standard input)"))
    _add_json(recommend)

    plan = commands.add_parser(
        "plan",
        help=_("cheapest configuration that meets a latency target, per engine, with its cost"),
        description=_("Search engines × GPUs × parallelism × weights × KV type × concurrency for the cheapest "
        "configuration meeting the SLO in a YAML/JSON spec (fields: see docs/cli.md, 'Capacity planner spec')."),
        epilog=_examples(
            "python -m calculators plan --spec examples/plan.yaml",
            "python -m calculators plan --spec - --json < examples/plan.yaml",
        ),
        **raw,
    )
    plan.add_argument("--spec", required=True, metavar="FILE",
                      help=_("planner spec, YAML or JSON (- reads standard input)"))
    _add_json(plan)

    check = commands.add_parser(
        "check",
        help=_("will tool calls parse / will embeddings match a sentence-transformers index, per engine"),
        description=_("Tool-call or embedding verdicts for a model on each engine, with the exact flags to add; "
        "a launch command after `--` is checked for the engine it starts."),
        epilog=_examples(
            "python -m calculators check tools --model qwen3-8b",
            "python -m calculators check tools --model llama-3.1-8b --engines vllm --json -- vllm serve M "
            "--enable-auto-tool-choice --tool-call-parser llama3_json",
            "python -m calculators check embeddings --st-dir tests/data/sentence_transformers/stella_en_1.5B_v5",
        ),
        **raw,
    )
    kinds = check.add_subparsers(dest="what", required=True, parser_class=_Parser)
    for kind, kind_help, file_flag, file_help in (
        ("tools", _("tool-call check"), "--template", _("a GGUF (its tokenizer.chat_template), tokenizer_config.json "
         "or a chat template file (- reads standard input)")),
        ("embeddings", _("embedding check"), "--st-dir", _("the model's sentence-transformers folder")),
    ):
        sub = kinds.add_parser(kind, help=kind_help)
        source = sub.add_mutually_exclusive_group(required=True)
        source.add_argument("--model", metavar="CATALOG_ID", help=_("a model from knowledge/models.yaml"))
        source.add_argument(file_flag, metavar="PATH", help=file_help)
        if kind == "tools":
            source.add_argument("--hf-model", metavar="REPO_ID", help=_("fetch tokenizer_config.json from the hub"))
        sub.add_argument("--engines", metavar="IDS", help=_("comma-separated engine ids (default: all)"))
        _add_json(sub, _("print one JSON array"))
        _add_launch(sub)

    speed = commands.add_parser(
        "speed",
        help=_("decode and prefill speed for one engine launch command, with its basis and band"),
        description=_("Decode tokens/s at batch 1 and at the launch command's concurrency, prefill tokens/s and time "
        "to first token, from the speed model fitted to public measurements (or your --calibration)."),
        epilog=_examples(
            "python -m calculators speed --model llama-3.1-8b --gpu h100-sxm-80gb --prompt-tokens 2048 -- "
            "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64",
            "python -m calculators speed --model llama-3.1-8b --gpu rtx-4090-24gb --weights q4_k_m --json -- "
            "llama-server -c 8192 -np 4",
        ),
        **raw,
    )
    _add_speed_inputs(speed)
    speed.add_argument("--prompt-tokens", type=_at_least(1), default=1024, metavar="N",
                       help=_("prompt length for TTFT (default 1024)"))
    speed.add_argument("--calibration", metavar="FILE", help=_("a profile written by `calibrate` (JSON or link text)"))
    _add_json(speed)
    _add_launch(speed)

    calibrate = commands.add_parser(
        "calibrate",
        help=_("fit the speed model to your own benchmark run and write a calibration profile"),
        description=_("Read benchmark outputs (vllm bench serve JSON, sglang.bench_serving JSONL, GuideLLM JSON, "
        "llama-bench, Ollama timings, MLX LM output), fit the speed model for the launch command's engine, model "
        "and GPU, and compare predicted with measured for every point."),
        epilog=_examples(
            "python -m calculators calibrate --bench tests/data/speed/vllm_save_result_qwen25vl3b.json "
            "--model qwen2.5-7b --gpu h100-sxm-80gb -- vllm serve Qwen/Qwen2.5-7B-Instruct",
            "python -m calculators calibrate --bench tests/data/speed/vllm_save_result_qwen25vl3b.json "
            "--log tests/data/logs/vllm-v0.11-enginecore-qwen3-14b.log --model qwen2.5-7b --gpu h100-sxm-80gb "
            "--json -- vllm serve Qwen/Qwen2.5-7B-Instruct",
        ),
        **raw,
    )
    _add_speed_inputs(calibrate)
    calibrate.add_argument("--bench", action="append", required=True, metavar="FILE",
                           help=_("benchmark output (repeatable)"))
    calibrate.add_argument("--format", metavar="FORMAT", help=_("benchmark format (default: detected)"))
    calibrate.add_argument("--log", metavar="FILE", help=_("the engine's start-up log, for the real KV capacity"))
    calibrate.add_argument("--output", metavar="FILE", help=_("write the profile JSON here (for speed --calibration)"))
    _add_json(calibrate, _("print one JSON object (profile, link text, comparisons)"))
    _add_launch(calibrate)
    return parser


def _add_speed_inputs(parser: argparse.ArgumentParser) -> None:
    """The `memory` verb's model, GPU and weight options, shared by `speed` and `calibrate`."""
    _add_model_source(parser)
    parser.add_argument("--gpu", metavar="CATALOG_ID", help=_("GPU from knowledge/gpus.yaml"))
    parser.add_argument("--gpus", type=_at_least(1), default=None, metavar="N",
                        help=_("GPUs (default: the command's TP × PP)"))
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument("--weights", metavar="QUANT", help=_("quantization id for estimated weight bytes (e.g. bf16)"))
    weights.add_argument("--weights-bytes", type=_at_least(1), metavar="N", help=_("exact weight bytes per model"))


def _read_json_file(path: str) -> object:
    text = read_text_input(path, _("a JSON answers file"))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = _("standard input") if path == "-" else path
        raise ServewiseInputError(_("{where} is not valid JSON (line {lineno}: {msg})").format(
                                    where=where, lineno=exc.lineno, msg=json_problem(exc.msg))) from exc


def run_memory(args: argparse.Namespace) -> int:
    """Print the memory plan for `args.launch`; return the exit status."""
    from calculators.memory.command import plan_from_command
    from knowledge import load_knowledge

    launch = _launch_words(args)
    if not launch:
        raise ServewiseInputError(_("give the engine launch command after `--`, e.g. `-- llama-server -c 8192`"))
    result = plan_from_command(
        shlex.join(launch),
        load_knowledge(),
        hf_config=args.hf_config,
        hf_model=args.hf_model,
        gguf=args.gguf,
        catalog_id=args.model,
        gpu_id=args.gpu,
        n_gpus=args.gpus,
        weights_scheme=args.weights,
        weights_bytes=args.weights_bytes,
        prompt_tokens=args.prompt_tokens,
        generated_tokens=args.generated_tokens,
        sequences=args.sequences,
        cpu_memory_bytes=_cpu_memory_bytes(args.cpu_memory_gib),
        cpu_features=_cpu_features(args.cpu_features),
        draft_catalog_id=args.draft_model,
        draft_config=args.draft_config,
    )
    if args.json:
        from reports.memory_json import cli_memory_document

        print(json_document(cli_memory_document(result), indent=2, default=str))
    else:
        from reports.memory_text import memory_plan_text

        print(memory_plan_text(result))
    return EXIT_REFUSED if result.plan.refusal else EXIT_OK


def _cpu_memory_bytes(gib: float | None) -> int | None:
    """--cpu-memory-gib as bytes (GiB = 2^30 bytes)."""
    if gib is None:
        return None
    if gib <= 0:
        raise ServewiseInputError(_("--cpu-memory-gib must be a positive number of GiB"))
    return int(gib * GIB)


def _cpu_features(text: str) -> frozenset[str]:
    """--cpu-features as a set of the extensions servewise knows."""
    features = frozenset(f.strip().lower() for f in text.split(",") if f.strip())
    unknown = sorted(features - set(get_args(CpuFeature)))
    if unknown:
        raise ServewiseInputError(_("unknown --cpu-features {unknown}; known: {known}").format(
                                    unknown=unknown, known=', '.join(get_args(CpuFeature))))
    return features


def run_recommend(args: argparse.Namespace) -> int:
    """Print the ranking for the answers file; return the exit status."""
    from calculators.wizard.answers import parse_answers
    from calculators.wizard.scoring import recommend
    from knowledge import load_knowledge
    from reports.wizard import recommendation_json, recommendation_markdown

    kb = load_knowledge()
    result = recommend(parse_answers(_read_json_file(args.answers)), kb)
    if args.json:
        print(json_document(recommendation_json(result), indent=2, default=str))
    else:
        print(recommendation_markdown(result, {engine.id: engine.name for engine in kb.engines}))
    return EXIT_OK


def run_reconcile(args: argparse.Namespace) -> int:
    """Print the comparison of a start-up log with servewise's plan; return the exit status."""
    from calculators.reconcile.check import parse_overrides, reconcile_log, resolve_gpu, resolve_model
    from calculators.reconcile.log.parse import parse_startup_log
    from knowledge import load_knowledge
    from reports.reconcile_text import reconcile_text

    parsed = parse_startup_log(read_text_input(args.log, _("an engine log"), replace_bad_bytes=True))
    if not parsed.recognised:
        reason = parsed.notes[0].message if parsed.notes else "no engine recognised"
        raise ServewiseInputError(f"{args.log}: {reason}")
    kb = load_knowledge()
    result = reconcile_log(
        parsed,
        arch=resolve_model(kb, hf_config_path=args.hf_config, model_id=args.model,
                           log_model=parsed.settings.get("model")),
        machine=resolve_gpu(kb, args.gpu),
        overrides=parse_overrides(",".join(args.set)),
    )
    if args.json:
        print(json_document(result.model_dump(mode="json"), indent=2))
    else:
        print(reconcile_text(result))
        if args.lines:
            from reports.log_lines import line_report_text

            print()
            print(line_report_text(result.lines))
    return EXIT_OK


def _read_spec_file(path: str) -> object:
    """A YAML or JSON planner spec (JSON is YAML) read with the safe loader."""
    import yaml

    text = read_text_input(path, _("a YAML or JSON planner spec"))
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise ServewiseInputError(_("{path} is not valid YAML or JSON ({where}{problem})").format(
                                    path=path, where=where, problem=problem)) from exc


def run_plan(args: argparse.Namespace) -> int:
    """Print the capacity plan for a spec file; return the exit status (4 when nothing meets the target)."""
    from pydantic import ValidationError

    from calculators.planner.search import plan_capacity
    from calculators.planner.spec import PlannerSpec
    from knowledge import load_knowledge
    from reports.names import names_by_slug
    from reports.planner_report import planner_json, planner_markdown

    data = _read_spec_file(args.spec)
    try:
        spec = PlannerSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "spec"
        raise ServewiseInputError(f"{args.spec}: {where}: {validation_problem(first)}") from exc
    kb = load_knowledge()
    result = plan_capacity(spec, kb)
    names = names_by_slug(kb)
    if args.json:
        print(json_document(planner_json(result, names=names), indent=2, default=str))
    else:
        print(planner_markdown(result, names, names, schemes=names))
    return EXIT_OK if result.best is not None else EXIT_NO_PLAN


def run_check(args: argparse.Namespace) -> int:
    """Print tool-call or embedding verdicts per engine; status 5 when the launched engine's verdict fails."""
    from calculators.checks.chat_template import chat_template_from_text
    from calculators.checks.embeddings import check_embeddings_on_engines, embedding_model_from_catalog
    from calculators.checks.inputs import embedding_model_from_directory, tool_model_from_file, tool_model_from_hub
    from calculators.checks.tool_calls import (
        check_tool_calls_on_engines,
        tool_model_from_catalog,
        tool_model_from_template,
    )
    from calculators.engines import ENGINE_IDS
    from knowledge import load_knowledge
    from reports.compatibility import checks_json, embedding_checks_markdown, tool_checks_markdown

    kb = load_knowledge()
    engines = [e.strip() for e in args.engines.split(",")] if args.engines else list(ENGINE_IDS)
    unknown = [e for e in engines if e not in ENGINE_IDS]
    if unknown:
        raise ServewiseInputError(ngettext("unknown engine {unknown}; choose from {engine_ids}",
                                           "unknown engines {unknown}; choose from {engine_ids}", len(unknown)).format(
                                    unknown=', '.join(unknown), engine_ids=', '.join(ENGINE_IDS)))
    launch = _launch_words(args)
    command = shlex.join(launch) if launch else ""
    models = {m.id: m for m in kb.models.models}
    if args.model is not None and args.model not in models:
        raise ServewiseInputError(_("{model!r} is not in the model catalog (knowledge/models.yaml)").format(
                                    model=args.model))
    checks: list[ToolCallCheck] | list[EmbeddingCheck]
    if args.what == "tools":
        if args.model and models[args.model].embedding is not None:
            raise ServewiseInputError(_("{model} is an embedding model; use `check embeddings`").format(
                                        model=args.model))
        if args.model:
            model = tool_model_from_catalog(args.model, kb.tool_calling)
        elif args.hf_model:
            model = tool_model_from_hub(args.hf_model, kb.tool_calling)
        elif args.template == "-":
            text = chat_template_from_text(read_text_input("-", _("a chat template")), "standard input")
            model = tool_model_from_template(text, kb.tool_calling, "standard input", "standard input")
        else:
            model = tool_model_from_file(args.template, kb.tool_calling)
        checks = check_tool_calls_on_engines(model, engines, command, kb.tool_calling)
        failed = {"will-not-parse", "unknown", "needs-flags"}
        text = tool_checks_markdown(checks)
    else:
        if args.model and models[args.model].embedding is None:
            raise ServewiseInputError(_("{model} is not an embedding model in the catalog; use `check tools`").format(
                                        model=args.model))
        embedding = (embedding_model_from_catalog(models[args.model]) if args.model
                     else embedding_model_from_directory(args.st_dir))
        checks = check_embeddings_on_engines(embedding, engines, command, kb.embedding_serving)
        failed = {"will-not-match", "not-served", "unknown", "needs-flags"}
        text = embedding_checks_markdown(checks)
    print(checks_json(checks) if args.json else text)
    if launch:
        from calculators.checks.launch_flags import read_command_flags

        launched = next(c for c in checks if c.engine == read_command_flags(command).engine)
        return EXIT_CHECK_FAILED if launched.verdict in failed else EXIT_OK
    return EXIT_OK


def _speed_inputs(args: argparse.Namespace):
    from calculators.memory.command import plan_from_command
    from calculators.speed.command import speed_inputs
    from knowledge import load_knowledge

    launch = _launch_words(args)
    if not launch:
        raise ServewiseInputError(_("give the engine launch command after `--`, e.g. `-- vllm serve MODEL`"))
    kb = load_knowledge()
    result = plan_from_command(shlex.join(launch), kb, hf_config=args.hf_config, hf_model=args.hf_model, gguf=args.gguf,
                               catalog_id=args.model, gpu_id=args.gpu, n_gpus=args.gpus, weights_scheme=args.weights,
                               weights_bytes=args.weights_bytes)
    return speed_inputs(result, kb), result


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ServewiseInputError(_("cannot read {what} {path}: {value}").format(
                                    what=what, path=path, value=exc.strerror or exc)) from exc
    except UnicodeDecodeError as exc:
        raise ServewiseInputError(_("{path} is not a UTF-8 text file; expected {what}").format(
                                    path=path, what=what)) from exc


def run_speed(args: argparse.Namespace) -> int:
    """Print decode/prefill speed and TTFT for the launch command; return the exit status."""
    from calculators.speed.calibration import decode_profile
    from calculators.speed.command import speed_estimate
    from reports.speed_text import speed_estimate_json, speed_estimate_text

    inputs, _unused = _speed_inputs(args)
    calibration = decode_profile(_read_text(args.calibration, _("a calibration profile"))) if args.calibration else None
    estimate = speed_estimate(inputs, args.prompt_tokens, calibration)
    if args.json:
        print(json_document({**speed_estimate_json(estimate), "notes": list(inputs.notes)}, indent=2))
    else:
        print(speed_estimate_text(estimate))
        for note in inputs.notes:
            print(note)
    return EXIT_OK


def run_calibrate(args: argparse.Namespace) -> int:
    """Fit a calibration profile to the benchmark files; print the comparison; return the exit status."""
    from calculators.speed.calibration import encode_profile
    from calculators.speed.command import calibrate_from_texts
    from reports.speed_text import calibration_text

    inputs, result = _speed_inputs(args)
    texts = [_read_text(path, _("a benchmark output")) for path in args.bench]
    log = _read_text(args.log, _("a start-up log")) if args.log else None
    label = f"{result.model.arch.name}, {inputs.hardware.label}"
    calibrated = calibrate_from_texts(inputs, texts, log, args.format, label, sources=list(args.bench))
    profile_json = calibrated.profile.model_dump_json(indent=2)
    if args.output:
        try:
            Path(args.output).write_text(profile_json + "\n", encoding="utf-8")
        except OSError as exc:
            raise ServewiseInputError(_("cannot write {output}: {value}").format(
                                        output=args.output, value=exc.strerror or exc)) from exc
    if args.json:
        document = calibrated.model_dump(mode="json")
        document["link_parameter"] = encode_profile(calibrated.profile)
        print(json_document(document, indent=2))
    else:
        print(calibration_text(calibrated))
        if not args.output:
            print("\n" + profile_json)
    return EXIT_OK


def _environment_language() -> str:
    """The language the POSIX locale variables ask for (LC_ALL, then LC_MESSAGES, then LANG), else English."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(variable):
            return supported_language(os.environ[variable]) or DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def _option_language(argv: Sequence[str]) -> str | None:
    """The supported language `--lang X` / `--lang=X` asks for before the verb, read ahead of argparse."""
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == "--lang" and i + 1 < len(argv):
            return supported_language(argv[i + 1])
        if word.startswith("--lang="):
            return supported_language(word.partition("=")[2])
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; bad input is one line on stderr with status 2, never a traceback.

    The language (--lang, else LC_ALL / LC_MESSAGES / LANG) is set before the parser is built, so --help,
    usage errors, the output and the error messages all speak it.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    _speak_argparse()
    try:
        with language(_option_language(words) or _environment_language()):
            args = build_parser().parse_args(words)
            handler = {"memory": run_memory, "recommend": run_recommend, "reconcile": run_reconcile,
                       "plan": run_plan, "check": run_check,
                       "speed": run_speed, "calibrate": run_calibrate}[args.command]
            status = handler(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader closed the pipe (`| head`): point stdout at /dev/null so the interpreter's final flush
        # does not raise again, and leave without a message.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    except ServewiseInputError as exc:
        print(f"servewise: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KnowledgeError as exc:
        print("servewise: " + _("knowledge base error: {error}").format(error=exc), file=sys.stderr)
        return EXIT_BAD_INPUT
