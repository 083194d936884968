"""``metadata.managedFields`` entries and who owns what: decoding and encoding the entries, recording an
update, applying a configuration with conflict detection (structured-merge-diff's ``merge.Updater``),
and k8s.io/apimachinery ``pkg/util/managedfields/internal``'s stripped metadata and update-manager cap.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from framework.apiserver.encoding import timefmt
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.managed_fields.fieldpath import (
    Path,
    PathSet,
    from_fields_v1,
    iterate,
    path_string,
    to_fields_v1,
)
from framework.apiserver.managed_fields.schema import Schema
from framework.apiserver.managed_fields.typed import (
    Comparison,
    compare,
    copy_value,
    ensure_named,
    field_set,
    merge,
    remove_paths,
)

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
MAX_UPDATE_MANAGERS = 10  # DefaultMaxUpdateManagers
ANCIENT_MANAGER = "ancient-changes"

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


def without_managed_fields(obj: dict | None) -> dict:
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
    c = compare(without_managed_fields(live), without_managed_fields(new), s)
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
    live_obj = without_managed_fields(live)
    applied = {p for p in field_set(config, s) if not ignore(p)}
    merged = merge(copy_value(live_obj), config, s)
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
