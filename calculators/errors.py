"""Domain exceptions a user can cause; each message says what to change."""

from calculators.i18n import _


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
