"""What a team asks the capacity planner: model, weights, workload, latency target, hardware and prices."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calculators.simulator.workload import LengthDistribution, LengthKind

#: Hours in an average month (365.25 x 24 / 12), for monthly costs.
HOURS_PER_MONTH = 730.5


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LoadSpec(_Spec):
    """The demand to serve: an open-loop arrival rate, or a number of users who pause between requests.

    Users are turned into the arrival rate they could send at most (users / think time), which is the
    demand if answers came instantly: a conservative planning figure, said so in the result.
    """

    arrival_rate_per_s: float | None = Field(default=None, gt=0, le=1e5, description="requests per second")
    users: int | None = Field(default=None, ge=1, le=10_000_000)
    think_time_s: float = Field(default=30.0, gt=0, le=86_400, description="mean pause between a user's requests")

    @model_validator(mode="after")
    def _one_kind(self) -> LoadSpec:
        if (self.arrival_rate_per_s is None) == (self.users is None):
            raise ValueError("give either an arrival rate or a number of users, not both or neither")
        return self

    @property
    def rate_per_s(self) -> float:
        """The arrival rate to plan for, requests per second."""
        if self.arrival_rate_per_s is not None:
            return self.arrival_rate_per_s
        assert self.users is not None
        return self.users / self.think_time_s


class SloSpec(_Spec):
    """Latency and failure targets: percentile bounds on TTFT and inter-token latency (seconds)."""

    ttft_percentile: float = Field(default=95.0, ge=50, le=99.9)
    ttft_s: float = Field(default=1.0, gt=0, le=3600)
    itl_percentile: float = Field(default=95.0, ge=50, le=99.9)
    itl_s: float = Field(default=0.05, gt=0, le=60)
    max_failed_share: float = Field(default=0.01, ge=0, le=1, description="rejected or cancelled requests")

    def tightens(self, other: SloSpec) -> bool:
        """True when every bound of this SLO is at least as strict as `other`'s."""
        return (self.ttft_s <= other.ttft_s and self.itl_s <= other.itl_s
                and self.ttft_percentile >= other.ttft_percentile and self.itl_percentile >= other.itl_percentile
                and self.max_failed_share <= other.max_failed_share)


class HardwareOption(_Spec):
    """One accelerator type that may be used, how many fit in a host, and its price (None = the KB's)."""

    gpu_id: str = Field(min_length=1, max_length=80)
    max_gpus_per_host: int = Field(default=8, ge=1, le=72)
    usd_per_gpu_hour: float | None = Field(default=None, gt=0, le=10_000)


class CostBasis(StrEnum):
    """Rent by the hour, or own the hardware (purchase amortised plus power)."""

    CLOUD = "cloud"
    ON_PREMISES = "on-premises"


class OnPremisesCost(_Spec):
    """Owned hardware: purchase price amortised over a period, plus power at the facility's PUE."""

    purchase_usd_per_gpu: float = Field(gt=0, le=10_000_000)
    amortisation_months: float = Field(default=36, gt=0, le=240)
    energy_usd_per_kwh: float = Field(gt=0, le=10)
    pue: float = Field(default=1.54, ge=1, le=5, description="Uptime Institute 2025 survey average (prices.yaml)")


class PlannerSpec(_Spec):
    """Everything the planner searches over and the targets a configuration must meet."""

    model_id: str = Field(min_length=1, max_length=120)
    weights: tuple[str, ...] = Field(default=("bf16",), min_length=1, max_length=8)
    kv_cache_types: tuple[str, ...] = Field(default=("16-bit",), min_length=1, max_length=3)
    prompt: LengthDistribution = LengthDistribution(kind=LengthKind.FIXED, value=1024)
    output: LengthDistribution = LengthDistribution(kind=LengthKind.FIXED, value=256)
    shared_prefix_fraction: float = Field(default=0.0, ge=0, le=1)
    load: LoadSpec = LoadSpec(arrival_rate_per_s=2.0)
    slo: SloSpec = SloSpec()
    hardware: tuple[HardwareOption, ...] = Field(min_length=1, max_length=12)
    max_hosts: int = Field(default=1, ge=1, le=64)
    engines: tuple[str, ...] | None = Field(default=None, description="None = every engine servewise models")
    concurrency_options: tuple[int, ...] = Field(default=(8, 32, 128), min_length=1, max_length=10)
    cost_basis: CostBasis = CostBasis.CLOUD
    on_premises: OnPremisesCost | None = None
    requests_per_simulation: int = Field(default=300, ge=50, le=20_000)
    seed: int = 0

    @model_validator(mode="after")
    def _costable(self) -> PlannerSpec:
        if self.cost_basis is CostBasis.ON_PREMISES and self.on_premises is None:
            raise ValueError("on-premises costs need the purchase price per GPU and your energy price")
        if any(n < 1 or n > 4096 for n in self.concurrency_options):
            raise ValueError("concurrency options must be between 1 and 4096")
        return self


def default_spec() -> PlannerSpec:
    """The search the planner page opens with: Llama 3.1 8B on H100 / L40S / L4, 5 requests/s, p95 TTFT 1 s."""
    return PlannerSpec(
        model_id="llama-3.1-8b",
        hardware=(HardwareOption(gpu_id="h100-sxm-80gb"), HardwareOption(gpu_id="l40s-48gb"),
                  HardwareOption(gpu_id="l4-24gb")),
        load=LoadSpec(arrival_rate_per_s=5.0),
    )
