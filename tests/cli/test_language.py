"""The CLI speaks the language asked for: --lang, else LC_ALL / LC_MESSAGES / LANG, else English."""

import json

import pytest

from cli.main import main


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"use": "local-dev"}))
    return str(path)


@pytest.fixture(autouse=True)
def no_locale(monkeypatch):
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)


def test_lang_es_prints_spanish(answers, capsys):
    assert main(["--lang", "es", "recommend", "--answers", answers]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Recomendación de motor de servewise") and "Primer candidato" in out


def test_lang_variable_is_read_and_the_option_wins(answers, capsys, monkeypatch):
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    main(["recommend", "--answers", answers])
    assert "Clasificación" in capsys.readouterr().out
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    main(["recommend", "--answers", answers])
    assert "## Ranking" in capsys.readouterr().out
    main(["--lang", "es", "recommend", "--answers", answers])
    assert "Clasificación" in capsys.readouterr().out


def test_english_by_default_and_after_a_spanish_run(answers, capsys):
    main(["--lang", "es", "recommend", "--answers", answers])
    capsys.readouterr()
    main(["recommend", "--answers", answers])
    assert "## Ranking" in capsys.readouterr().out
