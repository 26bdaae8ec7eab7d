"""engines.yaml and formats.yaml give one answer per engine x format, and every engine fact is read at the KB's
newest version of that engine (knowledge/currency.py). Each check is shown failing on a deliberately broken copy
of the knowledge directory, so a green run means something.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from knowledge.common import KnowledgeError
from knowledge.currency import (
    compare_versions,
    engine_currency,
    engine_facts,
    format_disagreements,
    repository_of,
)
from knowledge.formats import PRIMARY_ENGINE_IDS, CompatStatus
from knowledge.loader import KNOWLEDGE_DIR, load_knowledge

KB = load_knowledge()


def _copy_knowledge(tmp_path: Path) -> Path:
    target = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, target, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the edit anchor must be unique in {path.name}: {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def assert_engines_and_formats_agree(kb) -> None:
    """The check the suite relies on, kept callable so it can be shown to fail on a broken copy."""
    assert format_disagreements(kb.engines, kb.formats) == ()


def assert_no_fact_older_than_the_newest_read(kb) -> None:
    stale = [(c.engine, c.newest_read, f.where, f.verified.version) for c in engine_currency(kb) for f in c.older]
    assert stale == [], f"facts read at an older version than the engine's newest read: {stale}"


def assert_every_primary_cell_cites_the_pinned_version(kb) -> None:
    cells = [f for f in engine_facts(kb) if f.where.startswith("formats.yaml cell ")]
    not_pinned = [(f.where, f.verified.version) for f in cells if f.currency != "current"]
    assert not_pinned == []
    cited = {f.where.removeprefix("formats.yaml cell ").split(".")[0] for f in cells}
    expected = {f"{e}/{c.id}" for e in PRIMARY_ENGINE_IDS for c in kb.formats.columns}
    assert expected <= cited, f"cells whose source is not the engine's repository: {sorted(expected - cited)}"


# ------------------------------------------------------------------------------------------ the real KB
def test_engines_yaml_and_the_formats_matrix_agree():
    assert_engines_and_formats_agree(KB)


def test_no_engine_fact_is_older_than_the_newest_read():
    assert_no_fact_older_than_the_newest_read(KB)


def test_every_primary_matrix_cell_cites_the_pinned_engine_source():
    assert_every_primary_cell_cites_the_pinned_version(KB)


def test_currency_is_exposed_per_engine_as_read_at_and_newest_read():
    by_engine = {c.engine: c for c in engine_currency(KB)}
    assert set(by_engine) == set(PRIMARY_ENGINE_IDS)
    # knowledge/engines.yaml versions_read
    assert by_engine["vllm"].newest_read == "v0.33.0"
    assert by_engine["sglang"].newest_read == "v0.5.23"
    for currency in by_engine.values():
        assert currency.facts > 10
        assert currency.oldest_read == currency.newest_read
        assert currency.up_to_date


# ------------------------------------------------------------------------------------ proven able to fail
def test_a_contradictory_engines_yaml_is_refused_by_the_loader(tmp_path):
    root = _copy_knowledge(tmp_path)
    # engines.yaml's vLLM bitsandbytes item says via-plugin, like the matrix; make it claim native.
    text = (root / "engines.yaml").read_text(encoding="utf-8")
    match = re.search(r"- id: bitsandbytes\n\s+kind: quantization\n\s+status: via-plugin", text)
    assert match, "vLLM's bitsandbytes item moved; update the anchor"
    broken = text[: match.start()] + match.group(0).replace("via-plugin", "native") + text[match.end():]
    (root / "engines.yaml").write_text(broken, encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"engines\.yaml and formats\.yaml disagree on vllm/bitsandbytes"):
        load_knowledge(str(root))


def test_the_agreement_check_fails_when_the_matrix_changes_alone(tmp_path):
    root = _copy_knowledge(tmp_path)
    _edit(root / "formats.yaml", "  - engine: llama-cpp\n    target: awq\n    status: not-supported",
          "  - engine: llama-cpp\n    target: awq\n    status: convert-first")
    from knowledge.formats import FormatsSection
    from knowledge.loader import load_yaml_file

    formats = load_yaml_file(root / "formats.yaml", FormatsSection)
    kb = KB.model_copy(update={"formats": formats})
    with pytest.raises(AssertionError):
        assert_engines_and_formats_agree(kb)


def test_a_stale_cell_is_reported_and_fails_the_currency_checks(tmp_path):
    root = _copy_knowledge(tmp_path)
    _edit(root / "formats.yaml",
          '    source: "vllm-project/vllm:vllm/config/load.py (load_format auto)"\n    verified: *vllm_read',
          '    source: "vllm-project/vllm:vllm/config/load.py (load_format auto)"\n'
          "    verified: {version: v0.32.0, date: 2026-12-01}")
    kb = load_knowledge(str(root))
    vllm = next(c for c in engine_currency(kb) if c.engine == "vllm")
    assert (vllm.oldest_read, vllm.newest_read) == ("v0.32.0", "v0.33.0")
    assert [f.where for f in vllm.older] == ["formats.yaml cell vllm/safetensors"]
    with pytest.raises(AssertionError, match="vllm"):
        assert_no_fact_older_than_the_newest_read(kb)
    with pytest.raises(AssertionError):
        assert_every_primary_cell_cites_the_pinned_version(kb)


@pytest.mark.parametrize(
    ("fact", "read", "expected"),
    [
        ("v0.33.0", "v0.33.0", "current"),
        ("0.32.0 (d78bf58e)", "v0.32.2", "older"),
        ("v0.33.0-rc2", "v0.33.0-rc2", "current"),
        ("v0.33.0-rc1", "v0.33.0-rc2", "older"),
        ("v0.34.0", "v0.33.0", "newer"),
        ("0c1e57098", "0c1e57098", "current"),
        ("0c1e570", "0c1e57098", "current"),
        ("0024aa74", "0c1e57098", "unordered"),
        ("docs main via code index", "v0.5.23", "unordered"),
        ("v0.32.2; mlx v0.32.1-26 (846d1762)", "v0.32.2", "current"),
    ],
)
def test_version_comparison(fact, read, expected):
    assert compare_versions(fact, read) == expected


def test_sources_are_attributed_by_repository():
    assert repository_of("vllm-project/vllm:vllm/config/cache.py; other") == "vllm-project/vllm"
    assert repository_of("https://raw.githubusercontent.com/vllm-project/vllm/main/docs/x.md") == "vllm-project/vllm"
    assert repository_of("https://docs.vllm.ai/en/latest/") is None
    assert repository_of("gguf.constants.GGML_QUANT_SIZES (F32)") is None


# --------------------------------------------------------------------------- hardware-dependent cells
# Limits read at the pinned versions (knowledge/formats.yaml cites each file).
@pytest.mark.parametrize(
    ("engine", "target", "backends", "cc", "arch", "status", "refused_by"),
    [
        # vLLM auto_awq.py get_min_capability 75: a V100 (7.0) is refused, a T4 (7.5) is not.
        ("vllm", "awq", ("cuda",), 7.0, None, CompatStatus.NOT_SUPPORTED, "compute-capability"),
        ("vllm", "awq", ("cuda",), 7.5, None, CompatStatus.NATIVE, None),
        # vLLM fp8: tensor cores from 8.9 (platforms/cuda.py supports_fp8), Marlin weight-only from 7.5.
        ("vllm", "fp8", ("cuda",), 9.0, None, CompatStatus.NATIVE, None),
        ("vllm", "fp8", ("cuda",), 7.0, None, CompatStatus.NOT_SUPPORTED, "compute-capability"),
        # vLLM modelopt_fp4 is not in the Intel XPU platform's supported_quantization.
        ("vllm", "nvfp4", ("intel-xpu",), None, None, CompatStatus.NOT_SUPPORTED, None),
        # SGLang: gptq and bitsandbytes are missing from rocm_supported_quantization (configs/model_config.py).
        ("sglang", "gptq", ("rocm", "vulkan"), None, "gfx942", CompatStatus.NOT_SUPPORTED, None),
        ("sglang", "bitsandbytes", ("rocm",), None, "gfx942", CompatStatus.NOT_SUPPORTED, None),
        # SGLang's OCP mxfp4 method is registered on AMD only when is_gfx95_supported().
        ("sglang", "mxfp4", ("rocm",), None, "gfx942", CompatStatus.NOT_SUPPORTED, "gpu-arch"),
        ("sglang", "mxfp4", ("rocm",), None, "gfx950", CompatStatus.NATIVE, None),
        # SGLang's MLX backend (SGLANG_USE_MLX=1) runs MLX checkpoints on Apple silicon only.
        ("sglang", "mlx-safetensors", ("metal",), None, None, CompatStatus.EXPERIMENTAL, None),
        ("sglang", "mlx-safetensors", ("cuda",), 9.0, None, CompatStatus.NOT_SUPPORTED, "backend"),
        # A cell that does not depend on hardware gives its status everywhere.
        ("llama-cpp", "gguf-k-quants", ("metal",), None, None, CompatStatus.NATIVE, None),
    ],
)
def test_hardware_verdicts(engine, target, backends, cc, arch, status, refused_by):
    verdict = KB.formats.cell(engine, target).on_hardware(backends, compute_capability=cc, gpu_arch=arch)
    assert verdict.status is status
    if refused_by is not None:
        assert verdict.refused_by == refused_by
    assert verdict.source and verdict.verified.version


def test_a_refusal_names_the_capability_it_needs():
    verdict = KB.formats.cell("vllm", "awq").on_hardware(("cuda",), compute_capability=7.0)
    assert (verdict.required_compute_capability, verdict.actual_compute_capability) == (7.5, 7.0)
    assert "auto_awq.py" in verdict.source


def test_no_hardware_gives_the_headline_status():
    cell = KB.formats.cell("sglang", "mlx-safetensors")
    assert cell.on_hardware(None).status is cell.status is CompatStatus.EXPERIMENTAL


def test_a_headline_status_better_than_every_path_is_refused(tmp_path):
    root = _copy_knowledge(tmp_path)
    _edit(root / "formats.yaml", "  - engine: sglang\n    target: mlx-safetensors\n    status: experimental",
          "  - engine: sglang\n    target: mlx-safetensors\n    status: native")
    with pytest.raises(KnowledgeError, match="most direct hardware path is 'experimental'"):
        load_knowledge(str(root))
