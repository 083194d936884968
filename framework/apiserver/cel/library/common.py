"""Declaration helpers shared by the libraries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Overload:
    """One overload of a function: its id (cel-go's, where Kubernetes names one), result and
    parameter types (``cel.Type``; the receiver first for a member function) and implementation."""

    oid: str
    result: Any
    params: list[Any]
    impl: Callable[..., Any]
    member: bool = False


def overload(
    oid: str, result: Any, params: list[Any], impl: Callable[..., Any], *, member: bool = False
) -> Overload:
    return Overload(oid, result, params, impl, member)


def function(name: str, *overloads: Overload) -> tuple[str, list[Overload]]:
    """A function's overloads in one library (libraries overloading the same name, as strings'
    and lists' ``indexOf``, are merged into one declaration)."""
    return name, list(overloads)
