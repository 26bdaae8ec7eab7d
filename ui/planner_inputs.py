"""Input widgets of the capacity planner page (all bound to the URL, keys `plan_*`) and the spec they make."""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError

from calculators.engines import ENGINE_IDS
from calculators.i18n import _
from calculators.memory.compare import KV_CACHE_TYPES
from calculators.planner.spec import (
    CostBasis,
    HardwareOption,
    LoadSpec,
    OnPremisesCost,
    PlannerSpec,
    SloSpec,
    default_spec,
)
from calculators.simulator.workload import LengthDistribution, LengthKind
from reports.names import namer
from ui import url_widgets

#: Weight schemes offered (quantization or GGUF file-mix ids of knowledge/formats.yaml).
WEIGHT_OPTIONS = ("bf16", "fp8-e4m3-block128", "awq-w4-g128", "gptq-w4-g128", "q8_0", "q4_k_m", "mlx-affine-4")
CONCURRENCY_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def read_spec(kb) -> PlannerSpec | str:
    """The planner spec the widgets describe, or a message saying which input is wrong."""
    defaults = default_spec()
    model_ids = list(kb.models.ids)
    gpu_ids = [gpu.id for gpu in kb.gpus.all_gpus]
    # Engines and GPUs a row each (their chips were cut to "llama.cpp (llama-serv" and "NVI" in half a row at
    # 1024 px), then the model, the demand and the latency target in three columns with their finer settings
    # folded below. In one row of four columns every input was ~130 px wide and labels wrapped to three lines.
    engines = url_widgets.multiselect(_("Engines"), list(ENGINE_IDS), key="plan_engines", default=list(ENGINE_IDS),
                                      labels=namer(kb))
    chosen = url_widgets.multiselect(_("GPUs that may be used"), gpu_ids, key="plan_gpus", labels=namer(kb),
                                     default=[o.gpu_id for o in defaults.hardware])
    model_col, load_col, slo_col = st.columns(3)
    with model_col:
        model_id = url_widgets.selectbox(_("Model"), model_ids, key="plan_model", labels=namer(kb),
                                         index=model_ids.index(defaults.model_id))
        with st.expander(_("Weights, KV cache, concurrency")):
            weights = url_widgets.multiselect(_("Weights to consider"), list(WEIGHT_OPTIONS), key="plan_weights",
                                              default=list(defaults.weights), labels=namer(kb))
            kv_types = url_widgets.multiselect(_("KV cache types"), list(KV_CACHE_TYPES), key="plan_kv",
                                               default=list(defaults.kv_cache_types))
            concurrency = url_widgets.multiselect(_("Concurrency settings to try"), list(CONCURRENCY_OPTIONS),
                                                  key="plan_conc", default=list(defaults.concurrency_options))
    with load_col:
        kind = url_widgets.radio(_("Demand"), ["rate", "users"], key="plan_load",
                                 labels={"rate": _("arrival rate"), "users": _("users with think time")},
                                 help=_("An arrival rate, or people who pause between requests (think time)."))
        if kind == "users":
            users = url_widgets.number(_("Users"), key="plan_users", min_value=1, max_value=10_000_000, value=200)
            think = url_widgets.number(_("Think time (s)"), key="plan_think", min_value=0.1, max_value=86_400.0,
                                       value=30.0)
            load = {"users": users, "think_time_s": think}
        else:
            rate = url_widgets.number(_("Arrival rate (requests/s)"), key="plan_rate", min_value=0.01,
                                      max_value=100_000.0, value=5.0)
            load = {"arrival_rate_per_s": rate}
        with st.expander(_("Request lengths")):
            shape = url_widgets.radio(_("Lengths"), ["fixed", "lognormal"], key="plan_shape", horizontal=True,
                                      labels={"fixed": _("fixed"), "lognormal": "lognormal"})
            prompt = url_widgets.number(_("Prompt tokens (median)"), key="plan_prompt", min_value=1,
                                        max_value=1_000_000, value=1024)
            output = url_widgets.number(_("Output tokens (median)"), key="plan_output", min_value=1,
                                        max_value=100_000, value=256)
            prefix = url_widgets.number(_("Shared prefix share"), key="plan_prefix", min_value=0.0, max_value=1.0,
                                        value=0.0, step=0.05)
    with slo_col:
        ttft = url_widgets.number(_("TTFT bound (s)"), key="plan_ttft", min_value=0.001, max_value=3600.0, value=1.0,
                                  help=_("Time to first token: from the request's arrival to its first output token."))
        itl_ms = url_widgets.number(_("Inter-token latency bound (ms)"), key="plan_itl", min_value=0.1,
                                    max_value=60_000.0, value=50.0)
        with st.expander(_("Percentiles and failures")):
            ttft_pct = url_widgets.number(_("TTFT percentile"), key="plan_ttft_pct", min_value=50.0,
                                          max_value=99.9, value=95.0)
            itl_pct = url_widgets.number(_("Inter-token latency percentile"), key="plan_itl_pct", min_value=50.0,
                                         max_value=99.9, value=95.0)
            failed = url_widgets.number(_("Most failed or rejected (%)"), key="plan_failed", min_value=0.0,
                                        max_value=100.0, value=1.0)
    # Full width, below: in a third of the row the GPU names of the price inputs wrapped to three lines.
    with st.expander(_("Hosts and prices")):
        per_host_col, hosts_col, basis_col = st.columns(3)
        with per_host_col:
            per_host = url_widgets.number(_("GPUs per host"), key="plan_per_host", min_value=1, max_value=72,
                                          value=8)
        with hosts_col:
            hosts = url_widgets.number(_("Hosts at most"), key="plan_hosts", min_value=1, max_value=64, value=1)
        with basis_col:
            basis = url_widgets.radio(_("Cost basis"), [b.value for b in CostBasis], key="plan_basis",
                                      labels={CostBasis.CLOUD.value: _("cloud, by the hour"),
                                              CostBasis.ON_PREMISES.value: _("own hardware")})
        prices: dict[str, float | None] = {}
        on_premises = None
        if basis == CostBasis.CLOUD.value:
            st.caption(_("0 = the knowledge base's example list price (whose and when is shown with the "
                         "result)."))
            price_cols = st.columns(2)
            for index, gpu_id in enumerate(chosen):
                with price_cols[index % 2]:
                    typed = url_widgets.number(_("{gpu}: US$ per GPU-hour").format(gpu=kb.gpus.get(gpu_id).name),
                                               key=f"plan_price_{gpu_id}", min_value=0.0, max_value=10_000.0,
                                               value=0.0)
                prices[gpu_id] = typed or None
        else:
            buy_col, months_col = st.columns(2)
            with buy_col:
                purchase = url_widgets.number(_("Purchase price per GPU (US$)"), key="plan_buy", min_value=1.0,
                                              max_value=10_000_000.0, value=30_000.0)
            with months_col:
                months = url_widgets.number(_("Amortisation (months)"), key="plan_months", min_value=1.0,
                                            max_value=240.0, value=36.0)
            tariff_col, pue_col = st.columns(2)
            with tariff_col:
                tariff = url_widgets.number(_("Energy price (US$ per kWh)"), key="plan_kwh", min_value=0.001,
                                            max_value=10.0, value=0.15)
            with pue_col:
                pue = url_widgets.number(_("PUE"), key="plan_pue", min_value=1.0, max_value=5.0,
                                         value=float(kb.prices.factor("pue").value))
            on_premises = {"purchase_usd_per_gpu": purchase, "amortisation_months": months,
                           "energy_usd_per_kwh": tariff, "pue": pue}
    if not chosen:
        return _("Pick at least one GPU.")
    if not engines or not weights or not kv_types or not concurrency:
        return _("Pick at least one engine, weight scheme, KV cache type and concurrency setting.")
    lengths = LengthKind.LOGNORMAL if shape == "lognormal" else LengthKind.FIXED
    try:
        return PlannerSpec(
            model_id=model_id, weights=tuple(weights), kv_cache_types=tuple(kv_types),
            prompt=LengthDistribution(kind=lengths, value=int(prompt), median=float(prompt)),
            output=LengthDistribution(kind=lengths, value=int(output), median=float(output)),
            shared_prefix_fraction=prefix, load=LoadSpec(**load),
            slo=SloSpec(ttft_percentile=ttft_pct, ttft_s=ttft, itl_percentile=itl_pct, itl_s=itl_ms / 1000,
                        max_failed_share=failed / 100),
            hardware=tuple(HardwareOption(gpu_id=g, max_gpus_per_host=int(per_host), usd_per_gpu_hour=prices.get(g))
                           for g in chosen),
            max_hosts=int(hosts), engines=tuple(engines), concurrency_options=tuple(sorted(concurrency)),
            cost_basis=CostBasis(basis), on_premises=OnPremisesCost(**on_premises) if on_premises else None,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        return _("{where}: {message}").format(where=".".join(str(p) for p in first["loc"]) or "spec",
                                              message=first["msg"])
