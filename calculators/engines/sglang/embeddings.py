"""SGLang's embeddings: pooling and normalisation fixed by the model class, with --is-embedding.

python/sglang/srt/layers/pooler.py pools LAST, CLS or MEAN as the model class says (Qwen2/Qwen3/Llama:
LAST with L2 normalisation; XLM-RoBERTa: CLS, normalised); sentence-transformers files are not read (only
the Gemma 3 embedding class reads modules.json), so a Dense projection is not applied and the vector keeps
the hidden size.
"""

from calculators.checks.embeddings import (
    EmbeddingDraft,
    architecture_default,
    compare_dimension,
    compare_normalisation,
    compare_pooling,
)


def embedding_rule(draft: EmbeddingDraft) -> None:
    """Compare the model class's pooling, its normalisation and the hidden size with the reference."""
    engine, model = draft.engine, draft.model
    served = architecture_default(engine, model)
    compare_pooling(draft, None if served == "unknown" else served, None)
    normalised = {"yes": True, "no": False}.get(engine.normalises_by_default)
    compare_normalisation(draft, normalised, None, None)
    compare_dimension(draft, model.hidden_size)
