"""The Memory & capacity page (AppTest): catalog model, pasted config, pasted launch commands, bad inputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from calculators.engines import display_name
from reports.tables import NO_BREAK_HYPHEN
from tests.support.paths import LOG_DIR
from ui.command_text import command_markdown

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "memory.py")
CONFIGS = REPO / "tests" / "data" / "hf_configs"


def _run(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info]
    parts += [s.value for s in at.success] + [c.value for c in at.code]
    return "\n".join(str(p) for p in parts)


def test_catalog_model_shows_every_engine_and_the_arithmetic():
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb", mem_ctx="8192", mem_seqs="8")
    assert not at.exception
    text = _text(at)
    assert at.title[0].value == "Memory & capacity"
    # the brief's example geometry: 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB per token; 8 x 8,192 = 8 GiB
    assert "131,072\u00a0bytes = 128.0\u00a0KiB" in text
    assert "For 8 sequences: **8.00\u00a0GiB**" in text
    assert "GPU KV cache size" in text and "Maximum concurrency for 8,192\u00a0tokens per request" in text
    assert "max_total_num_tokens" in text
    assert "servewise plans MLX LM on Apple silicon only" in text  # not dropped: listed with its reason
    # one code span per word (ui/command_text): it wraps between words, never inside a flag
    assert command_markdown("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --max-num-seqs 8") in text
    # the side-by-side bars and the capacity curves: inline SVG, one bar per engine, each segment's GiB on hover
    bars = next(m.value for m in at.markdown if "memory-bars" in m.value)
    assert all(name in bars for name in ("Ollama", "llama.cpp (llama-server)", "vLLM", "SGLang", "MLX LM"))
    assert "vLLM · KV cache:" in bars and "device capacity" in bars
    curves = next(m.value for m in at.markdown if "capacity-curves" in m.value)
    assert "your context" in curves and "vLLM ·" in curves
    assert not [w for w in at.warning if "link" in w.value]


def test_apple_machine_plans_mlx_and_marks_vllm_not_applicable():
    at = _run(mem_model="llama-3.1-8b", mem_gpu="m4-max-40c-128gb", mem_kv="8-bit")
    assert not at.exception
    text = _text(at)
    assert "Cache slots per layer and sequence" in text
    assert "vLLM has no Metal backend" in text


def test_pasted_config_json_is_planned():
    config = (CONFIGS / "Qwen3-1.7B.json").read_text()
    at = _run(mem_model_from="config-json", mem_config=config)
    assert not at.exception
    assert not at.error
    assert "28 layers" in _text(at)


def test_malformed_config_json_shows_a_message():
    at = _run(mem_model_from="config-json", mem_config='{"model_type": "llama", ')
    assert not at.exception
    assert any("not valid JSON" in e.value for e in at.error)


def test_unknown_repo_offline_shows_a_message(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    at = _run(mem_model_from="hf-repo", mem_repo="nobody-here/no-such-model-servewise")
    assert not at.exception
    assert at.error and "paste its config.json" in at.error[0].value


COMMANDS = {
    "vllm": ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.8 --max-model-len 4096 "
             "--frobnicate 3", "gpu_memory_utilization=0.8"),
    "sglang": ("python -m sglang.launch_server --model-path x/y --mem-fraction-static 0.7 --context-length 4096",
               "mem_fraction_static=0.7"),
    "mlx-lm": ("mlx_lm.server --model mlx-community/x --decode-concurrency 4", "decode_concurrency=4"),
    "llama-cpp": ("llama-server -m model.gguf -c 16384 -np 4 -fa on", "parallel=4"),
    "ollama": ("OLLAMA_NUM_PARALLEL=4 OLLAMA_CONTEXT_LENGTH=8192 ollama serve", "num_parallel=4"),
}


@pytest.mark.parametrize("engine", list(COMMANDS))
def test_pasted_launch_command_fills_that_engines_settings(engine):
    command, expected = COMMANDS[engine]
    gpu = "m4-max-40c-128gb" if engine == "mlx-lm" else "h100-sxm-80gb"
    at = _run(mem_model="llama-3.1-8b", mem_gpu=gpu, mem_command=command)
    assert not at.exception
    assert any(expected in s.value and display_name(engine) in s.value for s in at.success)


def test_unknown_flags_of_a_pasted_command_are_listed():
    at = _run(mem_model="llama-3.1-8b", mem_command=COMMANDS["vllm"][0])
    assert any("--frobnicate" in w.value for w in at.warning)


def test_unparseable_command_shows_a_message():
    at = _run(mem_command="vllm serve 'unterminated")
    assert not at.exception
    assert any("cannot be split" in w.value for w in at.warning)


def test_impossible_numbers_show_messages_not_tracebacks():
    # weights far beyond the GPU, a context beyond the trained one, a non-number in the link
    at = _run(mem_model="llama-3.1-8b", mem_weights_from="file-size", mem_weights_gib="500", mem_ctx="9000000",
              mem_seqs="lots")
    assert not at.exception
    text = _text(at)
    assert "Would refuse to start" in text
    assert any("mem_seqs" in w.value for w in at.warning)


def test_out_of_range_link_values_fall_back_with_a_note():
    at = _run(mem_ctx="0", mem_gpu="no-such-gpu")
    assert not at.exception
    notes = [w.value for w in at.warning]
    assert any("mem_ctx" in n for n in notes) and any("mem_gpu" in n for n in notes)


def test_geometry_source_and_exports():
    at = _run(mem_model_from="geometry", mem_layers="40", mem_kv_heads="8", mem_head_dim="128")
    assert not at.exception
    assert "40 layers" in _text(at)
    assert len(at.get("download_button")) == 2


@pytest.mark.parametrize("config, expected", [
    ("DeepSeek-V2-Lite.json", "Multi-head latent attention"),  # MLA: the arithmetic changes, the page says so
    ("falcon-mamba-7b.json", "trained context unknown"),  # recurrent only, no trained context in config.json
])
def test_unusual_architectures_are_planned_with_their_warnings(config, expected):
    at = _run(mem_model_from="config-json", mem_config=(CONFIGS / config).read_text())
    assert not at.exception
    assert expected in _text(at)


def test_the_model_a_pasted_command_serves_is_named_with_its_catalog_id():
    at = _run(mem_model="llama-3.1-8b", mem_command=COMMANDS["vllm"][0])
    assert any("` meta-llama/Llama-3.1-8B-Instruct `: catalog model Llama 3.1 8B" in c.value for c in at.caption)


def test_partial_offload_warns_about_host_ram_bandwidth():
    at = _run(mem_model="llama-3.1-8b", mem_command="llama-server -m m.gguf -c 8192 -np 1 -ngl 20")
    assert not at.exception
    assert any(
        "llama.cpp (llama-server) keep layers in host RAM" in w.value and "3,350\u00a0GB/s" in w.value
        for w in at.warning
    )


def test_memory_page_embeds_the_start_up_log_check():
    # llama.cpp master of 2025-08 on 8 Ascend NPUs, gpt-oss-20b (tests/data/logs/SOURCES.md)
    log = (LOG_DIR / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log").read_text()
    at = _run()
    at.text_area(key="mem_log_text").set_value(log)
    at.run()
    assert not at.exception
    assert any(s.value == "Check against your engine" for s in at.subheader)
    (table,) = [d.value for d in at.dataframe if "status" in d.value.columns]
    assert set(table["status"]) == {"exact"}


def test_users_at_a_latency_target_one_line_per_simulated_engine_and_a_planner_link():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages" / "memory.py"), default_timeout=180)
    at.run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "**vLLM**: about **" in text and "users**" in text
    assert "**MLX LM**" not in text or "not estimated" in text
    assert any("inter-token latency ≤ 50\u00a0ms" in c.value for c in at.caption)

def test_a_speculative_command_shows_the_run_with_and_without_its_drafter():
    """vLLM --speculative-config with an EAGLE-3 head: the page plans the run as given and without the drafter,
    side by side (issue 14)."""
    command = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
               "'{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", "
               "\"num_speculative_tokens\": 3}' --max-model-len 8192")
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb", mem_command=command)
    assert not at.exception
    text = _text(at)
    assert "with its drafter and without it" in text
    assert "without the drafter: GPU KV cache size" in text


def test_a_hybrid_model_shows_its_state_pages_step_by_step():
    at = _run(mem_model="qwen3-next-80b-a3b", mem_gpu="h100-sxm-80gb")
    assert not at.exception
    text = _text(at)
    assert "State of one recurrent layer, one sequence (fixed, any length)" in text
    assert "state blocks" in text


@pytest.mark.parametrize(("model", "gpu", "engines", "state_lines"), [
    # Nemotron-H (54 Mamba2 layers, 54 MLP-only blocks, 10 attention layers) on a GPU that holds its 105 GiB
    ("nemotron-h-56b", "b200-180gb", ("Ollama", "llama.cpp (llama-server)", "vLLM", "SGLang"),
     ("llama_kv_cache (recurrent)", "State of one recurrent layer, one sequence (fixed, any length)",
      "Mamba Cache is allocated", "nothing kept between tokens (MLP or expert block only)")),
    # Falcon-H1 (attention and a Mamba2 mixer in every layer) on a GPU, then on a Mac for MLX LM
    ("falcon-h1-0.5b", "h100-sxm-80gb", ("Ollama", "llama.cpp (llama-server)", "vLLM", "SGLang"),
     ("llama_kv_cache (recurrent)", "State of one recurrent layer, one sequence (fixed, any length)",
      "Mamba Cache is allocated", "plus a fixed state of 201,984 elements per sequence")),
    ("falcon-h1-0.5b", "m4-max-40c-128gb", ("Ollama", "llama.cpp (llama-server)", "MLX LM"),
     ("Recurrent state (ArraysCache) of 36 layers", "llama_kv_cache (recurrent)")),
])
def test_each_hybrid_catalog_family_is_planned_by_every_engine_with_its_fixed_state(model, gpu, engines, state_lines):
    """Issue 14: a hybrid catalog model is planned in every engine that serves it here, and the state that
    does not grow with context is shown (raw figure and each engine's own arithmetic)."""
    at = _run(mem_model=model, mem_gpu=gpu)
    assert not at.exception
    text = _text(at)
    for engine in engines:  # a plan (held or not), never '—' (not applicable) or 'refuses to start'
        cell = engine.replace("-", NO_BREAK_HYPHEN)  # a table joins "llama-server" with a no-break hyphen
        assert f"| {cell} | yes |" in text or f"| {cell} | no |" in text, engine
    assert "Recurrent state per sequence (fixed, any length)" in text
    for line in state_lines:
        assert line in text, line


def test_a_family_not_modelled_is_said_on_the_page_and_for_its_config():
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb")
    assert any("Kimi Linear" in c.value and "is not planned yet" in c.value for c in at.caption)
    assert [e.label for e in at.expander if "cannot plan yet" in e.label]  # folded: the inputs come first
    # a BF16 checkpoint's format reads by its name in the capacity table, never the matrix id 'float'
    assert "loads BF16/FP16/FP32 here" in _text(at) and "loads float here" not in _text(at)
    at = _run(mem_model_from="config-json", mem_config='{"model_type": "kimi_linear", "num_hidden_layers": 27}')
    assert not at.exception
    assert any("no complete public copy of its config.json" in e.value for e in at.error)


def test_an_mlx_draft_model_given_on_the_page_is_planned_beside_the_run_without_it():
    """issue 14: `mlx_lm.server --draft-model` with the drafter picked from the catalog: its weights and cache
    join the plan, shown next to the same run without it (which batches the workload's sequences)."""
    command = "mlx_lm.server --model meta-llama/Llama-3.1-8B-Instruct --draft-model meta-llama/Llama-3.2-1B"
    at = _run(mem_model="llama-3.1-8b", mem_gpu="m4-max-40c-128gb", mem_command=command, mem_draft="llama-3.2-1b")
    assert not at.exception
    text = _text(at)
    assert "with its drafter and without it" in text
    assert "--draft-model llama-3.2-1b: its weights (2,471,628,800\u00a0bytes)" in text
    assert "runs one request at a time, not 8 at once" in text
    at = _run(mem_model="llama-3.1-8b", mem_gpu="m4-max-40c-128gb", mem_command=command, mem_draft="config-json",
              mem_draft_config="{not json")
    assert not at.exception and at.error


def test_a_quantization_refused_on_this_gpu_is_said_with_its_source():
    # SGLang v0.5.23 registers its OCP mxfp4 method on AMD only for gfx950; an MI300X is gfx942
    # (knowledge/formats.yaml cell sglang/mxfp4, calculators/hardware/compat.py).
    at = _run(mem_model="gpt-oss-120b", mem_gpu="mi300x-192gb", mem_precision="mxfp4", mem_ctx="8192", mem_seqs="4")
    assert not at.exception
    warnings = [w.value for w in at.warning if "cannot load MXFP4" in w.value]
    assert len(warnings) == 1 and warnings[0].startswith("SGLang") and "v0.5.23" in warnings[0]
    assert "loads MXFP4 here" in _text(at)  # the format by its name, not its matrix id
    # on an MI355X (gfx950) nothing is refused
    at = _run(mem_model="gpt-oss-120b", mem_gpu="mi355x-288gb", mem_precision="mxfp4", mem_ctx="8192", mem_seqs="4")
    assert not [w.value for w in at.warning if "cannot load" in w.value]


def test_an_embedding_model_gets_the_embedding_server_section():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages" / "memory.py"), default_timeout=120)
    at.query_params["mem_model"] = "bge-m3"
    at.query_params["mem_emb_batch"] = "10"
    at.run()
    assert not at.exception, at.exception
    assert any(h.value == "Embedding server" for h in at.header)
    metrics = {m.label: m.value for m in at.metric}
    # tests/calculators/checks/test_embedding_memory.py: 26,624 bytes per token for bge-m3 -> 10 tokens = 260.0 KiB
    assert metrics["Activations, one batch"] == "260.0\u00a0KiB"
    assert metrics["Total (no KV cache)"].endswith("GiB")


def test_speed_section_gives_each_engine_a_band_and_its_basis():
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb", mem_ctx="8192", mem_seqs="8")
    assert not at.exception
    text = _text(at)
    assert "for one sequence" in text and "in all at 8 sequences" in text
    # the basis names the engine and the hardware class, never their ids
    assert "Speed basis: default fit to public measurements (vLLM on data-centre GPUs (HBM))" in text
    assert "datacenter-hbm" not in text


def test_speed_section_uses_the_links_calibration_for_its_engine_and_warns_on_a_bad_one():
    from calculators.speed.calibration import CalibrationProfile, encode_profile
    from calculators.speed.model import Band

    profile = CalibrationProfile(engine="vllm", hardware_class="datacenter-hbm", label="test", memory_efficiency=0.5,
                                 decode_overhead_s=0.004, compute_efficiency=0.5, prefill_overhead_s=0.02,
                                 decode_band=Band(low=-0.05, high=0.05, median_abs=0.03, n_points=3), n_measurements=3)
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb", speed_cal=encode_profile(profile))
    assert not at.exception
    assert "Speed basis: your calibration" in _text(at)
    # the users readout runs on the same calibration and says so, with its band; other engines keep the default fit
    users = next(m.value for m in at.markdown if "users**" in m.value)
    vllm_line = next(line for line in users.splitlines() if line.startswith("- **vLLM**"))
    assert "Speed basis: your calibration (test)" in vllm_line, vllm_line
    assert "Decode step band -5% to +5% (errors on your own run, 3 measurements)" in vllm_line, vllm_line
    sglang_line = next(line for line in users.splitlines() if line.startswith("- **SGLang**"))
    assert "Speed basis: default fit" in sglang_line and "leave-one-out" in sglang_line, sglang_line
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb", speed_cal="not-a-profile!")
    assert not at.exception
    assert any("speed calibration was not used" in w.value for w in at.warning)


def test_each_input_state_is_planned_once_per_language(monkeypatch):
    """A rerun in the same state reuses the plans; a changed input or a Spanish reader plans again."""
    import ui.memory_compute as compute
    from tests.support.page_runs import page_in_language

    calls = []
    real = compute.compare_engines
    monkeypatch.setattr(compute, "compare_engines", lambda *a, **k: calls.append(1) or real(*a, **k))
    for cached in (compute.analyse, compute.analyse_rows, compute.users_readouts):
        cached.clear()
    state = {"mem_model": "llama-3.1-8b", "mem_gpu": "h100-sxm-80gb", "mem_ctx": "8192", "mem_seqs": "4"}
    at = _run(**state)
    at.run()
    assert not at.exception
    assert len(calls) == 1
    at.number_input(key="mem_seqs").set_value(6).run()
    assert len(calls) == 2
    assert not page_in_language(PAGE, "es", state).run().exception
    assert len(calls) == 3


def test_the_markdown_export_is_written_in_the_readers_language_with_engine_names(monkeypatch):
    """Streamlit renders a download's callable in a later request, outside the page's run and its language: the
    Spanish page's Markdown export came out in English. The callback now carries the reader's language."""
    from tests.support.page_runs import page_in_language, record_download_callbacks

    callbacks = record_download_callbacks(monkeypatch)
    at = page_in_language(PAGE, "es", {"mem_model": "llama-3.1-8b", "mem_gpu": "h100-sxm-80gb"}).run()
    assert not at.exception
    markdown = callbacks["export_markdown"]()  # called after the run, as Streamlit does when the button is pressed
    assert markdown.startswith("# Plan de memoria y capacidad de servewise"), markdown[:200]
    assert "| vLLM | sí |" in markdown and "## llama.cpp (llama-server)" in markdown
    assert "| vllm |" not in markdown and "## llama-cpp" not in markdown


def test_a_pasted_commands_settings_are_listed_in_one_order_whatever_the_process():
    """The settings a command set are named in their settings model's field order: the order of a Python set of
    names (what they were read from) changed with each process's string hashing."""
    at = _run(mem_model="llama-3.1-8b", mem_gpu="h100-sxm-80gb", mem_command=COMMANDS["vllm"][0])
    message = next(s.value for s in at.success if "gpu_memory_utilization" in s.value)
    from calculators.engines.vllm.arg_utils import VllmSettings

    fields = list(VllmSettings.model_fields)
    assert fields.index("max_model_len") < fields.index("gpu_memory_utilization")
    assert message.index("max_model_len=4096") < message.index("gpu_memory_utilization=0.8"), message


def test_a_command_from_a_link_never_draws_markdown():
    """A link's launch command with a backtick in its --model ("y`![b](https://host/b.png)`") closed the code span the
    page wrote it in and drew the image (issue 19 review): what the command names is shown literally."""
    at = _run(mem_command="vllm serve --model y`![b](https://evil.example/b.png)` --frob-[k](https://evil.example)")
    assert not at.exception
    shown = [str(el.value) for kind in ("caption", "warning", "error", "markdown") for el in getattr(at, kind)]
    served = [text for text in shown if text.startswith("Your command serves")]
    assert served and "`` y`![b](https://evil.example/b.png)` ``" in served[0], served
    code_spans = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)")  # CommonMark: closed by a run of the same length
    for text in shown:
        assert "](https://evil" not in code_spans.sub("", text), text


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_several_gpus_table_keeps_numbers_with_their_words(lang):
    """Issue 19: in the replicas × tensor-parallel table each layout wraps only after its ×, never before a number."""
    from tests.support.markdown_tables import markdown_tables
    from tests.support.page_text import page_script

    at = AppTest.from_string(page_script(Path(PAGE), lang), default_timeout=120)
    for key, value in {"mem_model": "llama-3.1-8b", "mem_gpu": "h100-sxm-80gb", "mem_gpus": "4"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    column = "layout" if lang == "en" else "disposición"
    table = next(t for t in markdown_tables([m.value for m in at.markdown]) if column in t.columns)
    layouts = list(table[column])
    assert len(layouts) >= 2, layouts  # 4 GPUs: TP 1, 2 and 4 where the heads split evenly
    for layout in layouts:
        assert layout.count(" ") == 1 and "× TP" in layout, repr(layout)  # the one ordinary space: after the ×
        assert "\u00a0" in layout, repr(layout)
