"""A calibration profile: the speed model's parameters fitted to a team's own run, small enough for a URL.

The profile is a pydantic model with short field names; `encode_profile` turns it into URL-safe base64
of compact JSON (a few hundred characters) and `decode_profile` reads it back, refusing anything that is
not a valid profile with a message saying what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from calculators.errors import ServewiseInputError, json_problem, validation_problem
from calculators.i18n import _
from calculators.speed.model import Band, SpeedParams

#: Longest encoded profile accepted from a link (bytes of base64 text).
MAX_ENCODED_CHARS = 4000


class CalibrationProfile(BaseModel):
    """Parameters fitted for one engine + model + accelerator, with the error they left on the team's run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    v: Literal[1] = Field(default=1, description="profile format version")
    engine: str = Field(min_length=1, max_length=40)
    hardware_class: Literal["consumer-gddr", "datacenter-hbm", "apple-unified", "cpu"]
    label: str = Field(default="", max_length=120, description="what was measured, e.g. 'Llama 3.1 8B BF16 on H100'")
    memory_efficiency: float = Field(gt=0, le=1)
    decode_overhead_s: float = Field(ge=0, le=10)
    compute_efficiency: float = Field(gt=0, le=1)
    prefill_overhead_s: float = Field(ge=0, le=60)
    per_sequence_overhead_s: float = Field(default=0.0, ge=0, le=1)
    eager_host_scale: float = Field(default=1.0, gt=0, le=1000, description="factor on the engine's eager launch time")
    decode_band: Band
    prefill_band: Band | None = None
    kv_capacity_tokens: int | None = Field(default=None, gt=0, description="from the start-up log, when given")
    n_measurements: int = Field(ge=1, description="measured values the fit used")

    def applies_to(self, engine: str, hardware_class: str) -> bool:
        """Whether this profile was fitted for `engine` on `hardware_class` (a profile fits one of each)."""
        return (self.engine, self.hardware_class) == (engine, hardware_class)

    def params(self) -> SpeedParams:
        """The profile as speed-model parameters."""
        return SpeedParams(
            memory_efficiency=self.memory_efficiency,
            decode_overhead_s=self.decode_overhead_s,
            compute_efficiency=self.compute_efficiency,
            prefill_overhead_s=self.prefill_overhead_s,
            per_sequence_overhead_s=self.per_sequence_overhead_s,
            eager_host_scale=self.eager_host_scale,
            decode_band=self.decode_band,
            prefill_band=self.prefill_band,
        )


def encode_profile(profile: CalibrationProfile) -> str:
    """URL-safe base64 (no padding) of the profile's compact JSON, for a shared link's query parameter."""
    raw = json.dumps(profile.model_dump(mode="json", exclude_none=True), separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_profile(text: str) -> CalibrationProfile:
    """Read a profile from `encode_profile` output or from its plain JSON (a profile file)."""
    text = text.strip()
    if not text:
        raise ServewiseInputError(_("the calibration profile is empty"))
    if len(text) > MAX_ENCODED_CHARS and not text.startswith("{"):
        raise ServewiseInputError(
            _("the calibration profile is {n_text} characters; a valid one is under {max_encoded_chars}").format(
              n_text=len(text), max_encoded_chars=MAX_ENCODED_CHARS)
        )
    if text.startswith("{"):
        raw = text
    else:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
            raise ServewiseInputError(
                _("the calibration profile is not valid base64 text (was the link cut short?)")
            ) from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ServewiseInputError(
            _("the calibration profile is not valid JSON ({msg} at column {colno})").format(
              msg=json_problem(exc.msg), colno=exc.colno)
        ) from exc
    try:
        return CalibrationProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "profile"
        raise ServewiseInputError(_("the calibration profile's {where}: {msg}").format(
                                    where=where, msg=validation_problem(first))) from exc
