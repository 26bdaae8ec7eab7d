"""The start-up log check ("check against your engine"): read a log (log/),
run the engine's plan on its inputs and judge each printed figure (check.py, result.py)."""
