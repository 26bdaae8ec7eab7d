"""Schema of knowledge/prices.yaml: example accelerator prices (cloud hourly rates, on-premises factors).

Prices change often and differ by provider, region and commitment; these are examples with whose price
and when, for the capacity planner's defaults. The planner lets the user replace every one of them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from knowledge.common import Frozen, Sourced, Unknown

Slug = str
SourceQuality = Literal["vendor", "vendor-copy", "third-party"]


class CloudPrice(Sourced):
    """One provider's listed on-demand price for one GPU, in US dollars per GPU-hour."""

    id: Slug = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    provider: str = Field(min_length=2)
    offer: str = Field(min_length=2, description="the offer as the provider names it")
    gpu_id: Slug = Field(description="knowledge/gpus.yaml id the offer runs on")
    variant_stated: bool = Field(
        description="False when the provider's listing does not say which form factor/memory variant it is"
    )
    usd_per_gpu_hour: float = Field(gt=0)
    billing: str = Field(min_length=2, description="how the time is metered (per second of use, while running…)")
    source_quality: SourceQuality
    source_title: str = Field("", description="the source page's title as published: the text its link reads")
    note: str = ""


class OnPremisesFactor(Sourced):
    """A figure the on-premises cost uses (power usage effectiveness), with its source."""

    id: Slug
    value: float | Unknown
    unit: str
    note: str = ""


class PricesFile(Frozen):
    """The whole prices.yaml."""

    cloud: tuple[CloudPrice, ...]
    on_premises: tuple[OnPremisesFactor, ...]

    def cloud_prices_for(self, gpu_id: str) -> tuple[CloudPrice, ...]:
        """Every listed cloud price of one catalog GPU, cheapest first."""
        return tuple(sorted((p for p in self.cloud if p.gpu_id == gpu_id), key=lambda p: p.usd_per_gpu_hour))

    def factor(self, factor_id: str) -> OnPremisesFactor:
        """The on-premises factor with this id (KeyError when absent)."""
        for item in self.on_premises:
            if item.id == factor_id:
                return item
        raise KeyError(factor_id)
