"""The bench scripts' command lines: a mistyped flag or page name is refused with a message on stderr and
exit status 2 (`--help` was read as a page name and measured no page at all, printing "every link within target")."""

from __future__ import annotations

import pytest

from bench.bench_shared_link import main


@pytest.mark.parametrize(("argv", "message"), [
    (["--bogus"], "unknown option --bogus"),
    (["nopage"], "no such page: nopage.py"),
    (["speed", "--rounds", "0"], "--rounds 0: give a whole number of rounds"),
    (["--against"], "--against needs a value"),
])
def test_bad_arguments_are_refused_before_anything_is_served(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_help_prints_the_usage_and_serves_nothing(capsys):
    assert main(["--help"]) == 0
    assert "python -m bench.bench_shared_link --against DIR" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--bogus"], "unknown option --bogus"),
    (["nopage"], "no such page: nopage.py"),
])
def test_the_rerun_bench_refuses_what_it_cannot_measure(argv, message, capsys):
    """`bench_page_reruns memory` measured no page and printed "every page within budget" (a page had to be named
    with its .py); now "memory" names pages/memory.py and a name that is no page is refused."""
    from bench.bench_page_reruns import main as reruns_main

    assert reruns_main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_page_is_named_with_or_without_py():
    from bench.typical_states import page_file_names, unknown_page_names

    assert page_file_names(["memory", "speed.py"]) == ["memory.py", "speed.py"]
    assert unknown_page_names(["memory", "speed.py"]) == ""
