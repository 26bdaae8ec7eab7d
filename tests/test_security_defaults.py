"""Pin the security settings in .streamlit/config.toml and `make run`'s command line.

Each assertion names why the setting matters; changing one of them should be a decision made in review,
not a side effect.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text())


def test_xsrf_protection_is_on():
    # Uploads are POSTs; without XSRF protection another site could post files through a visitor's browser.
    assert CONFIG["server"]["enableXsrfProtection"] is True


def test_usage_statistics_are_off():
    assert CONFIG["browser"]["gatherUsageStats"] is False


def test_uploads_are_capped_at_a_few_megabytes():
    # config.json and launch files are kilobytes; a multi-GB upload would only fill the server's memory.
    assert 1 <= CONFIG["server"]["maxUploadSize"] <= 10


def test_headless_on_localhost_with_the_viewer_toolbar():
    assert CONFIG["server"]["headless"] is True
    assert CONFIG["server"]["address"] == "127.0.0.1"
    assert CONFIG["client"]["toolbarMode"] == "viewer"
    assert CONFIG["server"].get("runOnSave", False) is False


def test_make_run_binds_localhost_headless():
    makefile = (REPO_ROOT / "Makefile").read_text()
    run_line = next(line for line in makefile.splitlines() if "-m ui.serve" in line)
    assert re.search(r"--server\.address 127\.0\.0\.1\b", run_line)
    assert "--server.headless true" in run_line


def test_streamlit_reads_the_same_values():
    """The file is parsed by Streamlit itself the way the tests above read it (no typo in a section name)."""
    from streamlit import config

    cwd = os.getcwd()
    os.chdir(REPO_ROOT)
    try:
        config.get_config_options(force_reparse=True)
        assert config.get_option("server.enableXsrfProtection") is True
        assert config.get_option("browser.gatherUsageStats") is False
        assert config.get_option("server.maxUploadSize") == CONFIG["server"]["maxUploadSize"]
        assert config.get_option("client.toolbarMode") == "viewer"
    finally:
        os.chdir(cwd)
        config.get_config_options(force_reparse=True)
