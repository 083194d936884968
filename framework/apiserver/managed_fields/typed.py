"""The typed walkers of structured-merge-diff (``ToFieldSet``, ``Compare``, ``Merge``, ``RemoveItems``) on
plain JSON values, guided by a :class:`~.schema.Schema`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from framework.apiserver.managed_fields.fieldpath import (
    MISSING,
    Path,
    PathElement,
    PathSet,
    TypedError,
    item_pe,
    path_string,
    pe_string,
)
from framework.apiserver.managed_fields.schema import Schema
from framework.meta import jsoncodec


def _index(items: list, s: Schema, where: str, lenient: bool) -> list[PathElement] | None:
    """The path elements of a non-atomic list's items; None when the list is to be treated as atomic."""
    list_type, keys = s.list_type()
    if list_type == "atomic":
        return None
    try:
        item_schema = s.item()
        pes = [item_pe(item, list_type, keys, item_schema, where, i) for i, item in enumerate(items)]
    except TypedError:
        if lenient:
            return None
        raise
    if len(set(pes)) != len(pes):
        if lenient:
            return None
        seen: set[PathElement] = set()
        for pe in pes:
            if pe in seen:
                raise TypedError(f"{where}: duplicate entries for key {pe_string(pe)}")
            seen.add(pe)
    return pes


def field_set(obj: Any, s: Schema, lenient: bool = False) -> PathSet:
    """``TypedValue.ToFieldSet``: the leaves, list items, and empty/undeclared map entries of ``obj``."""
    out: PathSet = set()

    def walk(v: Any, s: Schema, path: Path) -> None:
        if isinstance(v, dict):
            if s.atomic_map():
                out.add(path)
                return
            for k, cv in v.items():
                p = (*path, ("f", k))
                walk(cv, s.child(k), p)
                if cv is None or cv == {} or not s.declared(k):
                    out.add(p)
        elif isinstance(v, list):
            pes = _index(v, s, path_string(path), lenient)
            if pes is None:
                out.add(path)
                return
            item_schema = s.item()
            for pe, item in zip(pes, v, strict=True):
                p = (*path, pe)
                walk(item, item_schema, p)
                out.add(p)
        else:
            out.add(path)

    walk(obj, s, ())
    out.discard(())
    return out


@dataclass
class Comparison:
    added: PathSet = field(default_factory=set)
    modified: PathSet = field(default_factory=set)
    removed: PathSet = field(default_factory=set)


def compare(old: Any, new: Any, s: Schema) -> Comparison:
    """``TypedValue.Compare`` of two objects (lists that cannot be keyed compare as atomic values)."""
    c = Comparison()

    def leaf(lv: Any, rv: Any, path: Path) -> None:
        if lv is MISSING:
            c.added.add(path)
        elif rv is MISSING:
            c.removed.add(path)
        elif not _equal(lv, rv):
            c.modified.add(path)

    def walk(lv: Any, rv: Any, s: Schema, path: Path) -> None:
        if isinstance(lv, dict | list) and type(lv) is type(rv) and lv == rv:
            return  # an unchanged subtree (the common case): nothing to report below it
        present = rv if lv is MISSING else lv
        if (
            isinstance(present, dict)
            and (lv is MISSING or isinstance(lv, dict))
            and (rv is MISSING or isinstance(rv, dict))
        ):
            lm = lv if lv is not MISSING else {}
            rm = rv if rv is not MISSING else {}
            if s.atomic_map() or (not lm and not rm):
                leaf(lv, rv, path)
                return
            for k in {**lm, **rm}:
                a, b = lm.get(k, MISSING), rm.get(k, MISSING)
                if isinstance(a, dict | list) or isinstance(b, dict | list):
                    walk(a, b, s.child(k), (*path, ("f", k)))
                elif a is MISSING or b is MISSING or not _equal(a, b):
                    leaf(a, b, (*path, ("f", k)))  # scalars inline: most fields are
            _composite(lv, rv, path)
        elif (
            isinstance(present, list)
            and (lv is MISSING or isinstance(lv, list))
            and (rv is MISSING or isinstance(rv, list))
        ):
            ll = lv if lv is not MISSING else []
            rl = rv if rv is not MISSING else []
            lpes = _index(ll, s, "", True) if ll else []
            rpes = _index(rl, s, "", True) if rl else []
            if lpes is None or rpes is None or s.list_type()[0] == "atomic" or (not ll and not rl):
                leaf(lv, rv, path)
                return
            lmap = dict(zip(lpes, ll, strict=True))
            rmap = dict(zip(rpes, rl, strict=True))
            item_schema = s.item()
            for pe in {**lmap, **rmap}:
                walk(lmap.get(pe, MISSING), rmap.get(pe, MISSING), item_schema, (*path, pe))
            _composite(lv, rv, path)
        elif (
            lv is not MISSING
            and rv is not MISSING
            and type(lv) is not type(rv)
            and (isinstance(lv, dict | list) or isinstance(rv, dict | list))
        ):
            c.modified.add(path)
        else:
            leaf(lv, rv, path)

    def _composite(lv: Any, rv: Any, path: Path) -> None:
        if lv is MISSING:
            c.added.add(path)
        elif rv is MISSING:
            c.removed.add(path)

    walk(old, new, s, ())
    for paths in (c.added, c.modified, c.removed):
        paths.discard(())
    return c


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        return False
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return bool(a == b)


def copy_value(v: Any) -> Any:
    return jsoncodec.copy(v)


def merge(live: Any, config: Any, s: Schema) -> Any:
    """``TypedValue.Merge``: maps merge key-wise, associative/set lists item-wise, the rest replaces.

    An explicit ``null`` in the applied configuration removes the field (the typed Go object has no
    null), and the applied config is assumed well-formed (checked with :func:`field_set` before)."""

    def walk(lv: Any, rv: Any, s: Schema) -> Any:
        if lv is MISSING:
            return _drop_nulls(copy_value(rv))
        if isinstance(lv, dict) and isinstance(rv, dict) and not s.atomic_map():
            out = dict(lv)
            for k, cv in rv.items():
                if cv is None:
                    out.pop(k, None)
                    continue
                out[k] = walk(lv.get(k, MISSING), cv, s.child(k))
            return out
        if isinstance(lv, list) and isinstance(rv, list):
            lpes = _index(lv, s, "", True)
            rpes = _index(rv, s, "", True)
            if lpes is not None and rpes is not None:
                return _merge_list(lv, rv, lpes, rpes, s.item(), walk)
        return _drop_nulls(copy_value(rv))

    return walk(live, config, s)


def _drop_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_nulls(x) for x in v]
    return v


def _merge_list(
    lhs: list,
    rhs: list,
    lpes: list[PathElement],
    rpes: list[PathElement],
    item_schema: Schema,
    walk: Callable[[Any, Any, Schema], Any],
) -> list:
    """The item order of SMD's ``mergingWalker.visitListItems``: applied order for shared items, live
    items not in the applied list stay where they were."""
    lmap = dict(zip(lpes, lhs, strict=True))
    rmap = dict(zip(rpes, rhs, strict=True))
    shared = [pe for pe in rpes if pe in lmap]
    shared_i = 0
    next_shared = shared[0] if shared else None
    merged_rhs: set[PathElement] = set()
    out: list = []
    li = ri = 0

    def advance() -> None:
        nonlocal shared_i, next_shared
        shared_i += 1
        next_shared = shared[shared_i] if shared_i < len(shared) else None

    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li]
            if pe == rpes[ri]:
                merged_rhs.add(pe)
                out.append(walk(lmap[pe], rmap[pe], item_schema))
                li += 1
                ri += 1
                advance()
                continue
            if pe in rmap and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lpes):
            pe = lpes[li]
            if pe not in rmap:
                out.append(lhs[li])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < len(rpes):
            pe = rpes[ri]
            merged_rhs.add(pe)
            out.append(walk(lmap.get(pe, MISSING), rmap[pe], item_schema))
            ri += 1
            if next_shared is not None and next_shared == pe:
                advance()
    return out


def ensure_named(paths: PathSet, s: Schema) -> PathSet:
    """``Set.EnsureNamedFieldsAreMembers``: declared struct fields above a member are members too."""
    out = set(paths)
    for p in paths:
        node = s
        for i, (kind, value) in enumerate(p[:-1]):
            if kind == "f":
                if node.declared(value):
                    out.add(p[: i + 1])
                node = node.child(value)
            else:
                node = node.item()
    return out


def remove_paths(obj: Any, paths: Iterable[Path], s: Schema) -> Any:
    """``TypedValue.RemoveItems``: drop every listed field or list item (with its subtree)."""
    obj = copy_value(obj)
    for p in sorted(paths, key=len):
        parent = obj
        node = s
        ok = True
        for kind, value in p[:-1]:
            parent, node, ok = _step(parent, node, kind, value)
            if not ok:
                break
        if not ok:
            continue
        kind, value = p[-1]
        if kind == "f" and isinstance(parent, dict):
            parent.pop(value, None)
        elif kind in ("k", "v") and isinstance(parent, list):
            pes = _index(parent, node, "", True)
            if pes is not None:
                parent[:] = [item for pe, item in zip(pes, parent, strict=True) if pe != (kind, value)]
    return obj


def _step(cur: Any, s: Schema, kind: str, value: Any) -> tuple[Any, Schema, bool]:
    if kind == "f":
        if isinstance(cur, dict) and value in cur:
            return cur[value], s.child(value), True
        return None, s, False
    if isinstance(cur, list):
        pes = _index(cur, s, "", True)
        if pes is not None:
            for pe, item in zip(pes, cur, strict=True):
                if pe == (kind, value):
                    return item, s.item(), True
    return None, s, False
