"""k8s.io/apiserver/pkg/cel/library/lists.go: isSorted, sum, min, max, indexOf, lastIndexOf on lists.

cel-expr-python declares no type parameters, so the element type is ``dyn`` (a mismatch such as
``['a'].sum()`` fails at evaluation rather than at compile time)."""

from __future__ import annotations

import datetime
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library.common import function, overload

_LIST = cel.Type.List(cel.Type.DYN)
_DYN = cel.Type.DYN


def _comparable(items: list[Any]) -> None:
    kinds = {type(x) for x in items}
    numeric = kinds <= {int, float}
    if len(kinds) > 1 and not numeric:
        raise ValueError("no such overload")


def is_sorted(items: list[Any]) -> bool:
    _comparable(items)
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def sum_(items: list[Any]) -> Any:
    if not items:
        return 0
    first = items[0]
    total: Any = datetime.timedelta(0) if isinstance(first, datetime.timedelta) else type(first)(0)
    for x in items:
        total = total + x
    return total


def min_(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min(list) argument must not be empty")
    _comparable(items)
    return min(items)


def max_(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max(list) argument must not be empty")
    _comparable(items)
    return max(items)


def index_of(items: list[Any], value: Any) -> int:
    for i, x in enumerate(items):
        if x == value and type(x) is type(value):
            return i
    return -1


def last_index_of(items: list[Any], value: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if items[i] == value and type(items[i]) is type(value):
            return i
    return -1


# cel-expr-python dispatches no overload whose non-receiver parameter is ``dyn``; one overload per
# kind of value stands in for cel-go's type parameter.
_ELEMENT_TYPES = {
    "int": cel.Type.INT,
    "uint": cel.Type.UINT,
    "double": cel.Type.DOUBLE,
    "string": cel.Type.STRING,
    "bool": cel.Type.BOOL,
    "bytes": cel.Type.BYTES,
    "list": cel.Type.List(cel.Type.DYN),
    "map": cel.Type.Map(cel.Type.DYN, cel.Type.DYN),
    "timestamp": cel.Type.TIMESTAMP,
    "duration": cel.Type.DURATION,
    "null": cel.Type.NULL,
}


def _per_element_type(oid: str, impl: Any) -> list[Any]:
    return [
        overload(f"{oid}_{name}", cel.Type.INT, [_LIST, t], impl, member=True)
        for name, t in _ELEMENT_TYPES.items()
    ]


def declarations() -> list[tuple[str, list[Any]]]:
    return [
        function("isSorted", overload("list_is_sorted", cel.Type.BOOL, [_LIST], is_sorted, member=True)),
        function("sum", overload("list_sum", _DYN, [_LIST], sum_, member=True)),
        function("min", overload("list_min", _DYN, [_LIST], min_, member=True)),
        function("max", overload("list_max", _DYN, [_LIST], max_, member=True)),
        function("indexOf", *_per_element_type("list_a_index_of", index_of)),
        function("lastIndexOf", *_per_element_type("list_a_last_index_of", last_index_of)),
    ]
