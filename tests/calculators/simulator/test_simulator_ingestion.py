"""Ingestion bursts as a second request class: chat latency with them on the engine versus elsewhere."""

import pytest

from calculators.engines.vllm.scheduler import VllmPolicy
from calculators.errors import ServewiseInputError
from calculators.simulator.ingestion import CHAT, INGESTION, IngestionBursts, ingestion_tradeoff, merge_ingestion
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, WorkloadSpec, draw_requests

COST = StepCostModel(
    memory_bandwidth_bytes_per_s=1e12, flops_per_s=1e14, weights_bytes=5e9, active_params=5e9, kv_bytes_per_token=1e5
)
CHAT_LOAD = WorkloadSpec(n_requests=200, rate_per_s=4.0, prompt=LengthDistribution(value=256),
                         output=LengthDistribution(value=128), seed=3)
BURSTS = IngestionBursts(n_bursts=2, documents_per_burst=100, every_s=20.0, first_burst_s=5.0,
                         burst_spread_s=0.5, prompt=LengthDistribution(value=4096))


def test_bursts_are_merged_in_arrival_order_and_labelled() -> None:
    mixed = merge_ingestion(draw_requests(CHAT_LOAD), BURSTS)
    assert mixed.classes.count(INGESTION) == 200 and mixed.classes.count(CHAT) == 200
    assert mixed.requests.arrival_s == sorted(mixed.requests.arrival_s)
    first = mixed.classes.index(INGESTION)
    assert 5.0 <= mixed.requests.arrival_s[first] <= 5.5
    assert mixed.requests.prompt_tokens[first] == 4096 and mixed.requests.output_tokens[first] == 1


def test_sharing_the_engine_costs_chat_latency() -> None:
    policy = VllmPolicy(max_num_seqs=64, max_num_batched_tokens=2048)
    result = ingestion_tradeoff(CHAT_LOAD, BURSTS, policy, COST, kv_capacity_tokens=200_000)
    assert result.shared_chat.n_requests == result.separate_chat.n_requests == 200
    assert result.n_ingestion_requests == 200 and result.ingestion_prompt_tokens == 200 * 4096
    assert result.shared_ingestion.n_finished == 200
    # 409,600 prefill tokens land in two bursts: chat's tail time to first token must grow.
    assert result.shared_chat.ttft.p99 > result.separate_chat.ttft.p99
    assert result.shared_chat.itl.p99 >= result.separate_chat.itl.p99


def test_closed_loop_chat_is_refused() -> None:
    closed = CHAT_LOAD.model_copy(update={"arrival": ArrivalProcess.CLOSED})
    with pytest.raises(ServewiseInputError, match="Poisson"):
        ingestion_tradeoff(closed, BURSTS, VllmPolicy(), COST, kv_capacity_tokens=100_000)
    with pytest.raises(ServewiseInputError, match="documents_per_burst"):
        IngestionBursts.checked(documents_per_burst=0)
