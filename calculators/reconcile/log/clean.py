"""Turn pasted text into log lines stripped of colour codes and of the prefixes other tools add.

A log reaches servewise through journald, docker compose, a notebook, a wrapper's own logger or a
markdown quote. Each layer adds a prefix; the engine's own text starts after them. The prefixes are
removed here (repeatedly, since they nest), keeping what they say about where a line came from: the
program (`ollama[123]:`) and the device or worker (`TP0`, `(VllmWorkerProcess pid=521)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Real escape sequences, and the same codes where a copy lost the ESC byte ("[34m1.14.608[0m").
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|\[(?:\d{1,3}(?:;\d{1,3})*)?m")

_MAX_PREFIXES = 8


@dataclass(frozen=True)
class LogLine:
    """One line of the log: its engine text, where it sits in the paste, and what its prefixes said."""

    number: int  # 1-based line number in the pasted text
    text: str  # the engine's own text, prefixes and colour codes removed, trailing blanks removed
    device: str | None = None  # 'TP0' (SGLang), 'VllmWorkerProcess pid=521' (vLLM worker), ...
    program: str | None = None  # program named by a syslog/docker/binding prefix (e.g. Ollama's)


def _syslog(match: re.Match[str]) -> dict[str, str]:
    return {"program": match.group("prog")}


# Each pattern removes one prefix; named groups `prog` and `device` are kept when present.
_PREFIXES: tuple[re.Pattern[str], ...] = (
    re.compile(r"^>\s?"),  # markdown quote
    # docker compose: "ollama  | ", "llama-1  | "
    re.compile(r"^(?P<prog>[A-Za-z0-9][\w.-]*)\s+\|\s"),
    # journald / syslog: "Jul 24 16:07:57 vega ollama[114917]: ", host may be "<ollama server>"
    re.compile(r"^[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} (?:<[^>]*>|\S+) (?P<prog>[\w./-]+?)(?:\[\d+\])?: "),
    # Go's standard log: "2024/07/21 15:40:57 routes.go:1096: INFO "
    re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? (?:[\w.-]+\.go:\d+: (?:INFO|WARN|ERROR|DEBUG) )?"),
    # "2026-05-14 22:14:30.967 | " (log shippers, supervisors)
    re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)? \|\s"),
    # RFC 3339 timestamps from docker logs -t / CI: "2025-01-06T01:31:18.605614617Z "
    re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s+"),
    re.compile(r"^\[\d{4}-\d{2}-\d{2}T[^\]]*\]\s*"),
    # python logging in a wrapper: "2025-03-07 23:50:27,531 - __main__ - INFO - "
    re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[,.]\d+ - [\w.]+ - [A-Z]+ - "),
    # SGLang: "[2025-03-27 21:33:30 TP0] " or "[2025-11-30 11:18:05] "
    re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?(?: (?P<device>[^\]]+))?\]\s?"),
    # vLLM worker processes: "(VllmWorkerProcess pid=521) ", "(EngineCore_DP0 pid=7130) "
    re.compile(r"^\((?P<device>[\w.-]+(?: [\w.=-]+)*? pid=\d+)\)\s+"),
    # vLLM logger: "INFO 02-20 00:01:02 kv_cache_utils.py:522] ", "INFO 04-12 08:21:19 [worker.py:267] "
    re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[?[\w./-]+:\d+\]\s?"),
    re.compile(r"^\[[\w./-]+\.py:\d+\]\s?"),
    # llama.cpp with --log-timestamps / --log-prefix: "1.14.608.510 I ", "[47161] 0.14.912.338 D "
    re.compile(r"^\[\d+\]\s+(?=\d+\.\d{2}\.\d{3}\.\d{3} )"),
    re.compile(r"^\d+\.\d{2}\.\d{3}\.\d{3} [IWEDT] "),
    # bindings that tag llama.cpp output: "llama[2]: ", "[llama Debug]: "
    re.compile(r"^(?P<prog>[A-Za-z][\w-]*)\[\d+\]:\s"),
    re.compile(r"^\[llama \w+\]:\s"),
)


def strip_colours(text: str) -> str:
    """Text without ANSI colour/cursor codes (also the bare '[34m' form a copy can leave behind)."""
    return _ANSI.sub("", text)


def clean_line(number: int, raw: str) -> LogLine:
    """Remove colour codes and nested prefixes from one raw line, keeping device/program hints."""
    text = strip_colours(raw).replace("\t", " ").rstrip()
    device: str | None = None
    program: str | None = None
    for _ in range(_MAX_PREFIXES):
        stripped = text.lstrip()
        for pattern in _PREFIXES:
            match = pattern.match(stripped)
            if match and match.end() > 0:
                groups = match.groupdict()
                if groups.get("device"):
                    device = groups["device"].strip()
                if groups.get("prog"):
                    program = program or groups["prog"]
                text = stripped[match.end() :]
                break
        else:
            break
    return LogLine(number=number, text=text.strip(), device=device, program=program)


def split_lines(text: str) -> list[LogLine]:
    """All lines of a pasted log, cleaned, numbered from 1 as the user sees them."""
    if not text:
        return []
    raw_lines = re.split(r"\r\n|\r|\n", text)
    return [clean_line(i, raw) for i, raw in enumerate(raw_lines, start=1)]


_DUMP_END = re.compile(r"[)}]\s*$")


def continuation(lines: list[LogLine], index: int, dump_start: re.Pattern[str], limit: int = 4) -> str:
    """Text of lines that a paste wrapped off the end of a long config dump that `dump_start` opens (joined
    without spaces)."""
    line = lines[index]
    if not dump_start.search(line.text) or _DUMP_END.search(line.text):
        return ""
    parts: list[str] = []
    for follower in lines[index + 1 : index + 1 + limit]:
        if follower.device or follower.program or not follower.text or " " in follower.text[:1]:
            break
        if re.match(r"^(?:INFO|WARNING|ERROR|DEBUG)\b|^\[?\d{4}-\d{2}-\d{2}", follower.text):
            break
        parts.append(follower.text)
        if _DUMP_END.search(follower.text):
            break
    return "".join(parts)
