"""The command line behaves like a Unix tool: examples in --help run as written, stdin with `-`, quiet pipes,
--version, no colour codes, and one documented table of exit statuses."""

import re
import subprocess
import sys
from importlib import metadata

import pytest

from cli.main import EXIT_CODES, build_parser
from tests.cli.test_memory_recommend import REPO

PYTHON = sys.executable


def verb_examples() -> list[tuple[str, str]]:
    """(verb, example command) for every example printed by every verb's --help."""
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    found = []
    for verb, sub in commands.choices.items():
        epilog = sub.epilog or ""
        found += [(verb, line.strip()) for line in epilog.splitlines() if line.strip().startswith("python -m ")]
    return found


EXAMPLES = verb_examples()


def run_shell(command: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", command.replace("python -m", f"{PYTHON} -m", 1)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", **env})


def test_every_verb_documents_examples():
    verbs = {verb for verb, _ in EXAMPLES}
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    assert verbs == set(commands.choices), "every verb's --help carries at least one example"


@pytest.mark.parametrize(("verb", "example"), EXAMPLES, ids=[f"{v}-{i}" for i, (v, _) in enumerate(EXAMPLES)])
def test_help_examples_run_as_written(verb, example):
    done = run_shell(example)
    assert done.returncode in (0, 3), (example, done.returncode, done.stderr)
    assert done.stdout.strip(), example
    assert "Traceback" not in done.stderr
    assert "\x1b[" not in done.stdout, "servewise never prints colour codes"


@pytest.mark.parametrize(("verb", "example"), EXAMPLES, ids=[f"{v}-{i}" for i, (v, _) in enumerate(EXAMPLES)])
def test_piping_into_head_exits_quietly(verb, example):
    done = run_shell(example + " | head -1")
    assert done.stderr == "", (example, done.stderr)
    assert done.returncode in (0, 3, 141), (example, done.returncode)
    assert len(done.stdout.splitlines()) == 1


def test_no_color_changes_nothing_because_there_is_no_colour():
    example = next(e for v, e in EXAMPLES if v == "reconcile")
    plain, no_color = run_shell(example), run_shell(example, NO_COLOR="1", TERM="xterm-256color")
    assert plain.stdout == no_color.stdout and plain.returncode == no_color.returncode


def test_version_is_the_installed_project_version():
    done = run_shell("python -m calculators --version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"servewise {metadata.version('servewise')}"


def test_the_exit_status_table_is_the_one_in_help_and_readme():
    help_text = run_shell("python -m calculators --help").stdout
    for code, _meaning in EXIT_CODES.items():
        assert re.search(rf"^\s+{code}\s+", help_text, re.M), code
    readme = (REPO / "README.md").read_text()
    table = dict(re.findall(r"^\| `(\d+)` \| (.+?) \|$", readme, re.M))
    assert {int(code): text for code, text in table.items()} == EXIT_CODES


def test_standard_input_errors_name_standard_input():
    done = run_shell("printf '{oops' | python -m calculators recommend --answers -")
    assert done.returncode == 2 and done.stderr.startswith("servewise: standard input is not valid JSON")
    done = run_shell("printf '\\377\\376' | python -m calculators plan --spec -")
    assert done.returncode == 2 and "standard input is not a UTF-8 text file" in done.stderr
