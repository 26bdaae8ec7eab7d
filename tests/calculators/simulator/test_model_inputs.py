"""The simulator's catalog-model inputs step like the planner's: the same speed shape and fitted parameters."""

import pytest

from calculators.memory.compare import model_weights
from calculators.memory.kv import raw_kv_estimate
from calculators.model.catalog import architecture_from_catalog
from calculators.simulator.ingestion import catalog_cost
from calculators.simulator.model_inputs import WEIGHTS_SCHEME, simulator_inputs
from calculators.speed.inputs import model_shape
from calculators.speed.predict import speed_params
from knowledge import load_knowledge

KB = load_knowledge()


@pytest.mark.parametrize("model_id", ["qwen3-30b-a3b", "llama-3.1-8b"])
def test_catalog_inputs_carry_the_planners_speed_shape(model_id: str) -> None:
    arch = architecture_from_catalog(model_id, KB)
    weights = model_weights(KB.formats, arch, WEIGHTS_SCHEME).bytes
    per_token = raw_kv_estimate(arch, 1, 1, 2).bytes_per_token_unbounded_layers
    inputs = simulator_inputs(KB, model_id, "h100-sxm-80gb")
    assert inputs.shape == model_shape(arch, weights, per_token)
    assert inputs.shape.n_layers == arch.n_layers and inputs.shape.attention_q_dim > 1


def test_a_moe_model_reads_its_active_experts_not_all_weights() -> None:
    inputs = simulator_inputs(KB, "qwen3-30b-a3b", "h100-sxm-80gb")
    shape = inputs.shape
    # Qwen3-30B-A3B: 128 routed experts, 8 per token; about 3.3 B of 30.5 B parameters active.
    assert shape.expert_weights_bytes > 0.8 * inputs.weights_bytes
    assert shape.expert_share_per_token == pytest.approx(8 / 128)
    assert shape.weights_read_bytes < 0.15 * inputs.weights_bytes


def test_ingestion_costs_use_the_engines_fitted_parameters_and_expert_split() -> None:
    basis = catalog_cost(KB, "qwen3-30b-a3b", "h100-sxm-80gb", "vllm")
    fitted, speed_basis = speed_params("vllm", "datacenter-hbm")
    assert basis.cost.memory_efficiency == fitted.memory_efficiency
    assert basis.cost.step_overhead_s == fitted.decode_overhead_s
    full_weights = simulator_inputs(KB, "qwen3-30b-a3b", "h100-sxm-80gb").weights_bytes
    assert basis.cost.expert_weights_bytes > 0.8 * full_weights and basis.cost.weights_bytes < 0.15 * full_weights
    assert basis.speed_basis.group == speed_basis.group
