"""Go's renderings of values inside field errors, where Go prints with ``%#v`` or ``String()``.

Structs print as ``type{Field:value, ...}``, pointers inside them as ``(*bool)(true)`` rather than a
memory address, and ``metav1.Time`` through its ``String()`` method. The rendered text travels as
:class:`~framework.meta.field.GoText`, which field errors print unquoted.
"""

from __future__ import annotations

from typing import Any

from framework.apiserver.machinery.errors import FieldError, go_value, invalid_value
from framework.meta import time as meta_time
from framework.meta.field import GoText


def go_invalid(field: str, rendered: str, detail: str) -> FieldError:
    """An ``Invalid value`` error whose value is already Go-rendered text, printed unquoted."""
    return invalid_value(field, GoText(rendered), detail)


def go_time_string(value: str | None) -> str:
    """``time.Time.String()`` of a normalized RFC 3339 value (UTC), as field errors print times."""
    return meta_time.go_time_string(meta_time.parse_time(value))


def go_struct(type_name: str, fields: list[tuple[str, str]]) -> str:
    """``%#v`` of a struct whose field values are already rendered: ``type{Field:value, ...}``."""
    return type_name + "{" + ", ".join(f"{k}:{v}" for k, v in fields) + "}"


def go_bool_ptr(value: Any) -> str:
    """A ``*bool`` struct field as ``%#v`` prints it (the value, not an address)."""
    return "(*bool)(nil)" if value is None else f"(*bool)({'true' if value else 'false'})"


def go_str_field(obj: dict, key: str) -> str:
    """A string struct field of ``obj`` (absent or null: the empty string), quoted as ``%#v`` does."""
    return go_value(str(obj.get(key) or ""))
