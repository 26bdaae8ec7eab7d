"""Where the repository and the test data are, for tests at any depth of tests/."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "tests" / "data"
LOG_DIR = DATA_DIR / "logs"
HF_CONFIG_DIR = DATA_DIR / "hf_configs"
PAGES_DIR = REPO_ROOT / "pages"
