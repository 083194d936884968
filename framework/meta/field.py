"""Field paths and field errors: ``k8s.io/apimachinery/pkg/util/validation/field``.

An :class:`Error` prints as Go's ``field.Error.Error()`` (``FIELD: TYPE-TEXT[: VALUE][: DETAIL]``),
values rendered as kube-apiserver renders them (:func:`go_value`), so validation written with this
module (admission webhooks, configuration checks, the test API server) reads exactly like the real
server's. An :class:`ErrorList` aggregates like ``ErrorList.ToAggregate().Error()``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from framework.meta.strconv import quote as go_quote  # re-exported: Go's %q of a field value

__all__ = [
    "OMIT",
    "Error",
    "ErrorList",
    "ErrorType",
    "GoText",
    "Path",
    "StringList",
    "aggregate",
    "duplicate",
    "forbidden",
    "go_float",
    "go_quote",
    "go_value",
    "internal_error",
    "invalid",
    "new_path",
    "not_found",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]


class ErrorType(StrEnum):
    """``field.ErrorType``: the machine-readable reason of a :class:`Error` (a ``StatusCause.reason``)."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        """``ErrorType.String()``: the human-readable type."""
        return _TYPE_TEXT[self]


_TYPE_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}
# ErrorBody prints no value for these types.
_NO_VALUE = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


# --- paths ------------------------------------------------------------------------------------------


class Path:
    """``field.Path``: an immutable path such as ``spec.containers[0].env[FOO]``.

    ``new_path("spec", "template").child("spec").index(0).key("a")``; ``str()`` renders it. Every
    function taking a path here also takes its string form.
    """

    __slots__ = ("_text",)

    def __init__(self, text: str = "") -> None:
        self._text = text

    def child(self, name: str, *more: str) -> Path:
        """``Child``: one or more nested field names."""
        text = self._text
        for part in (name, *more):
            text = f"{text}.{part}" if text else part
        return Path(text)

    def index(self, i: int) -> Path:
        """``Index``: a list subscript ``[i]``."""
        return Path(f"{self._text}[{i}]")

    def key(self, key: str) -> Path:
        """``Key``: a map subscript ``[key]`` (unquoted, as upstream)."""
        return Path(f"{self._text}[{key}]")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Path({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


def new_path(name: str, *more: str) -> Path:
    """``field.NewPath``."""
    return Path().child(name, *more)


# --- Go value rendering -----------------------------------------------------------------------------


class StringList(list[str]):
    """A list known to be a Go ``[]string``: printed as ``[]string{...}`` even when empty (a plain
    empty list prints as ``[]``, the JSON of an untyped value)."""

    __slots__ = ()


class GoText(str):
    """Text already rendered the Go way (a ``fmt.Stringer``): printed as is, never quoted."""

    __slots__ = ()


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64: the shortest digits, exponent form below 1e-4 and from 1e6 on."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exponent = int(exponent) + len(digits) - len(text)
    exp = len(text) + exponent - 1  # the decimal exponent of the first digit
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    point = len(text) + exponent  # digits before the decimal point
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return minus + text + "0" * (point - len(text))
    return f"{minus}{text[:point]}.{text[point:]}"


def _overrides_str(value: Any) -> bool:
    str_method = type(value).__str__
    return str_method not in (object.__str__, int.__str__, float.__str__, str.__str__, bool.__str__) and (
        not isinstance(value, dict | list | tuple | set | frozenset)
    )


def go_value(value: Any) -> str:
    """A bad value as a kube-apiserver field error prints it.

    Strings Go-quoted, numbers and booleans bare (Go's ``%v``), a ``fmt.Stringer`` (a value whose type
    defines ``__str__``, e.g. :class:`GoText` or a duration) as its text, ``None`` as ``null``, a
    non-empty list of strings or a :class:`StringList` as ``[]string{"a", "b"}`` (``%#v``) and
    anything else as compact JSON with sorted keys (``json.Marshal``).
    """
    if isinstance(value, GoText) or (
        isinstance(value, int | float | str) and not isinstance(value, bool) and _overrides_str(value)
    ):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, StringList) or (
        isinstance(value, list) and value and all(isinstance(v, str) for v in value)
    ):
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    if _overrides_str(value):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


class _OmitValue:
    """``field.OmitValueType``: a bad value an error prints no text for."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT"


#: Pass as a bad value so the error reads ``Invalid value: DETAIL`` (``field.OmitValueType{}``).
OMIT = _OmitValue()


# --- errors -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Error:
    """``field.Error``: one problem with one field. ``str()`` is Go's ``Error()``."""

    type: ErrorType
    field: str
    bad_value: Any = None
    detail: str = ""

    def body(self) -> str:
        """``ErrorBody()``: the text after ``FIELD: ``."""
        text = self.type.text
        if self.type not in _NO_VALUE and self.bad_value is not OMIT:
            text += ": " + go_value(self.bad_value)
        if self.detail:
            text += ": " + self.detail
        return text

    def message(self) -> str:
        """``Error()``: ``FIELD: BODY`` (just the body for an error without a field)."""
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def cause(self) -> dict[str, str]:
        """The ``StatusCause`` kube-apiserver reports for it (``errors.NewInvalid``)."""
        return {"reason": str(self.type), "message": self.body(), "field": self.field}

    def __str__(self) -> str:
        return self.message()


def aggregate(messages: Iterable[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: duplicates dropped, several messages bracketed."""
    unique = list(dict.fromkeys(messages))
    if not unique:
        return ""
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class ErrorList(list[Error]):
    """``field.ErrorList``: a plain list of :class:`Error` with Go's aggregate text."""

    def to_aggregate(self) -> str | None:
        """``ToAggregate().Error()``; ``None`` when the list is empty (Go's nil aggregate)."""
        return aggregate(e.message() for e in self) if self else None

    def filter_type(self, *types: ErrorType) -> ErrorList:
        """The errors of the given types."""
        return ErrorList(e for e in self if e.type in types)


def _p(path: Path | str) -> str:
    return str(path)


def required(path: Path | str, detail: str = "") -> Error:
    """``field.Required``."""
    return Error(ErrorType.REQUIRED, _p(path), None, detail)


def invalid(path: Path | str, value: Any, detail: str = "") -> Error:
    """``field.Invalid``."""
    return Error(ErrorType.INVALID, _p(path), value, detail)


def type_invalid(path: Path | str, value: Any, detail: str) -> Error:
    """``field.TypeInvalid``."""
    return Error(ErrorType.TYPE_INVALID, _p(path), value, detail)


def not_found(path: Path | str, value: Any) -> Error:
    """``field.NotFound``."""
    return Error(ErrorType.NOT_FOUND, _p(path), value)


def duplicate(path: Path | str, value: Any) -> Error:
    """``field.Duplicate``."""
    return Error(ErrorType.DUPLICATE, _p(path), value)


def not_supported(path: Path | str, value: Any, supported: Sequence[Any]) -> Error:
    """``field.NotSupported``: ``supported values: "a", "b"`` (no detail when ``supported`` is empty)."""
    detail = "supported values: " + ", ".join(go_quote(str(s)) for s in supported) if supported else ""
    return Error(ErrorType.NOT_SUPPORTED, _p(path), value, detail)


def forbidden(path: Path | str, detail: str) -> Error:
    """``field.Forbidden``."""
    return Error(ErrorType.FORBIDDEN, _p(path), None, detail)


def too_long(path: Path | str, max_length: int, unit: str = "bytes") -> Error:
    """``field.TooLong`` (``unit="characters"`` for ``TooLongCharacters``)."""
    if max_length < 0:
        detail = "value is too long"
    else:
        detail = f"may not be more than {max_length} {unit[:-1] if max_length == 1 else unit}"
    return Error(ErrorType.TOO_LONG, _p(path), None, detail)


def too_many(path: Path | str, actual: int, max_quantity: int) -> Error:
    """``field.TooMany``: ``Too many: ACTUAL: must have at most N items``."""
    if max_quantity >= 0:
        detail = f"must have at most {max_quantity} {'item' if max_quantity == 1 else 'items'}"
    else:
        detail = "has too many items"
    return Error(ErrorType.TOO_MANY, _p(path), actual, detail)


def internal_error(path: Path | str, err: BaseException | str) -> Error:
    """``field.InternalError``."""
    return Error(ErrorType.INTERNAL, _p(path), None, str(err))
