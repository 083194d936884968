"""The checker's ``undefined field`` errors for object types.

Objects are ``map(string, dyn)`` to cel-cpp's checker (cel-expr-python declares no object types
without protobuf descriptors), so a select of a property the schema does not declare would compile.
This pass walks the checked tree with the declared types and reports such selects as cel-go's
checker does: ``ERROR: <input>:1:5: undefined field 'replicsa'`` with the source line and a caret.
Only selects whose operand's type is known are checked; anything computed is ``dyn``, as before."""

from __future__ import annotations

from collections.abc import Mapping

from framework.apiserver.cel import types as ct
from framework.apiserver.cel.ast import Expr, SourceInfo


def undefined_fields(
    tree: Expr, info: SourceInfo, source: str, variables: Mapping[str, ct.DeclType | None]
) -> list[str]:
    """cel-go's error report for each select of an undeclared property, in source order."""
    found: list[tuple[int, str]] = []
    env: dict[str, ct.DeclType | None] = dict(variables)
    for name, t in variables.items():
        env[f"__opt_{name}_value"] = t

    def walk(e: Expr | None, scope: dict[str, ct.DeclType | None]) -> ct.DeclType | None:
        if e is None:
            return None
        k = e.kind
        if k == "ident":
            return scope.get(e.name)
        if k == "select":
            t = walk(e.target, scope)
            if t is not None and t.name == ct.OBJECT:
                if e.name not in t.fields:
                    found.append((info.positions.get(e.id, 0), e.name))
                    return None
                return None if e.test_only else t.fields[e.name]
            if t is not None and t.name == ct.MAP and not e.test_only:
                return t.elem
            return None
        if k == "comprehension":
            rt = walk(e.iter_range, scope)
            walk(e.accu_init, scope)
            inner = dict(scope)
            elem: ct.DeclType | None = None
            if rt is not None and rt.name == ct.LIST:
                elem = rt.elem
            elif rt is not None and rt.name in (ct.MAP, ct.OBJECT):
                elem = ct.STRING_TYPE
            for var in (e.iter_var, e.iter_var2, e.accu_var):
                if var:
                    inner[var] = None
            if e.iter_var:
                inner[e.iter_var2 or e.iter_var] = elem
            walk(e.loop_condition, inner)
            walk(e.loop_step, inner)
            walk(e.result, inner)
            return None
        if k == "call":
            target = walk(e.target, scope)
            args = [walk(a, scope) for a in e.args]
            if (
                e.name == "_[_]"
                and len(args) == 2
                and args[0] is not None
                and args[0].name in (ct.LIST, ct.MAP)
            ):
                return args[0].elem
            del target
            return None
        for child in (*e.args, *e.keys):
            walk(child, scope)
        return None

    walk(tree, env)
    return [report(info, source, offset, f"undefined field '{name}'") for offset, name in sorted(found)]


def report(info: SourceInfo, source: str, offset: int, message: str) -> str:
    """One error as cel-go formats it: position, message, the source line and a caret under it."""
    line_start = 0
    line = 1
    for end in info.line_offsets:
        if offset < end:
            break
        line_start = end
        line += 1
    column = offset - line_start
    codepoints = source  # offsets count code points, as Python's str does
    line_end = codepoints.find("\n", line_start)
    text = codepoints[line_start : line_end if line_end >= 0 else len(codepoints)]
    return f"ERROR: <input>:{line}:{column + 1}: {message}\n | {text}\n | {'.' * column}^"
