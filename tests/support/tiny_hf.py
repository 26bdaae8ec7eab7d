"""Write tiny random-weight Hugging Face models from a config dict (no hub, no download).

Run inside an environment that has `transformers`, `torch` and `tokenizers` (the vLLM venv does). The folder
holds config.json, model.safetensors, tokenizer.json and tokenizer_config.json: what vLLM and mlx-lm load.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>", "<pad>")


def config_digest(config: dict[str, Any], dtype: str) -> str:
    """A short stable name for a (config, weights dtype) pair, so each model is written once."""
    text = json.dumps({"config": config, "dtype": dtype}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def write_tokenizer(folder: Path, vocab_size: int) -> None:
    """A word-level tokenizer over `vocab_size` ids: 4 special tokens, then words w4, w5, ..."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    vocab.update({f"w{i}": i for i in range(len(SPECIAL_TOKENS), vocab_size)})
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    fast.save_pretrained(folder)


def write_tiny_model(config: dict[str, Any], root: Path, dtype: str = "bfloat16", seed: int = 0) -> Path:
    """Write the model `config` describes (random weights, `dtype`) under `root`; returns its folder.

    `config` is a config.json dict with `model_type`; fields it omits take transformers' defaults.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    folder = root / config_digest(config, dtype)
    if (folder / "config.json").exists() and (folder / "tokenizer.json").exists():
        return folder
    fields = dict(config)
    model_type = fields.pop("model_type")
    hf_config = AutoConfig.for_model(model_type, **fields)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(hf_config, torch_dtype=getattr(torch, dtype))
    tmp = folder.with_suffix(".tmp")
    model.save_pretrained(tmp, safe_serialization=True)
    write_tokenizer(tmp, hf_config.vocab_size)
    tmp.rename(folder)
    return folder
