"""Shell commands as people read and paste them: the program on the first line, then one flag per line."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

#: Launchers whose first words name a module rather than flags (`python -m sglang.launch_server`).
MODULE_LAUNCHERS = ("python", "python3")


def _is_flag(word: str) -> bool:
    """`--flag` or `-f`, not a negative number (`-np -1`)."""
    return word.startswith("-") and len(word) > 1 and not word[1].isdigit() and word[1] != "."


def program_length(words: Sequence[str]) -> int:
    """How many leading words name the program and its positional arguments (`vllm serve MODEL`,
    `python -m sglang.launch_server`): every word before the first flag, `-m MODULE` included after python."""
    start = 3 if len(words) >= 3 and words[0] in MODULE_LAUNCHERS and words[1] == "-m" else 0
    for index in range(start, len(words)):
        if _is_flag(words[index]):
            return max(index, 1)
    return len(words)


def continued_command(words: Sequence[str], env: Mapping[str, str] | None = None,
                      head_length: int | None = None) -> str:
    """`words` quoted for a POSIX shell over several lines: the environment and the first `head_length` words
    (default: `program_length`) on the first line, then one `--flag value` group per line ending in a backslash.

    One flag per line: a long command wrapped by the page broke flags at their hyphens ("--" then
    "context-length" on the next line), which reads as two words and pastes wrongly when retyped."""
    head = program_length(words) if head_length is None else head_length
    quoted = [shlex.quote(word) for word in words]
    prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in (env or {}).items())
    groups = [" ".join(([prefix] if prefix else []) + quoted[:head])]
    for word, raw in zip(quoted[head:], words[head:], strict=True):
        if _is_flag(raw) or len(groups) == 1:
            groups.append(word)
        else:
            groups[-1] += f" {word}"
    return " \\\n  ".join(groups)
