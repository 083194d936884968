"""Go's ``strconv.ParseBool`` and ``strconv.Atoi``, as Kubernetes code reads annotation values.

Both raise :class:`ValueError` with Go's ``*strconv.NumError`` text; :func:`is_true` is the common
"set to a true value" check (anything unparsable is false).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["atoi", "is_true", "parse_bool"]

_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))
_INT = re.compile(r"[+-]?[0-9]+")


def parse_bool(value: str) -> bool:
    """``strconv.ParseBool``: ``1 t T TRUE true True`` / ``0 f F FALSE false False``, else ValueError."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def is_true(value: Any) -> bool:
    """Whether ``value`` is a string ``strconv.ParseBool`` reads as true (unset or invalid: false)."""
    return isinstance(value, str) and value in _TRUE


def atoi(value: str) -> int:
    """``strconv.Atoi``: an optional sign and decimal digits within int64, else ValueError."""
    if not isinstance(value, str) or not _INT.fullmatch(value):
        raise ValueError(f'strconv.Atoi: parsing "{value}": invalid syntax')
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise ValueError(f'strconv.Atoi: parsing "{value}": value out of range')
    return number
