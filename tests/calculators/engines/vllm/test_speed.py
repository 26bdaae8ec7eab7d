"""vLLM's speed family: measurements of the V0 engine (vLLM < 0.8) never set the parameters today's vLLM gets."""

from __future__ import annotations

import pytest

from calculators.engines.vllm.speed import V0_FAMILY, family_for_version
from calculators.speed.families import speed_family
from calculators.speed.fit import default_fit
from calculators.speed.predict import speed_params
from knowledge.speed import load_speed_measurements


@pytest.mark.parametrize(("version", "family"), [
    ("vLLM 0.7.3", V0_FAMILY),
    ("vLLM 0.6.6.post1", V0_FAMILY),
    ("vllm v0.7.2", V0_FAMILY),
    ("vLLM 0.8.0", "vllm"),  # V1 became the default engine here
    ("vLLM 0.19.1rc1.dev339+gedc364896", "vllm"),
    ("vLLM 0.20.1+transformers-5.8.1", "vllm"),
    ("vLLM 0.23.0 (V1)", "vllm"),
    ("SomeFork 0.1.0", "vllm"),  # names no vLLM release: the current engine
])
def test_the_family_follows_the_default_engine_of_the_version(version, family):
    assert family_for_version(version) == family
    assert speed_family("vllm", version) == family


def test_without_a_version_vllm_is_todays_engine():
    assert speed_family("vllm") == "vllm"


def test_the_default_fit_keeps_v0_measurements_out_of_todays_vllm_group():
    table = default_fit()
    versions = {p.id: p.engine_version for p in load_speed_measurements().points}
    v1 = table.groups[("vllm", "datacenter-hbm")]
    v0 = table.groups[(V0_FAMILY, "datacenter-hbm")]
    assert v1.decode_points and v0.decode_points
    assert all(family_for_version(versions[i]) == "vllm" for i in v1.decode_points)
    assert all(versions[i] == "vLLM 0.7.3" for i in v0.decode_points)
    params, basis = speed_params("vllm", "datacenter-hbm")
    assert params == v1.params and basis.group == "vllm / datacenter-hbm"
