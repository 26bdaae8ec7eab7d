"""Spanish messages of the calculators keep what a reader copies: flags, engine variables and code words.

A translation may reword a sentence but never a flag (`--max-model-len`, `-np`), an environment variable
(`OLLAMA_NUM_PARALLEL`) or a placeholder; and the calculators' errors come out in the language asked for.
"""

from __future__ import annotations

import pytest

from calculators.errors import ServewiseInputError
from calculators.i18n import language
from tests.calculators.test_i18n_catalog import spanish
from tests.support.fact_claims import ENV, FLAG


def _copied_words(text: str) -> set[str]:
    return set(FLAG.findall(text)) | set(ENV.findall(text))


def test_spanish_keeps_every_flag_and_variable_of_the_english():
    changed = []
    for entry in spanish():
        if not entry.id or not entry.string:
            continue
        ids = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for english, text in zip(ids, strings, strict=False):
            lost = _copied_words(english) - _copied_words(text)
            if lost:
                changed.append(f"{english[:70]!r}: {sorted(lost)}")
    assert not changed, "translations that drop or respell a flag or variable:\n" + "\n".join(changed)


def test_a_calculator_error_follows_the_language():
    from calculators.engines.llama_cpp.scheduler import LlamaCppPolicy

    def message() -> str:
        with pytest.raises(ServewiseInputError) as caught:
            LlamaCppPolicy(ctx_size=4, parallel=8).scheduler_spec()
        return str(caught.value)

    with language("es"):
        spanish_text = message()
    english_text = message()
    assert "cada slot necesita contexto" in spanish_text and "ctx_size 4" in spanish_text
    assert "each slot needs context" in english_text
