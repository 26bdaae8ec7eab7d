"""User text inside a Markdown message stays text: no link, image, emphasis or Streamlit directive."""


from streamlit.testing.v1 import AppTest

from ui.markdown_text import literal

APP = """
import streamlit as st
from ui.markdown_text import literal
st.error("Bad value: " + literal(st.query_params.get("v", "")))
"""


def test_literal_escapes_markdown_syntax():
    assert literal("![t](https://e.x/t.png)") == r"\!\[t\]\(https\:\/\/e\.x\/t\.png\)"
    assert literal(":red[x] **b** `c` $x$ <b>") == r"\:red\[x\] \*\*b\*\* \`c\` \$x\$ \<b\>"
    assert literal("plain words 42") == "plain words 42"


def test_a_message_with_user_text_keeps_no_link_syntax(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    at = AppTest.from_file(str(app))
    at.query_params["v"] = "![t](https://evil.example/t.png) [go](https://evil.example/)"
    at.run()
    assert not at.exception
    assert "](" not in at.error[0].value


def test_a_code_span_cannot_be_closed_by_the_text_inside_it():
    from ui.markdown_text import code_span

    assert code_span("-ngl 99") == "` -ngl 99 `"
    assert code_span("a`b") == "`` a`b ``"
    assert code_span("x``](https://evil.example)`") == "``` x``](https://evil.example)` ```"


def test_a_pasted_launcher_quoting_markdown_is_shown_as_text():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    page = str(Path(__file__).resolve().parents[2] / "pages" / "memory.py")
    at = AppTest.from_file(page, default_timeout=180)
    at.query_params["mem_command"] = "[click](https://evil.example/) serve"
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.warning if "launcher" in w.value]
    assert warnings and all("](https" not in w for w in warnings)
