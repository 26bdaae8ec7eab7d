"""The vLLM conformance harness: the case matrix and the runner that starts the real CPU build (run.py)."""
