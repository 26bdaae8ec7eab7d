"""The example price catalog: every price is sourced, dated and names a catalog GPU; unknowns stay unknown."""

import shutil

import pytest

from knowledge.common import KnowledgeError
from knowledge.loader import KNOWLEDGE_DIR, load_knowledge

KB = load_knowledge()


def test_every_price_names_a_catalog_gpu_its_source_and_when_it_was_read():
    gpu_ids = {gpu.id for gpu in KB.gpus.gpus}
    assert KB.prices.cloud, "the planner needs at least one example price"
    for price in KB.prices.cloud:
        assert price.gpu_id in gpu_ids
        assert price.source.startswith("https://")
        assert "2026-05-07" in price.verified.version  # the day the listed prices were read from the vendors
        assert price.note or price.variant_stated, f"{price.id}: an assumed variant must say so"


def test_listed_prices_are_the_ones_the_source_printed():
    # techbytes.app "Serverless GPU Pricing Matrix" (prices verified 2026-05-07): Lambda 1x H100 SXM $3.78/hr,
    # 1x H100 PCIe $2.86/hr; Modal H100 $3.9492/hr, L4 $0.7992/hr.
    by_id = {p.id: p.usd_per_gpu_hour for p in KB.prices.cloud}
    assert by_id["lambda-h100-sxm"] == 3.78
    assert by_id["lambda-h100-pcie"] == 2.86
    assert by_id["modal-h100"] == 3.9492
    assert by_id["modal-l4"] == 0.7992
    assert [p.id for p in KB.prices.cloud_prices_for("h100-sxm-80gb")] == ["lambda-h100-sxm", "modal-h100"]


def test_on_premises_figures_nobody_publishes_are_unknown_not_guessed():
    assert KB.prices.factor("pue").value == 1.54  # Uptime Institute survey 2025, industry average
    assert KB.prices.factor("energy-usd-per-kwh").value == "unknown"
    assert KB.prices.factor("purchase-usd-per-gpu").value == "unknown"
    with pytest.raises(KeyError):
        KB.prices.factor("no-such-factor")


def test_a_price_for_a_gpu_outside_the_catalog_is_rejected(tmp_path):
    target = tmp_path / "knowledge"
    target.mkdir()
    for path in KNOWLEDGE_DIR.glob("*.yaml"):
        shutil.copy(path, target / path.name)
    prices = target / "prices.yaml"
    prices.write_text(prices.read_text().replace("gpu_id: l4-24gb", "gpu_id: l5-99gb", 1))
    with pytest.raises(KnowledgeError, match=r"prices.yaml: entry 'modal-l4': gpu_id 'l5-99gb'"):
        load_knowledge(str(target))
