"""Which engine wrote a log: count the lines only that engine prints."""

from __future__ import annotations

import re
from dataclasses import dataclass

from calculators.engines import ENGINES
from calculators.engines.base import LogReader
from calculators.reconcile.log.clean import LogLine


@dataclass(frozen=True)
class Detection:
    """The engine a log belongs to, the engine it relays (Ollama -> llama.cpp), and the evidence counts."""

    engine: str | None
    runner: str | None
    scores: dict[str, int]

    @property
    def rivals(self) -> list[str]:
        """Other engines with clear evidence of their own (several logs pasted together)."""
        return [
            name
            for name, score in self.scores.items()
            if score >= 2
            and name not in (self.engine, self.runner)
            and not (self.engine in ENGINES and name == reader_of(self.engine).relays)
        ]


def line_starts() -> re.Pattern[str]:
    """Where any engine's own text may start inside a line (to remove prefixes servewise does not know)."""
    starts = [reader.line_starts for reader in _readers().values() if reader.line_starts]
    return re.compile("|".join(f"(?:{start})" for start in starts))


def marker_patterns(engine: str | None, runner: str | None) -> tuple[re.Pattern[str] | None, re.Pattern[str]]:
    """(lines of this engine or the runner it relays, lines of any other engine) as two patterns."""
    readers = _readers()
    own = [r.markers.pattern for name, r in readers.items() if name in (engine, runner)]
    others = [r.markers.pattern for name, r in readers.items() if name not in (engine, runner)]
    join = "|".join
    return (re.compile(join(f"(?:{p})" for p in own)) if own else None), re.compile(join(f"(?:{p})" for p in others))


def reader_of(engine: str) -> LogReader:
    """The log reader of an engine `detect` named (it scores only engines that have one)."""
    reader = ENGINES[engine].log_reader
    assert reader is not None, engine
    return reader


def _readers() -> dict:
    return {engine.id: engine.log_reader for engine in ENGINES.values() if engine.log_reader}


def detect(lines: list[LogLine]) -> Detection:
    """Score every engine by its marker lines; an engine that relays another's lines (Ollama, llama.cpp's
    runner) wins when its own lines accompany them."""
    readers = _readers()
    scores = dict.fromkeys(readers, 0)
    for line in lines:
        if not line.text and not line.program:
            continue
        for name, reader in readers.items():
            if reader.markers.search(line.text):
                scores[name] += 1
            if reader.program_prefix and line.program and line.program.lower().startswith(reader.program_prefix):
                scores[name] += 1
    for name, reader in readers.items():
        if reader.relays and scores[name] > 0:
            runner = reader.relays if scores.get(reader.relays, 0) > 0 else None
            return Detection(engine=name, runner=runner, scores=scores)
    best = max(scores, key=lambda name: scores[name])
    if scores[best] == 0:
        return Detection(engine=None, runner=None, scores=scores)
    return Detection(engine=best, runner=None, scores=scores)
