"""Turn pasted text into log lines stripped of colour codes and of whatever other tools put around them.

A log reaches servewise through journald, docker compose, a notebook, a desktop app's own logger, a
web page or a markdown quote. Each layer adds something; the engine's own text starts after it. This
module removes, in order:

1. HTML left by a web page: a line copied as `…<BR>` (or several lines joined by `<br>`) is split back
   into lines, and entities such as `&quot;` are decoded;
2. the prefixes servewise knows (journald, docker compose, Go's log, vLLM/SGLang workers, llama.cpp's
   timestamps, ...), repeatedly since they nest, keeping what they say about where a line came from: the
   program (`ollama[123]:`) and the device or worker (`TP0`, `(VllmWorkerProcess pid=521)`);
3. anything else in front of an engine's own phrase: a number the person who pasted it added (`145: `),
   a diff marker (`+`/`-`), a desktop app's tag (`[llamacpp-backend] I `). The phrase must start at a
   word boundary, so a phrase inside unrelated text (`my_llama_context:`) is never taken.

Nothing is thrown away: every `LogLine` keeps its raw text and says what was removed (`stripped`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

# Real escape sequences, and the same codes where a copy lost the ESC byte ("[34m1.14.608[0m").
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|\[(?:\d{1,3}(?:;\d{1,3})*)?m")
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?(?:code|pre|span|div|p|tt|kbd|samp)(?:\s[^>]*)?>", re.IGNORECASE)

_MAX_PREFIXES = 8


@dataclass(frozen=True)
class LogLine:
    """One line of the log: its engine text, where it sits in the paste, and what was around it."""

    number: int  # 1-based line number in the pasted text (lines a `<br>` joined share their number)
    text: str  # the engine's own text: prefixes, colour codes and trailing blanks removed
    device: str | None = None  # 'TP0' (SGLang), 'VllmWorkerProcess pid=521' (vLLM worker), ...
    program: str | None = None  # program named by a syslog/docker/binding prefix (e.g. Ollama's)
    raw: str = ""  # the line as pasted (after splitting at HTML breaks), untouched
    stripped: tuple[str, ...] = ()  # what was removed, in words: 'journald prefix', 'HTML break', ...


@dataclass(frozen=True)
class _Prefix:
    pattern: re.Pattern[str]
    label: str


def _p(regex: str, label: str) -> _Prefix:
    return _Prefix(re.compile(regex), label)


# Each pattern removes one prefix; named groups `prog` and `device` are kept when present.
_PREFIXES: tuple[_Prefix, ...] = (
    _p(r"^>\s?", "markdown quote"),
    _p(r"^`+(?=\S)", "backtick"),
    # docker compose: "ollama  | ", "llama-1  | "
    _p(r"^(?P<prog>(?!\d+\s)[A-Za-z0-9][\w.-]*)\s+\|\s", "docker compose prefix"),  # not a line number
    # journald / syslog: "Jul 24 16:07:57 vega ollama[114917]: ", host may be "<ollama server>"; the month is
    # the machine's language: "oct. 30", "mai 17", "10月 19"
    _p(
        r"^(?:[^\W\d_]{3,5}\.?|\d{1,2}月) +\d{1,2}日? \d{2}:\d{2}:\d{2} (?:<[^>]*>|\S+) "
        r"(?P<prog>[\w./-]+?)(?:\[\d+\])?: ",
        "journald prefix",
    ),
    # Go's standard log: "2024/07/21 15:40:57 routes.go:1096: INFO "
    _p(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? (?:[\w.-]+\.go:\d+: (?:INFO|WARN|ERROR|DEBUG) )?",
       "Go log prefix"),
    # "2026-05-14 22:14:30.967 | " (log shippers, supervisors)
    _p(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)? \|\s", "timestamp prefix"),
    # RFC 3339 timestamps from docker logs -t / CI: "2025-01-06T01:31:18.605614617Z "
    _p(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s+", "timestamp prefix"),
    _p(r"^\[\d{4}-\d{2}-\d{2}T[^\]]*\]\s*", "timestamp prefix"),
    # python logging in a wrapper: "2025-03-07 23:50:27,531 - __main__ - INFO - "
    _p(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[,.]\d+ - [\w.]+ - [A-Z]+ - ", "wrapper log prefix"),
    # desktop apps: "[2025-12-02 20:13:01][DEBUG] ", "[2025-03-19 13:47:17.097] [info] "
    _p(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?\]\s?\[(?:DEBUG|INFO|WARN|WARNING|ERROR|debug|info|warn|"
       r"warning|error)\]\s?", "app log prefix"),
    # SGLang: "[2025-03-27 21:33:30 TP0] " or "[2025-11-30 11:18:05] "
    _p(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?(?: (?P<device>[^\]]+))?\]\s?", "timestamp prefix"),
    # vLLM worker processes: "(VllmWorkerProcess pid=521) ", "(EngineCore_DP0 pid=7130) "
    _p(r"^\((?P<device>[\w.-]+(?: [\w.=-]+)*? pid=\d+)\)\s+", "worker prefix"),
    # vLLM logger: "INFO 02-20 00:01:02 kv_cache_utils.py:522] ", "INFO 04-12 08:21:19 [worker.py:267] "
    _p(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[?[\w./-]+:\d+\]\s?",
       "vLLM log prefix"),
    _p(r"^\[[\w./-]+\.py:\d+\]\s?", "vLLM log prefix"),
    # llama.cpp with --log-timestamps / --log-prefix: "1.14.608.510 I ", "[47161] 0.14.912.338 D "
    _p(r"^\[\d+\]\s+(?=\d+\.\d{2}\.\d{3}\.\d{3} )", "llama.cpp log prefix"),
    _p(r"^\d+\.\d{2}\.\d{3}\.\d{3} [IWEDT] ", "llama.cpp log prefix"),
    # bindings that tag llama.cpp output: "llama[2]: ", "[llama Debug]: "
    _p(r"^(?P<prog>[A-Za-z][\w-]*)\[\d+\]:\s", "binding prefix"),
    _p(r"^\[llama \w+\]:\s", "binding prefix"),
)
# Added by the person who pasted: "145: ", "145 | ", "  12  ". Only removed when an engine phrase follows.
_NUMBERING = re.compile(r"^\s*\d{1,6}(?:\s*[:|│]\s+|\t+|\s{2,})")
_DIFF = re.compile(r"^[+-](?![+-])\s?")


def strip_colours(text: str) -> str:
    """Text without ANSI colour/cursor codes (also the bare '[34m' form a copy can leave behind)."""
    return _ANSI.sub("", text)


def _strip_known(text: str) -> tuple[str, str | None, str | None, list[str]]:
    device: str | None = None
    program: str | None = None
    removed: list[str] = []
    for _unused in range(_MAX_PREFIXES):
        stripped = text.lstrip()
        for prefix in _PREFIXES:
            match = prefix.pattern.match(stripped)
            if match and match.end() > 0:
                groups = match.groupdict()
                if groups.get("device"):
                    device = groups["device"].strip()
                if groups.get("prog"):
                    program = program or groups["prog"]
                removed.append(prefix.label)
                text = stripped[match.end() :]
                break
        else:
            break
    return text, device, program, removed


def _cut_before_phrase(text: str, phrases: re.Pattern[str] | None) -> tuple[str, str | None]:
    """(text from the first engine phrase at a word boundary, what stood before it) or (text, None)."""
    if phrases is None or not text or phrases.match(text):
        return text, None
    for match in phrases.finditer(text):
        before = text[: match.start()]
        if before and not (before[-1].isalnum() or before[-1] in "_./\\"):  # not inside a word or a path
            return text[match.start() :], before
    return text, None


def _describe(before: str) -> str:
    if _NUMBERING.fullmatch(before):
        return "line number"
    if _DIFF.fullmatch(before):
        return "diff marker"
    return f"prefix {before.strip()!r}"


def clean_line(number: int, raw: str, phrases: re.Pattern[str] | None = None) -> LogLine:
    """Remove colour codes and nested prefixes from one raw line, keeping device/program hints.

    `phrases` (the engines' known line openings) lets anything else in front of one be removed too.
    """
    text = strip_colours(raw).replace("\t", " ").rstrip()
    removed: list[str] = []
    if _HTML_TAG.search(text) or "&" in text:
        unescaped = html.unescape(_HTML_TAG.sub("", text)).replace("\xa0", " ")
        if unescaped != text:
            removed.append("HTML markup")
            text = unescaped
    text, device, program, known = _strip_known(text)
    removed += known
    text, before = _cut_before_phrase(text.lstrip(), phrases)
    if before is not None:
        removed.append(_describe(before))
        text2, device2, program2, known2 = _strip_known(text)  # an engine prefix after the app's own
        if known2:
            text, device, program = text2, device2 or device, program2 or program
            removed += known2
    return LogLine(
        number=number,
        text=text.strip().rstrip("`").rstrip(),
        device=device,
        program=program,
        raw=raw,
        stripped=tuple(removed),
    )


def split_lines(text: str, phrases: re.Pattern[str] | None = None) -> list[LogLine]:
    """All lines of a pasted log, cleaned, numbered from 1 as the user sees them.

    A line holding several log lines joined by HTML breaks gives one `LogLine` per part, all with the
    pasted line's number; a trailing `<BR>` is just removed.
    """
    if not text:
        return []
    lines: list[LogLine] = []
    for number, raw in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        parts = _HTML_BREAK.split(raw)
        broken = len(parts) > 1
        for part in parts:
            if broken and not part.strip() and len(parts) > 1 and part is parts[-1]:
                continue  # the break ended the line
            line = clean_line(number, part, phrases)
            if broken:
                line = LogLine(number=line.number, text=line.text, device=line.device, program=line.program,
                               raw=raw, stripped=("HTML break", *line.stripped))
            lines.append(line)
    return lines


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
