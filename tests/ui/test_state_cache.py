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


def test_functions_of_the_same_name_in_different_files_do_not_share_a_cache(tmp_path):
    namespaces = []
    for number in (1, 2):
        source = tmp_path / f"page{number}.py"
        source.write_text(f"def run(x):\n    return {number}\n")
        namespace = {"__name__": "__main__"}
        exec(compile(source.read_text(), str(source), "exec"), namespace)
        namespaces.append(per_input_state()(namespace["run"]))
    assert [run(0) for run in namespaces] == [1, 2]
