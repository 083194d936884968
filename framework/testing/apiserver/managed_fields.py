"""Field ownership for server-side apply: ``metadata.managedFields`` (spec 6-9, §9).

A compact port of what kube-apiserver does with sigs.k8s.io/structured-merge-diff (``fieldpath``
sets, the typed ``ToFieldSet`` / ``Compare`` / ``Merge`` walkers, ``merge.Updater``) and
k8s.io/apimachinery ``pkg/util/managedfields/internal`` (manager identifiers, stripped metadata, the
update-manager cap, the last-applied annotation bridge for ``kubectl``).

Field sets are Python sets of paths; a path is a tuple of path elements:

* ``("f", name)`` — a field of a map (``f:name`` in FieldsV1, ``.name`` in messages);
* ``("k", json)`` — an item of an associative list, ``json`` the compact, key-sorted object of its key
  fields (``k:{"name":"c"}``, ``[name="c"]``);
* ``("v", json)`` — an item of a set list (``v:"x"``, ``[="x"]``).

List and map semantics come from a :class:`Schema`: for built-in kinds the strategic-merge strategies of
the kind (``merge`` with a key → associative list, without → set) plus a few SSA-only facts; for custom
resources the CRD's structural schema (``x-kubernetes-list-type`` / ``-list-map-keys`` /
``-map-type``); lists are atomic otherwise, maps granular.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from framework.meta.object import get_annotations, get_metadata

from . import timefmt
from .errors import StatusError

PathElement = tuple[str, Any]
Path = tuple[PathElement, ...]
PathSet = set[Path]

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
MAX_UPDATE_MANAGERS = 10  # DefaultMaxUpdateManagers
ANCIENT_MANAGER = "ancient-changes"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL_MANAGER = "kubectl"

_MISSING: Any = object()

# stripMetaManager: never tracked, whoever writes them.
STRIPPED: frozenset[Path] = frozenset(
    {
        (("f", "apiVersion"),),
        (("f", "kind"),),
        (("f", "metadata"),),
        *(
            (("f", "metadata"), ("f", k))
            for k in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)


# --- schemas ------------------------------------------------------------------------------------------


class Schema:
    """List/map semantics of one node of an object's type. The base class is the "deduced" schema used
    for parts nothing describes: maps are granular with undeclared keys, lists are atomic."""

    def child(self, key: str) -> Schema:
        return DEDUCED

    def item(self) -> Schema:
        return DEDUCED

    def declared(self, key: str) -> bool:
        """A struct field (True) rather than a key of a map (False)."""
        return False

    def atomic_map(self) -> bool:
        return False

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        """``("atomic", ())``, ``("set", ())`` or ``("map", keys)``."""
        return ("atomic", ())

    def key_default(self, key: str) -> Any:
        """The schema default of an associative list item's key field (``_MISSING`` if none)."""
        return _MISSING


DEDUCED = Schema()


@dataclass(frozen=True)
class _Table:
    lists: Mapping[str, tuple[str, tuple[str, ...]]]
    atomic: frozenset[str]
    maps: frozenset[str]


class PathSchema(Schema):
    """Built-in kinds: semantics looked up by dotted path (list items written ``[]``)."""

    def __init__(self, table: _Table, path: str = "") -> None:
        self.table = table
        self.path = path

    def child(self, key: str) -> Schema:
        if self.path in self.table.maps:
            return PathSchema(self.table, f"{self.path}.*")
        return PathSchema(self.table, f"{self.path}.{key}" if self.path else key)

    def item(self) -> Schema:
        return PathSchema(self.table, self.path + "[]")

    def declared(self, key: str) -> bool:
        return self.path not in self.table.maps

    def atomic_map(self) -> bool:
        return self.path in self.table.atomic

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        return self.table.lists.get(self.path, ("atomic", ()))


_META_LISTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "metadata.finalizers": ("set", ()),
    "metadata.ownerReferences": ("map", ("uid",)),
}
_META_ATOMIC = frozenset({"metadata.ownerReferences[]"})  # OwnerReference is +structType=atomic
_META_MAPS = frozenset({"metadata.labels", "metadata.annotations"})
_META_TABLE = _Table(_META_LISTS, _META_ATOMIC, _META_MAPS)

# SSA facts of built-in kinds that their strategic-merge strategies do not carry.
_BUILTIN_EXTRA: dict[str, tuple[dict[str, tuple[str, tuple[str, ...]]], frozenset[str], frozenset[str]]] = {
    "ConfigMap": ({}, frozenset(), frozenset({"data", "binaryData"})),
    "Secret": ({}, frozenset(), frozenset({"data", "stringData"})),
    "ResourceQuota": ({}, frozenset(), frozenset({"spec.hard", "status.hard", "status.used"})),
    "Event": ({}, frozenset({"involvedObject", "related", "regarding"}), frozenset()),
    "ValidatingWebhookConfiguration": (
        {},
        frozenset({"webhooks[].namespaceSelector", "webhooks[].objectSelector"}),
        frozenset(),
    ),
    "MutatingWebhookConfiguration": (
        {},
        frozenset({"webhooks[].namespaceSelector", "webhooks[].objectSelector"}),
        frozenset(),
    ),
    "CustomResourceDefinition": ({"status.conditions": ("map", ("type",))}, frozenset(), frozenset()),
}


def builtin_schema(kind: str, smp: Mapping[str, tuple[str, str | None]] | None) -> Schema:
    lists: dict[str, tuple[str, tuple[str, ...]]] = dict(_META_LISTS)
    for path, (strategy, key) in (smp or {}).items():
        if strategy == "merge":
            lists[path] = ("map", (key,)) if key else ("set", ())
    extra_lists, atomic, maps = _BUILTIN_EXTRA.get(kind, ({}, frozenset(), frozenset()))
    lists.update(extra_lists)
    return PathSchema(_Table(lists, _META_ATOMIC | atomic, _META_MAPS | maps))


class OpenAPISchema(Schema):
    """Custom resources: a node of the CRD's structural schema (None: not described, deduced)."""

    def __init__(self, node: dict | None, root: bool = False) -> None:
        self.node = node if isinstance(node, dict) else None
        self.root = root

    def child(self, key: str) -> Schema:
        if self.root and key == "metadata":
            return PathSchema(_META_TABLE, "metadata")
        if self.node is None:
            return DEDUCED
        props = self.node.get("properties")
        if isinstance(props, dict) and key in props:
            return OpenAPISchema(props[key])
        addl = self.node.get("additionalProperties")
        if isinstance(addl, dict):
            return OpenAPISchema(addl)
        return DEDUCED

    def item(self) -> Schema:
        return OpenAPISchema(self.node.get("items")) if self.node is not None else DEDUCED

    def declared(self, key: str) -> bool:
        if self.root and key in ("apiVersion", "kind", "metadata"):
            return True
        props = (self.node or {}).get("properties")
        return isinstance(props, dict) and key in props

    def atomic_map(self) -> bool:
        return self.node is not None and self.node.get("x-kubernetes-map-type") == "atomic"

    def key_default(self, key: str) -> Any:
        prop = ((self.node or {}).get("properties") or {}).get(key)
        return prop["default"] if isinstance(prop, dict) and "default" in prop else _MISSING

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        if self.node is None:
            return ("atomic", ())
        kind = self.node.get("x-kubernetes-list-type") or "atomic"
        if kind == "map":
            return ("map", tuple(self.node.get("x-kubernetes-list-map-keys") or ()))
        return (kind, ()) if kind == "set" else ("atomic", ())


def custom_schema(openapi: dict | None) -> Schema:
    return OpenAPISchema(
        openapi or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}, root=True
    )


# --- path elements and paths ----------------------------------------------------------------------------


class TypedError(Exception):
    """The object does not fit its schema (an associative list item without its key, duplicates)."""


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _item_pe(
    item: Any, list_type: str, keys: tuple[str, ...], item_schema: Schema, where: str, index: int
) -> PathElement:
    if list_type == "set":
        if isinstance(item, dict | list):
            raise TypedError(f"{where}: element {index}: set items must be scalars")
        return ("v", _json(item))
    if not isinstance(item, dict):
        raise TypedError(f"{where}: element {index}: associative list items must be objects")
    key = {}
    for k in keys:
        value = item.get(k, item_schema.key_default(k))
        if value is _MISSING or isinstance(value, dict | list):
            raise TypedError(
                f"{where}: element {index}: associative list with keys has an element that omits key "
                f'field "{k}" (and doesn\'t have default value)'
            )
        key[k] = value
    return ("k", _json(key))


def _go_value(v: Any) -> str:
    """``value.ToString``: strings Go-quoted, numbers and booleans bare."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def pe_string(pe: PathElement) -> str:
    kind, value = pe
    if kind == "f":
        return "." + value
    if kind == "k":
        key = orjson.loads(value)
        return "[" + ",".join(f"{k}={_go_value(v)}" for k, v in key.items()) + "]"
    if kind == "v":
        return f"[={_go_value(orjson.loads(value))}]"
    return f"[{value}]"


def path_string(path: Path) -> str:
    """SMD notation: ``.spec.containers[name="c"].image``, ``.metadata.labels.app``."""
    return "".join(pe_string(pe) for pe in path)


def _pe_sort(pe: PathElement) -> tuple[int, Any]:
    rank = {"f": 0, "k": 1, "v": 2, "i": 3}[pe[0]]
    return (rank, pe[1])


# --- FieldsV1 -----------------------------------------------------------------------------------------


def to_fields_v1(paths: Iterable[Path]) -> dict:
    """A set of paths as the FieldsV1 tree (``"."`` marks a member that also has children)."""
    tree: dict[PathElement, Any] = {}
    members: set[Path] = set()
    for p in paths:
        node = tree
        for pe in p:
            node = node.setdefault(pe, {})
        members.add(p)

    def render(node: dict, prefix: Path) -> dict:
        out: dict[str, Any] = {}
        if node and prefix in members and prefix:
            out["."] = {}
        for pe in sorted(node, key=_pe_sort):
            kind, value = pe
            name = f"{kind}:{value}"
            out[name] = render(node[pe], (*prefix, pe))
        return out

    return render(tree, ())


def from_fields_v1(tree: Any) -> PathSet:
    out: PathSet = set()

    def walk(node: Any, prefix: Path) -> None:
        if not isinstance(node, dict):
            raise ValueError("FieldsV1 nodes must be objects")
        if not node and prefix:
            out.add(prefix)
        for name, child in node.items():
            if name == ".":
                if prefix:
                    out.add(prefix)
                continue
            kind, sep, value = name.partition(":")
            if not sep or kind not in ("f", "k", "v", "i"):
                raise ValueError(f"invalid path element {name!r}")
            pe: PathElement
            if kind == "f":
                pe = ("f", value)
            elif kind == "i":
                pe = ("i", int(value))
            else:
                parsed = orjson.loads(value)
                if kind == "k" and not isinstance(parsed, dict):
                    raise ValueError(f"invalid key {value!r}")
                pe = (kind, _json(parsed))
            walk(child, (*prefix, pe))

    walk(tree, ())
    return out


def iterate(paths: Iterable[Path]) -> list[Path]:
    """``fieldpath.Set.Iterate`` order: at each level the members first, then the children's subtrees."""
    tree: dict[PathElement, Any] = {}
    members = set(paths)
    for p in members:
        node = tree
        for pe in p:
            node = node.setdefault(pe, {})
    out: list[Path] = []

    def walk(node: dict, prefix: Path) -> None:
        order = sorted(node, key=_pe_sort)
        out.extend((*prefix, pe) for pe in order if (*prefix, pe) in members)
        for pe in order:
            if node[pe]:
                walk(node[pe], (*prefix, pe))

    walk(tree, ())
    return out


# --- typed walkers ------------------------------------------------------------------------------------


def _index(items: list, s: Schema, where: str, lenient: bool) -> list[PathElement] | None:
    """The path elements of a non-atomic list's items; None when the list is to be treated as atomic."""
    list_type, keys = s.list_type()
    if list_type == "atomic":
        return None
    try:
        item_schema = s.item()
        pes = [_item_pe(item, list_type, keys, item_schema, where, i) for i, item in enumerate(items)]
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
        if lv is _MISSING:
            c.added.add(path)
        elif rv is _MISSING:
            c.removed.add(path)
        elif not _equal(lv, rv):
            c.modified.add(path)

    def walk(lv: Any, rv: Any, s: Schema, path: Path) -> None:
        if isinstance(lv, dict | list) and type(lv) is type(rv) and lv == rv:
            return  # an unchanged subtree (the common case): nothing to report below it
        present = rv if lv is _MISSING else lv
        if (
            isinstance(present, dict)
            and (lv is _MISSING or isinstance(lv, dict))
            and (rv is _MISSING or isinstance(rv, dict))
        ):
            lm = lv if lv is not _MISSING else {}
            rm = rv if rv is not _MISSING else {}
            if s.atomic_map() or (not lm and not rm):
                leaf(lv, rv, path)
                return
            for k in {**lm, **rm}:
                a, b = lm.get(k, _MISSING), rm.get(k, _MISSING)
                if isinstance(a, dict | list) or isinstance(b, dict | list):
                    walk(a, b, s.child(k), (*path, ("f", k)))
                elif a is _MISSING or b is _MISSING or not _equal(a, b):
                    leaf(a, b, (*path, ("f", k)))  # scalars inline: most fields are
            _composite(lv, rv, path)
        elif (
            isinstance(present, list)
            and (lv is _MISSING or isinstance(lv, list))
            and (rv is _MISSING or isinstance(rv, list))
        ):
            ll = lv if lv is not _MISSING else []
            rl = rv if rv is not _MISSING else []
            lpes = _index(ll, s, "", True) if ll else []
            rpes = _index(rl, s, "", True) if rl else []
            if lpes is None or rpes is None or s.list_type()[0] == "atomic" or (not ll and not rl):
                leaf(lv, rv, path)
                return
            lmap = dict(zip(lpes, ll, strict=True))
            rmap = dict(zip(rpes, rl, strict=True))
            item_schema = s.item()
            for pe in {**lmap, **rmap}:
                walk(lmap.get(pe, _MISSING), rmap.get(pe, _MISSING), item_schema, (*path, pe))
            _composite(lv, rv, path)
        elif (
            lv is not _MISSING
            and rv is not _MISSING
            and type(lv) is not type(rv)
            and (isinstance(lv, dict | list) or isinstance(rv, dict | list))
        ):
            c.modified.add(path)
        else:
            leaf(lv, rv, path)

    def _composite(lv: Any, rv: Any, path: Path) -> None:
        if lv is _MISSING:
            c.added.add(path)
        elif rv is _MISSING:
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


def _copy(v: Any) -> Any:
    return orjson.loads(orjson.dumps(v))


def merge(live: Any, config: Any, s: Schema) -> Any:
    """``TypedValue.Merge``: maps merge key-wise, associative/set lists item-wise, the rest replaces.

    An explicit ``null`` in the applied configuration removes the field (the typed Go object has no
    null), and the applied config is assumed well-formed (checked with :func:`field_set` before)."""

    def walk(lv: Any, rv: Any, s: Schema) -> Any:
        if lv is _MISSING:
            return _drop_nulls(_copy(rv))
        if isinstance(lv, dict) and isinstance(rv, dict) and not s.atomic_map():
            out = dict(lv)
            for k, cv in rv.items():
                if cv is None:
                    out.pop(k, None)
                    continue
                out[k] = walk(lv.get(k, _MISSING), cv, s.child(k))
            return out
        if isinstance(lv, list) and isinstance(rv, list):
            lpes = _index(lv, s, "", True)
            rpes = _index(rv, s, "", True)
            if lpes is not None and rpes is not None:
                return _merge_list(lv, rv, lpes, rpes, s.item(), walk)
        return _drop_nulls(_copy(rv))

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
            out.append(walk(lmap.get(pe, _MISSING), rmap[pe], item_schema))
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
    obj = _copy(obj)
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


# --- managers -----------------------------------------------------------------------------------------


@dataclass
class Entry:
    manager: str
    operation: str
    api_version: str
    fields: PathSet
    time: str | None = None
    subresource: str = ""
    # The stored FieldsV1 this entry was decoded from and its set, reused by encode while unchanged.
    encoded: tuple[PathSet, dict] | None = field(default=None, compare=False, repr=False)

    @property
    def ident(self) -> tuple[str, str, str, str]:
        """``BuildManagerIdentifier``: appliers are one manager whatever version they used."""
        return (
            self.manager,
            self.operation,
            "" if self.operation == APPLY else self.api_version,
            self.subresource,
        )

    def ident_json(self) -> str:
        d: dict[str, str] = {}
        if self.manager:
            d["manager"] = self.manager
        d["operation"] = self.operation
        if self.operation != APPLY and self.api_version:
            d["apiVersion"] = self.api_version
        if self.subresource:
            d["subresource"] = self.subresource
        return json.dumps(d, separators=(",", ":"))

    def display(self) -> str:
        """``printManager`` of a conflict message."""
        out = json.dumps(self.manager)
        if self.subresource:
            out += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == UPDATE:
            out += f" using {self.api_version}"
        return out


Managed = dict[tuple[str, str, str, str], Entry]


def decode(entries: Any, stored: bool = False) -> Managed:
    """``DecodeManagedFields``; raises ValueError for what the real decoder rejects. ``stored``: the
    entries are the server's own (canonical) output, so their FieldsV1 can be reused by encode."""
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    out: Managed = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise ValueError(f"managed fields entry {i} is not an object")
        op = e.get("operation")
        if op not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        if not e.get("apiVersion"):
            raise ValueError("apiVersion must not be empty")
        if e.get("fieldsType") != FIELDS_V1:
            raise ValueError(f"invalid fieldsType in managed fields entry {i}")
        t = e.get("time")
        tree = e.get("fieldsV1") or {}
        entry = Entry(
            manager=str(e.get("manager") or ""),
            operation=op,
            api_version=str(e["apiVersion"]),
            fields=_decode_stored(tree) if stored else from_fields_v1(tree),
            time=t if stored or not t else timefmt.normalize_time(t, f"metadata.managedFields[{i}].time"),
            subresource=str(e.get("subresource") or ""),
        )
        if stored:
            entry.encoded = (set(entry.fields), e["fieldsV1"])
        out[entry.ident] = entry
    return out


# Stored objects are never mutated, so the sets of their FieldsV1 trees can be remembered by identity
# (the cache holds the tree, so its id cannot be reused while cached).
_DECODED: OrderedDict[int, tuple[dict, frozenset[Path]]] = OrderedDict()
_DECODED_MAX = 4096


_DECODED_LOCK = threading.Lock()  # servers in one process run on different threads


def _decode_stored(tree: dict) -> PathSet:
    with _DECODED_LOCK:
        hit = _DECODED.get(id(tree))
        if hit is not None and hit[0] is tree:
            _DECODED.move_to_end(id(tree))
            return set(hit[1])
    paths = from_fields_v1(tree)
    _remember(tree, paths)
    return paths


def _remember(tree: dict, paths: PathSet) -> None:
    with _DECODED_LOCK:
        _DECODED[id(tree)] = (tree, frozenset(paths))
        if len(_DECODED) > _DECODED_MAX:
            _DECODED.popitem(last=False)


def is_reset(entries: Any) -> bool:
    """``[{}]``: the documented way to clear managedFields."""
    return isinstance(entries, list) and len(entries) == 1 and entries[0] == {}


def encode(managed: Managed) -> list[dict]:
    """Entries sorted like ``sortEncodedManagedFields`` (operation, time, manager, version, subresource)."""
    entries = [e for e in managed.values() if e.fields]
    entries.sort(key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource))
    out = []
    for e in entries:
        d: dict[str, Any] = {}
        if e.manager:
            d["manager"] = e.manager
        d["operation"] = e.operation
        d["apiVersion"] = e.api_version
        if e.time:
            d["time"] = e.time
        d["fieldsType"] = FIELDS_V1
        if e.encoded and e.encoded[0] == e.fields:
            d["fieldsV1"] = e.encoded[1]
        else:
            d["fieldsV1"] = tree = to_fields_v1(e.fields)
            _remember(tree, e.fields)
        if e.subresource:
            d["subresource"] = e.subresource
        out.append(d)
    return out


def _cap_updaters(managed: Managed) -> None:
    """``capManagersManager``: the oldest Update entries beyond ten merge into ``ancient-changes``."""
    updaters = [k for k, e in managed.items() if e.operation == UPDATE]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda k: (managed[k].time or "", managed[k].ident_json()))
    length = len(updaters)
    first_bucket: dict[str, bool] = {}
    for k in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        e = managed[k]
        bucket = Entry(ANCIENT_MANAGER, UPDATE, e.api_version, set(e.fields), e.time)
        existing = managed.get(bucket.ident)
        if existing is not None:
            bucket.fields |= existing.fields
        if e.api_version in first_bucket:
            length -= 1
        else:
            first_bucket[e.api_version] = True
        if k != bucket.ident:
            del managed[k]
        managed[bucket.ident] = bucket


def _clone(managed: Managed) -> Managed:
    return {
        k: Entry(e.manager, e.operation, e.api_version, set(e.fields), e.time, e.subresource, e.encoded)
        for k, e in managed.items()
    }


def _strip(paths: PathSet) -> PathSet:
    return paths - STRIPPED


def _without_managed_fields(obj: dict | None) -> dict:
    if not obj:
        return {}
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        return {**obj, "metadata": meta}
    return obj


Ignore = Callable[[Path], bool]


def ignore_for(has_status: bool, subresource: str | None) -> Ignore:
    """The reset fields of the endpoint (``GetResetFields``): the main resource of a kind with a status
    subresource never owns ``status``; ``/status`` owns nothing else."""
    if subresource == "status":
        return lambda p: not (p and p[0] == ("f", "status"))
    if has_status:
        return lambda p: bool(p) and p[0] == ("f", "status")
    return lambda p: False


def diff(s: Schema, live: dict | None, new: dict) -> Comparison | None:
    """What a write changed, for :func:`record`; None when nothing tracked did."""
    c = compare(_without_managed_fields(live), _without_managed_fields(new), s)
    c.added = _strip(c.added)
    c.modified = _strip(c.modified)
    c.removed = _strip(c.removed)
    return c if c.added or c.modified or c.removed else None


def record(
    c: Comparison | None, managed: Managed, manager: str, api_version: str, subresource: str | None
) -> Managed:
    """Ownership after a create/update/patch (``Updater.Update`` + ``managedFieldsUpdater``): the
    manager's Update entry gains every field it added or changed, other managers lose them, and
    removed fields leave every set. Nothing changes (the same mapping is returned) when the object
    did not."""
    if c is None:
        return managed
    changed = c.added | c.modified
    managed = _clone(managed)
    for e in managed.values():
        e.fields -= changed
        e.fields -= c.removed
    if changed:
        me = Entry(manager, UPDATE, api_version, set(), None, subresource or "")
        previous = managed.get(me.ident)
        if previous is not None:
            me.fields, me.encoded = previous.fields, previous.encoded
        me.fields |= changed
        me.time = timefmt.now_time()
        managed[me.ident] = me
    managed = {k: e for k, e in managed.items() if e.fields}
    _cap_updaters(managed)
    return managed


@dataclass
class Conflict:
    entry: Entry
    path: Path


class Conflicts(Exception):
    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(conflict_message(conflicts))
        self.conflicts = conflicts


def conflict_message(conflicts: list[Conflict]) -> str:
    """``getConflictMessage`` of k8s.io/apimachinery ``managedfields/internal/conflict.go``."""
    if len(conflicts) == 1:
        c = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {c.entry.display()}: {path_string(c.path)}"
    by_manager: dict[str, list[Conflict]] = {}
    for c in conflicts:
        by_manager.setdefault(c.entry.ident_json(), []).append(c)
    lines = []
    for ident in sorted(by_manager):
        group = by_manager[ident]
        lines.append(f"conflicts with {group[0].entry.display()}:")
        lines.extend(f"- {path_string(c.path)}" for c in group)
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


def conflict_error(conflicts: list[Conflict]) -> StatusError:
    """``NewApplyConflict``: 409 Conflict, one ``FieldManagerConflict`` cause per path, no name/kind."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {c.entry.display()}",
            "field": path_string(c.path),
        }
        for c in conflicts
    ]
    return StatusError(409, "Conflict", conflict_message(conflicts), {"causes": causes})


def _prune(merged: dict, managed: Managed, last: PathSet | None, s: Schema) -> dict:
    """``Updater.prune``: remove what this applier applied before, applies no longer, and nobody else
    owns (declared parents of owned fields count as owned)."""
    if not last:
        return merged
    owned: PathSet = set()
    for e in managed.values():
        owned |= e.fields
    owned = ensure_named(owned, s)
    present = ensure_named(field_set(merged, s, lenient=True), s)
    drop = {p for p in ensure_named(last, s) if p in present and p not in owned}
    return remove_paths(merged, drop, s) if drop else merged


def apply(
    s: Schema,
    live: dict | None,
    config: dict,
    managed: Managed,
    manager: str,
    api_version: str,
    subresource: str | None,
    force: bool,
    ignore: Ignore,
) -> tuple[dict, Managed]:
    """``Updater.Apply``: merge ``config`` into ``live``, prune what the applier dropped, and check
    that no field whose value changes belongs to another manager (unless ``force``, which moves
    ownership). Returns the new object and ownership; raises :class:`Conflicts` or
    :class:`TypedError`."""
    managed = _clone(managed)
    live_obj = _without_managed_fields(live)
    applied = {p for p in field_set(config, s) if not ignore(p)}
    merged = merge(_copy(live_obj), config, s)
    me = Entry(manager, APPLY, api_version, applied, None, subresource or "")
    previous = managed.get(me.ident)
    last = previous.fields if previous is not None else None
    if previous is not None:
        me.time = previous.time
    managed[me.ident] = me
    merged = _prune(merged, managed, last, s)
    c = compare(live_obj, merged, s)
    changed = {p for p in c.added | c.modified if not ignore(p)}
    removed = {p for p in c.removed if not ignore(p)}
    conflicts: list[Conflict] = []
    for k in sorted(managed, key=lambda k: managed[k].ident_json()):
        if k == me.ident:
            continue
        e = managed[k]
        for p in iterate(e.fields & changed):
            conflicts.append(Conflict(e, p))
    if conflicts and not force:
        raise Conflicts(conflicts)
    for k, e in managed.items():
        if k != me.ident:
            e.fields -= changed
            e.fields -= removed
    me.fields = _strip(me.fields)
    if changed or removed or me.time is None:
        me.time = timefmt.now_time()
    managed = {k: e for k, e in managed.items() if e.fields}
    _cap_updaters(managed)
    return merged, managed


# --- the last-applied bridge for kubectl (lastAppliedManager / lastAppliedUpdater) ----------------------


def allowed_by_last_applied(live: dict | None, s: Schema) -> PathSet:
    """Fields ``kubectl`` may take over without conflict while migrating from client-side apply: those
    in the last-applied annotation whose live value still equals it."""
    annotations = get_annotations(live)
    raw = annotations.get(LAST_APPLIED)
    if not raw:
        return set()
    try:
        last = orjson.loads(raw)
        if not isinstance(last, dict):
            return set()
        last_set = field_set(last, s, lenient=True)
    except (orjson.JSONDecodeError, TypedError):
        return set()
    return last_set - compare(last, _without_managed_fields(live), s).modified


def last_applied_value(config: dict) -> str:
    """``buildLastApplied``: the applied configuration minus the annotation, as Go encodes JSON."""
    obj = _copy(config)
    annotations = get_metadata(obj).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text + "\n"


# --- manager names ------------------------------------------------------------------------------------


def manager_from_user_agent(user_agent: str) -> str:
    """``prefixFromUserAgent``: what precedes the first ``/``, printable characters, at most 128 bytes."""
    out = ""
    size = 0
    for ch in user_agent.split("/")[0]:
        if not ch.isprintable():
            continue
        n = len(ch.encode())
        if size + n > 128:
            break
        out += ch
        size += n
    return out


# --- the apply request body -----------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """YAML as sigs.k8s.io/yaml reads it into JSON: timestamps stay strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _string_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {_key_text(k): _string_keys(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_string_keys(x) for x in v]
    return v


def _key_text(k: Any) -> str:
    if isinstance(k, bool):
        return "true" if k else "false"
    return k if isinstance(k, str) else str(k)


def load_apply_config(raw: bytes) -> dict:
    """The body of an ``application/apply-patch+yaml`` request (YAML or JSON) as a JSON object."""
    try:
        doc = orjson.loads(raw) if raw.lstrip()[:1] == b"{" else yaml.load(raw, Loader=_Loader)
    except (orjson.JSONDecodeError, yaml.YAMLError) as e:
        try:
            doc = yaml.load(raw, Loader=_Loader)
        except yaml.YAMLError:
            raise StatusError(400, "BadRequest", f"error decoding YAML: {e}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        kind = "array" if isinstance(doc, list) else "string" if isinstance(doc, str) else "number"
        if isinstance(doc, bool):
            kind = "bool"
        raise StatusError(
            400,
            "BadRequest",
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
            f"{kind} into Go value of type map[string]interface {{}}",
        )
    return _string_keys(doc)
