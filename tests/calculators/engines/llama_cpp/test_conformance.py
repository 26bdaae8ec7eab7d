"""plan_llamacpp against llama.cpp itself: its printed cache sizes, cells, layers and sequences, case by case.

llama-cpp-python 0.3.36 (requirements-test.txt) vendors llama.cpp 0c1e57098, the tree the rules in
calculators/engines/llama_cpp/plan.py were read from. Tiny GGUF files (tests/support/tiny_gguf.py) carry the KV
geometry of real models; each case creates a llama_context through the low-level API, captures the
log and compares every `llama_kv_cache: size = ...` / `llama_memory_recurrent: size = ...` line with
the plan, to the printed 0.01 MiB. Importing llama_cpp is deliberately unconditional: a missing
llama-cpp-python fails this module instead of skipping it.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from dataclasses import dataclass

import llama_cpp
import pytest
from gguf.constants import GGMLQuantizationType

from calculators.engines.llama_cpp.plan import FlashAttn, LlamaCppSettings, llamacpp_log_mib, plan_llamacpp
from tests.support.tiny_gguf import TinyAttentionModel, TinyJambaModel, TinyMambaModel, TinyMlaModel, TinyOpenElmModel

pytestmark = pytest.mark.llamacpp

# Geometry from the models' published configs; hidden sizes shrunk (they do not size any cache).
MODELS = {
    # Llama-3-8B: 32 query heads, 8 KV heads x 128, trained context 8192
    "llama3-8b": TinyAttentionModel("llama3-8b", "llama", 2, 32, 8, 128, 8192),
    # Phi-3-mini: multi-head attention, 32 KV heads x 96
    "phi3-mini": TinyAttentionModel("phi3-mini", "llama", 2, 32, 32, 96, 4096),
    # Phi-2-like head size 80: quantized K blocks of 32 do not divide it (flash attention refuses)
    "head80": TinyAttentionModel("head80", "llama", 2, 32, 32, 80, 2048),
    # Gemma-3-1B: 4 query / 1 KV head x 256, 5 of every 6 layers slide over 512 tokens, trained context 32768
    "gemma3-1b": TinyAttentionModel("gemma3-1b", "gemma3", 6, 4, 1, 256, 32768, sliding_window=512, swa_pattern=6),
    # Mistral-7B-v0.1: 8 KV heads x 128 and a 4096-token window on every layer, which llama.cpp's llama model ignores
    "mistral-7b-v0.1": TinyAttentionModel(
        "mistral-7b-v0.1", "llama", 2, 32, 8, 128, 32768, sliding_window=4096, config_slides_everywhere=True
    ),
    # Gemma-2-9B: 16 query / 8 KV heads x 256, every other layer slides over 4096 tokens
    "gemma2-9b": TinyAttentionModel("gemma2-9b", "gemma2", 4, 16, 8, 256, 8192, sliding_window=4096, swa_pattern=2),
}
# Mamba-130m: d_model 768, d_state 16, d_conv 4, dt_rank 48
MAMBA = TinyMambaModel("mamba-130m", 2, 768, 16, 4, 48)
# Jamba-like hybrid: Jamba's 8 KV heads x 128 in one layer of four, Mamba (d_state 16, d_conv 4) elsewhere
JAMBA = TinyJambaModel("jamba-like", 4, (2,), 8, 8, 128, 16, 4, 64)
# DeepSeek-V2-Lite attention: 16 heads, kv_lora_rank 512, rope 64, nope 128, v_head 128 (dense FFN, q LoRA added)
MLA = TinyMlaModel("deepseek-v2-lite", 2, 16, 512, 64, 128, 128)
# OpenELM-270M: 16 layers of 64-wide heads, 12-20 query and 3-5 KV heads by layer (V rows of different widths)
OPENELM = TinyOpenElmModel("openelm-270m", (12,) * 5 + (16,) * 7 + (20,) * 4, (3,) * 5 + (4,) * 7 + (5,) * 4, 64)

KV_LINE = re.compile(
    r"llama_kv_cache: size = +([\d.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+)/(\d+) seqs\), "
    r"K \((\w+)\): +([\d.]+) MiB, V \((\w+)\): +([\d.]+) MiB"
)
RS_LINE = re.compile(
    r"llama_memory_recurrent: size = +([\d.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+) seqs +\d+ rs_seq\), "
    r"R \((\w+)\): +([\d.]+) MiB, S \((\w+)\): +([\d.]+) MiB"
)
FLASH_ATTN_TYPE = {FlashAttn.AUTO: -1, FlashAttn.OFF: 0, FlashAttn.ON: 1}  # include/llama.h llama_flash_attn_type

_log_lines: list[str] = []


@llama_cpp.llama_log_callback
def _capture_log(level, text, user_data):
    _log_lines.append(text.decode("utf-8", "replace"))


@dataclass(frozen=True)
class Case:
    """One llama_context configuration, in llama-server's vocabulary."""

    ctx: int
    seqs: int
    unified: bool
    type_k: str = "f16"
    type_v: str = "f16"
    fa: FlashAttn = FlashAttn.AUTO
    swa_full: bool = False
    ubatch: int = 512

    def settings(self) -> LlamaCppSettings:
        # fit=False: the library alone never resolves -c 0 per stream (that is llama-server's --fit)
        return LlamaCppSettings(
            ctx_size=self.ctx,
            parallel=self.seqs,
            kv_unified=self.unified,
            cache_type_k=self.type_k,
            cache_type_v=self.type_v,
            flash_attn=self.fa,
            swa_full=self.swa_full,
            ubatch_size=self.ubatch,
            fit=False,
        )

    def __str__(self) -> str:
        return (
            f"c{self.ctx}-np{self.seqs}-{'kvu' if self.unified else 'split'}-{self.type_k}/{self.type_v}"
            f"-fa{self.fa.value}{'-swafull' if self.swa_full else ''}-ub{self.ubatch}"
        )


def _attention_cases() -> list[tuple[str, Case]]:
    types = [
        ("f16", "f16", FlashAttn.AUTO),
        ("f16", "f16", FlashAttn.OFF),
        ("q8_0", "q8_0", FlashAttn.ON),
        ("q4_0", "q4_1", FlashAttn.AUTO),  # quantized V with auto: llama.cpp turns flash attention on
        ("q5_0", "f16", FlashAttn.OFF),  # quantized K alone needs no flash attention
        ("f16", "q4_0", FlashAttn.OFF),  # refused: quantized V without flash attention
        ("bf16", "iq4_nl", FlashAttn.AUTO),
        ("f32", "q5_1", FlashAttn.ON),
    ]
    cases = []
    for ctx, seqs, unified in itertools.product([0, 300, 4096, 10000], [1, 3, 4], [False, True]):
        for type_k, type_v, fa in types:
            cases.append(("llama3-8b", Case(ctx, seqs, unified, type_k, type_v, fa)))
    for ctx, seqs, unified in itertools.product([1000, 16000], [1, 5], [False, True]):
        cases.append(("llama3-8b", Case(ctx, seqs, unified)))
        cases.append(("phi3-mini", Case(ctx, seqs, unified, "q4_0", "q4_0", FlashAttn.AUTO)))
    for ctx, seqs, unified in itertools.product([2048, 10000], [1, 2], [False, True]):
        cases.append(("mistral-7b-v0.1", Case(ctx, seqs, unified)))
    for type_k, type_v, fa in [
        ("q8_0", "f16", FlashAttn.AUTO),  # refused: K blocks of 32 do not divide head size 80
        ("q8_0", "f16", FlashAttn.OFF),  # allowed: without flash attention only the 2560-wide row must divide
        ("f16", "q4_0", FlashAttn.ON),  # refused: V blocks do not divide 80
        ("f16", "f16", FlashAttn.ON),
    ]:
        cases.append(("head80", Case(2048, 2, False, type_k, type_v, fa)))
    swa_grid = itertools.product(
        ["gemma3-1b", "gemma2-9b"], [0, 300, 1024, 5000], [1, 3], [False, True], [False, True], [512, 128]
    )
    for name, ctx, seqs, unified, swa_full, ubatch in swa_grid:
        cases.append((name, Case(ctx, seqs, unified, swa_full=swa_full, ubatch=ubatch)))
    for name, fa in itertools.product(["gemma3-1b", "gemma2-9b"], [FlashAttn.OFF, FlashAttn.ON]):
        cases.append((name, Case(8192, 2, False, "q8_0", "q8_0" if fa is FlashAttn.ON else "f16", fa)))
    return cases


@pytest.fixture(scope="module")
def loaded_models(tmp_path_factory):
    """Every tiny model written and loaded once; freed at the end of the module."""
    llama_cpp.llama_log_set(_capture_log, ctypes.c_void_p())
    llama_cpp.llama_backend_init()
    folder = tmp_path_factory.mktemp("gguf")
    loaded = {}
    for name, spec in [*MODELS.items(), *((m.name, m) for m in (MAMBA, JAMBA, MLA, OPENELM))]:
        path = spec.write(folder / f"{name}.gguf")
        params = llama_cpp.llama_model_default_params()
        model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        assert model, f"llama.cpp could not load {name}: {''.join(_log_lines[-5:])}"
        loaded[name] = (model, spec.architecture())
    yield loaded
    for model, _ in loaded.values():
        llama_cpp.llama_model_free(model)


def _run(model, case: Case) -> tuple[dict | None, list[str]]:
    """Create and free one llama_context; returns its sizes (None if refused) and the log lines."""
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = case.ctx
    params.n_seq_max = case.seqs
    params.kv_unified = case.unified
    params.swa_full = case.swa_full
    params.n_ubatch = case.ubatch
    params.type_k = GGMLQuantizationType[case.type_k.upper()].value
    params.type_v = GGMLQuantizationType[case.type_v.upper()].value
    params.flash_attn_type = FLASH_ATTN_TYPE[case.fa]
    params.n_threads = params.n_threads_batch = 1
    _log_lines.clear()
    ctx = llama_cpp.llama_init_from_model(model, params)
    lines = list(_log_lines)
    if not ctx:
        return None, lines
    sizes = {
        "n_ctx": llama_cpp.llama_n_ctx(ctx),
        "n_ctx_seq": llama_cpp.llama_n_ctx_seq(ctx),
        "n_seq": llama_cpp.llama_n_seq_max(ctx),
    }
    llama_cpp.llama_free(ctx)
    return sizes, lines


def _mib(n_bytes: int) -> str:
    return f"{llamacpp_log_mib(n_bytes):.2f}"


def _printed_caches(lines: list[str]) -> list[tuple[str, ...]]:
    """Every KV and recurrent size line llama.cpp printed, in order, as (kind, fields...)."""
    found = []
    for line in lines:
        if match := KV_LINE.search(line):
            found.append(("kv", *match.groups()))
        elif match := RS_LINE.search(line):
            found.append(("recurrent", *match.groups()))
    return found


def _expected_caches(plan) -> list[tuple[str, ...]]:
    """The same fields from the plan, formatted as llama.cpp prints them."""
    expected = []
    for c in plan.caches:
        sizes = (_mib(c.total_bytes), str(c.cells), str(c.layers), str(c.seqs))
        types = (c.type_k, _mib(c.k_bytes), c.type_v, _mib(c.v_bytes))
        if c.name == "recurrent":
            expected.append(("recurrent", *sizes, *types))
        else:
            expected.append(("kv", *sizes, str(plan.n_stream), *types))
    return expected


def _check(model, arch, case: Case) -> None:
    plan = plan_llamacpp(arch, case.settings())
    sizes, lines = _run(model, case)

    if plan.refusal:
        assert sizes is None, f"servewise predicts a refusal ({plan.refusal}) but llama.cpp created the context"
        assert any(plan.refusal in line for line in lines), f"llama.cpp refused with other words: {lines[-3:]}"
        return
    assert sizes is not None, f"llama.cpp refused: {''.join(lines[-3:])}"
    assert (sizes["n_ctx"], sizes["n_ctx_seq"], sizes["n_seq"]) == (plan.n_ctx, plan.n_ctx_seq, plan.n_seq)
    assert _printed_caches(lines) == _expected_caches(plan)


@pytest.mark.parametrize(("model_name", "case"), _attention_cases(), ids=lambda v: str(v))
def test_kv_cache_lines_match_llamacpp(loaded_models, model_name, case):
    _check(*loaded_models[model_name], case)


@pytest.mark.parametrize("seqs", [1, 3, 8])
def test_recurrent_state_line_matches_llamacpp(loaded_models, seqs):
    _check(*loaded_models[MAMBA.name], Case(2048, seqs, False))


@pytest.mark.parametrize(
    "case",
    [Case(ctx, seqs, unified, fa=fa) for ctx, seqs, unified, fa in itertools.product(
        [0, 700, 5000], [1, 3], [False, True], [FlashAttn.AUTO, FlashAttn.OFF]
    )] + [Case(5000, 2, False, "q8_0", "q4_0", FlashAttn.ON)],
    ids=str,
)  # fmt: skip
def test_hybrid_kv_and_recurrent_lines_match_llamacpp(loaded_models, case):
    _check(*loaded_models[JAMBA.name], case)


@pytest.mark.parametrize(
    "case",
    [Case(ctx, seqs, unified, type_k, type_v, fa) for (ctx, seqs, unified), (type_k, type_v, fa) in itertools.product(
        [(4096, 1, False), (5000, 3, False), (5000, 3, True)],
        [
            ("f16", "f16", FlashAttn.AUTO),
            ("f16", "f16", FlashAttn.OFF),
            ("q8_0", "q8_0", FlashAttn.ON),
            ("q8_0", "f16", FlashAttn.AUTO),  # refused: MLA needs one type for K and V
            ("q4_0", "q4_0", FlashAttn.OFF),  # refused: quantized V without flash attention
        ],
    )],
    ids=str,
)  # fmt: skip
def test_mla_latent_cache_line_matches_llamacpp(loaded_models, case):
    _check(*loaded_models[MLA.name], case)


@pytest.mark.parametrize(
    "case",
    [Case(ctx, seqs, unified, type_k, type_v, fa) for (ctx, seqs, unified), (type_k, type_v, fa) in itertools.product(
        [(512, 1, False), (5000, 3, False), (5000, 3, True)],
        [
            ("f16", "f16", FlashAttn.AUTO),
            ("f16", "f16", FlashAttn.OFF),  # V rows padded to the widest layer's 5 x 64
            ("q8_0", "f16", FlashAttn.OFF),
            ("q8_0", "q8_0", FlashAttn.ON),
        ],
    )],
    ids=str,
)  # fmt: skip
def test_per_layer_kv_heads_and_v_padding_match_llamacpp(loaded_models, case):
    _check(*loaded_models[OPENELM.name], case)


# Draft models for -md: Llama-3.2-1B's 8 KV heads x 64 (trained context shrunk to 2048, below the target's
# 8192, so a draft planned from its own trained context would differ), and Gemma-3-1B drafting for a Gemma 2.
DRAFTS = {
    "llama3.2-1b": TinyAttentionModel("llama3.2-1b", "llama", 2, 32, 8, 64, 2048),
    "gemma3-1b-draft": TinyAttentionModel("gemma3-1b-draft", "gemma3", 6, 4, 1, 256, 32768, sliding_window=512,
                                          swa_pattern=6),
}


@pytest.fixture(scope="module")
def draft_models(loaded_models, tmp_path_factory):
    """The draft GGUFs written and loaded once: name -> (model, path)."""
    folder = tmp_path_factory.mktemp("gguf-draft")
    loaded = {}
    for name, spec in DRAFTS.items():
        path = spec.write(folder / f"{name}.gguf")
        model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
        assert model, f"llama.cpp could not load {name}: {''.join(_log_lines[-5:])}"
        loaded[name] = (model, path)
    yield loaded
    for model, _ in loaded.values():
        llama_cpp.llama_model_free(model)


def _run_with_draft(target, draft, case: Case, draft_k: str, draft_v: str) -> tuple[int, list[str]]:
    """The server's two contexts: the target's, then the draft's with n_ctx = llama_n_ctx(target context)
    and the draft cache types (common/speculative.cpp common_speculative_init_result); the draft's log lines."""
    params = llama_cpp.llama_context_default_params()
    params.n_ctx, params.n_seq_max, params.kv_unified = case.ctx, case.seqs, case.unified
    params.n_ubatch = case.ubatch
    params.swa_full = case.swa_full  # llama-server passes its --swa-full (off); the library's default is on
    params.type_k = params.type_v = GGMLQuantizationType.F16.value
    params.flash_attn_type = FLASH_ATTN_TYPE[case.fa]
    params.n_threads = params.n_threads_batch = 1
    ctx_tgt = llama_cpp.llama_init_from_model(target, params)
    assert ctx_tgt, f"llama.cpp refused the target context: {''.join(_log_lines[-3:])}"
    target_n_ctx = llama_cpp.llama_n_ctx(ctx_tgt)
    params.n_ctx = target_n_ctx
    params.type_k = GGMLQuantizationType[draft_k.upper()].value
    params.type_v = GGMLQuantizationType[draft_v.upper()].value
    _log_lines.clear()
    ctx_dft = llama_cpp.llama_init_from_model(draft, params)
    lines = list(_log_lines)
    assert ctx_dft, f"llama.cpp refused the draft context: {''.join(lines[-3:])}"
    n_ctx_dft = llama_cpp.llama_n_ctx(ctx_dft)
    llama_cpp.llama_free(ctx_dft)
    llama_cpp.llama_free(ctx_tgt)
    return n_ctx_dft, lines


@pytest.mark.parametrize(
    ("target_name", "draft_name", "case", "draft_types"),
    [("llama3-8b", "llama3.2-1b", Case(ctx, seqs, unified, fa=fa), types)
     for ctx, seqs, unified, fa, types in itertools.product(
        [0, 300, 10000], [1, 3, 4], [False, True], [FlashAttn.AUTO, FlashAttn.ON],
        [("f16", "f16"), ("q8_0", "q8_0")])
     if not (types == ("q8_0", "q8_0") and fa is FlashAttn.AUTO and seqs == 3)]
    + [("gemma2-9b", "gemma3-1b-draft", Case(ctx, seqs, unified, ubatch=ubatch), ("f16", "f16"))
       for ctx, seqs, unified, ubatch in itertools.product([0, 5000], [1, 3], [False, True], [512, 128])],
    ids=str,
)  # fmt: skip
def test_draft_context_kv_lines_match_llamacpp(loaded_models, draft_models, target_name, draft_name, case,
                                               draft_types):
    """-md: the plan's draft context (read from the draft GGUF by draft_from_path) against the second
    llama_context llama-server creates for it, line for line."""
    target, target_arch = loaded_models[target_name]
    draft, draft_path = draft_models[draft_name]
    settings = case.settings().model_copy(update={
        "spec_draft_model": str(draft_path), "spec_draft_type_k": draft_types[0], "spec_draft_type_v": draft_types[1],
    })
    plan = plan_llamacpp(target_arch, settings)
    assert plan.draft is not None, [n.message for n in plan.notes]
    n_ctx_dft, lines = _run_with_draft(target, draft, case, *draft_types)
    assert n_ctx_dft == plan.draft.n_ctx == plan.n_ctx
    assert _printed_caches(lines) == _expected_caches(plan.draft)
