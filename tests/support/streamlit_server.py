"""Serve a Streamlit app from the repository root on a free localhost port for the browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 60


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_health(base_url: str, process: subprocess.Popen, timeout_s: float = SERVER_START_TIMEOUT_S) -> float:
    """Seconds until /_stcore/health answers 'ok'; RuntimeError if the server exits or never answers."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout_s:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
                if response.status == 200 and response.read().strip() == b"ok":
                    return time.perf_counter() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout_s} s")


def stop(process: subprocess.Popen) -> None:
    """Terminate a server process, killing it if it has not exited 10 s later."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextmanager
def served(command: list[str], log_path: Path) -> Iterator[str]:
    """Run a Streamlit server command (given its --server.* options here) from the repository root; its base URL."""
    port = free_port()
    command = [
        *command,
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for_health(base_url, process)
        except RuntimeError as exc:
            pytest.fail(f"{exc}:\n{log_path.read_text()}")
        yield base_url
    finally:
        stop(process)




def app_url_fixture(app: Path, name: str):
    """A module-scoped fixture serving one test app (a script under tests/browser/apps/); it yields the base URL.

    Use as `my_app_url = app_url_fixture(Path(__file__).parent / "apps" / "my_app.py", "my-app")` in a test module.
    """

    @pytest.fixture(scope="module")
    def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
        command = [sys.executable, "-m", "streamlit", "run", str(app.resolve().relative_to(REPO_ROOT))]
        with served(command, tmp_path_factory.mktemp(name) / "server.log") as url:
            yield url

    return app_url
