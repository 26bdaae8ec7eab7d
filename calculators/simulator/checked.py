"""Build input models from user-typed values, turning validation failures into ServewiseInputError."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from calculators.errors import ServewiseInputError, validation_problem
from calculators.i18n import _

M = TypeVar("M", bound=BaseModel)


def checked(model: type[M], what: str, **fields: Any) -> M:
    """`model(**fields)`, or a ServewiseInputError naming `what`, the field and the problem."""
    try:
        return model(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or what
        message = validation_problem(first)
        raise ServewiseInputError(_("{what} {where}: {message}").format(
                                    what=what, where=where, message=message)) from None
