"""The Home page runs, explains the three request states, and reacts to its two inputs (AppTest)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from calculators.errors import ServewiseInputError
from calculators.simulator.request_states import request_states
from tests.support.markdown_tables import markdown_tables

HOME = str(Path(__file__).resolve().parents[2] / "pages" / "home.py")


def _metric(at: AppTest, label: str) -> str:
    """The request-states table's figure under `label` (its first row, bold in the page)."""
    table = next(table for table in markdown_tables([m.value for m in at.markdown]) if label in table.columns)
    return table[label][0].strip("*")


def test_home_runs_without_exception():
    at = AppTest.from_file(HOME).run(timeout=30)
    assert not at.exception
    assert at.title[0].value == "servewise"
    headers = [header.value for header in at.header]
    assert "Connections, queued requests, active sequences" in headers
    assert {"Four layers, four decisions", "How an engine shares its batch", "Where to start"} <= set(headers)
    assert any("estimate" in warning.value for warning in at.warning)


def test_defaults_show_one_copy_of_weights_for_many_connections():
    at = AppTest.from_file(HOME).run(timeout=30)
    assert _metric(at, "Open connections") == "100"
    assert _metric(at, "Waiting in the queue") == "92"
    assert _metric(at, "Active sequences") == "8"
    assert _metric(at, "Copies of the weights") == "1"
    # Product brief worked example: 8 sequences x 8,192 tokens x 128 KiB = 8 GiB of raw KV.
    assert any("hold 8\u00a0GiB of raw KV cache" in caption.value for caption in at.caption)


def test_changing_the_admission_limit_moves_requests_out_of_the_queue():
    at = AppTest.from_file(HOME).run(timeout=30)
    at.number_input(key="home_active").set_value(32).run(timeout=30)
    assert _metric(at, "Waiting in the queue") == "68"
    assert _metric(at, "Active sequences") == "32"
    assert any("hold 32\u00a0GiB of raw KV cache" in caption.value for caption in at.caption)


def test_fewer_connections_than_slots_leaves_no_queue():
    at = AppTest.from_file(HOME).run(timeout=30)
    at.number_input(key="home_connections").set_value(3).run(timeout=30)
    assert _metric(at, "Waiting in the queue") == "0"
    assert _metric(at, "Active sequences") == "3"


def test_request_states_split():
    states = request_states(open_connections=100, max_active_sequences=8)
    assert (states.active_sequences, states.queued_requests, states.weight_copies) == (8, 92, 1)


def test_request_states_reject_impossible_counts():
    with pytest.raises(ServewiseInputError):
        request_states(open_connections=-1, max_active_sequences=8)
    with pytest.raises(ServewiseInputError):
        request_states(open_connections=10, max_active_sequences=0)



def test_tools_list_every_page_the_sidebar_has_under_its_name_and_in_its_order():
    # app.py's navigation: st.Page("pages/x.py", title=_("Title"), ...), Home first.
    app = (Path(HOME).parents[1] / "app.py").read_text()
    sidebar = re.findall(r'st\.Page\(\s*"(pages/\w+\.py)",\s*title=_\("([^"]+)"\)', app)
    assert sidebar[0][0] == "pages/home.py" and len(sidebar) == app.count("st.Page(")
    source = Path(HOME).read_text()
    tools = re.findall(r'\("(pages/\w+\.py)", N_\("([^"]+)"\)', source[source.index("TOOLS = ["):])
    assert tools == sidebar[1:]


@pytest.mark.parametrize(("lang", "one", "many"), [
    ("en", ("1 open connection", "1 active sequence", "(1 KV cache)", "1 active sequence that reaches"),
     ("2 open connections", "2 active sequences", "(2 KV caches)", "2 active sequences that each reach")),
    ("es", ("1 conexión abierta", "1 secuencia activa", "(1 caché KV)", "1 secuencia activa que llega"),
     ("2 conexiones abiertas", "2 secuencias activas", "(2 cachés KV)", "2 secuencias activas que llegan")),
])
def test_the_request_diagram_counts_one_in_the_singular(lang, one, many):
    """At one connection and one admitted sequence the diagram read "1 open connections", "1 active sequences (1 KV
    caches)" and the worked example "1 active sequences that each reach" (issue 19 review: counted words through
    ngettext)."""
    from tests.support.page_runs import page_in_language

    for count, expected in ((1, one), (2, many)):
        at = page_in_language(HOME, lang, {"home_connections": str(count), "home_active": str(count)}).run()
        assert not at.exception
        text = "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])
        for phrase in expected:
            assert phrase in text.replace("\u00a0", " "), (phrase, count)
