"""`servewise --lang es` (or LANG=es_ES.UTF-8) speaks Spanish on stdout and stderr; JSON keys stay English."""

from __future__ import annotations

import pytest

from cli.main import main


@pytest.fixture(autouse=True)
def no_locale(monkeypatch):
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)


def test_bad_input_is_one_spanish_line_on_stderr(capsys):
    status = main(["--lang", "es", "memory", "--model", "llama-3.1-8b", "--", "llama-server", "-np", "0"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("servewise: -np 0 no es válido") and err.count("\n") == 1


def test_lang_variable_gives_spanish_errors(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert main(["memory", "--model", "llama-3.1-8b"]) == 2
    assert "da el comando de arranque del motor después de `--`" in capsys.readouterr().err
