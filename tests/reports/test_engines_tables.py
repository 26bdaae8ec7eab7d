"""The engines comparison's support lists: one pair of brackets per item, whatever the item's name holds."""

import pytest

from calculators.i18n import language
from knowledge import load_knowledge
from reports.engines_tables import comparison_groups, name_with_note


def test_a_note_goes_inside_brackets_the_name_already_has():
    assert name_with_note("TPU (Google)", "via plugin") == "TPU (Google, via plugin)"
    assert name_with_note("Vulkan", "experimental") == "Vulkan (experimental)"


@pytest.mark.parametrize(("lang", "tpu_text"), [("en", "TPU (Google, via plugin)"),
                                                ("es", "TPU (Google, mediante plugin)")])
def test_no_cell_of_the_comparison_reads_two_brackets_in_a_row(lang, tpu_text):
    """vLLM's TPU path is a plugin (knowledge/engines.yaml): it read "TPU (Google) (via plugin)" before."""
    with language(lang):
        cells = [str(value) for _title, frame in comparison_groups(load_knowledge().engines)
                 for value in frame.to_numpy().ravel()]
    assert not [cell for cell in cells if ") (" in cell]
    assert any(tpu_text in cell for cell in cells)
