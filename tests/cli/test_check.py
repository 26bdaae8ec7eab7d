"""The `check` verb: tool-call and embedding verdicts per engine, JSON for scripts, status 5 for CI."""

import json

from cli.main import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK, main
from tests.support.paths import REPO_ROOT

ST_DIR = REPO_ROOT / "tests" / "data" / "sentence_transformers" / "stella_en_1.5B_v5"


def test_tools_for_a_catalog_model_on_every_engine(capsys):
    assert main(["check", "tools", "--model", "llama-3.1-8b", "--json"]) == EXIT_OK
    checks = json.loads(capsys.readouterr().out)
    verdicts = {c["engine"]: c["verdict"] for c in checks}
    assert verdicts["vllm"] == "needs-flags" and verdicts["mlx-lm"] == "will-not-parse"
    vllm = next(c for c in checks if c["engine"] == "vllm")
    assert vllm["flags_to_add"] == ["--enable-auto-tool-choice", "--tool-call-parser llama3_json"]
    assert all(c["sources"] for c in checks)


def test_a_launch_command_that_will_not_parse_fails_the_check(capsys):
    status = main(["check", "tools", "--model", "qwen3-8b", "--engines", "vllm", "--",
                   "vllm", "serve", "Qwen/Qwen3-8B", "--enable-auto-tool-choice", "--tool-call-parser", "llama3_json"])
    assert status == EXIT_CHECK_FAILED
    assert "--tool-call-parser hermes" in capsys.readouterr().out
    ok = ["check", "tools", "--model", "qwen3-8b", "--engines", "vllm", "--",
          "vllm", "serve", "Qwen/Qwen3-8B", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    assert main(ok) == EXIT_OK


def test_embeddings_from_a_sentence_transformers_folder(capsys):
    assert main(["check", "embeddings", "--st-dir", str(ST_DIR), "--json"]) == EXIT_OK
    verdicts = {c["engine"]: c["verdict"] for c in json.loads(capsys.readouterr().out)}
    assert verdicts == {"ollama": "will-not-match", "llama-cpp": "will-not-match", "vllm": "will-match",
                        "sglang": "will-not-match", "mlx-lm": "not-served"}
    status = main(["check", "embeddings", "--model", "bge-m3", "--", "llama-server", "-m", "bge-m3.gguf",
                   "--embeddings", "-ub", "8192", "-b", "8192"])
    assert status == EXIT_OK


def test_bad_requests_are_one_line(capsys):
    assert main(["check", "tools", "--model", "bge-m3"]) == EXIT_BAD_INPUT
    assert "embedding model" in capsys.readouterr().err
    assert main(["check", "embeddings", "--model", "nope"]) == EXIT_BAD_INPUT
    assert main(["check", "tools", "--model", "qwen3-8b", "--engines", "tgi"]) == EXIT_BAD_INPUT
    assert "unknown engine" in capsys.readouterr().err


def test_a_template_on_standard_input(capsys, monkeypatch):
    import io

    template = (REPO_ROOT / "knowledge" / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(template.encode())))
    assert main(["check", "tools", "--template", "-", "--engines", "mlx-lm", "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)[0]["parser"] == "json_tools"


def test_a_gguf_carries_its_chat_template(capsys, monkeypatch, tmp_path):
    from tests.support import tiny_gguf

    template = (REPO_ROOT / "knowledge" / "chat_templates" / "meta-llama-Llama-3.1-8B-Instruct.jinja").read_text()
    finish = tiny_gguf._finish

    def with_template(writer):
        writer.add_chat_template(template)
        finish(writer)

    monkeypatch.setattr(tiny_gguf, "_finish", with_template)
    spec = tiny_gguf.TinyAttentionModel(name="t", arch="llama", n_layer=2, n_head=2, n_head_kv=1, head_dim=16,
                                        n_ctx_train=256)
    path = spec.write(tmp_path / "llama.gguf")
    assert main(["check", "tools", "--template", str(path), "--engines", "vllm", "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)[0]["recommended_parser"] == "llama3_json"
