"""cel-go's AST validators that Kubernetes enables (``base.go``, 1.29+): duration, timestamp and
regex literals are checked at compile time (``invalid duration argument``), and list and map
literals of constants must not mix types (``expected type 'int' but found 'string'``; literals
inside ``format`` calls are exempt)."""

from __future__ import annotations

import functools
import re
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.ast import Expr, SourceInfo
from framework.apiserver.cel.fields_check import report
from framework.apiserver.cel.types import value_type_name

_FORMAT_CHECKS = {"duration": "duration", "timestamp": "timestamp"}


@functools.cache
def _converter(fn: str) -> Any:
    env = cel.NewEnv(variables={"v": cel.Type.STRING})
    return env.compile(f"{fn}(v)")


def _valid_literal(fn: str, value: Any) -> bool:
    if fn == "matches":
        try:
            re.compile(value)
        except (re.error, TypeError):
            return False
        return True
    if not isinstance(value, str):
        return True
    result = _converter(fn).eval(data={"v": value})
    return result.type() != cel.Type.ERROR


def literal_problems(tree: Expr, info: SourceInfo, source: str) -> list[str]:
    found: list[tuple[int, str]] = []

    def at(e: Expr, message: str) -> None:
        found.append((info.positions.get(e.id, 0), message))

    def walk(e: Expr | None, in_format: bool) -> None:
        if e is None:
            return
        if e.kind == "call":
            fn = e.name
            arg = e.args[0] if fn in ("duration", "timestamp") and e.args and e.target is None else None
            if fn == "matches":
                arg = e.args[0] if e.target is not None and e.args else e.args[1] if len(e.args) > 1 else None
            if arg is not None and arg.kind == "const" and not _valid_literal(fn, arg.value):
                at(arg, f"invalid {fn} argument")
            in_format = in_format or fn == "format"
        if e.kind in ("list", "struct") and not in_format and not (e.kind == "struct" and e.name):
            _homogeneous(e, at)
        for child in (e.target, e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result):
            walk(child, in_format)
        for child in (*e.args, *e.keys):
            walk(child, in_format)

    walk(tree, False)
    return [report(info, source, offset, message) for offset, message in sorted(found)]


def _homogeneous(e: Expr, at: Any) -> None:
    groups = [e.args] if e.kind == "list" else [e.keys, e.args]
    for items in groups:
        first: str | None = None
        for item in items:
            if item.kind != "const":
                return  # only constants have a type known here
            t = value_type_name(item.value)
            if first is None:
                first = t
            elif t != first:
                at(item, f"expected type '{first}' but found '{t}'")
                break
