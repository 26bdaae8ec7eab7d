"""Fetching config.json by repo id against a local stand-in for the hub (HF_ENDPOINT=http://127.0.0.1:PORT).

The stand-in answers the way the hub does for `hf_hub_download`: a HEAD then a GET on
/{repo}/resolve/{revision}/config.json, with X-Repo-Commit, ETag and Content-Length on success and
X-Error-Code (RepoNotFound, GatedRepo, EntryNotFound) on failure — the headers huggingface_hub's
hf_raise_for_status and get_hf_file_metadata read (huggingface_hub 2.4.0, utils/_http.py,
file_download.py). Every test uses a temporary cache directory, never the user's.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from huggingface_hub import constants as hf_constants
from huggingface_hub import file_download
from huggingface_hub.utils import _detect_agent, close_session

from calculators.model.hf_hub import (
    HubFetchError,
    architecture_from_hub,
    fetch_chat_template,
    fetch_config,
    fetch_embedding_pooling,
)

# Abandoned fetches keep retrying in daemon threads after their test; keep their warnings out of the log.
logging.getLogger("huggingface_hub").setLevel(logging.ERROR)

CONFIG = (Path(__file__).resolve().parents[2] / "data" / "hf_configs" / "Qwen3-0.6B.json").read_bytes()
TOKEN = "hf_secretTOKENvalue0123456789"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
EMBED_FILES = {  # the two sentence-transformers files, shaped as Qwen3-Embedding ships them
    "modules.json": json.dumps(
        [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ]
    ).encode(),
    "1_Pooling/config.json": json.dumps({"word_embedding_dimension": 1024, "pooling_mode_lasttoken": True}).encode(),
}


TEMPLATE = (Path(__file__).resolve().parents[3] / "knowledge" / "chat_templates" / "Qwen-Qwen3-0.6B.jinja").read_text()
TEMPLATE_FILES = {  # template/model keeps its template in tokenizer_config.json, jinja/model in its own file
    "template/model": {"tokenizer_config.json": json.dumps({"chat_template": TEMPLATE}).encode()},
    "jinja/model": {"tokenizer_config.json": b'{"model_max_length": 32768}', "chat_template.jinja": TEMPLATE.encode()},
}


class FakeHub(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str, str | None]]] = []  # shared by every request's handler
    broken_until_fixed = True  # "broken/model" answers 500 until a test flips this

    def log_message(self, *args):  # keep test output quiet
        pass

    def _answer(self, send_body: bool) -> None:
        FakeHub.seen.append((self.command, self.path, self.headers.get("authorization")))
        repo = "/".join(self.path.strip("/").split("/")[:2])
        if repo == "slow/model":
            time.sleep(1.0)
        if self.path.split("/resolve/main/")[-1] in TEMPLATE_FILES.get(repo, {}):
            return self._ok(TEMPLATE_FILES[repo][self.path.split("/resolve/main/")[-1]], send_body)
        if repo in TEMPLATE_FILES:
            return self._error(404, "EntryNotFound", "Entry not found", commit=True)
        if repo == "embed/model" and self.path.split("/resolve/main/")[-1] in EMBED_FILES:
            return self._ok(EMBED_FILES[self.path.split("/resolve/main/")[-1]], send_body)
        if repo in ("ok/model", "slow/model", "needs-token/model") and self.path.endswith("/config.json"):
            if repo == "needs-token/model" and self.headers.get("authorization") != f"Bearer {TOKEN}":
                return self._error(401, "GatedRepo", "Access to model needs-token/model is restricted.")
            return self._ok(CONFIG, send_body)
        if repo == "gated/model":
            return self._error(401, "GatedRepo", "Access to model gated/model is restricted.")
        if repo == "nofile/model":
            return self._error(404, "EntryNotFound", "Entry not found", commit=True)
        if repo == "broken/model" and FakeHub.broken_until_fixed:
            return self._error(500, None, "Internal error")
        return self._error(404, "RepoNotFound", "Repository not found")

    def _ok(self, body: bytes, send_body: bool) -> None:
        self.send_response(200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", f'"etag-{len(body)}"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def _error(self, status: int, code: str | None, message: str, commit: bool = False) -> None:
        self.send_response(status)
        if code:
            self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        if commit:
            self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        self._answer(send_body=False)

    def do_GET(self):
        self._answer(send_body=True)


@pytest.fixture
def hub(monkeypatch, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # nothing may land in the user's cache
    monkeypatch.delenv("HF_TOKEN", raising=False)
    # huggingface_hub builds its user agent once per process from an "agent harness" registry it
    # fetches from the endpoint fixed at import and caches under HF_HOME: give it an empty one so
    # no test sends that request anywhere or writes that file.
    monkeypatch.setattr(hf_constants, "AGENT_HARNESSES_PATH", str(tmp_path / "agent_harnesses.json"))
    monkeypatch.setattr(_detect_agent, "_registry", _detect_agent._EMPTY_REGISTRY)
    FakeHub.seen = []
    FakeHub.broken_until_fixed = True
    # huggingface_hub retries a failed metadata request with back-off (up to ~25 s); the deadline in
    # fetch_config is what bounds the user's wait, so here the library answers at the first failure.
    monkeypatch.setattr(file_download, "_DEFAULT_RETRY_ON_EXCEPTIONS", ())
    monkeypatch.setattr(file_download, "_DEFAULT_RETRY_ON_STATUS_CODES", ())
    close_session()  # huggingface_hub shares one HTTP client per process: start each test with a fresh one
    yield tmp_path / "cache"
    # A fetch abandoned at its deadline keeps running in its daemon thread; let it end before the
    # next test so it cannot disturb that test's connections.
    for thread in threading.enumerate():
        if thread.name == "servewise-hub-fetch":
            thread.join(timeout=10)
    server.shutdown()
    server.server_close()
    close_session()


def test_200_fetches_and_builds_architecture(hub):
    config = fetch_config("ok/model", cache_dir=hub)
    assert config == json.loads(CONFIG)
    assert [method for method, _, _ in FakeHub.seen] == ["HEAD", "GET"]
    assert FakeHub.seen[0][1] == "/ok/model/resolve/main/config.json"
    assert list(hub.rglob("config.json"))  # stored in the temporary cache
    arch = architecture_from_hub("ok/model", cache_dir=hub)
    assert (arch.name, arch.n_layers, arch.source) == ("ok/model", 28, "hf:ok/model")


def test_404_repo_not_found(hub):
    with pytest.raises(HubFetchError, match="missing/model .* was not found; check the repo id"):
        fetch_config("missing/model", cache_dir=hub)


def test_401_gated_says_to_accept_licence_and_set_token(hub):
    with pytest.raises(HubFetchError, match="is gated") as err:
        fetch_config("gated/model", cache_dir=hub)
    assert "HF_TOKEN" in str(err.value)


def test_token_is_sent_but_never_shown(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert fetch_config("needs-token/model", cache_dir=hub)["model_type"] == "qwen3"
    assert FakeHub.seen[0][2] == f"Bearer {TOKEN}"
    with pytest.raises(HubFetchError) as err:
        fetch_config("gated/model", cache_dir=hub)
    assert TOKEN not in str(err.value) and TOKEN not in repr(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_timeout_is_reported_as_such(hub):
    start = time.monotonic()
    with pytest.raises(HubFetchError, match="did not answer (successfully )?within 0.5\u00a0s"):
        fetch_config("slow/model", timeout_s=0.5, cache_dir=hub)
    assert time.monotonic() - start < 10


def test_missing_file_and_server_error(hub):
    with pytest.raises(HubFetchError, match="no config.json"):
        fetch_config("nofile/model", cache_dir=hub)
    with pytest.raises(HubFetchError, match="could not reach broken/model"):
        fetch_config("broken/model", cache_dir=hub)


def test_deadline_bounds_the_library_retries(hub, monkeypatch):
    monkeypatch.setattr(file_download, "_DEFAULT_RETRY_ON_STATUS_CODES", (500,))  # as shipped: retry 5xx
    with pytest.raises(HubFetchError, match="did not answer successfully within 1\u00a0s"):
        fetch_config("broken/model", timeout_s=1, cache_dir=hub)
    # Counted in requests, not seconds (a loaded machine only makes fewer): the library's own schedule is 6 tries
    # over 1 + 2 + 4 + 8 + 8 s of back-off (huggingface_hub utils/_http.py http_backoff); the deadline answers
    # after the first try or the one after the first 1 s wait.
    tries = [path for _method, path, _auth in FakeHub.seen if path.startswith("/broken/model/")]
    assert 1 <= len(tries) <= 3, tries
    FakeHub.broken_until_fixed = False  # the abandoned fetch's next retry gets a final answer and ends


def test_unreachable_endpoint(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(HubFetchError, match="could not reach ok/model on http://127.0.0.1:9"):
        fetch_config("ok/model", timeout_s=5, cache_dir=hub)


def test_bad_repo_id_is_refused_before_any_request(hub):
    with pytest.raises(HubFetchError, match="owner/name"):
        fetch_config("not a repo", cache_dir=hub)
    assert FakeHub.seen == []


def test_embedding_pooling_from_sentence_transformers_files(hub):
    info = fetch_embedding_pooling("embed/model", cache_dir=hub)
    assert (info.pooling, info.output_dimension, info.normalized) == (("last_token",), 1024, True)
    # a repo without modules.json is simply not a sentence-transformers model
    assert fetch_embedding_pooling("nofile/model", cache_dir=hub) is None


SENTINEL = "hf_SENTINELtokenNeverShown9876543210"


def test_token_never_reaches_urls_logs_or_messages(hub, monkeypatch, caplog, capsys):
    """With HF_TOKEN set, every outcome (success, gated, missing, server error, timeout) keeps it secret:
    not in any requested URL, not in any log record of any logger (DEBUG included), not in any message."""
    monkeypatch.setenv("HF_TOKEN", SENTINEL)
    caplog.set_level(logging.DEBUG)  # every logger, including huggingface_hub, httpx and httpcore
    logging.getLogger("huggingface_hub").setLevel(logging.DEBUG)
    messages = []
    fetch_config("ok/model", cache_dir=hub)
    for repo, timeout_s in [("gated/model", 5), ("missing/model", 5), ("nofile/model", 5), ("slow/model", 0.5),
                            ("broken/model", 1)]:  # fmt: skip
        with pytest.raises(HubFetchError) as err:
            fetch_config(repo, timeout_s=timeout_s, cache_dir=hub)
        messages += [str(err.value), repr(err.value)]
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    captured = capsys.readouterr()
    assert all(SENTINEL not in path for _, path, _ in FakeHub.seen)
    assert any(auth == f"Bearer {SENTINEL}" for _, _, auth in FakeHub.seen)  # it was really sent, as a header
    assert SENTINEL not in caplog.text
    assert all(SENTINEL not in message for message in messages)
    assert SENTINEL not in captured.out + captured.err


def test_offline_mode_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_TOKEN", SENTINEL)
    with pytest.raises(HubFetchError, match="offline mode is on") as err:
        fetch_config("ok/model", timeout_s=2, cache_dir=tmp_path)
    assert SENTINEL not in str(err.value)


def test_the_default_timeout_bounds_every_fetch():
    """Pages and the CLI call fetch_config without a timeout: the default must be finite and short."""
    import inspect

    from calculators.model.hf_hub import DEFAULT_TIMEOUT_S

    assert 0 < DEFAULT_TIMEOUT_S <= 30
    assert inspect.signature(fetch_config).parameters["timeout_s"].default == DEFAULT_TIMEOUT_S


def test_chat_template_from_tokenizer_config_or_its_own_file(hub):
    assert fetch_chat_template("template/model", cache_dir=hub) == TEMPLATE
    assert fetch_chat_template("jinja/model", cache_dir=hub) == TEMPLATE
    with pytest.raises(HubFetchError, match="no chat template"):
        fetch_chat_template("nofile/model", cache_dir=hub)
