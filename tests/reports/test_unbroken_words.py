"""A hyphen inside a word in a Markdown table cell is a no-break hyphen; what a reader copies keeps its hyphens."""

from reports.tables import NO_BREAK_HYPHEN, Link, markdown_table, unbroken_words

NB = NO_BREAK_HYPHEN


def test_names_and_versions_in_a_cell_never_break_at_their_hyphens():
    """Issue 19 review at 1024 px: 'llama.cpp (llama-' / 'server)' in the tool-call verdicts, 'v0.33.0-' / 'rc2'
    in the facts currency table."""
    table = markdown_table([{"engine": "llama.cpp (llama-server)", "version": "v0.33.0-rc2"}])
    assert table.splitlines()[-1] == f"| llama.cpp (llama{NB}server) | v0.33.0{NB}rc2 |"
    assert unbroken_words("Qwen3-14B, non-streaming, 4-bit") == f"Qwen3{NB}14B, non{NB}streaming, 4{NB}bit"


def test_code_spans_flags_links_and_urls_keep_their_hyphens():
    assert unbroken_words("`--enable-auto-tool-choice` then x-y") == f"`--enable-auto-tool-choice` then x{NB}y"
    assert unbroken_words("``a-b`` c-d") == f"``a-b`` c{NB}d"
    assert unbroken_words("add --tool-call-parser=llama3-json here") == "add --tool-call-parser=llama3-json here"
    assert unbroken_words("see https://github.com/vllm-project/vllm now") == (
        "see https://github.com/vllm-project/vllm now")
    link = markdown_table([{"source": Link("arg-utils.py", "https://github.com/vllm-project/vllm/arg-utils.py")}])
    assert link.splitlines()[-1] == f"| [arg{NB}utils.py](https://github.com/vllm-project/vllm/arg-utils.py) |"


def test_minus_signs_dashes_and_leading_dashes_stay():
    assert unbroken_words("-1 and a - b, -np -1") == "-1 and a - b, -np -1"
    assert markdown_table([{"a": "--", "b": "x -- y"}]).splitlines()[-1] == "| -- | x -- y |"
