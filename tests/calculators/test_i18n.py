"""Message lookup in the reader's language: catalogs, plurals, fallbacks, per-thread isolation."""

import threading

import pytest

from calculators import i18n

CATALOG = r'''
msgid ""
msgstr ""
"Language: es\n"
"Plural-Forms: nplurals=3; plural=(n == 1 ? 0 : n != 0 && n % 1000000 == 0 ? 1 : 2);\n"

msgid "Memory per GPU"
msgstr "Memoria por GPU"

#, fuzzy
msgid "Context length"
msgstr "Longitud dudosa"

msgid "Not yet translated"
msgstr ""

msgid "{count} sequence"
msgid_plural "{count} sequences"
msgstr[0] "{count} secuencia"
msgstr[1] "{count} de secuencias"
msgstr[2] "{count} secuencias"
'''


@pytest.fixture
def spanish_catalog(tmp_path, monkeypatch):
    folder = tmp_path / "es" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "servewise.po").write_text(CATALOG, encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    i18n.catalog.cache_clear()
    yield
    i18n.catalog.cache_clear()


def test_english_is_the_message_itself(spanish_catalog):
    assert i18n.gettext("Memory per GPU") == "Memory per GPU"


def test_spanish_reads_the_catalog_and_falls_back_to_english(spanish_catalog):
    with i18n.language("es"):
        assert i18n.gettext("Memory per GPU") == "Memoria por GPU"
        assert i18n.gettext("Context length") == "Context length"  # fuzzy entries are not trusted
        assert i18n.gettext("Not yet translated") == "Not yet translated"
        assert i18n.gettext("Never extracted") == "Never extracted"
    assert i18n.current_language() == "en"


@pytest.mark.parametrize(("lang", "count", "expected"), [
    ("es", 1, "{count} secuencia"), ("es", 0, "{count} secuencias"), ("es", 2, "{count} secuencias"),
    # CLDR's 'many' for Spanish (a whole million: "un millón de secuencias") is the catalog's second form, not 'other'
    ("es", 1_000_000, "{count} de secuencias"), ("es", 2_000_000, "{count} de secuencias"),
    ("es", 0.5, "{count} secuencias"), ("es", 1_000_001, "{count} secuencias"),
    ("en", 1, "{count} sequence"), ("en", 2, "{count} sequences"),
])
def test_plural_forms_follow_the_language(spanish_catalog, lang, count, expected):
    with i18n.language(lang):
        assert i18n.ngettext("{count} sequence", "{count} sequences", count) == expected


def test_each_thread_keeps_its_own_language(spanish_catalog):
    seen: dict[str, str] = {}
    barrier = threading.Barrier(2)

    def run(name: str, lang: str) -> None:
        i18n.set_language(lang)
        barrier.wait()
        seen[name] = i18n.gettext("Memory per GPU")

    threads = [threading.Thread(target=run, args=("es", "es")), threading.Thread(target=run, args=("en", "en"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"es": "Memoria por GPU", "en": "Memory per GPU"}


@pytest.mark.parametrize(("value", "expected"), [
    ("es", "es"), ("es-MX", "es"), ("es_ES.UTF-8", "es"), ("fr-FR,es;q=0.8,en;q=0.5", "es"),
    ("en-US,en;q=0.9", "en"), ("fr-FR,de", None), ("", None), (None, None), ("C.UTF-8", None),
])
def test_supported_language_reads_headers_and_locale_names(value, expected):
    assert i18n.supported_language(value) == expected


def test_an_unsupported_language_is_refused():
    with pytest.raises(ValueError, match="speaks en, es"):
        i18n.set_language("fr")


def test_the_shipped_spanish_catalog_parses():
    i18n.catalog.cache_clear()
    assert isinstance(i18n.catalog("es"), dict)
