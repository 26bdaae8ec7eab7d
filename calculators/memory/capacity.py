"""Capacity of one engine for one model and machine: longest context for N sequences, most sequences at a
context, and the curve of max concurrent sequences vs context length.

Capacity is found by searching over the engine's own plans (never by a separate formula): a first guess is
read from one plan (vLLM's "Maximum concurrency", SGLang's token pool, the bytes a plan leaves or misses
over its bytes per sequence elsewhere), refined from the plan at each guess, and confirmed; a gallop and a
bisection finish the job when a guess is off. Searches vary the workload keys and keep the user's other
overrides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from calculators.engines import adapter
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.compare import (
    ComparisonInputs,
    EngineNotApplicable,
    Workload,
    applicability,
    engine_settings,
    plan_holds,
    run_plan,
    workload_settings,
)
from calculators.memory.plan import ComponentKind, MemoryPlan
from calculators.model.architecture import ModelArchitecture

#: Upper bound for context searches when the model states no trained context (tokens).
CONTEXT_SEARCH_CAP_TOKENS = 1 << 21
#: Resolution of the longest-context search (tokens): llama.cpp pads each stream to 256 cells, and shared
#: settings are written in round numbers; searching whole steps keeps the search to a few plans.
CONTEXT_STEP_TOKENS = 256


def _free_bytes(plan: MemoryPlan, machine: Machine) -> int:
    """Bytes the plan leaves unassigned: over every GPU for plans that place layers per device, else per device."""
    devices = getattr(plan, "devices", None)
    if devices:
        gpus = [d for d in devices if d.device != "host"]
        unused_gpus = max(0, machine.n_devices - len(gpus))  # Ollama pins a small model to one GPU
        return unused_gpus * machine.device_memory_bytes + sum(
            max(0, machine.device_memory_bytes - d.kv_cache_bytes - (d.weights_bytes or 0)) for d in gpus)
    return sum(c.bytes for c in plan.components if c.kind is ComponentKind.FREE)


def _free_bytes_guess(count: int, plan: MemoryPlan, machine: Machine) -> int:
    """`count` (sequences or context tokens) scaled by the bytes the plan leaves (or misses, when negative)
    against its cache bytes."""
    gpus = [d for d in getattr(plan, "devices", None) or [] if d.device != "host" and d.kv_cache_bytes]
    if gpus and len(gpus) == machine.n_devices:
        # layers are split over every GPU: the GPU that runs out first decides
        return count + min((machine.device_memory_bytes - d.kv_cache_bytes - (d.weights_bytes or 0))
                           * count // d.kv_cache_bytes for d in gpus)
    if gpus or plan.device_capacity_bytes is None:
        return count + _free_bytes(plan, machine) * count // max(plan.kv_cache_bytes, 1)
    return count + (plan.device_capacity_bytes - plan.used_bytes) * count // max(plan.kv_cache_bytes, 1)


def _sequences_guess(engine: str, plan: MemoryPlan, workload: Workload, machine: Machine) -> int:
    """Guess of the most sequences at this context from a plan made for `workload.sequences` of them.

    Engines that report capacity answer directly (vLLM's concurrency, SGLang's pool); the others add the
    sequences the remaining (or missing, when negative) bytes are worth at this plan's bytes per sequence,
    within any limit the engine adds (Ollama's load headroom).
    """
    spec = adapter(engine)
    return _guess(spec.sequences_guess, spec.clamp_sequences_guess, workload.sequences, plan, workload, machine)


def _context_guess(engine: str, plan: MemoryPlan, workload: Workload, machine: Machine) -> int:
    """Guess of the longest context for the workload's sequence count, from a plan made at its context.

    Engines that report a token pool divide it by the sequences; the others scale the context by the bytes
    the plan leaves (or misses, when negative) against its cache bytes.
    """
    spec = adapter(engine)
    return _guess(spec.context_guess, spec.clamp_context_guess, workload.context_tokens, plan, workload, machine)


def _guess(own, clamp, count: int, plan: MemoryPlan, workload: Workload, machine: Machine) -> int:
    """The engine's own answer when it has one, else the free-bytes guess within the engine's limit."""
    if own is not None:
        return own(plan, workload, machine)
    guess = _free_bytes_guess(count, plan, machine)
    return guess if clamp is None else clamp(guess, plan, workload, machine)


def _largest_true(holds: Callable[[int], bool], guess: int, low: int, high: int, first_step: int = 1) -> int:
    """Largest x in [low, high] with holds(x), given holds is monotone (True then False); low - 1 if none.

    Starts at `guess` and gallops away from it (steps of `first_step`, doubling), then bisects the bracket,
    so a good guess costs two or three evaluations. Each point is evaluated at most once.
    """
    if high < low:
        return low - 1
    guess = min(max(guess, low), high)
    step = max(1, first_step)
    if holds(guess):
        good = guess
        while True:
            probe = good + step
            if probe > high:
                bad = high + 1
                break
            if not holds(probe):
                bad = probe
                break
            good, step = probe, step * 2
    else:
        bad = guess
        while True:
            probe = bad - step
            if probe < low:
                good = low - 1  # sentinel: nothing below `bad` is known to hold
                break
            if holds(probe):
                good = probe
                break
            bad, step = probe, step * 2
    while bad - good > 1:
        middle = (good + bad) // 2
        if holds(middle):
            good = middle
        else:
            bad = middle
    return good


class _Prober:
    """Plans one engine for workload variants, keeping the user's overrides except the workload keys."""

    def __init__(self, inputs: ComparisonInputs, engine: str, workload: Workload):
        self.inputs, self.engine, self.workload = inputs, engine, workload
        kept = dict(inputs.overrides.get(engine) or {})
        spec = adapter(engine)
        for key in spec.workload_keys:
            kept.pop(key, None)
        # Some engines plan a search faster with other settings that keep the same memory (llama.cpp without
        # --fit), asking for the margin those settings would have kept free instead.
        search = spec.capacity_search(kept, inputs.arch, inputs.machine) if spec.capacity_search else None
        self.gpu_margin_bytes = search.gpu_margin_bytes if search else 0
        kept = search.overrides if search else kept
        self.overrides = kept
        self.plans = 0
        self._held: dict[tuple[int, int], bool] = {}

    def plan(self, workload: Workload) -> MemoryPlan | None:
        """The engine's plan for this workload variant (None when the engine rejects the settings)."""
        self.plans += 1
        try:
            settings = engine_settings(self.engine, workload, self.overrides)
            return run_plan(self.engine, self.inputs.arch, self.inputs.machine, self.inputs.weights_bytes,
                            settings, workload, self.inputs.draft)
        except ServewiseInputError:
            return None

    def plan_and_holds(self, workload: Workload) -> tuple[MemoryPlan | None, bool]:
        """The plan for this variant and whether it holds the variant (remembered per context and count)."""
        plan = self.plan(workload)
        held = plan is not None and plan_holds(self.engine, plan, workload, self.inputs.machine)
        if held and plan is not None and self.gpu_margin_bytes:  # (held implies a plan)
            limit = self.inputs.machine.device_memory_bytes - self.gpu_margin_bytes
            held = all(load_bytes <= limit for load_bytes in plan.accelerator_loads_bytes())
        self._held[workload.context_tokens, workload.sequences] = held
        return plan, held

    def holds(self, workload: Workload) -> bool:
        """Whether the engine holds this variant (each variant is planned once)."""
        key = (workload.context_tokens, workload.sequences)
        if key not in self._held:
            self.plan_and_holds(workload)
        return self._held[key]


def _not_applicable(inputs: ComparisonInputs, engine: str, workload: Workload) -> str | None:
    """Why the engine cannot serve this workload on this machine at all (None when it can)."""
    reason = applicability(engine, inputs.machine)
    if reason is None:
        try:
            workload_settings(engine, workload)
        except EngineNotApplicable as exc:
            reason = str(exc)
    return reason


@dataclass(frozen=True)
class Capacity:
    """An engine's capacity for a workload: longest context for its sequences, most sequences at its context.

    0 means not even one token / one sequence fits; None means the engine is not applicable (see `reason`).
    """

    engine: str
    max_context_tokens: int | None
    max_sequences: int | None
    context_limit_tokens: int
    sequences_limit: int
    reason: str | None = None


def _context_limit(arch: ModelArchitecture) -> int:
    return arch.max_context_tokens or CONTEXT_SEARCH_CAP_TOKENS


#: Guesses refined from the plan at the previous guess before falling back to a gallop-and-bisect search.
_REFINEMENTS = 3


def max_sequences(prober: _Prober, context_tokens: int, limit: int, below: int | None = None) -> int:
    """Most sequences of `context_tokens` the engine holds at once (0..limit), by searching its plans.

    A guess from the plan for one sequence is refined from the plan at each guess (the bytes it misses or
    leaves, at its bytes per sequence), then confirmed, so most answers cost two to four plans.
    """
    one = prober.workload.with_(context_tokens=context_tokens, sequences=1)
    plan, held = prober.plan_and_holds(one)
    if not held:
        return 0
    assert plan is not None  # held implies a plan
    high = max(1, limit if below is None else min(limit, below))
    guess = min(max(_sequences_guess(prober.engine, plan, one, prober.inputs.machine), 1), high)
    quality = adapter(prober.engine).sequences_guess_quality
    if quality == "exact":
        return guess
    for _unused in range(_REFINEMENTS):
        plan, held = prober.plan_and_holds(one.with_(sequences=guess))
        if held or plan is None:
            break
        guess = min(max(_sequences_guess(prober.engine, plan, one.with_(sequences=guess), prober.inputs.machine),
                        1), guess - 1)
    if held and (quality == "trusted" or guess == high):
        return guess
    return _largest_true(lambda n: prober.holds(one.with_(sequences=n)), guess, 1, high)


def max_context(prober: _Prober, sequences: int) -> int:
    """Longest context per sequence (tokens, a multiple of CONTEXT_STEP_TOKENS or the trained context) the engine
    holds for `sequences` sequences; 0 if not even one step fits.

    The guess from the plan at the workload's context is refined from the plan at each guess; the steps known
    to hold and to fail then bound a bisection.
    """
    limit = _context_limit(prober.inputs.arch)
    high = -(-limit // CONTEXT_STEP_TOKENS)  # the last step is the trained context itself

    def at(steps: int) -> Workload:
        return prober.workload.with_(context_tokens=min(steps * CONTEXT_STEP_TOKENS, limit), sequences=sequences)

    good, bad = 0, high + 1  # largest step known to hold, smallest known to fail
    steps = min(max(prober.workload.context_tokens // CONTEXT_STEP_TOKENS, 1), high)
    for _unused in range(_REFINEMENTS):
        plan, held = prober.plan_and_holds(at(steps))
        if held:
            good = max(good, steps)
        else:
            bad = min(bad, steps)
        if plan is None:
            break
        guessed = _context_guess(prober.engine, plan, at(steps), prober.inputs.machine) // CONTEXT_STEP_TOKENS
        guessed = min(max(guessed, good + 1 if good < high else high), bad - 1 if bad > 1 else 1)
        if guessed in (steps, good) or not good < guessed < bad:
            break
        steps = guessed
    if bad - good == 1:
        return min(good * CONTEXT_STEP_TOKENS, limit)
    if good:
        steps = _largest_true(lambda k: prober.holds(at(k)), good + 1, good + 1, bad - 1)
        steps = max(steps, good)
    else:
        steps = _largest_true(lambda k: prober.holds(at(k)), min(bad - 1, steps), 1, bad - 1)
    return min(max(steps, 0) * CONTEXT_STEP_TOKENS, limit)


def capacity(
    inputs: ComparisonInputs, engine: str, workload: Workload, sequences_limit: int = 1024
) -> Capacity:
    """Longest context for the workload's sequences and most sequences at its context, for one engine."""
    limit = _context_limit(inputs.arch)
    reason = _not_applicable(inputs, engine, workload)
    if reason:
        return Capacity(engine, None, None, limit, sequences_limit, reason)
    prober = _Prober(inputs, engine, workload)
    return Capacity(
        engine=engine,
        max_context_tokens=max_context(prober, workload.sequences),
        max_sequences=max_sequences(prober, workload.context_tokens, sequences_limit),
        context_limit_tokens=limit,
        sequences_limit=sequences_limit,
    )


def most_sequences(
    inputs: ComparisonInputs, engine: str, workload: Workload, sequences_limit: int = 1024
) -> int | None:
    """Most sequences of the workload's context one engine holds at once (None when it is not applicable)."""
    if _not_applicable(inputs, engine, workload):
        return None
    return max_sequences(_Prober(inputs, engine, workload), workload.context_tokens, sequences_limit)


@dataclass(frozen=True)
class CapacityCurve:
    """Most concurrent sequences (capped at `sequences_limit`) at each context length, for one engine."""

    engine: str
    context_tokens: tuple[int, ...]
    max_sequences: tuple[int, ...]
    sequences_limit: int
    plans_evaluated: int
    reason: str | None = None


def capacity_curve(
    inputs: ComparisonInputs, engine: str, workload: Workload, contexts: Sequence[int], sequences_limit: int = 256
) -> CapacityCurve:
    """Max concurrent sequences vs context length for one engine (contexts in tokens, any order).

    Walks the contexts from shortest to longest: capacity never grows with context, so each search is
    bounded by the previous answer.
    """
    ordered = sorted(set(contexts))
    reason = _not_applicable(inputs, engine, workload)
    if reason:
        return CapacityCurve(engine, tuple(ordered), (), sequences_limit, 0, reason)
    prober = _Prober(inputs, engine, workload)
    results: list[int] = []
    bound = sequences_limit
    for ctx in ordered:
        bound = max_sequences(prober, ctx, sequences_limit, below=bound) if bound else 0
        results.append(bound)
    return CapacityCurve(engine, tuple(ordered), tuple(results), sequences_limit, prober.plans)


def context_grid(max_tokens: int, points: int, min_tokens: int = 512, through: int | None = None) -> list[int]:
    """`points` context lengths spread geometrically from `min_tokens` to `max_tokens` (whole tokens), plus
    `through` (the workload's own context, tokens) exactly when given.

    A chart drawn at these contexts has a point at `through`, so its value there is the same search's answer
    as the capacity table's, not a line drawn between two grid points. Grid points (but not the ends) closer
    to `through` than a third of the grid's step (in log scale) make way for it, so no two points crowd.
    """
    if points < 2 or max_tokens <= min_tokens:
        grid = [max(min(min_tokens, max_tokens), 1)]
        ratio = 1.0
    else:
        ratio = (max_tokens / min_tokens) ** (1 / (points - 1))
        grid = sorted({min(max_tokens, round(min_tokens * ratio**i)) for i in range(points)})
    if through is None or through < 1:
        return grid
    too_close = ratio ** (1 / 3)
    kept = [c for c in grid if c in (grid[0], grid[-1]) or not 1 / too_close < c / through < too_close]
    return sorted({*kept, through})
