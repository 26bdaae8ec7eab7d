"""Will an engine's embedding vectors match an index built with sentence-transformers defaults?

The index's vectors came from the model's sentence-transformers pipeline: its Pooling mode, any Dense
projection, a Normalize module or not, inputs cut at max_seq_length. An engine must reproduce each
step. Where an engine takes its pooling and normalisation from is that engine's rule
(`EngineAdapter.embedding_rule`, in engines/<engine>/embeddings.py); the rule the GGUF engines share is
`gguf_pooling_rule` here. Every flag spelling comes from the engine's knowledge entry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from calculators.checks.launch_flags import CommandFlags, checks_per_engine
from calculators.checks.reason import Reason
from calculators.errors import ServewiseInputError, json_problem
from calculators.i18n import _
from calculators.model.embedding_info import EmbeddingPooling, embedding_pooling_from_files
from knowledge.embedding_serving import EmbeddingServingFile, EngineEmbedding, PoolingSlug

EmbeddingVerdict = Literal["will-match", "needs-flags", "will-not-match", "not-served", "unknown"]


@dataclass(frozen=True)
class EmbeddingModel:
    """What the reference pipeline (sentence-transformers) does with this model, as far as it is known."""

    label: str
    source: str
    architecture: str | None  # config.json architectures[0]
    hidden_size: int | None
    pooling: tuple[str, ...] | None  # sentence-transformers Pooling modes; None when its files were not read
    dense: bool  # a Dense module resizes the vector
    output_dimension: int | None  # the reference vector's length (after any Dense)
    normalized: bool | None
    max_seq_length_tokens: int | None
    matryoshka_in_config: bool = False  # config.json has matryoshka_dimensions or is_matryoshka
    matryoshka_range: str | None = None  # what the model card states, e.g. "32-1024"
    gguf_pooling: str | None = None  # a GGUF's pooling type, when the model came as a GGUF


@dataclass(frozen=True)
class EmbeddingCheck:
    """One engine's embedding behaviour for a model, next to the reference, with a verdict."""

    engine: str
    model: str
    verdict: EmbeddingVerdict
    pooling: str | None
    reference_pooling: str | None
    normalised: bool | None
    reference_normalised: bool | None
    output_dimension: int | None
    reference_dimension: int | None
    max_input_tokens: int | None
    over_length: str  # what happens to a longer input: "truncated", "rejected" or "unknown"
    reference_max_tokens: int | None
    dimensions_request: str  # "only-if-config", "any-model" or "no" (the engine's Matryoshka request field)
    flags_to_add: tuple[str, ...]
    reasons: tuple[Reason, ...]
    sources: tuple[str, ...]


def embedding_model_from_catalog(entry: Any) -> EmbeddingModel:
    """A catalog model with an `embedding:` block (knowledge/models.yaml) as the reference pipeline."""
    info = entry.embedding
    if info is None:
        raise ServewiseInputError(_("catalog model {id!r} is not an embedding model (no embedding: block)").format(
                                    id=entry.id))
    config = entry.config
    return EmbeddingModel(
        label=entry.id,
        source=f"knowledge/models.yaml ({entry.id}: {info.source})",
        architecture=(config.get("architectures") or [None])[0],
        hidden_size=config.get("hidden_size"),
        pooling=(info.pooling,),
        dense=info.output_dimension != config.get("hidden_size"),
        output_dimension=info.output_dimension,
        normalized=None if info.normalized == "unknown" else info.normalized,
        max_seq_length_tokens=None if info.max_input_tokens == "unknown" else info.max_input_tokens,
        matryoshka_in_config=bool(config.get("matryoshka_dimensions") or config.get("is_matryoshka")),
        matryoshka_range=info.adjustable_dimensions,
    )


def embedding_model_from_files(
    label: str,
    source: str,
    pooling_config: Mapping[str, Any],
    modules: Sequence[Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None,
    dense_config: Mapping[str, Any] | None = None,
    sentence_bert_config: Mapping[str, Any] | None = None,
) -> EmbeddingModel:
    """The reference pipeline from a model's sentence-transformers files (and config.json when given)."""
    pooled: EmbeddingPooling = embedding_pooling_from_files(pooling_config, modules)
    config = config or {}
    dense = pooled.output_dimension is None
    out = pooled.output_dimension
    if dense and dense_config is not None:
        out = dense_config.get("out_features") if isinstance(dense_config.get("out_features"), int) else None
    max_len = (sentence_bert_config or {}).get("max_seq_length")
    return EmbeddingModel(
        label=label,
        source=source,
        architecture=(config.get("architectures") or [None])[0],
        hidden_size=config.get("hidden_size"),
        pooling=pooled.pooling,
        dense=dense,
        output_dimension=out,
        normalized=pooled.normalized if modules is not None else None,
        max_seq_length_tokens=max_len if isinstance(max_len, int) else None,
        matryoshka_in_config=bool(config.get("matryoshka_dimensions") or config.get("is_matryoshka")),
    )


@dataclass
class EmbeddingDraft:
    """The check's working state while one rule decides."""

    engine_id: str
    engine: EngineEmbedding
    model: EmbeddingModel
    command: CommandFlags
    reasons: list[Reason] = field(default_factory=list)
    add: list[str] = field(default_factory=list)
    pooling: str | None = None
    normalised: bool | None = None
    dimension: int | None = None
    max_tokens: int | None = None
    over_length: str = "unknown"
    fixable: bool = True  # every difference found has a flag that removes it
    differs: bool = False
    unknown: bool = False

    def say(self, code: str, source: str | None = None, **values: object) -> None:
        self.reasons.append(Reason(code, source or self.engine.source, {k: str(v) for k, v in values.items()}))

    def mismatch(self, code: str, flag: str | None, **values: object) -> None:
        """Record a difference from the reference; `flag` removes it (None: no flag can)."""
        self.differs = True
        if flag:
            self.add.append(flag)
        else:
            self.fixable = False
        self.say(code, None, **values)  # no caller passes `source` through `values`


def reference_pooling(model: EmbeddingModel) -> str | None:
    """The reference's single pooling mode; None when unknown or when several modes are concatenated."""
    return model.pooling[0] if model.pooling and len(model.pooling) == 1 else None


def compare_pooling(draft: EmbeddingDraft, served: str | None, flag: str | None) -> None:
    reference = reference_pooling(draft.model)
    draft.pooling = served
    if reference is None or served is None:
        draft.unknown = True
        draft.say("pooling-unknown", reference=reference or "unknown", served=served or "unknown")
    elif served != reference:
        # a mode the table does not name is simply absent: the cast only lets a plain str look up the slug keys
        value = draft.engine.pooling_flag_values.get(cast(PoolingSlug, reference))
        fix = None
        if flag and value and reference in draft.engine.pooling_modes:
            fix = _pooling_flag(draft.engine, value)
        draft.mismatch("pooling-differs", fix, reference=reference, served=served)
    else:
        draft.say("pooling-matches", pooling=served)


def _pooling_flag(engine: EngineEmbedding, value: str) -> str | None:
    """The exact pooling flag with `value`, from the knowledge entry's spelling."""
    spelled = engine.flags.pooling
    if spelled is None:
        return None
    if "pooling_type" in spelled:  # a JSON object flag such as --pooler-config '{"pooling_type": "MEAN"}'
        name = spelled.split(" ", 1)[0]
        return f"{name} '{json.dumps({'pooling_type': value})}'"
    return f"{spelled} {value}"


def compare_normalisation(
    draft: EmbeddingDraft, served: bool | None, flag_on: str | None, flag_off: str | None
) -> None:
    reference = draft.model.normalized
    draft.normalised = served
    if reference is None or served is None:
        draft.unknown = True
        draft.say("normalisation-unknown")
    elif served != reference:
        draft.mismatch("normalisation-differs", flag_on if reference else flag_off, reference=reference, served=served)
    else:
        draft.say("normalisation-matches", normalised=served)


def compare_dimension(draft: EmbeddingDraft, served: int | None) -> None:
    reference = draft.model.output_dimension
    draft.dimension = served
    if reference is None or served is None:
        draft.unknown = True
        draft.say("dimension-unknown")
    elif served != reference:
        draft.mismatch("dimension-differs", None, reference=reference, served=served, dense=draft.engine.dense)
    else:
        draft.say("dimension-matches", dimension=served)


def _serving(draft: EmbeddingDraft) -> bool:
    """False (and a reason) when the engine as launched does not serve embeddings at all."""
    engine = draft.engine
    if engine.serves == "no":
        draft.say("not-served", how=engine.how)
        return False
    runner = engine.flags.runner
    flagless = draft.model.architecture in engine.served_without_flag
    if engine.serves == "needs-flag" and runner and not flagless and not draft.command.has(runner.split(" ")[0]):
        draft.add.append(runner)
        draft.say("runner-flag-missing", flag=runner)
    return True


def gguf_pooling_rule(draft: EmbeddingDraft) -> None:
    """Pooling from the GGUF's pooling type, normalisation by the server (llama-server, Ollama)."""
    engine, model, command = draft.engine, draft.model, draft.command
    flag = engine.flags.pooling
    given = command.value(flag) if flag else None
    reference = reference_pooling(model)
    if isinstance(given, str):
        served = slug_from_value(engine, given)
    elif model.gguf_pooling is not None:
        served = model.gguf_pooling
    elif reference in engine.pooling_modes:
        served = reference  # convert_hf_to_gguf.py writes the sentence-transformers mode into the GGUF
        draft.say("pooling-from-conversion", pooling=reference)
    else:
        served = None
    compare_pooling(draft, served, flag)
    normalised = {"yes": True, "no": False}.get(engine.normalises_by_default)
    norm_flag = (engine.flags.normalise_on or "").split(" ")[0]
    norm_value = command.value(norm_flag) if norm_flag else None
    if isinstance(norm_value, str):
        normalised = norm_value.strip() == (engine.flags.normalise_on or "").split(" ")[-1]  # only the L2 setting
    compare_normalisation(draft, normalised, engine.flags.normalise_on, engine.flags.normalise_off)
    compare_dimension(draft, model.hidden_size if model.dense else model.output_dimension)
    if engine.truncates_by_default is True:
        draft.over_length = "truncated"
        draft.say("over-length-truncated", how=engine.max_input)
    if engine.batch_limit_tokens is not None:
        given = command.value(*engine.batch_flags) if engine.batch_flags else None
        limit = int(given) if isinstance(given, str) and given.isdigit() else engine.batch_limit_tokens
        draft.max_tokens = limit if draft.max_tokens is None else min(draft.max_tokens, limit)
        need = model.max_seq_length_tokens
        if engine.over_batch == "rejected":
            draft.over_length = "rejected"
        if need is not None and need > limit:
            # the KB spelling is a template in the catalog (an Ollama request option comes with words)
            fix = _(engine.flags.batch).replace("{n}", str(need)) if engine.flags.batch else None
            draft.mismatch("batch-too-small", fix, limit=limit, needed=need, note=engine.over_batch_note or "")


def architecture_default(engine: EngineEmbedding, model: EmbeddingModel) -> str:
    defaults = engine.architecture_defaults
    return defaults.get(model.architecture or "", defaults.get("default", "unknown"))


def slug_from_value(engine: EngineEmbedding, value: str) -> str | None:
    """The pooling slug an engine's flag value means (MEAN -> mean, last -> last_token)."""
    reverse = {v.lower(): slug for slug, v in engine.pooling_flag_values.items()}
    return reverse.get(value.strip().lower())


def json_flag(command: CommandFlags, spelled: str | None) -> dict[str, Any]:
    """The JSON object a flag such as --pooler-config carries on the command line (empty when absent)."""
    if not spelled or "{" not in spelled:
        return {}
    value = command.value(spelled.split(" ", 1)[0])
    if not isinstance(value, str):
        return {}
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ServewiseInputError(_("{value} is not valid JSON ({msg})").format(
                                    value=spelled.split(' ', 1)[0], msg=json_problem(exc.msg))) from None
    if not isinstance(data, dict):
        raise ServewiseInputError(_("{value} must be a JSON object").format(value=spelled.split(' ', 1)[0]))
    return data


def check_embeddings(
    model: EmbeddingModel, engine_id: str, command: CommandFlags | None, kb: EmbeddingServingFile
) -> EmbeddingCheck:
    """Pooling, normalisation, dimension and input length on `engine_id` next to the reference, with a verdict."""
    engine = kb.engines.get(engine_id)
    if engine is None:
        raise ServewiseInputError(_("no embedding knowledge for engine {engine_id!r}").format(engine_id=engine_id))
    if command is not None and command.engine != engine_id:
        raise ServewiseInputError(_("the launch command starts {engine}, not {engine_id}").format(
                                    engine=command.engine, engine_id=engine_id))
    from calculators.engines import adapter  # the registry imports every engine's embeddings.py, which imports this

    rule = adapter(engine_id).embedding_rule
    draft = EmbeddingDraft(engine_id, engine, model, command or CommandFlags(engine=engine_id, model=None))
    if model.matryoshka_range and engine.matryoshka_request == "only-if-config" and not model.matryoshka_in_config:
        draft.say("matryoshka-needs-config", flag=engine.flags.matryoshka or "", range=model.matryoshka_range)
    if rule is None:
        draft.say("not-served", how=engine.how)
        verdict: EmbeddingVerdict = "not-served"
    elif not _serving(draft):
        verdict = "not-served"
    else:
        rule(draft)
        if draft.differs:
            verdict = "needs-flags" if draft.fixable else "will-not-match"
        elif draft.unknown:
            verdict = "unknown"
        else:
            verdict = "needs-flags" if draft.add else "will-match"
    sources = tuple(dict.fromkeys([model.source, engine.source, *engine.see_also, kb.sentence_transformers.source]))
    return EmbeddingCheck(
        engine=engine_id,
        model=model.label,
        verdict=verdict,
        pooling=draft.pooling,
        reference_pooling=reference_pooling(model),
        normalised=draft.normalised,
        reference_normalised=model.normalized,
        output_dimension=draft.dimension,
        reference_dimension=model.output_dimension,
        max_input_tokens=draft.max_tokens,
        over_length=draft.over_length,
        reference_max_tokens=model.max_seq_length_tokens,
        dimensions_request=engine.matryoshka_request,
        flags_to_add=tuple(dict.fromkeys(draft.add)),
        reasons=tuple(draft.reasons),
        sources=sources,
    )


def check_embeddings_on_engines(
    model: EmbeddingModel, engine_ids: Sequence[str], command_text: str, kb: EmbeddingServingFile
) -> list[EmbeddingCheck]:
    """One embedding check per engine; a non-empty `command_text` is that engine's launch command."""
    def one(engine_id: str, command: CommandFlags | None):
        return check_embeddings(model, engine_id, command, kb)

    return checks_per_engine(engine_ids, command_text, one)
