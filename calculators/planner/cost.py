"""What a configuration costs: per hour, per month and per million output tokens at a sustained load."""

from __future__ import annotations

from dataclasses import dataclass

from calculators.planner.spec import HOURS_PER_MONTH, CostBasis, OnPremisesCost


@dataclass(frozen=True)
class CostBreakdown:
    """Cost of `gpus` accelerators in US dollars, with the arithmetic's inputs kept for display."""

    basis: CostBasis
    gpus: int
    usd_per_gpu_hour: float
    price_source: str  # whose price and when, or "your price"
    usd_per_hour: float
    usd_per_month: float
    usd_per_million_output_tokens: float | None  # None when the sustained output rate is zero
    amortisation_usd_per_gpu_hour: float | None = None  # on-premises parts of the hourly rate
    power_usd_per_gpu_hour: float | None = None
    price_source_url: str | None = None  # the page a listed price was read from, and its title (the link's text)
    price_source_title: str = ""


def on_premises_usd_per_gpu_hour(owned: OnPremisesCost, tdp_watts: float) -> tuple[float, float]:
    """(amortisation, power) in US dollars per GPU-hour: purchase / hours of the period, TDP x PUE x tariff."""
    amortisation = owned.purchase_usd_per_gpu / (owned.amortisation_months * HOURS_PER_MONTH)
    power = tdp_watts / 1000.0 * owned.pue * owned.energy_usd_per_kwh
    return amortisation, power


def cost_of(gpus: int, usd_per_gpu_hour: float, price_source: str, output_tokens_per_s: float,
            basis: CostBasis = CostBasis.CLOUD, amortisation: float | None = None,
            power: float | None = None, source_url: str | None = None, source_title: str = "") -> CostBreakdown:
    """Hourly, monthly and per-million-output-token cost of `gpus` GPUs sustaining `output_tokens_per_s`."""
    per_hour = gpus * usd_per_gpu_hour
    tokens_per_hour = output_tokens_per_s * 3600.0
    return CostBreakdown(
        basis=basis,
        gpus=gpus,
        usd_per_gpu_hour=usd_per_gpu_hour,
        price_source=price_source,
        usd_per_hour=per_hour,
        usd_per_month=per_hour * HOURS_PER_MONTH,
        usd_per_million_output_tokens=per_hour / tokens_per_hour * 1e6 if tokens_per_hour > 0 else None,
        amortisation_usd_per_gpu_hour=amortisation,
        power_usd_per_gpu_hour=power,
        price_source_url=source_url,
        price_source_title=source_title,
    )
