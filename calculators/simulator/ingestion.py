"""A second request class next to chat: ingestion bursts (long prompts, one output token) on the same engine.

Document ingestion (embedding a corpus through the chat model's server, or long-prompt summarising)
arrives in bursts of prefill-heavy requests. On a shared engine those prefills take step time and
batch room from running conversations; on a separate embedding server they do not. The trade-off is
two runs of the same chat traffic: with the bursts merged into its arrivals, and alone (the bursts
served elsewhere). Only the workload side changes; the engine policy and step-time model are the
caller's, so every figure carries the simulator's own basis (estimates, not measurements).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError
from calculators.hardware.catalog import catalog_gpu
from calculators.i18n import _
from calculators.simulator.checked import checked
from calculators.simulator.core import summarize
from calculators.simulator.model_inputs import simulator_inputs
from calculators.simulator.results import RequestRecord, SimulationResult, Slo, Summary
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import (
    MAX_REQUESTS,
    ArrivalProcess,
    LengthDistribution,
    LengthKind,
    RequestSet,
    WorkloadSpec,
    draw_requests,
)
from calculators.speed.inputs import accelerator_of_gpu
from calculators.speed.model import SpeedBasis
from calculators.speed.predict import engine_step_costs
from calculators.units import number

CHAT = "chat"
INGESTION = "ingestion"


class IngestionBursts(BaseModel):
    """Bursts of ingestion requests: `documents_per_burst` prompts arriving within `burst_spread_s` every `every_s`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_bursts: int = Field(default=3, ge=1, le=1000)
    documents_per_burst: int = Field(default=64, ge=1, le=MAX_REQUESTS)
    every_s: float = Field(default=60.0, gt=0, description="seconds between burst starts")
    first_burst_s: float = Field(default=10.0, ge=0, description="when the first burst starts (seconds)")
    burst_spread_s: float = Field(default=1.0, ge=0, description="a burst's documents arrive uniformly within this")
    prompt: LengthDistribution = LengthDistribution(kind=LengthKind.FIXED, value=2048)
    output_tokens: int = Field(default=1, ge=1, le=4096, description="1 for embedding-like requests")
    seed: int = 7

    @classmethod
    def checked(cls, **fields) -> IngestionBursts:
        """Build a burst spec, turning validation failures into a ServewiseInputError naming the field."""
        return checked(cls, "ingestion", **fields)


@dataclass(frozen=True)
class MixedRequests:
    """Chat and ingestion requests merged in arrival order, with each request's class by index."""

    requests: RequestSet
    classes: tuple[str, ...]


def merge_ingestion(chat: RequestSet, bursts: IngestionBursts) -> MixedRequests:
    """Add the bursts to open-loop chat arrivals; times in seconds, lengths in tokens."""
    if chat.arrival_s is None:
        raise ServewiseInputError(_("ingestion bursts need open-loop (Poisson) chat arrivals, not closed-loop clients"))
    rng = random.Random(bursts.seed)
    rows = [(t, CHAT, p, o, pre) for t, p, o, pre in zip(
        chat.arrival_s, chat.prompt_tokens, chat.output_tokens, chat.prefix_tokens, strict=True)]
    for burst in range(bursts.n_bursts):
        start = bursts.first_burst_s + burst * bursts.every_s
        for _unused in range(bursts.documents_per_burst):
            t = start + (rng.uniform(0, bursts.burst_spread_s) if bursts.burst_spread_s else 0.0)
            rows.append((t, INGESTION, bursts.prompt.sample(rng), bursts.output_tokens, 0))
    if len(rows) > MAX_REQUESTS:
        raise ServewiseInputError(
            _("chat plus ingestion is {n_rows} requests; the simulator takes at most {max_requests}").format(
              n_rows=number(len(rows)), max_requests=number(MAX_REQUESTS))
        )
    rows.sort(key=lambda row: row[0])
    merged = RequestSet(
        prompt_tokens=[r[2] for r in rows],
        output_tokens=[r[3] for r in rows],
        prefix_tokens=[r[4] for r in rows],
        arrival_s=[r[0] for r in rows],
        think_s=[0.0] * len(rows),
    )
    return MixedRequests(merged, tuple(r[1] for r in rows))


@dataclass(frozen=True)
class IngestionTradeoff:
    """Chat latency with ingestion on the same engine versus on a separate embedding server."""

    shared_chat: Summary  # chat requests only, bursts sharing the engine
    separate_chat: Summary  # the same chat requests with the bursts served elsewhere
    shared_ingestion: Summary  # the ingestion requests on the shared engine
    shared_run: SimulationResult
    separate_run: SimulationResult
    n_ingestion_requests: int
    ingestion_prompt_tokens: int  # total prompt tokens of all bursts


def ingestion_tradeoff(
    workload: WorkloadSpec,
    bursts: IngestionBursts,
    policy,
    cost,
    kv_capacity_tokens: int | None = None,
    slo: Slo | None = None,
) -> IngestionTradeoff:
    """Simulate chat alone and chat with ingestion bursts on one engine; summaries split by request class."""
    if workload.arrival is not ArrivalProcess.POISSON:
        raise ServewiseInputError(_("the ingestion trade-off compares open-loop chat traffic; choose Poisson arrivals"))
    slo = slo or Slo()
    chat = draw_requests(workload)
    mixed = merge_ingestion(chat, bursts)
    shared_spec = workload.model_copy(update={"n_requests": len(mixed.classes)})
    shared = simulate(shared_spec, policy, cost, kv_capacity_tokens, slo, requests=mixed.requests)
    separate = simulate(workload, policy, cost, kv_capacity_tokens, slo, requests=chat)
    by_class: dict[str, list[RequestRecord]] = {CHAT: [], INGESTION: []}
    for record in shared.records:
        by_class[mixed.classes[record.index]].append(record)
    ingestion_prompts = [p for p, c in zip(mixed.requests.prompt_tokens, mixed.classes, strict=True) if c == INGESTION]
    return IngestionTradeoff(
        shared_chat=summarize(by_class[CHAT], slo),
        separate_chat=summarize(list(separate.records), slo),
        shared_ingestion=summarize(by_class[INGESTION], slo),
        shared_run=shared,
        separate_run=separate,
        n_ingestion_requests=len(ingestion_prompts),
        ingestion_prompt_tokens=sum(ingestion_prompts),
    )


@dataclass(frozen=True)
class CatalogCost:
    """A step-time model and KV capacity for a catalog model on one catalog GPU, with its basis."""

    cost: StepCostModel
    kv_capacity_tokens: int
    basis: str
    speed_basis: SpeedBasis


def catalog_cost(kb, model_id: str, gpu_id: str, engine: str) -> CatalogCost:
    """The simulator's cost inputs for `model_id` on one `gpu_id` served by `engine`: the memory model's figures
    and the speed model's fitted parameters for that engine on the GPU's hardware class (seconds per step)."""
    inputs = simulator_inputs(kb, model_id, gpu_id)
    (step_cost,) = engine_step_costs((engine,), inputs.shape, accelerator_of_gpu(catalog_gpu(kb, gpu_id)))
    return CatalogCost(step_cost.cost, inputs.kv_capacity_tokens, inputs.basis, step_cost.basis)
