"""Read an engine's start-up log: engine, version, geometry, settings and every printed memory figure.

The reconciliation compares `ParsedLog.figures` with a memory plan by name; see `model.py` for the
vocabulary and `precision.py` for "exact to the printed precision".
"""

from calculators.startup_log.model import Expected, Figure, LogGeometry, LogNote, ParsedLog
from calculators.startup_log.parse import parse_startup_log
from calculators.startup_log.precision import consistent, printed_decimals, units_interval

__all__ = [
    "Expected",
    "Figure",
    "LogGeometry",
    "LogNote",
    "ParsedLog",
    "consistent",
    "parse_startup_log",
    "printed_decimals",
    "units_interval",
]
