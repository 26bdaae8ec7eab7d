"""Speed readouts in the reader's language: Spanish words and Spanish digits (issue 19)."""

from __future__ import annotations

import re

from calculators.i18n import language
from calculators.speed.predict import estimate_speed
from reports.speed_text import speed_readout_line
from tests.calculators.speed.test_speed_model import HW, MODEL


def test_the_memory_pages_speed_line_writes_the_readers_digits():
    estimate = estimate_speed(MODEL, HW, "llama-cpp", concurrency=8, prompt_tokens=2048)
    english = speed_readout_line("llama.cpp (llama-server)", estimate)
    with language("es"):
        spanish = speed_readout_line("llama.cpp (llama-server)", estimate)
    assert "2,048-token prompt" in english and re.search(r"\d\.\d\u00a0tokens/s", english)
    assert "prompt de 2.048\u00a0tokens" in spanish and re.search(r"\d,\d\u00a0tokens/s", spanish)
    assert not re.search(r"\d\.\d\u00a0tokens/s", spanish)  # no English decimal point left in the Spanish line


def test_the_speed_answer_counts_its_sequences_and_writes_its_prompt_in_the_readers_digits():
    from reports.speed_text import speed_estimate_text

    one = speed_estimate_text(estimate_speed(MODEL, HW, "vllm", concurrency=1, prompt_tokens=2048))
    assert "Decode, 1 concurrent sequence:" in one and "for 2,048 prompt tokens" in one
    with language("es"):
        many = speed_estimate_text(estimate_speed(MODEL, HW, "vllm", concurrency=16, prompt_tokens=2048))
    assert "Decodificación, 16 secuencias concurrentes:" in many and "2.048\u00a0tokens de prompt" in many


def _calibration(engine: str, hardware_class: str):
    from calculators.speed.calibration import CalibrationProfile
    from calculators.speed.model import Band

    return CalibrationProfile(engine=engine, hardware_class=hardware_class, label="our card", memory_efficiency=0.5,
                              decode_overhead_s=0.004, compute_efficiency=0.5, prefill_overhead_s=0.02,
                              decode_band=Band(low=-0.02, high=0.01, median_abs=0.01, n_points=2), n_measurements=2)


def test_a_calibrations_band_is_called_its_errors_on_the_teams_run_not_leave_one_out():
    """The simulator's basis lines and the CLI's speed text: a calibration's band is its in-sample residuals on the
    run it was fitted on, so the text must not call it leave-one-out (the default fit's bands are)."""
    from calculators.speed.predict import engine_step_costs
    from reports.speed_text import speed_estimate_text, step_basis_lines

    calibration = _calibration("vllm", HW.hardware_class)
    lines = step_basis_lines(engine_step_costs(("vllm", "sglang"), MODEL, HW, calibration))
    vllm, sglang = lines
    assert "your calibration (our card)" in vllm and "errors on your own run, 2 measurements" in vllm
    assert "leave-one-out" not in vllm
    assert "default fit" in sglang and "leave-one-out" in sglang
    calibrated = speed_estimate_text(estimate_speed(MODEL, HW, "vllm", concurrency=4, calibration=calibration))
    assert "leave-one-out" not in calibrated and "the run it was fitted on" in calibrated
    with language("es"):
        spanish = step_basis_lines(engine_step_costs(("vllm",), MODEL, HW, calibration))[0]
    assert "leave-one-out" not in spanish and "2 mediciones" in spanish


def test_the_users_readout_line_states_its_speed_basis_and_band():
    from calculators.planner.readout import UsersReadout
    from calculators.planner.spec import SloSpec
    from calculators.speed.predict import speed_params
    from reports.speed_text import users_readout_line

    params, basis = speed_params("vllm", "datacenter-hbm")
    readout = UsersReadout(engine="vllm", users=12, rate_per_s=0.4, prompt_tokens=3840, output_tokens=256,
                           think_time_s=30.0, slo=SloSpec(), basis=basis, decode_band=params.decode_band)
    line = users_readout_line("vLLM", readout)
    assert line.startswith("**vLLM**: about **12 users** (0.4\u00a0requests/s). Speed basis: default fit")
    assert "Decode step band" in line and "leave-one-out" in line
    assert "datacenter-hbm" not in line
    no_model = UsersReadout(engine="x", users=None, rate_per_s=0.0, prompt_tokens=1, output_tokens=1,
                            think_time_s=30.0, slo=SloSpec(), reason="no scheduler model")
    assert "no error band" in users_readout_line("X", no_model)
    with language("es"):
        spanish = users_readout_line("vLLM", readout)
    assert "unos **12 usuarios**" in spanish and "Base de velocidad" in spanish
