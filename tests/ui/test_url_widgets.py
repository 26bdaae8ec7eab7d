"""Bad values in a shared link fall back to defaults with a visible note; good ones are applied."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).parent / "apps" / "url_widgets_app.py")
PEEKED_RIGHT = "looked-at values were the widgets' own: True"


def test_good_link_values_are_applied_without_notes():
    at = AppTest.from_file(APP)
    at.query_params.update({"t_choice": "b", "t_count": "5", "t_flag": "true", "t_picked": ["q"]})
    at.run()
    assert not at.exception
    assert not at.warning
    assert at.text[0].value == "values: b 5 True ['q']"
    assert at.text[2].value == PEEKED_RIGHT


def test_bad_link_values_fall_back_with_notes_that_survive_reruns():
    at = AppTest.from_file(APP)
    at.query_params.update({"t_choice": "zzz", "t_count": "nan", "t_flag": "maybe", "t_picked": ["p", "<b>x</b>"]})
    at.run()
    assert not at.exception
    assert at.text[0].value.startswith("values: a 3 False")
    assert at.text[2].value == PEEKED_RIGHT
    messages = " ".join(w.value for w in at.warning)
    for key in ("t_choice", "t_count", "t_flag", "t_picked"):
        assert key in messages
    at.run()
    assert len(at.warning) == 4


def test_out_of_range_and_repeated_values_are_explained():
    at = AppTest.from_file(APP)
    at.query_params.update({"t_count": "1e308", "t_choice": ["a", "b"]})
    at.run()
    messages = " ".join(w.value for w in at.warning)
    assert "outside the allowed range" in messages
    assert "2 times" in messages


def test_a_labelled_widget_reads_slugs_from_the_link_and_shows_names():
    at = AppTest.from_file(APP)
    at.query_params.update({"t_named": "mlx-lm", "t_several": ["vllm", "h100-sxm-80gb"]})
    at.run()
    assert not at.exception and not at.warning
    assert at.text[1].value == "named: mlx-lm ['vllm', 'h100-sxm-80gb']"
    named = at.selectbox(key="t_named")
    assert named.options == ["NVIDIA H100 SXM5 80 GB", "MLX LM", "vLLM"]
    assert at.text[2].value == PEEKED_RIGHT
    named.set_value("vllm").run()
    assert at.text[1].value.startswith("named: vllm")
    assert at.text[2].value == PEEKED_RIGHT
    assert at.query_params["t_named"] == "vllm"


def test_a_labelled_widget_notes_a_name_or_unknown_value_in_the_link():
    at = AppTest.from_file(APP)
    at.query_params.update({"t_named": "MLX LM"})
    at.run()
    assert at.text[1].value == "named: h100-sxm-80gb []"
    assert "t_named" in " ".join(w.value for w in at.warning)


def test_a_labelled_widget_at_its_default_stays_out_of_the_link():
    at = AppTest.from_file(APP).run()
    at.run()
    assert "t_named" not in at.query_params and "t_several" not in at.query_params


def test_a_labelled_widgets_own_default_follows_the_users_choice():
    """Issue 19: under 20 browser sessions a run drew the simulator's labelled GPU/model/engine widgets at their
    first option (Streamlit had lost their state while their keys stayed in Session State: it fell back to the
    widget's default, which was dropped then), so the engine knobs vanished. Each run now gives the widget the
    user's current choice as its default, so such a run draws the choice."""
    at = AppTest.from_file(APP).run()
    assert at.selectbox(key="t_named").proto.default == 0 and list(at.multiselect(key="t_several").proto.default) == []
    at.selectbox(key="t_named").select("vllm").run()
    at.multiselect(key="t_several").select("mlx-lm").run()
    at.run()
    assert at.selectbox(key="t_named").proto.default == 2  # vLLM, the third option
    assert list(at.multiselect(key="t_several").proto.default) == [1]  # MLX LM
    assert at.text[1].value == "named: vllm ['mlx-lm']"
    assert not at.exception


def _decimal_inputs_app() -> None:
    import streamlit as st

    from calculators.i18n import set_language
    from ui import url_widgets

    set_language(st.query_params.get("lang", "en"))
    url_widgets.number("Rate (requests/s)", key="d_rate", min_value=0.0, value=5.0)
    url_widgets.number("Price", key="d_price", min_value=0.0, value=0.15, help="US$ per kWh")
    url_widgets.number("Users", key="d_users", min_value=1, value=200)


def test_a_spanish_decimal_input_says_how_to_type_decimals_and_a_whole_number_input_does_not():
    """Chromium drops a comma typed into Streamlit's number input ('0,15' becomes 15): a reader whose decimal mark
    is a comma is told on every decimal input, in the help (measured in Chromium, ui/url_widgets.decimal_point_help)."""
    at = AppTest.from_function(_decimal_inputs_app)
    at.query_params["lang"] = "es"
    at.run()
    rate, price, users = at.number_input
    assert rate.help.startswith("Escribe los decimales con punto (0.15)") and "0,15 se leería como 15" in rate.help
    assert price.help.startswith("US$ per kWh\n\nEscribe los decimales con punto")
    assert not users.help
    english = AppTest.from_function(_decimal_inputs_app).run()
    assert not english.number_input[0].help and english.number_input[1].help == "US$ per kWh"


def test_values_looked_at_before_drawing_follow_a_change_the_user_made():
    """url_widgets.values_only (pages drawing their result before their inputs) reads what the widgets will return."""
    at = AppTest.from_file(APP)
    at.query_params.update({"t_count": "5", "t_named": "mlx-lm"})
    at.run()
    assert at.text[2].value == PEEKED_RIGHT
    at.number_input(key="t_count").set_value(7).run()
    at.toggle(key="t_flag").set_value(True).run()
    at.multiselect(key="t_picked").set_value(["p"]).run()
    assert at.text[0].value == "values: a 7 True ['p']"
    assert at.text[2].value == PEEKED_RIGHT


def _notes_app() -> None:
    import streamlit as st

    from calculators.i18n import set_language
    from ui import url_widgets

    set_language(st.query_params.get("lang", "en"))
    url_widgets.number("Number of GPUs", key="n_gpus", min_value=1, max_value=64, value=1)
    url_widgets.number("Arrival rate (requests/s)", key="n_rate", min_value=0.0, value=1.0)
    url_widgets.number("TTFT bound (s)", key="n_ttft", min_value=0.001, max_value=3600.0, value=1.0)
    url_widgets.selectbox("GPU", ["a100", "h100"], key="n_gpu")
    url_widgets.show_url_notes()


def _notes(lang: str, params: dict[str, str]) -> list[str]:
    at = AppTest.from_function(_notes_app)
    at.query_params.update({"lang": lang, **params})
    at.run()
    assert not at.exception
    return [warning.value for warning in at.warning]


def test_a_note_names_the_input_as_the_page_shows_it_and_writes_its_bounds_as_numbers():
    """A new user read "The link set mem_gpus to '-3', outside the allowed range 1–64" and "sim_rate ... range
    0.0–None" (issue 19 review): the note now names the input by its label, keeps the parameter to edit, writes
    bounds in the reader's language and says "smallest allowed value" for an input with a floor only."""
    gpus, rate, ttft, gpu = _notes("en", {"n_gpus": "-3", "n_rate": "-1", "n_ttft": "9999", "n_gpu": "b200"})
    assert gpus.startswith("The link set **Number of GPUs** (` n_gpus `) to ") and "range 1–64;" in gpus
    assert "None" not in rate and "below the smallest allowed value, 0;" in rate
    assert "range 0.001–3,600;" in ttft
    assert gpu.startswith("The link set **GPU** (` n_gpu `) to ") and "not one of the choices" in gpu
    spanish = _notes("es", {"n_gpus": "-3", "n_rate": "-1", "n_ttft": "9999"})
    assert spanish[0].startswith("El enlace pone **Number of GPUs** (` n_gpus `) a ")
    assert "por debajo del mínimo permitido, 0;" in spanish[1] and "None" not in spanish[1]
    assert "rango permitido 0,001–3.600;" in spanish[2]
