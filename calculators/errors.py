"""Domain exceptions a user can cause; each message says what to change."""

from pydantic_core import ErrorDetails

from calculators.i18n import N_, _, translated_word


class ServewiseInputError(ValueError):
    """Input servewise cannot use (bad number, malformed config, unknown flag value...)."""


class ConfigFieldMissing(ServewiseInputError):
    """A model config lacks a field its architecture family needs; the message names both."""

    def __init__(self, field: str, family: str):
        super().__init__(_("config.json for a '{family}' model has no '{field}', which servewise needs for that "
                           "family").format(family=family, field=field))
        self.field = field
        self.family = family


class LaunchCommandError(ServewiseInputError):
    """A launch command line that cannot be parsed (quoting, flag without value, unknown engine)."""


#: pydantic's error types a user's input can cause, in the reader's words (pydantic writes English only).
_VALIDATION_TEXT = {
    "missing": N_("required, and not given"),
    "extra_forbidden": N_("not a field servewise knows here"),
    "int_parsing": N_("should be a whole number"),
    "int_type": N_("should be a whole number"),
    "int_from_float": N_("should be a whole number, without a fractional part"),
    "float_parsing": N_("should be a number"),
    "float_type": N_("should be a number"),
    "finite_number": N_("should be a finite number"),
    "bool_parsing": N_("should be true or false"),
    "bool_type": N_("should be true or false"),
    "string_type": N_("should be text"),
    "list_type": N_("should be a list"),
    "tuple_type": N_("should be a list"),
    "dict_type": N_("should be a mapping of field: value pairs"),
    "model_type": N_("should be a mapping of field: value pairs"),
    "model_attributes_type": N_("should be a mapping of field: value pairs"),
}


def validation_problem(error: ErrorDetails) -> str:
    """One pydantic error (an item of `ValidationError.errors()`) as a phrase in the reader's language.

    Messages servewise's own validators raise are already the reader's ('Value error, ' is dropped); pydantic's
    own checks are written from their type and limits; a type servewise has no words for keeps pydantic's text.
    """
    kind, ctx = error.get("type", ""), error.get("ctx") or {}
    if kind in _VALIDATION_TEXT:
        return _(_VALIDATION_TEXT[kind])
    limits = {
        "greater_than": (_("should be greater than {limit}"), "gt"),
        "greater_than_equal": (_("should be at least {limit}"), "ge"),
        "less_than": (_("should be less than {limit}"), "lt"),
        "less_than_equal": (_("should be at most {limit}"), "le"),
        "literal_error": (_("should be one of {limit}"), "expected"),
        "enum": (_("should be one of {limit}"), "expected"),
    }
    if kind in limits and limits[kind][1] in ctx:
        text, key = limits[kind]
        return text.format(limit=str(ctx[key]).replace(" or ", ", "))
    return str(error.get("msg", "")).removeprefix("Value error, ")


#: The json module's error messages a pasted or given file can cause, in the reader's words.
_JSON_TEXT = {
    "Expecting value": N_("a value was expected"),
    "Expecting property name enclosed in double quotes": N_("a field name in double quotes was expected"),
    "Expecting ',' delimiter": N_("a ',' was expected"),
    "Expecting ':' delimiter": N_("a ':' was expected"),
    "Extra data": N_("more text after the end of the JSON"),
    "Unterminated string starting at": N_("a string is not closed"),
    "Invalid control character at": N_("a control character inside a string"),
    "Invalid \\escape": N_("an invalid \\ escape"),
}


def json_problem(msg: str) -> str:
    """The json module's `JSONDecodeError.msg` in the reader's language (unknown messages as they are)."""
    return translated_word(_JSON_TEXT, msg)
