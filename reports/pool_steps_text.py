"""The vLLM pool arithmetic (calculators.engines.vllm_steps) as Markdown lines for the memory page."""

from __future__ import annotations

from calculators.engines.vllm.steps import PoolStep


def _n(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.4g}"


def pool_steps_markdown(steps: list[PoolStep]) -> list[str]:
    """One line per step, each showing its inputs and its result (bytes, tokens, blocks)."""
    lines = []
    for step in steps:
        i = step.inputs
        if step.code == "state_bytes":
            lines.append(f"State of one recurrent layer, one sequence (fixed, any length): conv {i['conv_shape']} "
                         f"{i['conv_dtype']} + state {i['ssm_shape']} {i['ssm_dtype']} = **{_n(step.result)} bytes**")
        elif step.code == "block_size":
            raised = step.result != i["requested"]
            lines.append(f"Attention block: the smallest aligned block whose page ({_n(i['attention_bytes_per_token'])}"
                         f" bytes per token) holds one state ({_n(i['state_bytes'])} bytes) = **{_n(step.result)} "
                         "tokens**" + (f" (raised from {_n(i['requested'])})" if raised else ""))
        elif step.code == "padded_page":
            lines.append(f"Page of every layer: {_n(i['block_size'])} x {_n(i['attention_bytes_per_token'])} = "
                         f"**{_n(step.result)} bytes** (the state page padded by {i['padding_percent']}%)")
        elif step.code == "groups":
            draft = f", {i['draft_layers']} of them the drafter's" if i["draft_layers"] else ""
            lines.append(f"KV cache groups of {i['layers_per_group']} layers: {i['attention_groups']} attention + "
                         f"{i['state_groups']} state = **{step.result}**{draft} (short groups get padding layers)")
        elif step.code == "bytes_per_block":
            lines.append(f"Bytes per block: {i['layers_per_group']} layers x {_n(i['page_bytes'])} = "
                         f"**{_n(step.result)}**")
        elif step.code == "num_blocks":
            lines.append(f"Blocks: {_n(i['budget_bytes'])} // {_n(i['bytes_per_block'])} = **{_n(step.result)}**")
        elif step.code == "blocks_per_request":
            lines.append(f"One {_n(i['max_model_len'])}-token request holds {_n(i['attention_blocks'])} attention + "
                         f"{_n(i['state_blocks'])} state blocks = **{_n(step.result)}**")
        elif step.code == "max_concurrency":
            lines.append(f"Maximum concurrency: {_n(i['num_blocks'])} / {_n(i['blocks_per_request'])} = "
                         f"**{step.result:.2f}x**")
        elif step.code == "kv_tokens":
            lines.append(f"KV cache size: int({i['max_concurrency']:.4f} x {_n(i['max_model_len'])}) = "
                         f"**{_n(step.result)} tokens**")
        elif step.code == "state_share":
            lines.append(f"At that concurrency, state pages are {step.result:.1%} of the pool "
                         f"({i['state_blocks']} of {i['blocks_per_request']} blocks per request)")
    return lines
