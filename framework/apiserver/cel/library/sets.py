"""cel-go's ext.Sets (Kubernetes 1.29+): sets.contains, sets.equivalent, sets.intersects."""

from __future__ import annotations

from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library.common import function, overload

_LIST = cel.Type.List(cel.Type.DYN)


def _in(x: Any, items: list[Any]) -> bool:
    # CEL equality: numbers compare across int, uint and double; bool is not a number.
    return any(x == y and (isinstance(x, bool) == isinstance(y, bool)) for y in items)


def contains(a: list[Any], b: list[Any]) -> bool:
    return all(_in(x, a) for x in b)


def equivalent(a: list[Any], b: list[Any]) -> bool:
    return contains(a, b) and contains(b, a)


def intersects(a: list[Any], b: list[Any]) -> bool:
    return any(_in(x, a) for x in b)


def declarations() -> list[tuple[str, list[Any]]]:
    return [
        function(
            "sets.contains", overload("list_sets_contains_list", cel.Type.BOOL, [_LIST, _LIST], contains)
        ),
        function(
            "sets.equivalent",
            overload("list_sets_equivalent_list", cel.Type.BOOL, [_LIST, _LIST], equivalent),
        ),
        function(
            "sets.intersects",
            overload("list_sets_intersects_list", cel.Type.BOOL, [_LIST, _LIST], intersects),
        ),
    ]
