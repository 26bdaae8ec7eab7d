"""Flags in literal text become code spans (drawn whole on a page), and nothing else in the text changes."""

from reports.shell import continued_command
from reports.tables import flag_pieces, literal_with_flags, markdown_table


def test_each_flag_is_a_code_span_and_the_rest_stays_literal():
    """Issue 19: '--enable-auto-tool-choice' broke after its hyphens in the tool-call verdict table at 1024 px."""
    assert literal_with_flags("add: --enable-auto-tool-choice --tool-call-parser llama3_json") == (
        "add: `--enable-auto-tool-choice` `--tool-call-parser` llama3\\_json")
    assert literal_with_flags("see --kv-cache-dtype.") == "see `--kv-cache-dtype`."  # the full stop stays prose
    assert literal_with_flags("-ngl 99, --mem=0.9; OLLAMA_X") == "`-ngl` 99, `--mem=0.9`; OLLAMA\\_X"
    # words with hyphens, negative numbers and header names are not flags
    assert literal_with_flags("non-streaming -1 x-api-key") == "non-streaming -1 x-api-key"
    assert literal_with_flags("a|b *c*") == "a\\|b \\*c\\*"


def test_a_literal_table_cell_shows_its_flags_as_code():
    table = markdown_table([{"Flags": "--chat-template, --trust-request-chat-template"}], literal=True)
    assert table.splitlines()[-1] == "| `--chat-template`, `--trust-request-chat-template` |"


def test_a_launch_command_is_one_flag_per_line():
    """Issue 19: wrapped on the wizard page, '--context-length' broke after its '--'."""
    words = ["python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
             "--context-length", "8192", "--enable-mixed-chunk"]
    assert continued_command(words) == (
        "python -m sglang.launch_server \\\n  --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
        "  --context-length 8192 \\\n  --enable-mixed-chunk")
    assert continued_command(["llama-server", "-m", "m.gguf", "-np", "-1"]) == (
        "llama-server \\\n  -m m.gguf \\\n  -np -1")  # a negative value stays with its flag
    assert continued_command(["ollama", "serve"], {"OLLAMA_NUM_PARALLEL": "4"}) == "OLLAMA_NUM_PARALLEL=4 ollama serve"


def test_a_flag_and_its_value_are_one_code_span():
    """The tool-call verdicts showed "add: `--tool-call-parser` llama3_json": the value outside the span, so the
    flag and its value did not copy as one piece. Each flag with its value is one span, with a plain space."""
    pieces = flag_pieces(["--enable-auto-tool-choice", "--tool-call-parser llama3_json",
                          "--runner pooling --convert embed", "-np -1", "--chat-template FILE"])
    assert literal_with_flags(f"add: {pieces}") == (
        "add: `--enable-auto-tool-choice` `--tool-call-parser llama3_json` `--runner pooling` `--convert embed` "
        "`-np -1` `--chat-template FILE`")
    table = markdown_table([{"Flags": f"añadir: {flag_pieces(['--tool-call-parser llama3_json'])}"}], literal=True)
    assert table.splitlines()[-1] == "| añadir: `--tool-call-parser llama3_json` |"
    # without the joiner a word after a flag is prose, as before
    assert literal_with_flags("see --kv-cache-dtype for details") == "see `--kv-cache-dtype` for details"
