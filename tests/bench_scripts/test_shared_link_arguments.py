"""bench/bench_shared_link.py's command line: a mistyped flag or page name is refused with a message on stderr and
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
