"""The wizard reads hardware-dependent format cells for the team's GPU (issue 17): a quantization the engine
refuses on that GPU generation is an exclusion that names the limit and cites the matrix cell."""

from __future__ import annotations

import pytest

from calculators.hardware.compat import HardwareChoice, format_verdict
from calculators.wizard.answers import WizardAnswers
from calculators.wizard.scoring import recommend
from knowledge import load_knowledge


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _verdict(result, engine):
    return next(v for v in result.ranking if v.engine == engine)


def test_mxfp4_on_an_mi300x_excludes_sglang_with_the_arch_it_needs(kb):
    # SGLang v0.5.23 registers its OCP mxfp4 MoE method on AMD only for gfx950 (layers/quantization/__init__.py).
    answers = WizardAnswers(hardware="amd", gpu_id="mi300x-192gb", weight_format="mxfp4", model_id="gpt-oss-120b")
    sglang = _verdict(recommend(answers, kb), "sglang")
    refusal = next(e for e in sglang.exclusions if "compat:sglang/mxfp4" in e.rests_on)
    assert "gfx950" in refusal.reason and "mi300x-192gb" in refusal.reason
    # vLLM lists mxfp4 for ROCm, so it stays eligible on the same machine.
    assert not any("compat:vllm/mxfp4" in e.rests_on for e in _verdict(recommend(answers, kb), "vllm").exclusions)


def test_the_same_answers_on_an_mi355x_keep_sglang(kb):
    answers = WizardAnswers(hardware="amd", gpu_id="mi355x-288gb", weight_format="mxfp4", model_id="gpt-oss-120b")
    sglang = _verdict(recommend(answers, kb), "sglang")
    assert not any("compat:sglang/mxfp4" in e.rests_on for e in sglang.exclusions)


def test_gptq_on_amd_excludes_sglang_but_not_vllm(kb):
    answers = WizardAnswers(hardware="amd", gpu_id="mi325x-256gb", weight_format="gptq")
    result = recommend(answers, kb)
    assert any("compat:sglang/gptq" in e.rests_on for e in _verdict(result, "sglang").exclusions)
    assert not any("compat:vllm/gptq" in e.rests_on for e in _verdict(result, "vllm").exclusions)


def test_mlx_weights_sglang_is_a_penalty_on_a_mac_and_an_exclusion_on_nvidia(kb):
    mac = recommend(WizardAnswers(hardware="apple", os="macos", weight_format="mlx", gpu_id="m4-max-40c-128gb"), kb)
    sglang_mac = _verdict(mac, "sglang")
    assert not any("compat:sglang/mlx-safetensors" in e.rests_on for e in sglang_mac.exclusions)
    assert any("compat:sglang/mlx-safetensors" in c.rests_on for c in sglang_mac.contributions)
    nvidia = recommend(WizardAnswers(hardware="nvidia", gpu_id="h100-sxm-80gb", weight_format="mlx"), kb)
    assert any("compat:sglang/mlx-safetensors" in e.rests_on for e in _verdict(nvidia, "sglang").exclusions)


@pytest.mark.parametrize("gpu", ["rtx-3090-24gb", "h100-sxm-80gb", "mi300x-192gb", "m4-max-40c-128gb"])
@pytest.mark.parametrize("column", ["fp8", "awq", "gptq", "mxfp4", "mlx-safetensors"])
def test_the_wizard_and_the_formats_page_give_one_answer(kb, gpu, column):
    # Both read calculators.hardware.compat.format_verdict; an excluded engine is exactly a refused cell.
    vendor = next(g for g in kb.gpus.all_gpus if g.id == gpu).vendor
    fmt = {"mlx-safetensors": "mlx"}.get(column, column)
    answers = WizardAnswers(
        hardware=vendor, gpu_id=gpu, weight_format=fmt, os="macos" if vendor == "apple" else "linux"
    )
    result = recommend(answers, kb)
    for engine_verdict in result.ranking:
        page = format_verdict(kb, engine_verdict.engine, column, HardwareChoice(gpu_id=gpu))
        wizard_refused = any(
            f"compat:{engine_verdict.engine}/{column}" in e.rests_on for e in engine_verdict.exclusions
        )
        assert wizard_refused == (page.status == "not-supported"), (engine_verdict.engine, column, gpu)
