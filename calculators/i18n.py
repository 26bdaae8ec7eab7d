"""Text for people in their language: gettext lookups in Babel-maintained catalogs (English, Spanish).

Messages are written in English where they are used and looked up at display time in
`calculators/locale/<lang>/LC_MESSAGES/servewise.po` (kept in the repository; `make i18n` refreshes it
with Babel's extractor). The active language is a context variable set at the start of every script
run (each Streamlit session runs in its own thread) or by the CLI, so two readers in different
languages never see each other's text. English needs no catalog: a message is its own English text.

Use `_("...")` for text built at run time, `N_("...")` to mark a module-level constant for the
extractor (translate it with `_()` where it is shown), and `ngettext` for counted phrases.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import cast

from babel import Locale
from babel.messages.pofile import read_po

SUPPORTED_LANGUAGES: tuple[str, ...] = ("en", "es")
DEFAULT_LANGUAGE = "en"
DOMAIN = "servewise"
LOCALE_DIR = Path(__file__).with_name("locale")

_language: contextvars.ContextVar[str] = contextvars.ContextVar("servewise_language", default=DEFAULT_LANGUAGE)


def supported_language(value: str | None) -> str | None:
    """The supported language a browser header, `LANG` value or URL parameter asks for, or None.

    Accepts `es`, `es-ES`, `es_ES.UTF-8`, or an Accept-Language list such as `es-ES,es;q=0.9,en;q=0.8`
    (the first supported entry wins, in the order given).
    """
    if not value:
        return None
    for entry in value.split(","):
        tag = entry.split(";")[0].strip().split(".")[0].replace("_", "-").lower()
        primary = tag.split("-")[0]
        if primary in SUPPORTED_LANGUAGES:
            return primary
    return None


def set_language(lang: str) -> None:
    """Make `lang` (one of SUPPORTED_LANGUAGES) the language of this thread's script run or command."""
    if lang not in SUPPORTED_LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; servewise speaks {', '.join(SUPPORTED_LANGUAGES)}")
    _language.set(lang)


def current_language() -> str:
    """The language text is being produced in right now."""
    return _language.get()


@contextmanager
def language(lang: str) -> Iterator[None]:
    """Produce text in `lang` inside the `with` block, then go back to the previous language."""
    if lang not in SUPPORTED_LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; servewise speaks {', '.join(SUPPORTED_LANGUAGES)}")
    token = _language.set(lang)
    try:
        yield
    finally:
        _language.reset(token)


@lru_cache(maxsize=8)
def babel_locale(code: str) -> Locale:
    """Babel's Locale for `code`, parsed once per process (parsing it on every number took 2/3 of the formatting)."""
    return Locale.parse(code)


@lru_cache(maxsize=len(SUPPORTED_LANGUAGES))
def catalog(lang: str) -> dict[str | tuple[str, ...], str | tuple[str, ...]]:
    """Translated, non-fuzzy messages of `lang`'s catalog, keyed by the English message (read once)."""
    if lang == DEFAULT_LANGUAGE:
        return {}
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        po = read_po(handle, locale=lang)
    translated: dict[str | tuple[str, ...], str | tuple[str, ...]] = {}
    for message in po:
        if not message.id or message.fuzzy:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if all(strings):
            # babel's types allow list ids and None strings; read_po gives a str (a tuple for plural entries)
            # and `all(strings)` has ruled out empty ones
            translated[cast("str | tuple[str, ...]", message.id)] = cast("str | tuple[str, ...]", message.string)
    return translated


def gettext(message: str) -> str:
    """`message` in the current language (the English text itself when no translation exists)."""
    found = catalog(current_language()).get(message)
    return found if isinstance(found, str) else message


def ngettext(singular: str, plural: str, count: float) -> str:
    """The singular or plural phrase for `count`, in the current language, by its CLDR plural rule (a fraction
    such as 0.5 takes the plural, as CLDR says for English and Spanish)."""
    lang = current_language()
    found = catalog(lang).get((singular, plural))
    index = plural_index(lang, count)
    if isinstance(found, tuple) and found:
        return found[min(index, len(found) - 1)]
    return singular if index == 0 else plural


#: CLDR plural categories in the order gettext numbers a catalog's msgstr forms: babel.plural.to_gettext writes a
#: language's Plural-Forms with its rule's categories in this order and "other" last (Spanish: one 0, many 1, other 2).
PLURAL_CATEGORY_ORDER: tuple[str, ...] = ("zero", "one", "two", "few", "many")


def plural_index(lang: str, count: float) -> int:
    """Which msgstr form of `lang`'s catalog a phrase counting `count` takes (0 = the singular), by its CLDR rule."""
    rule = babel_locale(lang).plural_form
    categories = [tag for tag in PLURAL_CATEGORY_ORDER if tag in rule.tags] + ["other"]
    return categories.index(rule(abs(count)))


def N_(message: str) -> str:  # the conventional gettext marker name
    """Mark a constant for extraction without translating it now; translate it with `_()` where shown."""
    return message


_ = gettext


def translated_word(words: Mapping[str, str], key: str) -> str:
    """`words[key]` (a message marked with `N_`) in the current language; a key the table lacks is returned as is."""
    return gettext(words[key]) if key in words else key
