"""The speed measurement files: schema, sources, and the held-out set kept apart."""

from __future__ import annotations

import re

import pytest

from knowledge.common import KnowledgeError
from knowledge.loader import load_knowledge
from knowledge.speed import FIT_FILE, HOLDOUT_FILE, SPEED_DIR, load_speed_measurements

SOURCE = re.compile(r"^(https?://\S+.*|[\w.-]+/[\w.-]+:\S.*|knowledge/\S+.*|a public .*)$")


@pytest.mark.parametrize("name", [FIT_FILE, HOLDOUT_FILE])
def test_every_entry_names_a_source(name):
    data = load_speed_measurements(name)
    for item in (*data.hardware, *data.models, *data.points, *data.sweeps):
        assert SOURCE.match(item.source), f"{item.id}: source {item.source!r}"


def test_catalog_ids_exist_and_match_bandwidth():
    kb = load_knowledge()
    catalog = {g.id: g for g in kb.gpus.all_gpus}
    chips = {c.id: c for c in kb.gpus.apple_chips}
    for name in (FIT_FILE, HOLDOUT_FILE):
        for hw in load_speed_measurements(name).hardware:
            if not hw.in_catalog:
                continue
            entry = catalog.get(hw.id) or chips.get(hw.id)
            assert entry is not None, f"{hw.id} claims to be in knowledge/gpus.yaml"
            assert entry.memory_bandwidth_gb_per_s == hw.memory_bandwidth_gb_per_s, hw.id
            # the catalog's sourced dense BF16 figure is the ledger's compute rate for the same GPU
            catalog_flops = getattr(entry, "dense_bf16_tflops", "unknown")
            if isinstance(catalog_flops, (int, float)):
                assert hw.dense_fp16_tflops == catalog_flops, hw.id
            assert hw.dense_fp16_acc_tflops == getattr(entry, "dense_fp16_acc_tflops", "unknown"), hw.id


def test_every_geforce_card_with_a_tensor_figure_has_its_fp16_accumulate_rate_at_twice_it():
    """GeForce cards run FP32 accumulate at half the FP16-accumulate rate (Ampere and Ada whitepapers); llama.cpp's
    prompt kernels run at the FP16-accumulate one, so a GeForce entry without it would be predicted at half speed.
    Professional and data-centre cards keep one rate ('unknown' here means: the same as the BF16 figure)."""
    kb = load_knowledge()
    fit = load_speed_measurements(FIT_FILE).hardware
    entries = [(g.id, g.name, g.dense_bf16_tflops, g.dense_fp16_acc_tflops) for g in kb.gpus.all_gpus]
    entries += [(h.id, h.name, h.dense_fp16_tflops, h.dense_fp16_acc_tflops) for h in fit]
    geforce = [e for e in entries if "GeForce" in e[1] and isinstance(e[2], (int, float))]
    assert len(geforce) >= 12
    for gpu_id, _name, bf16, fp16_acc in geforce:
        assert fp16_acc == pytest.approx(2 * bf16, rel=0.01), gpu_id
    for gpu_id, name, _bf16, fp16_acc in entries:
        if "GeForce" not in name:
            assert fp16_acc == "unknown", gpu_id


def test_holdout_is_only_the_apple_scoreboard():
    holdout = load_speed_measurements(HOLDOUT_FILE)
    assert holdout.purpose == "holdout" and len(holdout.points) == 22
    assert {p.source for p in holdout.points} == {"https://github.com/ggml-org/llama.cpp/discussions/4167"}
    assert {h.hardware_class for h in holdout.hardware} == {"apple-unified"}


def test_holdout_file_cannot_stand_in_for_the_fit_set(tmp_path):
    (tmp_path / FIT_FILE).write_text((SPEED_DIR / HOLDOUT_FILE).read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(KnowledgeError, match="purpose"):
        load_speed_measurements(FIT_FILE, str(tmp_path))


def test_apple_flops_are_gpu_cores_times_the_catalogs_sourced_per_core_rate():
    """One rule for both files (fit and held-out): a stated GPU core count x the chip's sourced rate per core;
    a chip without a sourced figure, or a machine whose core count is not stated, stays 'unknown'."""
    chips = {c.id: c for c in load_knowledge().gpus.apple_chips}
    checked = 0
    for name in (FIT_FILE, HOLDOUT_FILE):
        for hw in load_speed_measurements(name).hardware:
            if hw.hardware_class != "apple-unified":
                continue
            named = re.search(r"\(chip ([a-z0-9-]+)\)", hw.verified.version)
            chip = chips[named.group(1) if named else hw.id]
            cores = re.search(r"(\d+)-core GPU", hw.name)
            if isinstance(chip.gpu_throughput, str) or cores is None:
                assert hw.dense_fp16_tflops == "unknown", hw.id
                continue
            per_core = chip.gpu_throughput.fp16_tflops / chip.gpu_throughput.gpu_cores
            assert hw.dense_fp16_tflops == pytest.approx(int(cores.group(1)) * per_core, rel=2e-3), hw.id
            checked += 1
    assert checked >= 8  # M1 (7 and 8 cores), M1 Max 32, M2 Ultra 76 (fit); M1, M2, M1 Pro, M2 Pro 16, M2 Ultra
