"""Hostile config.json files, launch commands and command lines: only servewise's own errors, each with a message.

A user can paste or upload any text; the calculators must answer with a ServewiseInputError (or a
subclass) that says what was wrong, never an IndexError/TypeError/... from deep inside. The CLI must
exit 0, 2 or 3 and never print a traceback. Examples are bounded so the module runs in seconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from calculators.errors import ServewiseInputError
from calculators.launch.command import parse_launch_command
from calculators.launch.settings import command_syntaxes, settings_from_command
from calculators.model.hf_config import architecture_from_config_text
from cli import main as cli
from knowledge import load_knowledge
from tests.support.paths import HF_CONFIG_DIR

EXAMPLES = int(os.environ.get("SERVEWISE_FUZZ_EXAMPLES", "6")) * 10
CONFIGS = sorted(HF_CONFIG_DIR.glob("*.json"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)

KB = load_knowledge()
SYNTAXES = command_syntaxes(KB)
KNOWN_FLAGS = sorted({flag for syntax in SYNTAXES.values() for spec in syntax.flag_specs for flag in spec.flags})
KNOWN_ENV = sorted({spec.env for syntax in SYNTAXES.values() for spec in syntax.flag_specs if spec.env})

# ----------------------------------------------------------------------------------------------------
# config.json

WEIRD_JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**18, 10**300]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _mutate(config: dict, rng: random.Random, draw) -> dict:
    """Drop, retype or blow up a few fields of `config` (and of its text_config, if any)."""
    config = dict(config)
    target = config
    if isinstance(config.get("text_config"), dict) and rng.random() < 0.5:
        target = config["text_config"] = dict(config["text_config"])
    keys = sorted(target)
    for _ in range(rng.randint(1, 3)):
        if not keys:
            break
        key = rng.choice(keys)
        if rng.random() < 0.3:
            target.pop(key, None)
        else:
            target[key] = draw(WEIRD_JSON_VALUES)
    return config


@st.composite
def config_texts(draw) -> str:
    base = json.loads(draw(st.sampled_from(CONFIGS)).read_text())
    rng = random.Random(draw(st.integers(min_value=0, max_value=2**32)))
    text = json.dumps(_mutate(base, rng, draw))  # NaN/Infinity are written as such: json.loads accepts them
    if draw(st.booleans()) and draw(st.booleans()):
        text = text[: draw(st.integers(min_value=0, max_value=len(text)))]  # truncated upload
    return text


def _only_input_errors(call, *args) -> None:
    try:
        call(*args)
    except ServewiseInputError as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"


def test_config_fixtures_exist():
    assert len(CONFIGS) >= 10


@FUZZ
@given(text=config_texts())
@example(text='{"model_type": "llama", "num_hidden_layers": 1e400, "hidden_size": 4096}')
@example(text='{"model_type": "llama", "num_hidden_layers": NaN}')
@example(text='{"model_type": ["llama"]}')
@example(text="[1, 2")
@example(text="")
@example(text='{"model_type": "llava", "text_config": "x"}')
def test_hostile_config_json_gives_only_input_errors(text):
    _only_input_errors(architecture_from_config_text, text)


@FUZZ
@given(text=st.text(max_size=200))
def test_random_text_as_config_json(text):
    _only_input_errors(architecture_from_config_text, text)


# ----------------------------------------------------------------------------------------------------
# launch commands

PROGRAMS = [
    "llama-server", "ollama serve", "vllm serve org/model", "python -m vllm.entrypoints.openai.api_server",
    "python -m sglang.launch_server", "sglang serve", "mlx_lm.server", "python3 -m mlx_lm server", "ollama",
    "vllm", "python -m llama_cpp.server", "sudo env", "/usr/bin/llama-server", "",
]  # fmt: skip
ODD_WORDS = ["'", '"', "\\", "=", "--", "-", "-1", "--x=", "#", "$(rm -rf /)", "`id`", "--=1", "\n", "\t", "-e"]
VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1e400", "nan", "inf", "9" * 40, "true", "off", "q4_0", "f16", "auto", "", "1.5"]),
    st.text(max_size=10),
)


@st.composite
def launch_commands(draw) -> str:
    words = [draw(st.sampled_from(PROGRAMS))]
    if draw(st.booleans()):
        words.insert(0, f"{draw(st.sampled_from(KNOWN_ENV))}={draw(VALUES)}")
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        kind = draw(st.integers(min_value=0, max_value=4))
        if kind == 0:
            words.append(draw(st.sampled_from(KNOWN_FLAGS)))  # possibly with no value after it
        elif kind == 1:
            words += [draw(st.sampled_from(KNOWN_FLAGS)), draw(VALUES)]
        elif kind == 2:
            words.append(f"{draw(st.sampled_from(KNOWN_FLAGS))}={draw(VALUES)}")
        elif kind == 3:
            words.append(draw(st.sampled_from(ODD_WORDS)))
        else:
            words.append(draw(st.text(max_size=12)))
    return " ".join(words)


@FUZZ
@given(command=launch_commands())
@example(command="llama-server -c")
@example(command="llama-server -c 'unterminated")
@example(command="vllm serve m --max-model-len 1e400")
@example(command="vllm serve m --gpu-memory-utilization nan")
@example(command="llama-server -np -5 -c -1")
@example(command="OLLAMA_NUM_PARALLEL=inf ollama serve")
def test_hostile_launch_commands_give_only_input_errors(command):
    _only_input_errors(parse_launch_command, command, SYNTAXES)
    _only_input_errors(settings_from_command, command, KB)


@FUZZ
@given(command=st.text(max_size=120))
def test_random_text_as_launch_command(command):
    _only_input_errors(settings_from_command, command, KB)


# ----------------------------------------------------------------------------------------------------
# the CLI, in-process


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """`python -m calculators *argv` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:  # argparse's --help
            status = exc.code if isinstance(exc.code, int) else 2
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory) -> dict[str, str]:
    """Files a fuzzed command line can point at: good, broken, binary, empty, missing."""
    root = tmp_path_factory.mktemp("cli-inputs")
    files = {
        "config": CONFIGS[0].read_text(),
        "broken.json": '{"model_type": "llama", "num_hidden_layers": ',
        "list.json": "[]",
        "answers.json": json.dumps({"use": "shared-api", "users": -3}),
        "nan.json": '{"users": NaN}',
        "empty.gguf": "",
        "fake.gguf": "GGUF\x03\x00\x00\x00" + "\xff" * 40,
    }
    paths = {}
    for name, text in files.items():
        path = root / name
        path.write_bytes(text.encode("latin-1") if name.endswith("gguf") else text.encode())
        paths[name] = str(path)
    (root / "binary.bin").write_bytes(bytes(range(256)))
    paths["binary.bin"] = str(root / "binary.bin")
    paths["missing"] = str(root / "missing.json")
    paths["dir"] = str(root)
    return paths


@st.composite
def argvs(draw, files: dict[str, str]) -> list[str]:
    gpu_ids = [gpu.id for gpu in KB.gpus.all_gpus][::12]
    model_ids = [model.id for model in KB.models.models][::6]
    paths = st.sampled_from(sorted(files.values()))
    argv = [draw(st.sampled_from(["memory", "recommend", "memory", "bogus", "--help", "-x"]))]
    options = {
        "--hf-config": paths,
        "--gguf": paths,
        "--model": st.sampled_from([*model_ids, "nope", ""]),
        "--gpu": st.sampled_from([*gpu_ids, "nope", ""]),
        "--gpus": st.sampled_from(["1", "0", "-2", "99999", "x", "1e3"]),
        "--weights": st.sampled_from(["bf16", "q4_k_m", "fp8", "nope", ""]),
        "--weights-bytes": st.sampled_from(["0", "-1", "10" * 20, "1.5", "x"]),
        "--answers": paths,
    }
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        option = draw(st.sampled_from(sorted(options)))
        argv.append(option)
        if draw(st.integers(min_value=0, max_value=5)):  # sometimes the value is missing
            argv.append(draw(options[option]))
    if draw(st.booleans()):
        argv.append("--json")
    if argv[0] == "memory" and draw(st.integers(min_value=0, max_value=4)):
        argv += ["--", *draw(launch_commands()).split()]
    return argv


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """A fuzzed command may name a hub repo: keep it offline and fast."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")

    def refuse(*_args, **_kwargs):
        from calculators.model.hf_hub import HubFetchError

        raise HubFetchError("offline in tests")

    monkeypatch.setattr("calculators.model.hf_hub.fetch_config", refuse)


def test_cli_fuzz(cli_files):
    @FUZZ
    @given(argv=argvs(cli_files))
    @example(argv=["memory", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--", "vllm", "serve", "m"])
    @example(argv=["memory", "--gguf", cli_files["fake.gguf"], "--", "llama-server", "-c", "1e400"])
    @example(argv=["recommend", "--answers", cli_files["nan.json"]])
    @example(argv=["recommend", "--answers", cli_files["binary.bin"]])
    @example(argv=["memory", "--hf-config", cli_files["dir"], "--", "llama-server"])
    def check(argv):
        status, _out, err = run_cli(argv)
        assert status in (0, 2, 3), f"exit {status} for {argv!r}: {err}"
        assert "Traceback" not in err, f"traceback for {argv!r}:\n{err}"
        if status == 2:
            assert err.startswith("servewise: ") or "usage:" in err, f"unexplained failure for {argv!r}: {err!r}"

    check()



@pytest.mark.parametrize(
    "text",
    [
        '{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 0, '
        '"vocab_size": 10, "intermediate_size": 8, "max_position_embeddings": 8}',
        '{"model_type": "gemma3", "text_config": {"model_type": []}}',
    ],
)
def test_found_by_fuzzing(text):
    """Inputs hypothesis found that once escaped as TypeError/ZeroDivisionError."""
    with pytest.raises(ServewiseInputError):
        architecture_from_config_text(text)


# ----------------------------------------------------------------------------------------------------
# GGUF headers (uploaded or given to --gguf)


def _write_gguf(path: Path, overrides: dict) -> Path:
    """A tiny llama-architecture GGUF whose keys are `overrides` over sensible values (value, GGUFValueType)."""
    import numpy as np
    from gguf import GGUFValueType, GGUFWriter

    keys = {
        "llama.block_count": (2, GGUFValueType.UINT32),
        "llama.embedding_length": (64, GGUFValueType.UINT32),
        "llama.attention.head_count": (4, GGUFValueType.UINT32),
        "llama.attention.head_count_kv": (2, GGUFValueType.UINT32),
        "llama.context_length": (128, GGUFValueType.UINT32),
        **overrides,
    }
    writer = GGUFWriter(str(path), "llama")
    for key, (value, value_type) in keys.items():
        writer.add_key_value(key, value, value_type)
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


GGUF_KEYS = ["llama.block_count", "llama.embedding_length", "llama.attention.head_count",
             "llama.attention.head_count_kv", "llama.attention.key_length", "llama.attention.sliding_window",
             "llama.context_length", "general.architecture"]  # fmt: skip


@st.composite
def gguf_overrides(draw) -> dict:
    from gguf import GGUFValueType

    typed = st.one_of(
        st.tuples(st.integers(min_value=0, max_value=2**64 - 1), st.just(GGUFValueType.UINT64)),
        st.tuples(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.just(GGUFValueType.INT32)),
        st.tuples(st.floats(allow_nan=True, width=32), st.just(GGUFValueType.FLOAT32)),
        st.tuples(st.text(max_size=8), st.just(GGUFValueType.STRING)),
        st.tuples(st.booleans(), st.just(GGUFValueType.BOOL)),
        st.tuples(st.lists(st.integers(min_value=0, max_value=9), min_size=1, max_size=5),
                  st.just(GGUFValueType.ARRAY)),
    )
    keys = draw(st.lists(st.sampled_from(GGUF_KEYS), min_size=1, max_size=3, unique=True))
    return {key: draw(typed) for key in keys}


def test_gguf_fuzz(tmp_path):
    from calculators.model.gguf import read_gguf_header

    counter = iter(range(10**9))

    @FUZZ
    @given(overrides=gguf_overrides(), cut=st.one_of(st.none(), st.integers(min_value=0, max_value=400)))
    @example(overrides={"llama.block_count": (2**64 - 1, __import__("gguf").GGUFValueType.UINT64)}, cut=None)
    def check(overrides, cut):
        path = _write_gguf(tmp_path / f"m{next(counter)}.gguf", overrides)
        if cut is not None:
            path.write_bytes(path.read_bytes()[:cut])  # a truncated upload
        _only_input_errors(read_gguf_header, path)

    check()
