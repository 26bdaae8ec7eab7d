"""The vLLM pool arithmetic (calculators.engines.vllm_steps) as Markdown lines for the memory page."""

from __future__ import annotations

from calculators.engines.vllm.steps import PoolStep
from calculators.i18n import _
from reports.numbers import number, percent, significant


def _n(value: float) -> str:
    """An integer with grouping, any other number to 4 significant digits, in the reader's digits."""
    return number(value) if isinstance(value, int) else significant(value, 4)


def pool_steps_markdown(steps: list[PoolStep]) -> list[str]:
    """One line per step, each showing its inputs and its result (bytes, tokens, blocks)."""
    lines = []
    for step in steps:
        i = step.inputs
        if step.code == "state_bytes":
            lines.append(_("State of one recurrent layer, one sequence (fixed, any length): conv {conv_shape} "
                           "{conv_dtype} + state {ssm_shape} {ssm_dtype} = **{bytes}\u00a0bytes**").format(
                conv_shape=i["conv_shape"], conv_dtype=i["conv_dtype"], ssm_shape=i["ssm_shape"],
                ssm_dtype=i["ssm_dtype"], bytes=_n(step.result)))
        elif step.code == "block_size":
            raised = step.result != i["requested"]
            lines.append(_("Attention block: the smallest aligned block whose page ({per_token}\u00a0bytes per token) "
                           "holds one state ({state}\u00a0bytes) = **{tokens}\u00a0tokens**").format(
                per_token=_n(i["attention_bytes_per_token"]), state=_n(i["state_bytes"]), tokens=_n(step.result))
                + (" " + _("(raised from {requested})").format(requested=_n(i["requested"])) if raised else ""))
        elif step.code == "padded_page":
            lines.append(_("Page of every layer: {block} × {per_token} = **{bytes}\u00a0bytes** (the state page padded "
                           "by {padding})").format(block=_n(i["block_size"]),
                                                     per_token=_n(i["attention_bytes_per_token"]),
                                                     bytes=_n(step.result),
                                                     padding=percent(i["padding_percent"] / 100, 2)))
        elif step.code == "groups":
            draft = (_(", {layers} of them the drafter's").format(layers=i["draft_layers"]) if i["draft_layers"]
                     else "")
            lines.append(_("KV cache groups of {per_group} layers: {attention} attention + {state} state = "
                           "**{groups}**{draft} (short groups get padding layers)").format(
                per_group=i["layers_per_group"], attention=i["attention_groups"], state=i["state_groups"],
                groups=step.result, draft=draft))
        elif step.code == "bytes_per_block":
            lines.append(_("Bytes per block: {layers} layers × {page} = **{bytes}**").format(
                layers=i["layers_per_group"], page=_n(i["page_bytes"]), bytes=_n(step.result)))
        elif step.code == "num_blocks":
            lines.append(_("Blocks: {budget} // {per_block} = **{blocks}**").format(
                budget=_n(i["budget_bytes"]), per_block=_n(i["bytes_per_block"]), blocks=_n(step.result)))
        elif step.code == "blocks_per_request":
            lines.append(_("One {tokens}-token request holds {attention} attention + {state} state blocks = "
                           "**{blocks}**").format(tokens=_n(i["max_model_len"]), attention=_n(i["attention_blocks"]),
                                                  state=_n(i["state_blocks"]), blocks=_n(step.result)))
        elif step.code == "max_concurrency":
            lines.append(_("Maximum concurrency: {blocks} / {per_request} = **{concurrency}x**").format(
                blocks=_n(i["num_blocks"]), per_request=_n(i["blocks_per_request"]),
                concurrency=number(step.result, 2)))
        elif step.code == "kv_tokens":
            lines.append(_("KV cache size: int({concurrency} × {tokens}) = **{kv_tokens}\u00a0tokens**").format(
                concurrency=number(i["max_concurrency"], 4), tokens=_n(i["max_model_len"]),
                kv_tokens=_n(step.result)))
        elif step.code == "state_share":
            lines.append(_("At that concurrency, state pages are {share} of the pool ({state} of {per_request} "
                           "blocks per request)").format(share=percent(step.result, 1), state=i["state_blocks"],
                                                         per_request=i["blocks_per_request"]))
    return lines
