"""Whatever is pasted, the parser answers with a ParsedLog and says what it did and did not find."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators.reconcile.log.clean import clean_line
from calculators.reconcile.log.figures import ParsedLog
from calculators.reconcile.log.parse import parse_startup_log
from calculators.units import MIB
from tests.support.startup_log import LOG_DIR

REAL_LOGS = {path.name: path.read_text(encoding="utf-8") for path in sorted(LOG_DIR.glob("*.log"))}
_FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(parsed: ParsedLog) -> None:
    assert isinstance(parsed, ParsedLog)
    for figure in parsed.figures:
        assert 1 <= figure.line <= max(parsed.line_count, 1)
        assert figure.value >= 0
        low, high = figure.interval()
        assert low <= figure.value <= high
    if parsed.engine is None:
        assert parsed.figures == [] and parsed.notes


def test_empty_and_blank_logs_say_so():
    for text in ("", "   ", "\n\n\n"):
        parsed = parse_startup_log(text)
        assert parsed.engine is None and [n.code for n in parsed.notes] == ["empty"]


def test_unknown_log_gets_a_clear_message():
    parsed = parse_startup_log("Starting nginx\nlistening on port 80\nGET / 200")
    assert parsed.engine is None
    assert [n.code for n in parsed.notes] == ["unknown_engine"]
    assert "llama.cpp, Ollama, vLLM, SGLang or MLX LM" in parsed.notes[0].message
    assert parsed.missing == []


def test_two_engines_pasted_together_are_flagged():
    text = REAL_LOGS["vllm-v0.11-enginecore-qwen3-14b.log"] + REAL_LOGS["sglang-v0.4.4-gemma3-h200.log"]
    parsed = parse_startup_log(text)
    assert parsed.engine in ("vllm", "sglang")
    assert "several_engines" in [n.code for n in parsed.notes]


def test_real_escape_codes_and_windows_line_ends():
    line = (
        "llama_kv_cache: size = 416.00 MiB ( 32768 cells, 13 layers, 1/1 seqs), "
        "K (f16): 208.00 MiB, V (f16): 208.00 MiB"
    )
    coloured = f"\x1b[34m1.14.609.487\x1b[0m \x1b[32mI \x1b[0m{line}\r\n"
    parsed = parse_startup_log(coloured * 2)
    assert parsed.engine == "llama-cpp"
    assert [f.value for f in parsed.figures_named("kv_cache_bytes")] == [416 * MIB, 416 * MIB]
    assert clean_line(1, coloured.rstrip()).text == line


def test_every_real_log_is_recognised():
    for name, text in REAL_LOGS.items():
        parsed = parse_startup_log(text)
        expected = name.split("-")[0]
        expected = {"llamacpp": "llama-cpp", "mlx": "mlx-lm"}.get(expected, expected)
        if name == "ollama-2026-gemma-iswa-relayed.log":
            expected = "llama-cpp"  # the excerpt holds only the lines Ollama relays from llama.cpp
        assert parsed.engine == expected, name
        _check(parsed)


@_FAST
@given(st.text(max_size=400))
def test_random_text_never_raises(text):
    _check(parse_startup_log(text))


@_FAST
@given(
    name=st.sampled_from(sorted(REAL_LOGS)),
    cut=st.integers(min_value=0, max_value=5000),
    junk=st.text(max_size=40),
    at=st.integers(min_value=0, max_value=5000),
)
def test_cut_and_spliced_real_logs_never_raise(name, cut, junk, at):
    text = REAL_LOGS[name]
    mutated = text[: cut % (len(text) + 1)]
    position = at % (len(mutated) + 1)
    _check(parse_startup_log(mutated[:position] + junk + mutated[position:]))


@_FAST
@given(name=st.sampled_from(sorted(REAL_LOGS)), data=st.data())
def test_shuffled_and_duplicated_lines_never_raise(name, data):
    lines = REAL_LOGS[name].splitlines()
    picked = data.draw(st.lists(st.sampled_from(lines), max_size=40)) if lines else []
    _check(parse_startup_log("\n".join(picked)))


@_FAST
@given(
    name=st.sampled_from(sorted(REAL_LOGS)),
    digit=st.sampled_from(list("0123456789.,-")),
    at=st.integers(min_value=0, max_value=5000),
)
def test_corrupted_numbers_never_raise(name, digit, at):
    text = REAL_LOGS[name]
    position = at % (len(text) + 1)
    _check(parse_startup_log(text[:position] + digit * 30 + text[position:]))


def test_every_name_a_real_log_produces_is_in_the_vocabulary():
    from calculators.engines import ENGINES
    from calculators.reconcile.log.vocabulary import FIGURES

    for name, text in REAL_LOGS.items():
        parsed = parse_startup_log(text)
        for figure in parsed.figures:
            assert figure.name in FIGURES, (name, figure.name)
            assert FIGURES[figure.name].allows(figure.unit), (name, figure.name)
        spec = ENGINES[parsed.engine]
        assert set(parsed.settings) <= spec.log_setting_keys, (name, set(parsed.settings) - spec.log_setting_keys)
        if parsed.runner_settings:
            runner = ENGINES[spec.log_reader.relays]
            assert set(parsed.runner_settings) <= runner.log_setting_keys, name


def test_every_stored_log_names_its_source():
    sources = (LOG_DIR / "SOURCES.md").read_text(encoding="utf-8")
    unlisted = [name for name in REAL_LOGS if name not in sources]
    assert unlisted == []
