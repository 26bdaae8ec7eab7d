"""`servewise --lang es` (or LANG=es_ES.UTF-8) speaks Spanish: --help, usage errors, output and stderr.

JSON keys and machine values stay English; the commands in --help epilogs stay exactly as written (they run).
No English sentence of the calculators' notes may leak into a Spanish run: a line with several English
function words is English.
"""

from __future__ import annotations

import json
import re

import pytest

from cli.main import build_parser, main

#: English function words that Spanish text does not use (a Spanish line may quote a flag or a file, not prose).
ENGLISH_WORDS = frozenset({"the", "is", "are", "of", "and", "with", "not", "for", "from", "this", "that", "when",
                           "which", "its", "their", "would", "does", "has", "have", "was", "were", "be"})


def english_lines(text: str) -> list[str]:
    """Lines of `text` that read as English prose (three or more English function words)."""
    found = []
    for line in text.splitlines():
        words = re.findall(r"[a-z]+", re.sub(r"`[^`]*`|'[^']*'|\S*[/_.=]\S*", " ", line.lower()))
        if sum(word in ENGLISH_WORDS for word in words) >= 3:
            found.append(line)
    return found


@pytest.fixture(autouse=True)
def no_locale(monkeypatch):
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)


def test_the_leak_check_sees_english_and_passes_spanish():
    assert english_lines("note: The cache stays unquantized until it holds 4 tokens and the rest is dropped.")
    assert not english_lines("nota: La caché no se cuantiza hasta que contiene quantized_kv_start (4) tokens.")


def test_bad_input_is_one_spanish_line_on_stderr(capsys):
    status = main(["--lang", "es", "memory", "--model", "llama-3.1-8b", "--", "llama-server", "-np", "0"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("servewise: -np 0 no es válido") and err.count("\n") == 1


def test_lang_variable_gives_spanish_errors(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert main(["memory", "--model", "llama-3.1-8b"]) == 2
    assert "da el comando de arranque del motor después de `--`" in capsys.readouterr().err


def test_argparse_speaks_spanish_too(capsys):
    assert main(["--lang", "es", "memory", "--gpus", "x"]) == 2
    assert "argumento --gpus: valor int no válido: 'x'" in capsys.readouterr().err
    assert main(["--lang", "es", "recommend"]) == 2
    assert "faltan los argumentos obligatorios: --answers" in capsys.readouterr().err


@pytest.mark.parametrize("verb", ["memory", "reconcile", "recommend", "plan", "check", "speed", "calibrate"])
def test_help_is_spanish_and_its_examples_are_the_english_ones(verb, capsys):
    with pytest.raises(SystemExit):
        main(["--lang", "es", verb, "--help"])
    spanish = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([verb, "--help"])
    english = capsys.readouterr().out
    assert spanish.startswith("uso: ") and "\nopciones:\n" in spanish and "muestra esta ayuda y sale" in spanish
    assert "ejemplos (ejecútalos desde la carpeta raíz del repositorio):" in spanish
    commands = [line for line in english.splitlines() if line.startswith("  python -m calculators")]
    assert commands and all(line in spanish.splitlines() for line in commands)
    assert not english_lines(spanish.split("ejemplos (")[0])


def test_top_level_help_lists_exit_statuses_in_spanish(capsys):
    with pytest.raises(SystemExit):
        main(["--lang", "es", "--help"])
    out = capsys.readouterr().out
    assert "estado de salida:" in out and "se imprimió el resultado" in out and "141" in out


def test_the_parser_is_english_again_after_a_spanish_run(capsys):
    main(["--lang", "es", "recommend"])
    capsys.readouterr()
    assert "show this help message and exit" in build_parser().format_help()


@pytest.mark.parametrize("command", [
    ["vllm", "serve", "m", "--max-model-len", "32768", "--kv-cache-memory-bytes", "8000000000"],
    ["llama-server", "-c", "32768", "-np", "4", "-ctk", "q8_0", "-ctv", "q4_0", "-fa", "on"],
    ["OLLAMA_NUM_PARALLEL=4", "ollama", "serve"],
    ["python", "-m", "sglang.launch_server", "--model-path", "m"],
    ["mlx_lm.server", "--model", "m", "--max-kv-size", "4096"],
], ids=lambda c: c[0] if "=" not in c[0] else c[1])
def test_memory_plans_speak_spanish(command, capsys):
    gpu = [] if command[0].startswith("mlx") else ["--gpu", "h100-sxm-80gb"]
    main(["--lang", "es", "memory", "--model", "llama-3.1-8b", *gpu, "--", *command])
    out = capsys.readouterr().out
    assert out.startswith("motor: ") and "\npesos: " in out and "caché KV: " in out
    assert not english_lines(out), english_lines(out)


def test_memory_json_keeps_english_keys_and_spanish_notes(capsys):
    main(["--lang", "es", "memory", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--json", "--",
          "vllm", "serve", "m", "--max-model-len", "32768"])
    spanish = json.loads(capsys.readouterr().out)
    main(["memory", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80gb", "--json", "--",
          "vllm", "serve", "m", "--max-model-len", "32768"])
    english = json.loads(capsys.readouterr().out)
    assert spanish.keys() == english.keys()
    assert json.dumps(spanish) != json.dumps(english)
    assert "La concurrencia máxima supone" in json.dumps(spanish, ensure_ascii=False)


def test_reconcile_rows_speak_spanish(capsys):
    main(["--lang", "es", "reconcile", "--log", "tests/data/logs/vllm-v0.11-enginecore-qwen3-14b.log",
          "--model", "qwen3-14b"])
    out = capsys.readouterr().out
    assert "tamaño de la caché KV en tokens" in out and "concurrencia máxima" in out
    # one rounded input or several: the counted phrase ("la entrada impresa redondeada" / "las entradas ...")
    assert "coincide dentro del margen que permite la entrada impresa redondeada" in out \
        or "coincide dentro del margen que permiten las entradas impresas redondeadas" in out
    assert not english_lines(out), english_lines(out)
    # the frame of the report too, not only its rows: headings, table header, line counts
    assert out.startswith("motor: vLLM") and "cifra" in out.splitlines()[out.splitlines().index("") + 1]
    assert "líneas: " in out and "engine: " not in out and "lines: " not in out


def test_reconcile_json_keeps_english_keys(capsys):
    args = ["reconcile", "--log", "tests/data/logs/vllm-v0.11-enginecore-qwen3-14b.log", "--model", "qwen3-14b",
            "--json"]
    main(["--lang", "es", *args])
    spanish = json.loads(capsys.readouterr().out)
    main(args)
    english = json.loads(capsys.readouterr().out)
    assert spanish.keys() == english.keys()
    assert [row["figure"] for row in spanish["rows"]] == [row["figure"] for row in english["rows"]]
    assert [row["status"] for row in spanish["rows"]] == [row["status"] for row in english["rows"]]
    assert [row["label"] for row in spanish["rows"]] != [row["label"] for row in english["rows"]]


def test_plan_notes_speak_spanish(capsys):
    main(["--lang", "es", "plan", "--spec", "examples/plan.yaml"])
    out = capsys.readouterr().out
    assert "Se supone que las réplicas se reparten la carga por igual" in out
    assert "Replicas are assumed" not in out


def test_an_unreadable_log_is_a_spanish_error(capsys, tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("hello\n")
    assert main(["--lang", "es", "reconcile", "--log", str(log)]) == 2
    assert "No se reconoció ninguna línea de arranque" in capsys.readouterr().err
