"""A typical shared link for each page: the values a colleague would pick and send (not the defaults).

The screenshot script (bench/screenshots.py) and the browser layout tests open pages through these links.
"""

from __future__ import annotations

#: Page (file name under pages/) -> its link's query string.
TYPICAL_LINKS = {
    "home": "home_connections=40&home_active=4",
    "engines": "engines_backend=cuda&engines_feature=prometheus-metrics",
    "formats": "formats_engine=vllm&formats_format=awq",
    "memory": "mem_gpu=a100-sxm-80gb&mem_gpus=2&mem_ctx=32768&mem_seqs=4&mem_kv=8-bit&mem_model=llama-3.1-8b",
    "wizard": "wiz_use=shared-api&wiz_gpu=h100-sxm-80gb&wiz_model=llama-3.1-8b&wiz_users=50&wiz_tools=true",
    "simulator": "sim_n=200",
    "planner": "plan_model=llama-3.1-8b&plan_load=rate&plan_rate=5",
    "speed": "speed_model=llama-3.1-8b&speed_concurrency=16",
    "operations": "ops_engines=vllm&ops_engines=sglang&ops_rates=2%2C%208",
    "compatibility": "cmp_tool_model=llama-3.1-8b&cmp_tool_cmd=vllm+serve+meta-llama%2FLlama-3.1-8B-Instruct",
    "reconcile": "log_model=qwen3-14b",
}
#: Pages whose URL path differs from their file name (app.py's url_path=...).
URL_PATHS = {"home": "", "reconcile": "check_log"}


def page_link(base_url: str, page: str, lang: str | None = None) -> str:
    """The shared link of `page` (its typical query string, if it has one), in `lang` when given."""
    query = "&".join(part for part in (TYPICAL_LINKS.get(page, ""), f"lang={lang}" if lang else "") if part)
    return f"{base_url}/{URL_PATHS.get(page, page)}" + (f"?{query}" if query else "")
