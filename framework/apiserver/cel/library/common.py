"""Declaration helpers shared by the libraries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cel_expr_python import cel


def overload(
    oid: str, result: Any, params: list[Any], impl: Callable[..., Any], *, member: bool = False
) -> Any:
    """One overload of a function: its id (cel-go's, where Kubernetes names one), result and
    parameter types (the receiver first for a member function), and implementation."""
    return cel.Overload(oid, result, params, is_member=member, impl=impl)


def function(name: str, *overloads: Any) -> Any:
    return cel.FunctionDecl(name, list(overloads))
