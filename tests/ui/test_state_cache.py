"""`per_input_state` computes once per input state and language: the same state reuses the result, a changed
argument or a changed language computes again (a Spanish reader never gets an English result)."""

from calculators.i18n import _, language
from ui.state_cache import per_input_state

calls: list[tuple[str, int]] = []


@per_input_state(max_entries=8)
def _labelled(name: str, count: int) -> dict:
    calls.append((name, count))
    return {"label": _("Tool calls"), "count": count}


@per_input_state(max_entries=8)
def _other(name: str, count: int) -> str:
    return "other"


def setup_function() -> None:
    _labelled.clear()
    _other.clear()
    calls.clear()


def test_the_same_state_is_computed_once():
    first = _labelled("a", 1)
    again = _labelled("a", 1)
    assert first == again == {"label": "Tool calls", "count": 1}
    assert calls == [("a", 1)]


def test_a_changed_argument_computes_again():
    _labelled("a", 1)
    _labelled("a", 2)
    _labelled("b", 2)
    assert calls == [("a", 1), ("a", 2), ("b", 2)]


def test_the_language_is_part_of_the_key():
    english = _labelled("a", 1)
    with language("es"):
        spanish = _labelled("a", 1)
        assert _labelled("a", 1) == spanish
    assert english["label"] == "Tool calls"
    assert spanish["label"] == "Llamadas a herramientas"
    assert calls == [("a", 1), ("a", 1)]
    assert _labelled("a", 1)["label"] == "Tool calls"  # English is still cached for English readers
    assert len(calls) == 2


def test_two_decorated_functions_with_the_same_arguments_keep_their_own_results():
    assert _labelled("a", 1)["count"] == 1
    assert _other("a", 1) == "other"


#: What the test script's draw function made, run by run (filled from inside the AppTest script).
draws: list[str] = []


def _drawing_script() -> None:
    import streamlit as st

    from calculators.i18n import _, set_language
    from tests.ui.test_state_cache import draws
    from ui.state_cache import drawn_per_input_state

    set_language(st.session_state.get("lang", "en"))
    state = st.session_state.get("state", "a")

    def draw() -> str:
        draws.append(state)
        left, right = st.columns(2)
        left.markdown(_("Tool calls"))
        right.caption(f"state {state}")
        return f"returned {state}"

    with st.container():
        returned = drawn_per_input_state(f"test {state}", draw)
    st.caption(returned)  # drawn live: the result comes back on a replay too


def test_drawn_elements_are_replayed_per_state_and_language():
    from streamlit.testing.v1 import AppTest

    from ui.state_cache import _replayed

    _replayed.clear()
    draws.clear()
    at = AppTest.from_function(_drawing_script)
    at.run()
    shown = ([m.value for m in at.markdown], [c.value for c in at.caption])
    assert shown == (["Tool calls"], ["state a", "returned a"])
    at.run()
    assert ([m.value for m in at.markdown], [c.value for c in at.caption]) == shown
    assert draws == ["a"]  # the second run replayed the recorded elements
    at.session_state["state"] = "b"
    at.run()
    assert [c.value for c in at.caption] == ["state b", "returned b"]
    at.session_state["lang"] = "es"
    at.run()
    assert [m.value for m in at.markdown] == ["Llamadas a herramientas"]
    assert draws == ["a", "b", "b"]
    _replayed.clear()


def test_functions_of_the_same_name_in_different_files_do_not_share_a_cache(tmp_path):
    namespaces = []
    for number in (1, 2):
        source = tmp_path / f"page{number}.py"
        source.write_text(f"def run(x):\n    return {number}\n")
        namespace = {"__name__": "__main__"}
        exec(compile(source.read_text(), str(source), "exec"), namespace)
        namespaces.append(per_input_state()(namespace["run"]))
    assert [run(0) for run in namespaces] == [1, 2]
