"""vLLM's embeddings: pooling and normalisation from the model's sentence-transformers files.

vllm/transformers_utils/config.py get_pooling_config reads modules.json and the Pooling config: the enabled
mode, read up to its first underscore (mean_sqrt_len_tokens becomes MEAN, weightedmean matches nothing and
falls back to the architecture default), and use_activation = "a Normalize module is listed". Without
modules.json the architecture's default pooling applies (vllm/model_executor/models/*: CLS for BERT-like
embedders, LAST otherwise) and the embed task normalises (vllm/pooling_params.py). Dense modules are loaded
as a projector (vllm/model_executor/models/adapters.py). An input over max_model_len (lowered to
sentence_bert_config.json's max_seq_length) is rejected unless the request sets truncate_prompt_tokens.
"""

from typing import cast

from calculators.checks.embeddings import (
    EmbeddingDraft,
    architecture_default,
    compare_dimension,
    compare_normalisation,
    compare_pooling,
    json_flag,
    reference_pooling,
    slug_from_value,
)
from knowledge.embedding_serving import PoolingSlug


def embedding_rule(draft: EmbeddingDraft) -> None:
    """Compare vLLM's pooling, normalisation, dimension and input limit with the sentence-transformers reference."""
    engine, model, command = draft.engine, draft.model, draft.command
    runner = engine.flags.runner
    causal = (model.architecture or "").endswith("ForCausalLM")
    if runner and causal and model.pooling is None and not command.has(runner.split(" ")[0]):
        draft.add.append(runner)
        draft.say("runner-flag-missing", flag=runner)
    pooler = json_flag(command, engine.flags.pooling)
    reference = reference_pooling(model)
    if "pooling_type" in pooler:
        served = slug_from_value(engine, str(pooler["pooling_type"]))
    elif model.pooling is not None and reference is not None:
        # a mode the table does not name is simply absent: the cast only lets a plain str look up the slug keys
        mapped = engine.pooling_mapping.get(cast(PoolingSlug, reference), reference)
        served = architecture_default(engine, model) if mapped == "architecture-default" else mapped
        if mapped != reference:
            draft.say("pooling-mapped", reference=reference, served=mapped, note=engine.pooling_mapping_note or "")
    else:
        served = architecture_default(engine, model)
    compare_pooling(draft, served if served != "unsupported" else None, engine.flags.pooling)
    if "use_activation" in pooler:
        normalised: bool | None = bool(pooler["use_activation"])
    else:
        normalised = model.normalized if model.normalized is not None else True
    compare_normalisation(draft, normalised, engine.flags.normalise_on, engine.flags.normalise_off)
    compare_dimension(draft, model.output_dimension)
    draft.max_tokens = model.max_seq_length_tokens
    draft.over_length = "rejected"
    draft.say("over-length-rejected", limit=model.max_seq_length_tokens or "max_model_len")
