"""calculators/, knowledge/ and reports/ are pure Python: every module imports with streamlit unavailable."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE_PACKAGES = ("calculators", "knowledge", "reports")


def core_modules() -> list[str]:
    modules = []
    for package in CORE_PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


def test_every_core_module_imports_without_streamlit():
    modules = core_modules()
    assert len(modules) > 40  # the scan really walks the packages
    code = "import importlib, sys\nsys.modules['streamlit'] = None\n" + "".join(
        f"importlib.import_module({name!r})\n" for name in modules
    ) + "from knowledge import load_knowledge\nload_knowledge()\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
