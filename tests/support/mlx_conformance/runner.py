"""Run mlx-lm on the tiny models and record every layer's cache; run with the MLX venv, from the repository root:

    .venv-mlx/bin/python -m tests.support.mlx_conformance.runner tests/data/conformance/mlx_lm/recordings.json

Each case goes through mlx_lm.generate's own `generate` (what `mlx_lm.generate --verbose True` runs: it prints
`Peak memory: X GB`) with a prompt cache made by `make_prompt_cache(model, max_kv_size)`, exactly as
generate_step makes it, so the caches can be read afterwards; `sequences` cases go through batch_generate
(mlx_lm.server's BatchGenerator). One process runs every case: a layer's class, offset and nbytes do not
depend on what ran before (checked against fresh processes); the peak memory varies by a few percent.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import re
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import mlx.core as mx
from mlx.utils import tree_flatten, tree_map
from mlx_lm.generate import batch_generate, generate
from mlx_lm.models import cache as cache_module
from mlx_lm.models.cache import make_prompt_cache
from mlx_lm.utils import _get_classes, load, save_model

from tests.support.mlx_conformance.matrix import CASES
from tests.support.mlx_conformance.models import MODELS, dtype_of

VOCAB = 512
PEAK_LINE = re.compile(r"^Peak memory: ([\d.]+) GB$", re.M)
GENERATION_LINE = re.compile(r"^Generation: (\d+) tokens", re.M)
PROMPT_LINE = re.compile(r"^Prompt: (\d+) tokens", re.M)


def write_tokenizer(path: Path) -> None:
    """A word-level tokenizer ("t1 t2 ..."), no special tokens: no end-of-sequence can stop a run early."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {"<unk>": 0, **{f"t{i}": i for i in range(1, VOCAB)}}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.save(str(path / "tokenizer.json"))
    (path / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>", "model_max_length": 1 << 20}))


def model_config(name: str) -> dict:
    """The config.json written for a tiny model (its dtype recorded as torch_dtype)."""
    return {**MODELS[name], "torch_dtype": dtype_of(name)}


def write_model(name: str, root: Path) -> Path:
    """Random weights (seed 0) in the model's dtype, saved with mlx-lm's own save_model; loaded back by load()."""
    path = root / name
    config = model_config(name)
    if (path / "tokenizer.json").exists() and json.loads((path / "config.json").read_text()) == config:
        return path
    path.mkdir(parents=True, exist_ok=True)
    mx.random.seed(0)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(json.loads(json.dumps(config))))
    target = getattr(mx, config["torch_dtype"])
    model.update(tree_map(lambda p: p.astype(target) if mx.issubdtype(p.dtype, mx.floating) else p,
                          model.parameters()))
    mx.eval(model.parameters())
    save_model(path, model)
    write_tokenizer(path)
    (path / "config.json").write_text(json.dumps(config, indent=1))
    return path


LARGEST = "_servewise_largest_nbytes"  # set on each cache object: the most bytes it held after an update
_batch_caches: list = []  # the BatchKVCache objects BatchGenerator made during the current case


def _spy_on_updates() -> None:
    """Record each cache's largest size: a rotating cache holds more while it concatenates a prompt chunk."""
    for cls in (cache_module.KVCache, cache_module.RotatingKVCache, cache_module.QuantizedKVCache,
                cache_module.BatchKVCache):
        original = cls.update_and_fetch

        def update_and_fetch(self, keys, values, _original=original):
            out = _original(self, keys, values)
            if isinstance(self, cache_module.BatchKVCache) and not hasattr(self, LARGEST):
                _batch_caches.append(self)
            setattr(self, LARGEST, max(getattr(self, LARGEST, 0), int(self.nbytes)))
            return out

        cls.update_and_fetch = update_and_fetch


def describe(cache) -> dict:
    """What the cache object says of itself: class, offset, nbytes, buffer shapes and dtypes."""
    out: dict = {"class": type(cache).__name__, "nbytes": int(cache.nbytes)}
    if hasattr(cache, LARGEST):
        out["largest_nbytes"] = getattr(cache, LARGEST)
    for attr in ("offset", "max_size", "keep", "bits", "group_size"):
        if isinstance(getattr(cache, attr, None), int):
            out[attr] = int(getattr(cache, attr))
    keys = getattr(cache, "keys", None)
    if isinstance(keys, mx.array):
        out["keys"] = [list(keys.shape), str(keys.dtype)]
        out["values"] = [list(cache.values.shape), str(cache.values.dtype)]
    elif isinstance(keys, (tuple, list)):
        out["keys"] = [[list(a.shape), str(a.dtype)] for a in keys]
        out["values"] = [[list(a.shape), str(a.dtype)] for a in cache.values]
    if isinstance(cache, cache_module.ArraysCache):
        out["arrays"] = [None if a is None else [list(a.shape), str(a.dtype)] for a in cache.cache]
    if isinstance(cache, cache_module.CacheList):
        out["caches"] = [describe(c) for c in cache.caches]
    return out


_loaded: dict[str, tuple] = {}


def run_case(case: dict, root: Path) -> dict:
    """Generate once with the case's settings and describe every layer's cache afterwards."""
    name = case["model"]
    if name not in _loaded:
        _loaded.clear()
        _loaded[name] = load(str(write_model(name, root)))
    model, tokenizer = _loaded[name]
    prompt = [1 + (7 * i) % (VOCAB - 1) for i in range(case["prompt_tokens"])]
    settings = {k: case[k] for k in ("max_kv_size", "prefill_step_size", "kv_bits", "kv_group_size",
                                     "quantized_kv_start") if k in case}
    cache = make_prompt_cache(model, max_kv_size=case.get("max_kv_size"))
    printed = io.StringIO()
    error = None
    batch_layers: list[dict] = []
    mx.clear_cache()
    mx.reset_peak_memory()
    _batch_caches.clear()
    try:
        with contextlib.redirect_stdout(printed):
            if case.get("sequences", 1) == 1:
                generate(model, tokenizer, prompt, verbose=True, max_tokens=case["generated_tokens"],
                         prompt_cache=cache, **settings)
            else:
                lengths = case.get("prompt_lengths") or [case["prompt_tokens"]] * case["sequences"]
                batch_generate(model, tokenizer, [prompt[:n] for n in lengths], max_tokens=case["generated_tokens"],
                               **settings)
                # BatchGenerator makes its own caches (one per layer and batch it forms); their largest sizes
                batch_layers = [{"class": "BatchKVCache", "largest_nbytes": n}
                                for n in sorted({getattr(c, LARGEST) for c in _batch_caches})]
    except Exception as exc:  # the engine refusing a configuration is a result too
        error = f"{type(exc).__name__}: {exc}"
    text = printed.getvalue()
    peak = PEAK_LINE.search(text)
    generated = GENERATION_LINE.search(text)
    return {
        "case": case,
        "error": error,
        "printed_generation_tokens": int(generated.group(1)) if generated else None,
        "printed_peak_memory_gb": peak.group(1) if peak else None,
        "peak_memory_bytes": int(mx.get_peak_memory()),
        "weights_bytes": int(sum(v.nbytes for _, v in tree_flatten(model.parameters()))),
        "layers": batch_layers or [describe(c) for c in cache],
    }


def record(cases: list[dict], root: Path) -> dict:
    """Every case's result, with the engine versions and each model's config.json."""
    _spy_on_updates()
    results = []
    for case in cases:
        tic = time.perf_counter()
        results.append(run_case(case, root))
        print(f"{time.perf_counter() - tic:6.2f} s  {json.dumps(case)}  {results[-1]['error'] or ''}",
              file=sys.stderr, flush=True)
    return {
        "engine": {"mlx": version("mlx"), "mlx-lm": version("mlx-lm")},
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, CPU (mx.default_device() = {mx.default_device()})",
        "models": {name: model_config(name) for name in sorted({c["model"] for c in cases})},
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="JSON file to write")
    parser.add_argument("--models-dir", help="where to write the tiny models (default: a temporary directory)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        recording = record(CASES, Path(args.models_dir or tmp))
    Path(args.output).write_text(json.dumps(recording, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
