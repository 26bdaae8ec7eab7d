"""A page's sections replayed from ui/state_cache.drawn_per_input_state are the sections drawn afresh: the same
elements, in the same places, in English and in Spanish, and a rerun of the same state builds none of them again."""

from __future__ import annotations

import pytest

from bench.typical_states import TYPICAL_STATES
from tests.support.page_runs import page_in_language
from tests.support.paths import REPO_ROOT
from ui import background, state_cache

#: Pages that replay sections, each in its typical shared state (bench/typical_states.py).
REPLAYING_PAGES = ("simulator.py", "operations.py", "formats.py", "memory.py")


#: Fields that differ from run to run whatever is replayed: a download button's lazily built file is registered anew.
PER_RUN_FIELDS = ("deferred_file_id",)


def _elements(at) -> list:
    """Every element and block of the page in tree order, as (kind, protobuf message)."""
    found = []

    def walk(node) -> None:
        children = getattr(node, "children", None)
        proto = getattr(node, "proto", None)
        if proto is not None:
            proto = type(proto).FromString(proto.SerializeToString())
            for field in PER_RUN_FIELDS:
                if field in proto.DESCRIPTOR.fields_by_name:
                    proto.ClearField(field)
        found.append((type(node).__name__, proto))
        if children is not None:
            for index in sorted(children):
                walk(children[index])

    walk(at._tree)
    return found


def _settled(at) -> None:
    """Run, let every section computed off the script thread finish, and run again (the page whole)."""
    at.run()
    for job in list(background._jobs.values()):
        job.exception(timeout=300)
    at.run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("page", REPLAYING_PAGES)
def test_a_replayed_rerun_shows_what_a_fresh_run_drew(page, lang, monkeypatch):
    drawn: list[str] = []
    asked: list[str] = []
    replaying = state_cache.drawn_per_input_state

    def counting(state, draw):
        asked.append(state)

        def counted():
            drawn.append(state)
            return draw()

        return replaying(state, counted)  # what the section computed, as the page uses it

    monkeypatch.setattr(state_cache, "drawn_per_input_state", counting)
    state_cache._replayed.clear()
    background.clear()
    at = page_in_language(str(REPO_ROOT / "pages" / page), lang, query=TYPICAL_STATES[page].query)
    _settled(at)
    state_cache._replayed.clear()
    drawn.clear()
    at.run()
    fresh = _elements(at)
    assert drawn, f"{page} drew no section through drawn_per_input_state"
    asked.clear()
    drawn.clear()
    at.run()
    assert asked and not drawn, f"{page}: a rerun of the same state built {drawn} again"
    assert _elements(at) == fresh
