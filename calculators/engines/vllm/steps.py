"""vLLM's pool arithmetic for one plan, step by step, as data for the memory page (bytes, tokens, blocks).

Every step carries the numbers it combines, so the page can print "blocks = budget // bytes per block =
N" without recomputing anything. The order follows vLLM's own: state page, attention block size and padding,
groups, bytes per block, blocks, blocks per request, concurrency, tokens.
"""

from __future__ import annotations

from pydantic import Field

from calculators.engines.vllm.plan import VllmPlan
from calculators.memory.plan import Result


class PoolStep(Result):
    """One step: a stable code, the inputs by name, and the result with its unit."""

    code: str = Field(description="stable id the page picks its wording by")
    inputs: dict[str, int | float | str] = Field(default_factory=dict)
    result: int | float
    unit: str


def pool_steps(plan: VllmPlan) -> list[PoolStep]:
    """The arithmetic from the KV budget to 'KV cache size' and 'Maximum concurrency' (see the module doc)."""
    steps: list[PoolStep] = []
    state = plan.mamba_state
    groups = plan.kv_cache_groups
    if not groups:
        return steps
    attention = [g for g in groups if g.kind != "mamba"]
    if state is not None:
        steps.append(PoolStep(code="state_bytes", inputs={
            "conv_shape": " × ".join(map(str, state.conv_shape)), "conv_dtype": state.conv_dtype,
            "ssm_shape": " × ".join(map(str, state.ssm_shape)), "ssm_dtype": state.ssm_dtype,
        }, result=state.state_bytes_per_layer, unit="bytes per layer and sequence"))
        if attention:
            per_token = attention[0].page_bytes // attention[0].block_size
            steps.append(PoolStep(code="block_size", inputs={
                "requested": state.block_size_raised_from or plan.block_size, "attention_bytes_per_token": per_token,
                "state_bytes": state.state_bytes_per_layer,
            }, result=plan.block_size, unit="tokens per block"))
            steps.append(PoolStep(code="padded_page", inputs={
                "block_size": plan.block_size, "attention_bytes_per_token": per_token,
                "padding_percent": round(state.padding_percent, 2),
            }, result=state.padded_page_bytes, unit="bytes per page"))
    group_size = max(g.layers for g in groups)
    steps.append(PoolStep(code="groups", inputs={
        "attention_groups": len(attention), "state_groups": len(groups) - len(attention),
        "layers_per_group": group_size, "draft_layers": sum(g.draft_layers for g in groups),
    }, result=len(groups), unit="groups"))
    page = groups[0].page_bytes
    steps.append(PoolStep(code="bytes_per_block", inputs={"layers_per_group": group_size, "page_bytes": page},
                          result=group_size * page, unit="bytes per block"))
    steps.append(PoolStep(code="num_blocks", inputs={"budget_bytes": plan.available_kv_cache_bytes,
                                                     "bytes_per_block": group_size * page},
                          result=plan.num_gpu_blocks, unit="blocks"))
    per_request = sum(g.blocks_per_request for g in groups)
    steps.append(PoolStep(code="blocks_per_request", inputs={
        "attention_blocks": sum(g.blocks_per_request for g in attention),
        "state_blocks": per_request - sum(g.blocks_per_request for g in attention),
        "max_model_len": plan.max_model_len,
    }, result=per_request, unit="blocks per request"))
    steps.append(PoolStep(code="max_concurrency", inputs={"num_blocks": plan.num_gpu_blocks,
                                                          "blocks_per_request": per_request},
                          result=plan.max_concurrency, unit="requests of max_model_len"))
    steps.append(PoolStep(code="kv_tokens", inputs={"max_concurrency": plan.max_concurrency,
                                                    "max_model_len": plan.max_model_len},
                          result=plan.kv_tokens, unit="tokens"))
    if state is not None:
        steps.append(PoolStep(code="state_share", inputs={"state_blocks": per_request - sum(
            g.blocks_per_request for g in attention), "blocks_per_request": per_request},
            result=round(state.state_share_at_max_concurrency, 4), unit="share of the pool"))
    return steps
