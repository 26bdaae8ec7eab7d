"""Every command in README.md's command-line block runs as written from the repository's top folder.

The block is the one a new user copies from; it names files kept in the repository, except `model.gguf`, which
stands for the reader's own GGUF (replaced here by a tiny GGUF built on the spot). A command counts as working
when it exits with a status README documents for a printed result (0, or 3/4/5, which still print) and prints
something, with no traceback.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from tests.support.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
PRINTED_RESULT_STATUSES = {0, 3, 4, 5}


def readme_commands() -> list[str]:
    """The `python -m calculators ...` commands of README's sh block, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    block = next(b for b in blocks if "python -m calculators memory" in b)
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip().startswith("python -m calculators")]


COMMANDS = readme_commands()


def test_the_block_covers_every_verb():
    verbs = {shlex.split(command)[3] for command in COMMANDS}
    assert verbs >= {"memory", "plan", "recommend", "reconcile", "speed", "calibrate", "check"}, verbs


@pytest.fixture(scope="module", autouse=True)
def no_stale_profile():
    """README's `speed --calibration` reads the profile README's `calibrate` writes just before (in block order)."""
    for command in COMMANDS:
        argv = shlex.split(command, comments=True)
        if "--output" in argv:
            (REPO_ROOT / argv[argv.index("--output") + 1]).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def own_gguf(tmp_path_factory):
    from tests.support.tiny_gguf import TinyAttentionModel

    return TinyAttentionModel("tiny-llama", "llama", 2, 32, 8, 128, 8192).write(
        tmp_path_factory.mktemp("gguf") / "model.gguf"
    )


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{i:02d}-{shlex.split(c)[3]}" for i, c in enumerate(COMMANDS)])
def test_readme_command_runs_as_written(command, own_gguf):
    argv = shlex.split(command, comments=True)
    assert argv[:3] == ["python", "-m", "calculators"]
    argv = [sys.executable, *argv[1:]]
    argv = [str(own_gguf) if arg == "model.gguf" else arg for arg in argv]
    for arg in argv:  # every file the command names is in the repository (or is the reader's GGUF)
        if re.search(r"\.(json|ya?ml|log|jinja|gguf)$", arg) and not arg.startswith("/tmp/") and "/" in arg:
            assert (REPO_ROOT / arg).exists() or arg == str(own_gguf), f"{arg} is not in the repository"
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in PRINTED_RESULT_STATUSES, f"exit {done.returncode}: {done.stderr}"
    assert done.stdout.strip(), f"nothing printed; stderr: {done.stderr}"
