"""Every message a person can read has a Spanish entry, and each translation keeps its placeholders.

The messages are extracted from the sources exactly as `make i18n` extracts them (babel.cfg: every _(), N_()
and ngettext() in the code, and the wizard's prose in knowledge/wizard.yaml), so a new English string without a
Spanish entry fails here, naming it. Run `make i18n` and write the Spanish in calculators/locale/es/.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from tests.support.paths import REPO_ROOT

KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
SPANISH_PO = REPO_ROOT / "calculators" / "locale" / "es" / "LC_MESSAGES" / "servewise.po"
#: Messages that are the same in every language (product names, commands, code); said here, not left empty.
SAME_IN_EVERY_LANGUAGE: frozenset[str] = frozenset()


def extracted_messages() -> Catalog:
    """The messages babel.cfg extracts from the repository, as a catalog."""
    with (REPO_ROOT / "babel.cfg").open() as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    catalog = Catalog()
    for _filename, lineno, message, _comments, _context in extract_from_dir(
        str(REPO_ROOT), method_map, options_map, keywords=KEYWORDS, strip_comment_tags=True
    ):
        catalog.add(message, None, [(_filename, lineno)])
    return catalog


def spanish() -> Catalog:
    with SPANISH_PO.open("rb") as handle:
        return read_po(handle, locale="es")


def _placeholders(text: str) -> set[str]:
    try:
        return {field for _literal, field, _spec, _conv in string.Formatter().parse(text) if field is not None}
    except ValueError:
        return set(re.findall(r"\{[^{}]*\}", text))


def untranslated(es: Catalog) -> list[str]:
    """Extracted messages with no usable (non-empty, non-fuzzy) entry in `es`."""
    missing = []
    for message in extracted_messages():
        if not message.id or message.id in SAME_IN_EVERY_LANGUAGE:
            continue
        entry = es.get(message.id)
        strings = entry.string if entry is not None and isinstance(entry.string, tuple) else (entry and entry.string,)
        if entry is None or entry.fuzzy or not all(strings):
            missing.append(message.id if isinstance(message.id, str) else message.id[0])
    return missing


def test_every_extracted_message_has_a_spanish_entry():
    missing = untranslated(spanish())
    assert not missing, (
        f"{len(missing)} message(s) without Spanish (run `make i18n`, then translate them in {SPANISH_PO}):\n"
        + "\n".join(f"  {m!r}" for m in missing[:40])
    )


def test_translations_keep_every_placeholder():
    broken = []
    for entry in spanish():
        if not entry.id or not entry.string:
            continue
        ids = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if any(_placeholders(s) != _placeholders(ids[0]) for s in strings):
            broken.append(ids[0])
    assert not broken, "translations whose {placeholders} differ from the English:\n" + "\n".join(broken)


def test_the_check_sees_the_pages_and_the_wizard_prose():
    ids = {m.id for m in extracted_messages()}
    assert "Memory & capacity" in ids and "Four layers, four decisions" in ids
    assert any(isinstance(i, str) and i.startswith("An occasional local query gains little") for i in ids)


def test_an_untranslated_message_is_caught():
    es = spanish()
    es.delete("Memory & capacity")
    assert untranslated(es) == ["Memory & capacity"]


def test_no_message_is_hidden_inside_an_f_string():
    """Babel does not extract `_("...")` written inside an f-string's braces (Python 3.11 tokenizes the f-string as
    one string), so such a message never reaches the catalog and stays English: build it outside the f-string."""
    import io
    import tokenize

    hidden = []
    for folder in ("app.py", "pages", "ui", "reports", "calculators", "cli", "knowledge"):
        root = REPO_ROOT / folder
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
                text = token.string
                is_f = token.type == tokenize.STRING and "f" in text[: text.find(text[-1])].lower()
                if is_f and re.search(r"""\b_\(\s*['"]""", text):
                    hidden.append(f"{path.relative_to(REPO_ROOT)}:{token.start[0]}")
    assert not hidden, "_() with a literal inside an f-string (not extracted): " + ", ".join(hidden)


#: A format spec inside a placeholder (`{x:,}`, `{x:.2f}`, `{x:.0%}`, `{x:g}`, `{x:+d}`), or a percent sign
#: written after one: Python would write the number the English way whatever the reader's language.
def _formats_its_own_number(text: str) -> bool:
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:  # not a format string (prose with a stray brace): nothing is interpolated
        return False
    # JSON shown as an example ('{"model_type": ...}') is no format field: its "name" is quoted
    return any(field is not None and spec and _FIELD.fullmatch(field) for _literal, field, spec, _conv in fields) or (
        bool(re.search(r"\{\w+\}\s?%", text)))


_FIELD = re.compile(r"\w*(\.\w+|\[\w+\])*")


def test_no_message_formats_its_own_numbers():
    """Numbers go into messages already written by calculators/units.py (number, compact, percent, significant)."""
    offenders = []
    for message in extracted_messages():
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        if message.id and any(_formats_its_own_number(text) for text in ids):
            offenders.append(f"{message.locations[0][0]}:{message.locations[0][1]}: {ids[0][:90]!r}")
    assert not offenders, (
        "messages that format a number with a Python spec (English digits in Spanish); pass number()/compact()/"
        "percent()/significant() from calculators.units instead:\n" + "\n".join(offenders)
    )


def test_the_number_spec_check_sees_each_kind_of_spec():
    for text in ("{n:,} rows", "{x:.2f} GiB", "{share:.0%} less", "{t:g} s", "{score:+d}", "by {padding}%",
                 "by {padding} %"):
        assert _formats_its_own_number(text), text
    for text in ("{n} rows", "{value!r} is not a number", "not allowed with argument %s", "{{literal}}",
                 '{"model_type": "llama", "num_hidden_layers": 32, ...}'):
        assert not _formats_its_own_number(text), text


#: A percentage typed into a message ("76 %", "0.1\u00a0%"), where calculators/units.percent would space its sign as
#: the reader's language does: English "76%", Spanish "76\u00a0%" (an English text read "76 %" beside "-13%").
_TYPED_PERCENT = re.compile(r"\d[ \u00a0]?%")


def test_no_message_types_a_percentage():
    """Every percentage a person reads is written by calculators/units.percent (signed: reports.numbers.signed_percent),
    so English and Spanish each space the sign one way on every page."""
    offenders = sorted({t[:100] for t in _catalog_texts() if _TYPED_PERCENT.search(_prose(t))})
    assert not offenders, "percentages typed into a message (pass percent(fraction) instead):\n" + "\n".join(offenders)


def test_the_typed_percentage_check_sees_each_spacing():
    for text in ("report 76 % for", "under 0.1\u00a0% of", "a 5% margin"):
        assert _TYPED_PERCENT.search(text), text
    for text in ("Most failed or rejected (%)", "(i % 8 == 4)", "{share} of each prompt", "% of KV capacity"):
        assert not _TYPED_PERCENT.search(text), text


#: "slot(s)", "motor(es)", "la(s)": a plural guessed in brackets instead of the word for the real count (ngettext).
#: "time (s)" (seconds, after a space) is a unit, not a plural.
_BRACKET_PLURAL = re.compile(r"\w\((?:s|es|as|os)\)")
#: "2 x heads": a product written with the letter x; people read "×" (code spans such as `-np 2` are left alone).
_LETTER_TIMES = re.compile(r"(?<=\S) x (?=\S)")


def _prose(text: str) -> str:
    """`text` without its code spans (flags and commands keep their own spelling)."""
    return re.sub(r"`[^`]*`", "", text)


def _catalog_texts() -> list[str]:
    texts = []
    for message in extracted_messages():
        texts += [t for t in (message.id if isinstance(message.id, tuple) else (message.id,)) if t]
    for entry in spanish():
        texts += [t for t in (entry.string if isinstance(entry.string, tuple) else (entry.string,)) if t]
    return texts


def test_counted_words_not_bracket_plurals():
    """A count reads '1 slot' / '3 slots' in English and '1 capa' / '3 capas' in Spanish: ngettext with the count."""
    offenders = sorted({t[:100] for t in _catalog_texts() if _BRACKET_PLURAL.search(_prose(t))})
    assert not offenders, "bracket plurals (write ngettext(singular, plural, count)):\n" + "\n".join(offenders)


def test_products_are_written_with_the_times_sign():
    offenders = sorted({t[:100] for t in _catalog_texts() if _LETTER_TIMES.search(_prose(t))})
    assert not offenders, "' x ' for a product (write ' × '):\n" + "\n".join(offenders)


def test_the_typography_checks_see_what_they_look_for():
    assert _BRACKET_PLURAL.search("{n} slot(s)") and _BRACKET_PLURAL.search("motor(es) desconocido(s)")
    assert _BRACKET_PLURAL.search("en la(s) GPU")
    assert not _BRACKET_PLURAL.search(_prose("TTFT p99 (s)")) and not _BRACKET_PLURAL.search("time (s), shared")
    assert _LETTER_TIMES.search("2 x {heads} KV heads") and not _LETTER_TIMES.search("2 × {heads}")
    assert not _LETTER_TIMES.search(_prose("run `a x b` here")) and not _LETTER_TIMES.search("x86 and 2x")


def _english_and_spanish(es: Catalog) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each entry of `es` as (its English text, the singular's for a plural; its Spanish strings, every plural form)."""
    for message in es:
        english = message.id if isinstance(message.id, str) else (message.id or ("",))[0]
        yield english, message.string if isinstance(message.string, tuple) else (message.string or "",)


def test_offload_is_never_translated_as_download():
    """The Spanish memory page read "RAM del host para descarga" next to "Descargar el plan" (issue 19 review):
    "descarga" is a download. Offloading layers (to the GPU or to host RAM) is written as where the layers go."""
    offenders = []
    for english, strings in _english_and_spanish(spanish()):
        if english and "offload" in english.lower() and "download" not in english.lower():
            offenders += [english[:80] for text in strings if "descarg" in text.lower()]
    assert not offenders, "'offload' written as a download ('descarga'):\n" + "\n".join(offenders)


#: English terms with a Spanish name: a Spanish message never keeps the English term (the speed bands read
#: "errores leave-one-out" in the Spanish UI until session 11).
ENGLISH_TERMS_IN_SPANISH = {"leave-one-out": "dejando uno fuera"}


def english_terms_left(es: Catalog) -> list[str]:
    """Spanish translations in `es` that still carry an English term of ENGLISH_TERMS_IN_SPANISH, with the term."""
    offenders = []
    for english, strings in _english_and_spanish(es):
        for term, spanish_term in ENGLISH_TERMS_IN_SPANISH.items():
            offenders += [f"{english[:80]} ('{term}' -> '{spanish_term}')" for text in strings if term in text.lower()]
    return offenders


def test_spanish_never_keeps_an_english_term():
    offenders = english_terms_left(spanish())
    assert not offenders, "Spanish translations that keep an English term:\n" + "\n".join(offenders)


def test_the_english_term_check_sees_a_kept_term():
    es = Catalog(locale="es")
    es.add("single stream (leave-one-out)", "un solo flujo (Leave-one-out)")
    es.add(
        ("leave-one-out, {n} measurement", "leave-one-out, {n} measurements"),
        ("dejando uno fuera, {n} medición", "leave-one-out, {n} mediciones"),
    )
    es.add("fit's leave-one-out errors", "errores en validación cruzada dejando uno fuera")
    assert [line.split(" ('")[0] for line in english_terms_left(es)] == [
        "single stream (leave-one-out)",
        "leave-one-out, {n} measurement",
    ]


#: A placeholder or a figure, ONE plain space, then a unit: a space a browser may break ("14,96" / "GiB" in a narrow
#: column). Messages write a no-break space there instead ("{gib}\u00a0GiB": calculators/units.UNIT_SPACE), in the
#: English message and in its Spanish translation alike.
_SPLIT_FIGURE = re.compile(
    r"(?:\{\w*\}|(?<![\w.,])\d(?:[\d.,]*\d)?) (?:GiB|MiB|KiB|TiB|GB/s|GB|MB|KB|TB|ms|s|tok/s|tokens/s|requests/s"
    r"|peticiones/s|tokens?|bytes?|TFLOPS|%|B|W)(?![\w/])"
)
#: English messages that repeat an engine's own text word for word, spaced as the engine spaces it: vLLM's
#: ValueError when one request cannot fit (kv_cache_utils.py; test_conformance.py finds its head in servewise's
#: refusal) and vLLM's log line on raising the attention block size (mamba.py). Their Spanish is ours, and joined.
ENGINE_WORDING = ("To serve at least one request with the model's max seq len", "Setting attention block size to")


def test_figures_keep_their_unit_in_every_message():
    english = [t for m in extracted_messages() for t in (m.id if isinstance(m.id, tuple) else (m.id,))
               if t and not t.startswith(ENGINE_WORDING)]
    translated = [t for e in spanish() if e.id for t in (e.string if isinstance(e.string, tuple) else (e.string,)) if t]
    offenders = sorted({f"{match.group(0)!r} in {t[:90]!r}" for t in english + translated
                        for match in _SPLIT_FIGURE.finditer(_prose(t))})
    assert not offenders, "a figure and its unit joined by a breakable space (write \\u00a0):\n" + "\n".join(offenders)


def test_the_unit_check_sees_a_breakable_space_and_only_that():
    assert _SPLIT_FIGURE.search("{gib} GiB") and _SPLIT_FIGURE.search("a prompt de {n} tokens")
    assert _SPLIT_FIGURE.search("under 0,1 % of it") and _SPLIT_FIGURE.search("{rate} requests/s")
    assert not _SPLIT_FIGURE.search("{gib}\u00a0GiB") and not _SPLIT_FIGURE.search("{n} sequences")
    assert not _SPLIT_FIGURE.search(_prose("`size = 8192.00 MiB`")) and not _SPLIT_FIGURE.search("Llama 3 8B")
