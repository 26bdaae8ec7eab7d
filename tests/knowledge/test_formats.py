"""knowledge/formats.yaml: validation, sources, matrix completeness and the statuses the product relies on."""

import copy
from pathlib import Path

import pytest
import yaml

from calculators.model.ggml_types import ggml_block
from calculators.model.weights import scheme_bits_per_weight
from knowledge.common import KnowledgeError
from knowledge.formats import PRIMARY_ENGINE_IDS, CompatStatus, FormatsSection
from knowledge.loader import KNOWLEDGE_DIR, load_knowledge, load_yaml_file

FORMATS = load_knowledge().formats
YAML_PATH = KNOWLEDGE_DIR / "formats.yaml"
RAW = yaml.safe_load(YAML_PATH.read_text(encoding="utf-8"))  # parsed once; each broken copy is a deep copy


def _sourced_records():
    yield from FORMATS.file_formats
    yield from FORMATS.quantizations
    yield from FORMATS.file_mixes
    yield from FORMATS.cells


def test_every_fact_has_a_source_and_a_version():
    for record in _sourced_records():
        assert len(record.source) >= 3, record
        assert record.verified.version.strip(), record
        assert record.verified.date.year >= 2026, record


def test_every_cell_references_known_engine_and_column():
    engine_ids = {e.id for e in FORMATS.engines}
    column_ids = {c.id for c in FORMATS.columns}
    for cell in FORMATS.cells:
        assert cell.engine in engine_ids
        assert cell.target in column_ids


def test_matrix_is_complete_for_the_five_engines():
    assert {e.id for e in FORMATS.engines if not e.secondary} == set(PRIMARY_ENGINE_IDS)
    for engine in PRIMARY_ENGINE_IDS:
        for column in FORMATS.columns:
            assert FORMATS.cell(engine, column.id) is not None, (engine, column.id)


def test_file_formats_and_quantizations_are_separate_columns():
    kinds = {c.id: c.kind for c in FORMATS.columns}
    assert kinds["gguf"] == kinds["safetensors"] == kinds["mlx-safetensors"] == "file-format"
    assert kinds["awq"] == kinds["fp8"] == kinds["gguf-k-quants"] == "quantization"
    # GGUF is a container, not a precision: it carries F32/F16/BF16 as well as block quantizations.
    in_gguf = {q.id for q in FORMATS.quantizations if "gguf" in q.containers}
    assert {"fp32", "fp16", "bf16", "q8_0", "q4_k", "iq2_xxs"} <= in_gguf


@pytest.mark.parametrize(
    ("engine", "target", "status"),
    [
        # vLLM v0.33.0 has no GGUF method (quantization/__init__.py); vllm-gguf-plugin's README calls it experimental.
        ("vllm", "gguf", CompatStatus.VIA_PLUGIN),
        ("vllm", "gguf-k-quants", CompatStatus.VIA_PLUGIN),
        # vLLM AWQ/GPTQ/FP8 in tree: quantization/auto_awq.py, auto_gptq.py, fp8.py (v0.33.0 wheel).
        ("vllm", "awq", CompatStatus.NATIVE),
        ("vllm", "fp8", CompatStatus.NATIVE),
        ("vllm", "mlx-affine", CompatStatus.NOT_SUPPORTED),
        # llama.cpp is GGUF only; convert_hf_to_gguf.py for Safetensors (conversion/base.py, 0c1e57098).
        ("llama-cpp", "gguf", CompatStatus.NATIVE),
        ("llama-cpp", "safetensors", CompatStatus.CONVERT_FIRST),
        ("llama-cpp", "awq", CompatStatus.NOT_SUPPORTED),
        # Ollama imports GGUF and converts Safetensors (docs/import.mdx, v0.33.0-rc2).
        ("ollama", "gguf", CompatStatus.NATIVE),
        ("ollama", "safetensors", CompatStatus.CONVERT_FIRST),
        ("ollama", "awq", CompatStatus.NOT_SUPPORTED),
        # MLX LM repacks AWQ/GPTQ on load and never loads GGUF (mlx_lm/utils.py, v0.32.2 wheel).
        ("mlx-lm", "awq", CompatStatus.NATIVE),
        ("mlx-lm", "gguf", CompatStatus.NOT_SUPPORTED),
        ("mlx-lm", "mlx-affine", CompatStatus.NATIVE),
        # SGLang's in-tree GGUF method (python/sglang/srt/layers/quantization/gguf.py, v0.5.23); its opt-in MLX
        # backend (SGLANG_USE_MLX=1, layers/quantization/mlx.py) reads 4/8-bit MLX checkpoints on Apple silicon.
        ("sglang", "gguf", CompatStatus.NATIVE),
        ("sglang", "mlx-safetensors", CompatStatus.EXPERIMENTAL),
        # bitsandbytes left vLLM for a plugin (quantization/__init__.py at v0.33.0), as engines.yaml says.
        ("vllm", "bitsandbytes", CompatStatus.VIA_PLUGIN),
        ("ollama", "mlx-safetensors", CompatStatus.EXPERIMENTAL),
    ],
)
def test_pinned_statuses(engine, target, status):
    assert FORMATS.cell(engine, target).status is status


def test_vllm_gguf_note_says_experimental():
    assert "experimental" in FORMATS.cell("vllm", "gguf").note


def test_microscaling_layouts_match_ggml_block_sizes():
    # The OCP MXFP4 layout (4-bit + E8M0 per 32) and ggml's MXFP4 block (17 bytes / 32) must agree; same for NVFP4.
    assert (
        float(scheme_bits_per_weight(FORMATS.quantization("mxfp4")))
        == float(ggml_block("MXFP4").bits_per_weight)
        == 4.25
    )
    assert (
        float(scheme_bits_per_weight(FORMATS.quantization("nvfp4")))
        == float(ggml_block("NVFP4").bits_per_weight)
        == 4.5
    )


def test_file_mixes_are_at_least_their_main_type():
    # llama-quantize promotes some tensors and keeps norms in F32, so a file's bpw can't be below its main type.
    for mix in FORMATS.file_mixes:
        main = float(scheme_bits_per_weight(FORMATS.quantization(mix.main_type)))
        assert mix.measured_bits_per_weight >= main, mix.id


def test_every_quantization_column_has_members():
    for column in FORMATS.columns:
        if column.kind == "quantization":
            assert FORMATS.members(column.id), column.id


def _write_broken(tmp_path: Path, mutate) -> Path:
    data = copy.deepcopy(RAW)
    mutate(data)
    path = tmp_path / "formats.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_cell_with_unknown_engine_is_refused(tmp_path):
    def mutate(data):
        data["cells"][0]["engine"] = "ollamaa"

    with pytest.raises(KnowledgeError, match=r"formats\.yaml.*engine 'ollamaa' is not a matrix engine"):
        load_yaml_file(_write_broken(tmp_path, mutate), FormatsSection)


def test_bad_status_names_file_entry_and_field(tmp_path):
    def mutate(data):
        data["cells"][3]["status"] = "works"

    with pytest.raises(KnowledgeError, match=r"formats\.yaml: cells entry #4, field 'status'"):
        load_yaml_file(_write_broken(tmp_path, mutate), FormatsSection)


def test_missing_cell_is_refused(tmp_path):
    def mutate(data):
        data["cells"] = [c for c in data["cells"] if not (c["engine"] == "sglang" and c["target"] == "awq")]

    with pytest.raises(KnowledgeError, match=r"'sglang' has no cell for \['awq'\]"):
        load_yaml_file(_write_broken(tmp_path, mutate), FormatsSection)


def test_unknown_ggml_type_is_refused(tmp_path):
    def mutate(data):
        q4 = next(q for q in data["quantizations"] if q["id"] == "q4_0")
        q4["ggml_type"] = "Q4_9"

    with pytest.raises(KnowledgeError, match=r"entry 'q4_0'.*Q4_9"):
        load_yaml_file(_write_broken(tmp_path, mutate), FormatsSection)


def test_section_imports_without_streamlit():
    import subprocess
    import sys

    code = "import sys, knowledge.formats, calculators.model.weights; assert 'streamlit' not in sys.modules"
    repo = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=repo)
