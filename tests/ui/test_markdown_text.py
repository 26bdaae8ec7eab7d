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
