"""Tables as Markdown: the one renderer for a table that is read rather than explored (sorted, filtered).

A Markdown table is drawn by the Markdown element every page already loads. `st.dataframe` and `st.table`
need Arrow's script (about 0.74 MB, plus 0.49 MB for the dataframe grid), which a browser opening a shared
link fetches and compiles before the table appears, so a page's main result is a Markdown table and an
interactive dataframe, where sorting matters, sits lower on the page. No Streamlit calls here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

from calculators.i18n import _
from reports.numbers import compact, number, percent

#: Characters Markdown would read as markup (emphasis, links, HTML, code, math, table cells).
MARKDOWN_SPECIALS = "\\*_$[]<>|`~"


@dataclass(frozen=True)
class Link:
    """A table cell that links `text` to `url` (the text is shown literally)."""

    text: str
    url: str


def source_link(value: object, text: str | None = None, path_parts: int = 1) -> object:
    """A source cell: a URL becomes a Link reading `text` (default: its last `path_parts` path parts, e.g.
    arg_utils.py or vllm/arg_utils.py); anything else (a repository path, a blank) is returned as it is."""
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        return value
    return Link(text or "/".join(value.rstrip("/").split("/")[-path_parts:]), value)


def literal_markdown(text: str) -> str:
    """`text` with every Markdown special character escaped, so it shows exactly as written."""
    return "".join("\\" + char if char in MARKDOWN_SPECIALS else char for char in text)


#: Joins a flag to its value in a cell's text (`flag_pieces`), so the cell draws the two as one code span.
FLAG_VALUE_JOINER = "\u00a0"
#: A command-line flag inside prose: `--name`, `--name=value`, `-x`, or a flag joined to its value by
#: FLAG_VALUE_JOINER; not inside a word ("non-streaming") nor a negative number ("-1").
FLAG = re.compile(rf"(?<![\w`-])--?[A-Za-z][\w.-]*(?:[={FLAG_VALUE_JOINER}][^\s,;)`|]+)?")


#: A space in a command piece that a value follows (not another flag; a negative number is a value).
_BEFORE_A_VALUE = re.compile(r" (?!--?[A-Za-z])")


def flag_pieces(command_pieces: Sequence[str]) -> str:
    """`command_pieces` ("--enable-auto-tool-choice", "--tool-call-parser llama3_json") as one cell's text, each
    flag joined to its value by FLAG_VALUE_JOINER: a literal table cell (`literal_with_flags`) draws each flag with
    its value as one code span, which copies as one piece of the command (it showed `--tool-call-parser` llama3_json,
    the value outside the span). A space before another flag stays a space: each flag is a span of its own."""
    return " ".join(_BEFORE_A_VALUE.sub(FLAG_VALUE_JOINER, piece) for piece in command_pieces)


def literal_with_flags(text: str) -> str:
    """`text` shown exactly as written (see `literal_markdown`), with every flag in it a code span (a flag joined to
    its value by `flag_pieces`: one span holding both, with a plain space between them).

    A page lays a code span out whole (ui/markup.PAGE_STYLE); as plain text Chromium broke flags after their
    hyphens ("--enable-" / "auto-tool-choice", "--" / "chat-template-content-format") in narrow columns."""
    parts, last = [], 0
    for match in FLAG.finditer(text):
        # a sentence's full stop or colon after a flag's value is not part of it (nor a joiner with no value after it)
        flag = match.group(0).rstrip(".:").rstrip(FLAG_VALUE_JOINER)
        parts += [literal_markdown(text[last:match.start()]), f"`{flag.replace(FLAG_VALUE_JOINER, ' ')}`"]
        last = match.start() + len(flag)
    return "".join(parts) + literal_markdown(text[last:])


#: The no-break hyphen (U+2011): drawn as a hyphen, but a line never breaks after it.
NO_BREAK_HYPHEN = "\u2011"
#: A hyphen inside a word: between letters, digits, dots or brackets ("llama-server", "v0.33.0-rc2", "Qwen3-14B"),
#: not a flag's leading dashes ("--name") nor a minus sign ("-1").
_WORD_HYPHEN = re.compile(r"(?<=[\w.)\]])-(?=[\w(\[])")
#: What a cell's hyphens stay plain in, to be copied as written: code spans (a flag, a command), flags in prose,
#: link targets and bare URLs.
_KEPT_AS_WRITTEN = re.compile(rf"(`+).*?\1|\]\([^)]*\)|(?:https?://|www\.)[^\s<>|]+|{FLAG.pattern}")


def unbroken_words(cell_markdown: str) -> str:
    """`cell_markdown` (one table cell) with every hyphen inside a word a no-break hyphen, outside code spans,
    flags, link targets and URLs: Chromium breaks a line after a hyphen, and a narrow column read "llama.cpp
    (llama-" / "server)" and "v0.33.0-" / "rc2" as two words. The word moves to the next line whole instead."""
    if not _WORD_HYPHEN.search(cell_markdown):  # most cells: nothing to join (a page draws hundreds per run)
        return cell_markdown
    parts, last = [], 0
    for match in _KEPT_AS_WRITTEN.finditer(cell_markdown):
        parts += [_WORD_HYPHEN.sub(NO_BREAK_HYPHEN, cell_markdown[last:match.start()]), match.group(0)]
        last = match.end()
    return "".join(parts) + _WORD_HYPHEN.sub(NO_BREAK_HYPHEN, cell_markdown[last:])


def _cell(value: Any, literal: bool) -> str:
    """One cell: booleans as yes/blank, None and NaN blank, numbers in the reader's language, links as Markdown
    links, line breaks as <br>; pipes always escaped, and every other Markdown character too when `literal`. A
    hyphen inside a word is a no-break hyphen (`unbroken_words`): names and versions are never split at one."""
    if isinstance(value, Link):
        return unbroken_words(f"[{literal_markdown(value.text)}]({value.url.replace(')', '%29').replace(' ', '%20')})")
    if isinstance(value, bool):
        return _("yes") if value else ""
    if value is None or isinstance(value, int | float):
        return _number_cell(value)
    text = literal_with_flags(str(value)) if literal else str(value).replace("|", "\\|")
    return unbroken_words(text.replace("\r\n", "<br>").replace("\n", "<br>"))


def _number_cell(value: float | None) -> str:
    """A number as a table shows it: integers grouped, other numbers as rounded by the table's builder (up to 4
    decimals), in the reader's language; None and NaN blank."""
    if value is None or value != value:
        return ""
    return number(value) if isinstance(value, int) else compact(value, 4)


def localized_frame(frame: pd.DataFrame, percents: Sequence[str] = (), percent_decimals: int = 1,
                    decimals: Mapping[str, int] | None = None) -> Styler:
    """`frame` for `st.dataframe` with its numbers written in the reader's language ("1.234,5" in Spanish);
    the `percents` columns hold fractions (0.125) shown as percentages ("12,5 %"), and `decimals` fixes how
    many decimals a column shows (money: 2); other numbers show as rounded by the table's builder.

    The grid draws a Styler's display text but sorts by the values underneath, so a column stays sorted as
    numbers (checked in Chromium: 9,25 < 25,00 < 1.234,50 < 100.000,00); a number column formatted by the
    grid itself ("localized") would follow the browser's language rather than the reader's choice.
    """
    numeric = [column for column in frame.columns if pd.api.types.is_numeric_dtype(frame[column])
               and not pd.api.types.is_bool_dtype(frame[column])]
    integers = {column for column in numeric if pd.api.types.is_integer_dtype(frame[column])}
    formats: dict[str, Any] = {
        column: (lambda v: "" if v != v else number(v)) if column in integers else _number_cell for column in numeric}
    formats.update({column: lambda v: "" if v is None or v != v else percent(v, percent_decimals)
                    for column in percents})
    formats.update({column: (lambda v, places=places: "" if v is None or v != v else number(v, places))
                    for column, places in (decimals or {}).items()})
    return frame.style.format(formats)


def markdown_table(rows: Sequence[Mapping[str, Any]], literal: bool = False) -> str:
    """A Markdown table of `rows` (keys of the first row are the header); "" for no rows.

    With `literal`, cell text is shown exactly as written (flags, metric names, paths); without it, cells may
    carry Markdown of their own (bold, `code`)."""
    if not rows:
        return ""
    header = list(rows[0])
    lines = ["| " + " | ".join(_cell(key, literal) for key in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(row.get(key, ""), literal) for key in header) + " |" for row in rows]
    return "\n".join(lines)


def frame_markdown(frame: pd.DataFrame, index: bool = False, literal: bool = False) -> str:
    """A DataFrame as a Markdown table (see `markdown_table`); with `index`, the index becomes the first column."""
    table = frame.reset_index() if index else frame
    if index and frame.index.name is None:
        table = table.rename(columns={"index": ""})
    records = [{str(k): v.item() if hasattr(v, "item") else v for k, v in row.items()}  # numpy -> Python numbers
               for row in table.to_dict(orient="records")]
    return markdown_table(records, literal)


def columns_markdown(columns: Mapping[str, Sequence[Any]], literal: bool = False) -> str:
    """A Markdown table given column by column ({header: values}, all the same length)."""
    headers = list(columns)
    return markdown_table([dict(zip(headers, values, strict=True)) for values in zip(*columns.values(), strict=True)],
                          literal)
