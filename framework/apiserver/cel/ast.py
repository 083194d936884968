"""The checked expression tree of a compiled program, read from cel-cpp's serialized
``cel.expr.CheckedExpr`` (the protobuf wire format, decoded here field by field: only the parts the
cost model needs, the expression tree and each call's overload ids)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Expr:
    """One node: ``kind`` is const, ident, select, call, list, struct or comprehension."""

    id: int = 0
    kind: str = ""
    name: str = ""  # ident name, select field, call function
    value: Any = None  # a constant's value
    test_only: bool = False  # has(a.b)
    target: Expr | None = None  # select operand or receiver of a member call
    args: list[Expr] = field(default_factory=list)  # call args, list elements, struct/map values
    keys: list[Expr] = field(default_factory=list)  # map keys
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Expr | None = None
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None
    overloads: tuple[str, ...] = ()


def _varint(b: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        if not c & 0x80:
            return result, i
        shift += 7


def _fields(b: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of one message: varints as int, length-delimited as bytes."""
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
            out.append((num, wt, v))
        elif wt == 1:
            out.append((num, wt, b[i : i + 8]))
            i += 8
        elif wt == 2:
            ln, i = _varint(b, i)
            out.append((num, wt, b[i : i + ln]))
            i += ln
        elif wt == 5:
            out.append((num, wt, b[i : i + 4]))
            i += 4
        else:
            raise ValueError(f"unsupported wire type {wt}")
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _constant(b: bytes) -> Any:
    for num, _wt, v in _fields(b):
        if num == 1:
            return None
        if num == 2:
            return bool(v)
        if num == 3:
            return _signed(v)
        if num == 4:
            return v
        if num == 5:
            return struct.unpack("<d", v)[0]
        if num == 6:
            return v.decode("utf-8", errors="replace")
        if num == 7:
            return bytes(v)
    return None


def _expr(b: bytes) -> Expr:
    e = Expr()
    for num, _wt, v in _fields(b):
        if num == 2:
            e.id = v
        elif num == 3:
            e.kind, e.value = "const", _constant(v)
        elif num == 4:
            e.kind = "ident"
            e.name = next((x.decode() for n, _, x in _fields(v) if n == 1), "")
        elif num == 5:
            e.kind = "select"
            for n, _, x in _fields(v):
                if n == 1:
                    e.target = _expr(x)
                elif n == 2:
                    e.name = x.decode()
                elif n == 3:
                    e.test_only = bool(x)
        elif num == 6:
            e.kind = "call"
            for n, _, x in _fields(v):
                if n == 1:
                    e.target = _expr(x)
                elif n == 2:
                    e.name = x.decode()
                elif n == 3:
                    e.args.append(_expr(x))
        elif num == 7:
            e.kind = "list"
            e.args = [_expr(x) for n, _, x in _fields(v) if n == 1]
        elif num == 8:
            e.kind = "struct"
            for n, _, x in _fields(v):
                if n == 1:
                    e.name = x.decode()
                elif n == 2:
                    for en, _, ex in _fields(x):
                        if en == 3:
                            e.keys.append(_expr(ex))
                        elif en == 4:
                            e.args.append(_expr(ex))
        elif num == 9:
            e.kind = "comprehension"
            for n, _, x in _fields(v):
                if n == 1:
                    e.iter_var = x.decode()
                elif n == 2:
                    e.iter_range = _expr(x)
                elif n == 3:
                    e.accu_var = x.decode()
                elif n == 4:
                    e.accu_init = _expr(x)
                elif n == 5:
                    e.loop_condition = _expr(x)
                elif n == 6:
                    e.loop_step = _expr(x)
                elif n == 7:
                    e.result = _expr(x)
                elif n == 8:
                    e.iter_var2 = x.decode()
    return e


def _references(b: bytes) -> dict[int, tuple[str, ...]]:
    out: dict[int, tuple[str, ...]] = {}
    for num, _wt, entry in _fields(b):
        del num
        key, ids = 0, []
        for n, _, x in _fields(entry):
            if n == 1:
                key = x
            elif n == 2:
                ids = [y.decode() for m, _, y in _fields(x) if m == 3]
        out[key] = tuple(ids)
    return out


@dataclass
class SourceInfo:
    """Where each node is: ``positions`` maps node ids to code-point offsets in the source;
    ``line_offsets`` are the offsets at which lines 2, 3, ... start."""

    positions: dict[int, int] = field(default_factory=dict)
    line_offsets: list[int] = field(default_factory=list)


def _source_info(b: bytes) -> SourceInfo:
    info = SourceInfo()
    for num, wt, v in _fields(b):
        if num == 3:
            if wt == 2:  # packed
                i = 0
                while i < len(v):
                    n, i = _varint(v, i)
                    info.line_offsets.append(n)
            else:
                info.line_offsets.append(v)
        elif num == 4:
            key = off = 0
            for n, _, x in _fields(v):
                if n == 1:
                    key = x
                elif n == 2:
                    off = x
            info.positions[key] = off
    return info


def checked_tree(serialized: bytes) -> Expr:
    """The expression tree of ``Expression.serialize()`` with each call's overload ids."""
    return checked(serialized)[0]


def checked(serialized: bytes) -> tuple[Expr, SourceInfo]:
    """The expression tree of ``Expression.serialize()`` (with each call's overload ids) and its
    source positions."""
    payload = serialized
    for num, _wt, v in _fields(serialized):
        if num == 2:
            payload = v
    refs: dict[int, tuple[str, ...]] = {}
    root = Expr()
    info = SourceInfo()
    for num, _wt, v in _fields(payload):
        if num == 2:
            refs.update(_references(_wrap_map_entry(v)))
        elif num == 4:
            root = _expr(v)
        elif num == 5:
            info = _source_info(v)
    _attach(root, refs)
    return root, info


def _wrap_map_entry(entry: bytes) -> bytes:
    # reference_map is a repeated map entry; _references reads a list of entries.
    key = (1 << 3) | 2
    return bytes([key]) + _encode_varint(len(entry)) + entry


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _attach(e: Expr | None, refs: dict[int, tuple[str, ...]]) -> None:
    if e is None:
        return
    e.overloads = refs.get(e.id, ())
    for child in (
        e.target,
        e.iter_range,
        e.accu_init,
        e.loop_condition,
        e.loop_step,
        e.result,
        *e.args,
        *e.keys,
    ):
        _attach(child, refs)


def identifiers(e: Expr | None) -> set[str]:
    """The variables an expression reads (comprehension variables excluded)."""
    out: set[str] = set()

    def walk(x: Expr | None, bound: frozenset[str]) -> None:
        if x is None:
            return
        if x.kind == "ident" and x.name not in bound:
            out.add(x.name)
        inner = bound | {v for v in (x.iter_var, x.iter_var2, x.accu_var) if v}
        walk(x.target, bound)
        walk(x.iter_range, bound)
        walk(x.accu_init, bound)
        for c in (x.loop_condition, x.loop_step, x.result):
            walk(c, inner)
        for c in (*x.args, *x.keys):
            walk(c, bound)

    walk(e, frozenset())
    return out


def selected_fields(e: Expr | None, names: set[str]) -> set[str] | None:
    """The fields selected directly on variables ``names`` (``self.a``, ``has(self.b)``), or None
    when a variable is used otherwise (whole, indexed, iterated): what of it an evaluation reads."""
    out: set[str] = set()
    whole = False

    def walk(x: Expr | None, bound: frozenset[str]) -> None:
        nonlocal whole
        if x is None or whole:
            return
        target = x.target
        if (
            x.kind == "select"
            and target is not None
            and target.kind == "ident"
            and target.name in names
            and target.name not in bound
        ):
            out.add(x.name)
            return
        if x.kind == "ident" and x.name in names and x.name not in bound:
            whole = True
            return
        inner = bound | {v for v in (x.iter_var, x.iter_var2, x.accu_var) if v}
        walk(x.target, bound)
        walk(x.iter_range, bound)
        walk(x.accu_init, bound)
        for c in (x.loop_condition, x.loop_step, x.result):
            walk(c, inner)
        for c in (*x.args, *x.keys):
            walk(c, bound)

    walk(e, frozenset())
    return None if whole else out
