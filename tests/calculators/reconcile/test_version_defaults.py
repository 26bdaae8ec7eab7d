"""Settings a log does not print, taken at the default of the engine release the log states."""

from __future__ import annotations

from calculators.model.catalog import architecture_from_catalog
from calculators.reconcile.check import reconcile_log
from calculators.reconcile.log.parse import parse_startup_log
from calculators.reconcile.result import RowStatus, Rule
from calculators.reconcile.version_defaults import default_for, release_key
from knowledge.log_help import load_log_captures, load_version_defaults

# The build line of llama.cpp issue 10560 (b4202) before llama.cpp lines of that era (format of PR 5104's
# comment and issue 10547): hand-made, since no stored log of an old build prints its slots without -np.
OLD_BUILD = """build: 4202 (9f912511) with cc (Ubuntu 13.2.0-23ubuntu4) 13.2.0 for x86_64-linux-gnu
llama_new_context_with_model: n_ctx         = 4096
llama_kv_cache_init:      CUDA0 KV buffer size =   512.00 MiB
llama_new_context_with_model: KV self size  =  512.00 MiB, K (f16):  256.00 MiB, V (f16):  256.00 MiB
slot         init: id  0 | task -1 | new slot n_ctx_slot = 4096
"""


def test_old_llama_server_builds_had_one_slot():
    result = reconcile_log(parse_startup_log(OLD_BUILD), arch=architecture_from_catalog("llama-3.1-8b"))
    slots = next(r for r in result.rows if r.figure == "slots")
    assert slots.status is RowStatus.EXPLAINED and slots.rule is Rule.VERSION  # today's default: 4 slots
    assert any("b4202" in text for text in result.assumptions)
    assert all(r.status is RowStatus.EXACT for r in result.rows if r.figure != "slots")


def test_version_ranges_from_the_knowledge_base():
    assert release_key("b4202 (9f912511)", "build") == (4202,)
    assert default_for("ollama", "context_length", "0.6.6")[0].value == 2048
    assert default_for("ollama", "context_length", "0.12.7")[0].value == 4096
    assert default_for("ollama", "num_parallel", "0.12.7")[0].value == 1
    assert default_for("llama-cpp", "parallel", "b6646")[0].value == 1
    assert default_for("llama-cpp", "parallel", "b7000") is None  # b6647..b7078 not read: today's default applies
    assert default_for("llama-cpp", "parallel", "b7079")[0].value == -1  # auto: 4 slots, unified KV
    assert default_for("llama-cpp", "parallel", "b9265")[0].value == -1
    for entry in load_version_defaults():
        assert entry.ranges and all(r.source and r.verified for r in entry.ranges)


def test_every_engine_has_a_capture_command():
    captures = load_log_captures()
    assert {c.engine for c in captures} == {"ollama", "llama-cpp", "vllm", "sglang", "mlx-lm"}
    ollama = {c.platform: c.command for c in captures if c.engine == "ollama"}
    assert ollama["linux-systemd"].startswith("journalctl -u ollama")
    assert "OLLAMA_DEBUG=1" in ollama["debug"]
    assert all(c.source and c.verified for c in captures)
