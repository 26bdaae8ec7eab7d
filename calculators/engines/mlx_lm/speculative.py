"""MLX LM with --draft-model: the draft model's weights and cache next to the target's, and what changes.

Read from mlx-lm v0.32.2 (PyPI wheel):
- mlx_lm/generate.py speculative_generate_step: the draft model gets its own prompt cache
  (make_prompt_cache(draft_model)); every step feeds the target num_draft_tokens + 1 tokens and then trims both
  caches back to the accepted length (trim_prompt_cache); a target whose cache cannot be trimmed is refused:
  "Speculative decoding requires a trimmable prompt cache" - ArraysCache (the state of Mamba / Gated
  DeltaNet layers) is never trimmable, so hybrid models cannot use a draft model; a RotatingKVCache only
  while it has not wrapped (offset < max_size).
- mlx_lm/generate.py and mlx_lm/server.py: --num-draft-tokens defaults to 3.
- mlx_lm/server.py ModelProvider._load: `is_batchable = draft_model is None`, so a server started with
  --draft-model serves one request at a time instead of batching up to --decode-concurrency.
- mlx_lm/generate.py speculative_generate_step: `num_draft = min(max_tokens - ntoks, num_draft_tokens)`, so a
  verify step never runs past the tokens left to generate: neither cache goes beyond prompt + generated tokens.
- mlx_lm/models/cache.py: trimming only lowers the offset; the buffers KVCache grew stay, and a buffer that grows
  after a trim ends at that offset plus 256-token steps, so it can hold fewer slots than prompt + generated
  rounded up to 256, never a step more (recorded live: tests/data/conformance/mlx_lm/speculative.json).
"""

from __future__ import annotations

from pydantic import Field

from calculators.engines.base import DraftModel
from calculators.engines.mlx_lm.plan import MlxLmPlan, MlxLmSettings, plan_mlx_lm
from calculators.engines.mlx_lm.workload import run_plan
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.memory.plan import ComponentKind, MemoryComponent, MemoryPlan, PlanNote, Result
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.units import number

DEFAULT_NUM_DRAFT_TOKENS = 3  # generate.py / server.py --num-draft-tokens


class MlxLmSpeculativePlan(Result):
    """The target's and the draft model's plans for one speculative mlx_lm run, side by side (bytes)."""

    target: MlxLmPlan
    draft: MlxLmPlan
    num_draft_tokens: int
    batching: bool = Field(description="False: mlx_lm.server does not batch requests when a draft model is loaded")
    notes: list[PlanNote]

    @property
    def total_bytes(self) -> int:
        """Weights and caches of both models."""
        return self.target.used_bytes + self.draft.used_bytes


def plan_mlx_lm_speculative(
    target: ModelArchitecture,
    draft: ModelArchitecture,
    settings: MlxLmSettings,
    machine: Machine,
    target_weights_bytes: int | None,
    draft_weights_bytes: int | None,
    *,
    prompt_tokens: int,
    generated_tokens: int = 0,
    num_draft_tokens: int = DEFAULT_NUM_DRAFT_TOKENS,
    kv_dtype_bytes: int = 2,
    working_set_bytes: int | None = None,
) -> MlxLmSpeculativePlan:
    """Both models' memory for one sequence generated with --draft-model (see the module docstring), bytes.

    Each cache is sized for prompt + generated tokens rounded up to 256-token steps: drafts are capped at the
    tokens left to generate, and a trimmed KVCache keeps its buffer. A buffer regrown after a trim may end below
    that figure (within one step), so the caches are an upper bound, not exact.
    """
    if num_draft_tokens < 0:
        raise ServewiseInputError(_("--num-draft-tokens must be zero or more"))
    notes: list[PlanNote] = []
    for arch, role in ((target, "model"), (draft, "draft model")):
        if arch.layers_of(LayerKind.RECURRENT):
            raise ServewiseInputError(
                _("mlx_lm refuses speculative decoding here: the {role}'s recurrent layers keep their state "
                  "in ArraysCache, which cannot be trimmed ('Speculative decoding requires a trimmable "
                  "prompt cache')").format(role=role)
            )
        windows = [x.sliding_window_tokens for x in arch.layers_of(LayerKind.SLIDING) if x.sliding_window_tokens]
        if windows and prompt_tokens + generated_tokens + num_draft_tokens >= min(windows):
            notes.append(PlanNote(code="mlx_draft_rotating_wrap", message=(
                _("the {role}'s sliding-window cache wraps at {windows}\u00a0tokens; a RotatingKVCache past its "
                  "size cannot be trimmed, so mlx_lm stops with 'requires a trimmable prompt cache' there").format(
                  role=role, windows=min(windows)))))
    target_plan, draft_plan = (
        plan_mlx_lm(arch, settings, machine, weights, prompt_tokens=prompt_tokens,
                    generated_tokens=generated_tokens, n_sequences=1,
                    kv_dtype_bytes=kv_dtype_bytes, working_set_bytes=working_set_bytes)
        for arch, weights in ((target, target_weights_bytes), (draft, draft_weights_bytes)))
    notes += [
        PlanNote(code="mlx_draft_no_batching", message=_("mlx_lm.server does not batch requests while a draft model "
                 "is loaded (is_batchable = draft_model is None): requests run one at a time.")),
        PlanNote(code="mlx_draft_cache", message=_(
            "Each verify step appends up to {drafts} drafted tokens (never past the tokens left to generate) and "
            "trims back; trimming keeps the grown buffers, and a buffer regrown after a trim ends at that offset "
            "plus 256-token steps, so each cache may hold up to one step fewer slots than planned here (mlx-lm "
            "0.32.2 recorded 1,277 of 1,280 planned slots).").format(drafts=num_draft_tokens)),
    ]
    return MlxLmSpeculativePlan(target=target_plan, draft=draft_plan, num_draft_tokens=num_draft_tokens,
                                batching=False, notes=notes)


def plan_with_draft_model(arch, settings, machine, weights_bytes, workload, draft: DraftModel) -> MemoryPlan:
    """The target's plan with the --draft-model checkpoint's weights and cache added (bytes), for the comparison.

    Without --draft-model in the settings the given draft is not loaded and the plan is the ordinary one. With
    it, mlx_lm.server runs one request at a time, so both caches hold one sequence of the workload's length
    (drafts are capped at the tokens left; see `plan_mlx_lm_speculative`).
    """
    if settings.draft_model is None:
        return run_plan(arch, settings, machine, weights_bytes, workload)
    both = plan_mlx_lm_speculative(
        arch, draft.arch, settings, machine, weights_bytes, draft.weights_bytes,
        prompt_tokens=workload.context_tokens, num_draft_tokens=settings.num_draft_tokens,
        working_set_bytes=machine.device_memory_bytes,
    )
    target, drafter = both.target, both.draft
    caches = [c for c in drafter.components if c.kind in (ComponentKind.KV_CACHE, ComponentKind.RECURRENT_STATE)]
    kv = sum(c.bytes for c in caches)
    added = [MemoryComponent(kind=ComponentKind.KV_CACHE, label=_("draft model cache ({name})").format(name=draft.name),
                             bytes=kv, exact=False,  # an upper bound within one 256-token step (see above)
                             basis="mlx_lm/generate.py speculative_generate_step: make_prompt_cache(draft_model)")]
    if draft.weights_bytes is not None:
        added.insert(0, MemoryComponent(kind=ComponentKind.WEIGHTS,
                                        label=_("draft model weights ({name})").format(name=draft.name),
                                        bytes=draft.weights_bytes, exact=False, basis="as given"))
    notes = [n for n in target.notes if n.code != "mlx_draft_model"] + both.notes
    notes.append(PlanNote(code="mlx_draft_planned", message=_(
        "--draft-model {name}: its weights ({weights}) and its own cache ({cache}\u00a0bytes for one sequence of "
        "{tokens}\u00a0tokens) are added to this plan").format(
        name=draft.name, weights=_("unknown") if draft.weights_bytes is None
        else _("{bytes}\u00a0bytes").format(bytes=number(draft.weights_bytes)),
        cache=number(kv), tokens=number(workload.context_tokens))))
    weights = (None if target.weights_bytes is None or draft.weights_bytes is None
               else target.weights_bytes + draft.weights_bytes)
    extra = sum(c.bytes for c in added)  # what the drafter takes comes out of what the working set had left
    kept = [c.model_copy(update={"bytes": max(c.bytes - extra, 0)}) if c.kind is ComponentKind.FREE
            else c.model_copy(update={"exact": False}) if c.kind is ComponentKind.KV_CACHE else c
            for c in target.components]
    return target.model_copy(update={"components": [*kept, *added], "notes": notes,
                                     "weights_bytes": weights, "kv_cache_bytes": target.kv_cache_bytes + kv})
