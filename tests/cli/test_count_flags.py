"""A count flag given an impossible number (`--prompt-tokens -5`) is refused by the name the user typed.

Checked after parsing, the messages named what the value had become: `speed --prompt-tokens -5` said "context must
be zero or more tokens", `memory --prompt-tokens -5` "prompt tokens and sequences must be at least 1, generated tokens
at least 0" (which of the three?), `--gpus 0` "the number of devices must be at least 1", and `memory --sequences 0`
was read as 1 without a word.
"""

from __future__ import annotations

import pytest

from cli.main import main

LAUNCH = ["--", "mlx_lm.server", "--model", "mlx-community/Llama-3.1-8B"]
#: (verb, flag, a value below its least, that least): every whole-number flag of the verbs that take one.
BELOW_LEAST = [
    ("speed", "--prompt-tokens", "-5", 1), ("speed", "--prompt-tokens", "0", 1), ("speed", "--gpus", "0", 1),
    ("speed", "--weights-bytes", "-1", 1),
    ("memory", "--prompt-tokens", "-5", 1), ("memory", "--generated-tokens", "-1", 0),
    ("memory", "--sequences", "0", 1), ("memory", "--gpus", "-2", 1), ("memory", "--weights-bytes", "0", 1),
    ("calibrate", "--gpus", "0", 1), ("calibrate", "--weights-bytes", "-3", 1),
]


@pytest.mark.parametrize(("verb", "flag", "value", "least"), BELOW_LEAST)
def test_a_count_below_its_least_is_refused_naming_the_flag(capsys, verb, flag, value, least):
    extra = ["--bench", "unused.json"] if verb == "calibrate" else []
    status = main([verb, "--model", "llama-3.1-8b", "--gpu", "m4-max-40c-128gb", *extra, flag, value, *LAUNCH])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"argument {flag}: must be at least {least}, not {value}" in err, err
    assert "context" not in err


def test_the_refusal_is_in_spanish_too(capsys):
    assert main(["--lang", "es", "speed", "--model", "llama-3.1-8b", "--prompt-tokens", "-5", *LAUNCH]) == 2
    assert "argumento --prompt-tokens: debe ser al menos 1, no -5" in capsys.readouterr().err


def test_counts_at_their_least_are_taken(capsys):
    status = main(["memory", "--model", "llama-3.1-8b", "--gpu", "m4-max-40c-128gb", "--prompt-tokens", "1",
                   "--generated-tokens", "0", "--sequences", "1", "--json", *LAUNCH])
    assert status == 0, capsys.readouterr().err
