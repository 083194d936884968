"""``resource.Quantity`` (``k8s.io/apimachinery/pkg/api/resource``): parse, compare, canonical form.

``parse_quantity("1.5Gi")`` gives a :class:`Quantity`; ``str()`` is Go's canonical ``String()``
(``1536Mi``; ``1000M`` → ``1G``; ``0.5`` → ``500m``), comparisons and ``==`` are by value (Go's
``Cmp``), so ``parse_quantity("1k") == parse_quantity("1000")``. Values are exact fractions rounded
up (away from zero) to nano units as Go does; parse errors are :class:`ValueError` with upstream's
texts (:data:`ERR_FORMAT_WRONG`, :data:`ERR_SUFFIX`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import total_ordering
from typing import Any

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "ERR_FORMAT_WRONG",
    "ERR_SUFFIX",
    "Quantity",
    "parse_quantity",
    "quantity_from_json",
]

DECIMAL_EXPONENT = "DecimalExponent"
BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"

ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_SUFFIX = "unable to parse quantity's suffix"

_SPLIT = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_POWER = {0: "", **{e // 10: s for s, e in _BINARY_SUFFIXES.items()}}
_NANO = 10**9
_MAX_ALLOWED = Fraction(2**63 - 1)  # BinarySI values are capped here (upstream's maxAllowed)


def _round_up_nano(value: Fraction) -> Fraction:
    """Round away from zero to nine decimal places (``inf.RoundUp`` at ``Nano``)."""
    scaled = value * _NANO
    if scaled.denominator == 1:
        return value
    whole = math.ceil(abs(scaled))
    return Fraction(whole if value > 0 else -whole, _NANO)


@total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact amount and the format its canonical string uses (``DecimalSI``, ``BinarySI`` or
    ``DecimalExponent``). Build one with :func:`parse_quantity`."""

    value: Fraction
    format: str = DECIMAL_SI

    # -- comparison (by value, as Cmp) --
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.value == other.value
        if isinstance(other, int | Fraction) and not isinstance(other, bool):
            return self.value == other
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.value < other.value
        if isinstance(other, int | Fraction) and not isinstance(other, bool):
            return self.value < other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def cmp(self, other: Quantity) -> int:
        """``Cmp``: -1, 0 or 1."""
        return (self.value > other.value) - (self.value < other.value)

    # -- arithmetic (the result keeps this quantity's format, as Add/Sub do) --
    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.value - other.value, self.format)

    def __mul__(self, factor: int) -> Quantity:
        """``Mul(int64)``."""
        if not isinstance(factor, int) or isinstance(factor, bool):
            return NotImplemented
        return Quantity(self.value * factor, self.format)

    __rmul__ = __mul__

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.format)

    # -- values --
    def is_zero(self) -> bool:
        return self.value == 0

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def int_value(self) -> int:
        """``Value()``: rounded up to a whole number."""
        return math.ceil(self.value)

    def milli_value(self) -> int:
        """``MilliValue()``: ``ceil(q * 1000)``."""
        return math.ceil(self.value * 1000)

    def is_integer(self) -> bool:
        return self.value.denominator == 1

    def __float__(self) -> float:
        return float(self.value)

    # -- the canonical string --
    def __str__(self) -> str:
        if self.value == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI and (abs(self.value) < 1024 or self.value.denominator != 1):
            fmt = DECIMAL_SI
        if fmt == BINARY_SI:
            number, power = int(self.value), 0
            while number % 1024 == 0 and power < 6:
                number //= 1024
                power += 1
            return f"{number}{_BINARY_BY_POWER[power]}"
        # A mantissa without trailing zeros, then the exponent lowered to a multiple of three.
        number, exponent = int(self.value * _NANO), -9
        while number % 10 == 0:
            number //= 10
            exponent += 1
        while exponent % 3:
            number *= 10
            exponent -= 1
        if fmt == DECIMAL_EXPONENT:
            return f"{number}e{exponent}" if exponent else str(number)
        if exponent > 18:
            number, exponent = number * 10 ** (exponent - 18), 18
        return f"{number}{_DECIMAL_BY_EXPONENT[exponent]}"

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def to_json(self) -> str:
        """The JSON form (the canonical string)."""
        return str(self)


def parse_quantity(text: str) -> Quantity:
    """``resource.ParseQuantity``; ``ValueError`` with upstream's message when ``text`` is not one.

    No surrounding whitespace is allowed (:func:`quantity_from_json` trims it, as ``UnmarshalJSON``).
    """
    if not isinstance(text, str) or text == "":
        raise ValueError(ERR_FORMAT_WRONG)
    m = _SPLIT.fullmatch(text)
    if m is None:
        raise ValueError(ERR_FORMAT_WRONG)
    sign, whole, frac, suffix = m.groups()
    if suffix in _DECIMAL_SUFFIXES:
        fmt, scale = DECIMAL_SI, Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        fmt, scale = BINARY_SI, Fraction(2 ** _BINARY_SUFFIXES[suffix])
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[-+]?[0-9]+", suffix[1:]):
        fmt, scale = DECIMAL_EXPONENT, Fraction(10) ** int(suffix[1:])
    else:
        raise ValueError(ERR_SUFFIX)
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    value = _round_up_nano(number * scale)
    if fmt == BINARY_SI:
        value = min(value, _MAX_ALLOWED)
        if 0 < value < 1:
            fmt = DECIMAL_SI
    return Quantity(-value if sign == "-" else value, fmt)


def quantity_from_json(value: Any) -> Quantity:
    """``Quantity.UnmarshalJSON``: a string (whitespace trimmed) or a JSON number."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(ERR_FORMAT_WRONG)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(ERR_FORMAT_WRONG)
        text = repr(value).replace("e+", "e")
        text = text[:-2] if text.endswith(".0") else text
    else:
        text = str(value)
    return parse_quantity(text.strip())
