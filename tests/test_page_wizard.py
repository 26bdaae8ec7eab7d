"""The wizard page: default flow, a shared link's answers, and contradictory answers."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "wizard.py")


def run_page(**query):
    at = AppTest.from_file(PAGE, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_default_answers_rank_engines_with_reasons():
    at = run_page()
    assert any("First candidate" in s.value for s in at.success)
    assert len(at.dataframe) >= 1
    assert any("shared API" in m.value or "scheduler" in m.value for m in at.markdown)


def test_shared_link_reproduces_the_answers():
    at = run_page(wiz_use="shared-api", wiz_prefixes="true", wiz_users="32")
    top = next(s.value for s in at.success if "First candidate" in s.value)
    assert "SGLang" in top
    assert any("token for token" in w.value for w in at.warning)


def test_contradictory_answers_show_a_clear_message():
    at = run_page(wiz_hardware="apple", wiz_os="windows")
    assert any("contradict" in e.value and "macos" in e.value for e in at.error)


def test_bad_link_value_falls_back_with_a_note():
    at = run_page(wiz_use="chatbot", wiz_users="-5")
    notes = " ".join(w.value for w in at.warning)
    assert "wiz_use" in notes and "wiz_users" in notes
    assert any("First candidate" in s.value for s in at.success)
