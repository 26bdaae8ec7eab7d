"""The GPU catalog loads, every figure is sourced, and pinned figures match the pages they were read on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from calculators.errors import ServewiseInputError
from calculators.hardware.catalog import apple_default_gpu_bytes, machine_for_gpu
from calculators.units import GIB, MIB
from knowledge.common import KnowledgeError
from knowledge.gpus import NOT_SUPPORTED, GpuCatalog, TensorRateRead
from knowledge.loader import KNOWLEDGE_DIR, load_knowledge, load_yaml_file

CATALOG = load_knowledge().gpus
REQUIRED_IDS = {
    "rtx-3090-24gb", "rtx-4090-24gb", "rtx-5090-32gb", "rtx-6000-ada-48gb", "a10g-24gb", "l4-24gb",
    "l40s-48gb", "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-pcie-80gb",
    "h100-sxm-80gb", "h100-nvl-94gb", "h200-sxm-141gb", "b200-180gb", "mi300x-192gb", "mi325x-256gb",
    # issue 17: what teams buy in 2025-2026
    "b300-288gb", "gb200-186gb", "gb300-288gb", "rtx-pro-6000-blackwell-96gb", "rtx-5080-16gb", "rtx-5070-ti-16gb",
    "h20-96gb", "l20-48gb", "mi355x-288gb", "dgx-spark-gb10-128gb", "ryzen-ai-max-395-128gb",
    "m5-16gb", "m5-pro-64gb", "m5-max-40c-128gb", "m3-ultra-512gb",
}  # fmt: skip


def test_issue_catalog_is_complete():
    ids = {gpu.id for gpu in CATALOG.all_gpus}
    assert ids >= REQUIRED_IDS
    families = {chip.id.split("-")[0] for chip in CATALOG.apple_chips}
    assert families == {"m1", "m2", "m3", "m4", "m5"}
    tiers = {chip.id.split("-")[1] if "-" in chip.id else "base" for chip in CATALOG.apple_chips}
    assert {"base", "pro", "max", "ultra"} <= tiers


@pytest.mark.parametrize("gpu", CATALOG.all_gpus, ids=lambda gpu: gpu.id)
def test_every_entry_is_sourced(gpu):
    assert gpu.source.startswith(("http://", "https://")) or ":" in gpu.source
    assert gpu.verified.version.strip()
    if gpu.memory_is_reported:
        assert gpu.memory_reported.source and gpu.memory_reported.printed_as


def test_reported_memory_is_below_the_marketed_size_read_as_gib():
    for gpu in CATALOG.gpus:
        if gpu.memory_is_reported:
            assert gpu.memory_bytes <= gpu.memory_marketed_gb * GIB, gpu.id
            assert gpu.memory_bytes > 0.9 * gpu.memory_marketed_gb * GIB, gpu.id


def test_nvidia_smi_bytes_match_what_was_printed():
    for gpu in CATALOG.gpus:
        if gpu.memory_is_reported and gpu.memory_reported.tool == "nvidia-smi":
            assert gpu.memory_reported.bytes == int(gpu.memory_reported.printed_as.removesuffix("MiB")) * MIB


# Pinned figures, each with the page it was read on (the same URL is the entry's source in gpus.yaml).
@pytest.mark.parametrize(
    ("gpu_id", "field", "expected"),
    [
        # glennklockwood.com/garden/processors/h100 (NVIDIA H100 SXM5 figures): 80 GB HBM3, 3.35 TB/s,
        # dense BF16 989.4 and FP8 1978.9 TFLOPS.
        ("h100-sxm-80gb", "memory_marketed_gb", 80),
        ("h100-sxm-80gb", "memory_bandwidth_gb_per_s", 3350),
        ("h100-sxm-80gb", "dense_bf16_tflops", 989.4),
        ("h100-sxm-80gb", "dense_fp8_tflops", 1978.9),
        # glennklockwood.com/garden/processors/A100: 40 GB at 1.555 TB/s, 80 GB at 2.039 TB/s, BF16 312.
        ("a100-sxm-40gb", "memory_bandwidth_gb_per_s", 1555),
        ("a100-sxm-80gb", "memory_bandwidth_gb_per_s", 2039),
        ("a100-sxm-80gb", "dense_bf16_tflops", 312),
        ("a100-sxm-80gb", "dense_fp8_tflops", NOT_SUPPORTED),
        # thundercompute.com A100 table: PCIe 80 GB at 1,935 GB/s.
        ("a100-pcie-80gb", "memory_bandwidth_gb_per_s", 1935),
        # mullet.se reproduction of the L40S datasheet: 864 GB/s, BF16 362.05 dense, FP8 733 dense, 350 W.
        ("l40s-48gb", "memory_bandwidth_gb_per_s", 864),
        ("l40s-48gb", "dense_bf16_tflops", 362.05),
        ("l40s-48gb", "dense_fp8_tflops", 733),
        ("l40s-48gb", "tdp_watts", 350),
        # awesomeagents.ai MI325X page: 256 GB HBM3e, 6 TB/s, BF16 1,307.4, FP8 2,614.9 dense.
        ("mi325x-256gb", "memory_bandwidth_gb_per_s", 6000),
        ("mi325x-256gb", "dense_fp8_tflops", 2614.9),
        # hpctech.co.jp copy of NVIDIA's H100 table: PCIe BF16 1,513 / FP8 3,026 with sparsity, halved; 2,000 GB/s.
        ("h100-pcie-80gb", "dense_bf16_tflops", 756.5),
        ("h100-pcie-80gb", "memory_bandwidth_gb_per_s", 2000),
        # AnandTech H100 NVL launch table: 3.9 TB/s per GPU.
        ("h100-nvl-94gb", "memory_bandwidth_gb_per_s", 3900),
        # NVIDIA HGX B200 column (copy on zdszero.github.io): 180 GB, 7.7 TB/s, BF16 4.5 PF sparse -> 2,250 dense.
        ("b200-180gb", "memory_marketed_gb", 180),
        ("b200-180gb", "memory_bandwidth_gb_per_s", 7700),
        ("b200-180gb", "dense_bf16_tflops", 2250),
        # NVIDIA RTX Blackwell whitepaper Table 3 (as quoted), row "Peak BF16 Tensor TFLOPS with FP32 Accumulate":
        # RTX 3090 71.2/142.4, RTX 4090 165.2/330.4, RTX 5090 209.5/419 (dense/sparse); FP8 FP32-acc 419/838.
        ("rtx-3090-24gb", "dense_bf16_tflops", 71.2),
        ("rtx-4090-24gb", "dense_bf16_tflops", 165.2),
        ("rtx-5090-32gb", "dense_bf16_tflops", 209.5),
        ("rtx-5090-32gb", "dense_fp8_tflops", 419),
        # NVIDIA RTX PRO Blackwell whitepaper v1.0 Table 4 (as quoted): RTX 6000 Ada 364 dense / 728 sparse.
        ("rtx-6000-ada-48gb", "dense_bf16_tflops", 364),
        # AMD's MI355X dense figures (stas00/ml-engineering TFLOPS table, note 22): BF16 2.5, FP8 5.0 PFLOPS.
        ("mi355x-288gb", "dense_bf16_tflops", 2500),
        ("mi355x-288gb", "dense_fp8_tflops", 5000),
        # ROCm docs mi300.md: Matrix BF16 2048 flops/clock/CU, 1307.4 peak TFLOPS.
        ("mi300x-192gb", "dense_bf16_tflops", 1307.4),
        # Ars Technica M4 family table (copy on theguardiantime.com): M4 Max 40-core 546 GB/s, M4 Pro 273.
        ("m4-max-40c-128gb", "memory_bandwidth_gb_per_s", 546),
        ("m4-pro-64gb", "memory_bandwidth_gb_per_s", 273),
    ],
)
def test_pinned_figures(gpu_id, field, expected):
    assert getattr(CATALOG.get(gpu_id), field) == expected


def test_pinned_nvidia_smi_totals():
    # nvidia-smi tables found by exact-string search: H100 80GB HBM3 81559MiB, H200 143771MiB, B200 183359MiB.
    assert CATALOG.get("h100-sxm-80gb").memory_reported.printed_as == "81559MiB"
    assert CATALOG.get("h200-sxm-141gb").memory_reported.printed_as == "143771MiB"
    assert CATALOG.get("b200-180gb").memory_reported.printed_as == "183359MiB"
    # rocm-smi --showmeminfo vram on an MI300X: 205822885888 bytes (191.7 GiB of the marketed 192 GB).
    assert CATALOG.get("mi300x-192gb").memory_bytes == 205_822_885_888


def test_no_sparsity_figures_slipped_in():
    # Vendors' headline H100 SXM numbers (1,979 BF16 / 3,958 FP8) are with sparsity; dense must be half.
    for gpu in CATALOG.all_gpus:
        bf16, fp8 = gpu.dense_bf16_tflops, gpu.dense_fp8_tflops
        if isinstance(bf16, float | int) and isinstance(fp8, float | int):
            assert fp8 == pytest.approx(2 * bf16, rel=0.02), gpu.id


def test_geforce_rates_are_the_fp32_accumulate_ones():
    """GeForce cards run BF16 with FP32 accumulate at half their FP16-accumulate rate; the catalog stores that half.

    FP16-accumulate (dense) rates as printed in the same NVIDIA tables: RTX 3090 142, RTX 4090 330.3, RTX 5090 419.
    """
    for gpu_id, fp16_accumulate in (("rtx-3090-24gb", 142.4), ("rtx-4090-24gb", 330.3), ("rtx-5090-32gb", 419)):
        assert CATALOG.get(gpu_id).dense_bf16_tflops == pytest.approx(fp16_accumulate / 2, rel=1e-3), gpu_id


def test_every_read_tensor_rate_names_its_row_and_derived_ones_show_the_multiplication():
    read = [gpu for gpu in CATALOG.gpus if gpu.dense_bf16_read is not None]
    assert {g.id for g in read} >= {"rtx-3090-24gb", "rtx-5090-32gb", "rtx-6000-ada-48gb", "rtx-5080-16gb",
                                    "rtx-5070-ti-16gb", "mi355x-288gb"}
    for gpu in read:
        assert gpu.dense_bf16_read.row and gpu.dense_bf16_read.printed and gpu.dense_bf16_read.verified.version
        if gpu.dense_bf16_read.derived:
            assert "x" in gpu.dense_bf16_read.arithmetic
    # RTX 5080: 84 SMs x 512 flops/SM/clock (the 5090's 209.5e12 / (170 x 2407 MHz)) x 2617 MHz.
    per_sm_per_clock = 209.5e12 / (170 * 2407e6)
    assert per_sm_per_clock == pytest.approx(512, rel=1e-3)
    assert CATALOG.get("rtx-5080-16gb").dense_bf16_tflops == pytest.approx(84 * 512 * 2.617e9 / 1e12, abs=0.01)
    assert CATALOG.get("rtx-5070-ti-16gb").dense_bf16_tflops == pytest.approx(70 * 512 * 2.452e9 / 1e12, abs=0.01)


def test_a_derived_rate_without_arithmetic_and_a_read_without_a_figure_are_rejected(tmp_path: Path):
    read = CATALOG.get("rtx-5080-16gb").dense_bf16_read
    with pytest.raises(ValueError, match="must show its arithmetic"):
        TensorRateRead.model_validate(read.model_dump() | {"arithmetic": ""})
    broken = tmp_path / "gpus.yaml"
    text = (KNOWLEDGE_DIR / "gpus.yaml").read_text()
    broken.write_text(text.replace("dense_bf16_tflops: 71.2", "dense_bf16_tflops: unknown", 1))
    with pytest.raises(KnowledgeError, match="must be a number"):
        load_yaml_file(broken, GpuCatalog)


def test_apple_configurations_expand_per_memory_option():
    chip = next(chip for chip in CATALOG.apple_chips if chip.id == "m3-ultra")
    assert [cfg.id for cfg in chip.configurations()] == ["m3-ultra-96gb", "m3-ultra-256gb", "m3-ultra-512gb"]
    assert all(cfg.unified_memory for cfg in chip.configurations())


def test_apple_working_set_observations_are_sourced_and_plausible():
    observations = CATALOG.apple_working_set.observations
    assert len(observations) >= 3
    for obs in observations:
        assert obs.source.startswith("https://github.com/")
        assert 0.5 < obs.share < 0.95
    # ollama/ollama#434: an M2 Max with 32 GB printed 21845.34 (MiB) = two thirds of 32 GiB.
    m2_max_32 = next(obs for obs in observations if obs.ram_gib == 32)
    assert m2_max_32.share == pytest.approx(2 / 3, abs=1e-6)


def test_machine_for_discrete_gpu_uses_reported_bytes_and_si_rates():
    machine = machine_for_gpu(CATALOG.get("h100-sxm-80gb"), n_devices=8)
    assert machine.device_memory_bytes == 81559 * MIB
    assert machine.n_devices == 8
    assert machine.memory_bandwidth_bytes_per_s == 3.35e12
    assert machine.dense_bf16_flops_per_s == pytest.approx(989.4e12)
    assert machine.gpu_id == "h100-sxm-80gb"


def test_machine_for_gpu_without_reported_memory_uses_marketed_gib():
    machine = machine_for_gpu(CATALOG.get("mi325x-256gb"))
    assert machine.device_memory_bytes == 256 * GIB
    assert machine.dense_bf16_flops_per_s == pytest.approx(1307.4e12)


def test_machine_for_apple_silicon_uses_the_default_gpu_share():
    gpu = CATALOG.get("m1-max-64gb")
    machine = machine_for_gpu(gpu, working_set=CATALOG.apple_working_set)
    # llama.cpp#1870: an M1 Max with 64 GB printed recommendedMaxWorkingSetSize = 49152.00 MiB.
    assert machine.device_memory_bytes == 49152 * MIB
    assert machine.host_ram_bytes == 64 * GIB
    assert machine.unified_memory
    assert machine.dense_bf16_flops_per_s == 10.617e12  # the sourced shader-ALU FP16 rate (metal-benchmarks README)


def test_apple_share_uses_the_nearest_observed_machine():
    working_set = CATALOG.apple_working_set
    # 24 GiB is equidistant from the 16 and 32 GiB machines: the larger one (21845.34 MiB of 32 GiB) wins.
    assert apple_default_gpu_bytes(24 * GIB, working_set) == int(24 * GIB * 21845.34 / (32 * 1024))
    assert apple_default_gpu_bytes(24 * GIB, working_set) == pytest.approx(16 * GIB, rel=1e-5)
    assert apple_default_gpu_bytes(512 * GIB, working_set) == int(512 * GIB * 110100.48 / (128 * 1024))


def test_machine_for_gpu_rejects_impossible_requests():
    with pytest.raises(ServewiseInputError):
        machine_for_gpu(CATALOG.get("l4-24gb"), n_devices=0)
    with pytest.raises(ServewiseInputError):
        machine_for_gpu(CATALOG.get("m4-max-40c-128gb"), n_devices=2, working_set=CATALOG.apple_working_set)
    with pytest.raises(ServewiseInputError):
        machine_for_gpu(CATALOG.get("m4-max-40c-128gb"))


def test_unknown_id_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="no-such-gpu"):
        CATALOG.get("no-such-gpu")


def test_broken_entry_names_file_entry_and_field(tmp_path: Path):
    broken = tmp_path / "gpus.yaml"
    shutil.copy(KNOWLEDGE_DIR / "gpus.yaml", broken)
    text = broken.read_text().replace("memory_bandwidth_gb_per_s: 3350", "memory_bandwidth_gb_per_s: -3350", 1)
    broken.write_text(text)
    with pytest.raises(KnowledgeError) as info:
        load_yaml_file(broken, GpuCatalog)
    message = str(info.value)
    assert "gpus.yaml" in message and "h100-sxm-80gb" in message and "memory_bandwidth_gb_per_s" in message


def test_duplicate_ids_are_rejected(tmp_path: Path):
    broken = tmp_path / "gpus.yaml"
    broken.write_text((KNOWLEDGE_DIR / "gpus.yaml").read_text().replace("id: l4-24gb", "id: l40s-48gb", 1))
    with pytest.raises(KnowledgeError, match="duplicate GPU id"):
        load_yaml_file(broken, GpuCatalog)


def test_ids_must_be_url_slugs(tmp_path: Path):
    broken = tmp_path / "gpus.yaml"
    broken.write_text((KNOWLEDGE_DIR / "gpus.yaml").read_text().replace("id: l4-24gb", "id: NVIDIA L4", 1))
    with pytest.raises(KnowledgeError, match="lowercase slug"):
        load_yaml_file(broken, GpuCatalog)


def test_catalog_and_calculators_import_without_streamlit():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['streamlit'] = None\n"
        "import knowledge.gpus, knowledge.loader, calculators.hardware.catalog, calculators.simulator.request_states\n"
        "knowledge.loader.load_knowledge().gpus.get('h100-sxm-80gb')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=KNOWLEDGE_DIR.parent, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_apple_gpu_throughput_is_sourced_for_m1_and_m2_and_unknown_where_nothing_was_found():
    chips = {chip.id: chip for chip in CATALOG.apple_chips}
    for cid in ("m1", "m1-pro", "m1-max", "m1-ultra", "m2", "m2-pro", "m2-max", "m2-ultra"):
        alu = chips[cid].gpu_throughput
        assert not isinstance(alu, str), cid
        assert alu.fp16_tflops == alu.fp32_tflops  # no matrix units: FP16 at the FP32 rate
        # 128 ALUs x 2 flops per core per clock at 1.278-1.398 GHz (metal-benchmarks README)
        assert 0.32 < alu.fp32_tflops / alu.gpu_cores < 0.36, cid
        assert all(cfg.gpu_alu_fp16_tflops == alu.fp16_tflops for cfg in chips[cid].configurations())
    for cid in ("m3", "m3-ultra", "m4-max-40c", "m5-max-40c"):
        assert chips[cid].gpu_throughput == "unknown"
        assert all(cfg.gpu_alu_fp16_tflops == "unknown" for cfg in chips[cid].configurations())


def test_a_derived_apple_throughput_must_show_its_arithmetic():
    from pydantic import ValidationError

    from knowledge.gpus import AppleGpuThroughput

    fields = {"gpu_cores": 8, "fp32_tflops": 2.6, "fp16_tflops": 2.6, "source": "x/y:z",
              "verified": {"version": "v", "date": "2026-12-01"}, "derived": True}
    with pytest.raises(ValidationError, match="arithmetic"):
        AppleGpuThroughput(**fields)
    assert AppleGpuThroughput(**fields, arithmetic="8 x 128 x 2 x 1.278 GHz").derived
