"""MLX LM live conformance: tiny local models (models.py), the cases (matrix.py) and the runner that records what
mlx-lm allocates (runner.py, run with the MLX venv: `.venv-mlx/bin/python -m tests.support.mlx_conformance.runner`).

models.py and matrix.py are plain data, imported by the fast test too; only runner.py imports mlx.
"""

from tests.support.paths import DATA_DIR

RECORDINGS = DATA_DIR / "conformance" / "mlx_lm" / "recordings.json"
