"""Workload inputs: validation messages a user can act on, CSV parsing, deterministic draws."""

import pytest

from calculators.errors import ServewiseInputError
from calculators.simulator.workload import (
    ArrivalProcess,
    LengthDistribution,
    WorkloadSpec,
    draw_requests,
    parse_length_pairs_csv,
)


def test_csv_pairs_parsed():
    text = "prompt_tokens,output_tokens,note\n100,20,a\n2000,5,b\n\n"
    assert parse_length_pairs_csv(text) == ((100, 20), (2000, 5))


def test_csv_accepts_bytes_with_bom_and_aliases():
    data = "\ufeffInput_Tokens,Completion_Tokens\n7,3\n".encode()
    assert parse_length_pairs_csv(data) == ((7, 3),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("prompt_tokens,output_tokens\n", "no rows"),
        ("a,b\n1,2\n", "needs a prompt column"),
        ("prompt_tokens,output_tokens\n0,5\n", "must be positive"),
        ("prompt_tokens,output_tokens\n-3,5\n", "must be positive"),
        ("prompt_tokens,output_tokens\n12,abc\n", "not a number"),
        ("prompt_tokens,output_tokens\n12.5,3\n", "whole number"),
        ("prompt_tokens,output_tokens\n1e12,3\n", "check the units"),
    ],
)
def test_csv_errors_are_actionable(text, message):
    with pytest.raises(ServewiseInputError, match=message):
        parse_length_pairs_csv(text)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"rate_per_s": 0}, "rate_per_s"),
        ({"n_requests": 0}, "n_requests"),
        ({"prompt": {"kind": "fixed", "value": 10**12}}, "prompt.value"),
        ({"output": {"kind": "uniform", "low": 50, "high": 10}}, "low <= high"),
        ({"cancel_after_s": -1}, "cancel_after_s"),
    ],
)
def test_bad_workload_fields_raise_input_error(fields, message):
    with pytest.raises(ServewiseInputError, match=message):
        WorkloadSpec.checked(**fields)


def test_draws_are_deterministic_and_seed_dependent():
    spec = WorkloadSpec(n_requests=50, prompt=LengthDistribution(kind="lognormal", median=300, sigma=1.0))
    assert draw_requests(spec) == draw_requests(spec)
    other = draw_requests(spec.model_copy(update={"seed": 1}))
    assert other.prompt_tokens != draw_requests(spec).prompt_tokens


def test_poisson_mean_rate():
    spec = WorkloadSpec(n_requests=20_000, rate_per_s=4.0)
    arrivals = draw_requests(spec).arrival_s
    assert arrivals == sorted(arrivals)
    assert len(arrivals) / arrivals[-1] == pytest.approx(4.0, rel=0.03)


def test_closed_loop_has_no_fixed_arrivals_and_shared_prefix_rounds_down():
    spec = WorkloadSpec(
        n_requests=3, arrival=ArrivalProcess.CLOSED, shared_prefix_fraction=0.5,
        prompt=LengthDistribution(kind="fixed", value=101),
    )
    drawn = draw_requests(spec)
    assert drawn.arrival_s is None
    assert drawn.prefix_tokens == [50, 50, 50]
