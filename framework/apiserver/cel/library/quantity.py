"""k8s.io/apiserver/pkg/cel/library/quantity.go: ``quantity(string)``, ``isQuantity``, and on a
Quantity ``sign``, ``isInteger``, ``asInteger``, ``asApproximateFloat``, ``add``, ``sub``, ``mul``,
``isGreaterThan``, ``isLessThan``, ``compareTo``; equality compares values (``quantity('1') ==
quantity('1000m')``), as the Quantity is held in its canonical text."""

from __future__ import annotations

import functools
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library import objects
from framework.apiserver.cel.library.common import function, overload
from framework.meta.quantity import DECIMAL_SI, Quantity, parse_quantity

TYPE_NAME = "kubernetes.Quantity"
QUANTITY = cel.Type(TYPE_NAME)
_INT64 = (-(2**63), 2**63 - 1)


@functools.lru_cache(maxsize=1024)
def _parse(text: str) -> Quantity:
    return parse_quantity(text)


def _wrap(q: Quantity) -> Any:
    return objects.make(TYPE_NAME, str(q))


def of(msg: Any) -> Quantity:
    return _parse(msg.value)


def to_quantity(text: str) -> Any:
    return _wrap(_parse(text))


def is_quantity(text: str) -> bool:
    try:
        _parse(text)
    except ValueError:
        return False
    return True


def sign(q: Any) -> int:
    return of(q).sign()


def _as_int64(q: Quantity) -> int | None:
    if not q.is_integer():
        return None
    v = q.int_value()
    return v if _INT64[0] <= v <= _INT64[1] else None


def is_integer(q: Any) -> bool:
    return _as_int64(of(q)) is not None


def as_integer(q: Any) -> int:
    v = _as_int64(of(q))
    if v is None:
        raise ValueError("cannot convert value to integer")
    return v


def as_approximate_float(q: Any) -> float:
    return float(of(q))


def _int_quantity(i: int) -> Quantity:
    return parse_quantity(str(i))


def add(a: Any, b: Any) -> Any:
    other = _int_quantity(b) if isinstance(b, int) else of(b)
    return _wrap(of(a) + other)


def sub(a: Any, b: Any) -> Any:
    other = _int_quantity(b) if isinstance(b, int) else of(b)
    return _wrap(of(a) - other)


def mul(a: Any, factor: int) -> Any:
    return _wrap(of(a) * factor)


def is_greater_than(a: Any, b: Any) -> bool:
    return of(a).cmp(of(b)) == 1


def is_less_than(a: Any, b: Any) -> bool:
    return of(a).cmp(of(b)) == -1


def compare_to(a: Any, b: Any) -> int:
    return of(a).cmp(of(b))


def declarations() -> list[tuple[str, list[Any]]]:
    q, b, i, d = QUANTITY, cel.Type.BOOL, cel.Type.INT, cel.Type.DOUBLE
    m = True
    return [
        function("quantity", overload("string_to_quantity", q, [cel.Type.STRING], to_quantity)),
        function("isQuantity", overload("is_quantity_string", b, [cel.Type.STRING], is_quantity)),
        function(
            "sign",
            overload("quantity_sign", i, [q], sign),
            overload("quantity_sign_member", i, [q], sign, member=m),
        ),
        function("isGreaterThan", overload("quantity_is_greater_than", b, [q, q], is_greater_than, member=m)),
        function("isLessThan", overload("quantity_is_less_than", b, [q, q], is_less_than, member=m)),
        function("compareTo", overload("quantity_compare_to", i, [q, q], compare_to, member=m)),
        function(
            "asApproximateFloat", overload("quantity_get_float", d, [q], as_approximate_float, member=m)
        ),
        function("asInteger", overload("quantity_get_int", i, [q], as_integer, member=m)),
        function("isInteger", overload("quantity_is_integer", b, [q], is_integer, member=m)),
        function(
            "add",
            overload("quantity_add", q, [q, q], add, member=m),
            overload("quantity_add_int", q, [q, i], add, member=m),
        ),
        function(
            "sub",
            overload("quantity_sub", q, [q, q], sub, member=m),
            overload("quantity_sub_int", q, [q, i], sub, member=m),
        ),
        function("mul", overload("quantity_multiply_int", q, [q, i], mul, member=m)),
    ]


__all__ = ["DECIMAL_SI", "QUANTITY", "declarations"]
