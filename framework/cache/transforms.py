"""Transforms for informers: shrink objects before they are cached.

Pass one as ``SharedIndexInformer(..., transform=...)`` (or ``informer_for(..., transform=...)``). A
transform runs once per listed or watched object, on the reflector's thread, before the object is
queued, cached or delivered to handlers. It receives a freshly decoded dict that nobody else holds, so
it may change it in place; it must return the object to cache.

- :func:`drop_managed_fields` removes ``metadata.managedFields`` (server-side apply bookkeeping that
  controllers never read; often 30-50 % of an object's JSON).
- :func:`drop_managed_fields_and_share_strings` also makes equal strings share one ``str`` object: the
  values that repeat across objects (``kind``, ``apiVersion``, ``namespace``, ``type``, ``reason``,
  label keys and values, annotation keys, ...) are interned process-wide, and any other string that
  occurs twice in the same object (timestamps, names, a node name) is stored once. A Python ``str``
  costs 49 bytes plus its length, so this saves a few hundred bytes per object for ~5 us of work.
  ``bench/informer_bench.py`` and ``bench/cache_bench.py`` measure both.

Write your own the same way, e.g. to keep only what a controller reads::

    def keep_metadata_and_spec(obj):
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                "metadata": obj["metadata"], "spec": obj.get("spec", {})}
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "SHARED_FIELDS",
    "drop_managed_fields",
    "drop_managed_fields_and_share_strings",
    "share_strings",
]

SHARED_FIELDS = frozenset(
    {
        "apiVersion",
        "kind",
        "namespace",
        "type",
        "reason",
        "status",
        "action",
        "operation",
        "fieldPath",
        "fieldsType",
        "manager",
        "component",
        "host",
        "nodeName",
        "reportingComponent",
        "reportingController",
        "reportingInstance",
        "phase",
        "protocol",
        "imagePullPolicy",
        "restartPolicy",
        "dnsPolicy",
        "schedulerName",
        "serviceAccountName",
        "terminationMessagePath",
        "terminationMessagePolicy",
    }
)
"""Keys whose string values repeat across many objects: those values are interned process-wide."""


def drop_managed_fields(obj: Any) -> Any:
    """Remove ``metadata.managedFields`` (in place) and return the object."""
    try:
        obj["metadata"].pop("managedFields", None)
    except (KeyError, TypeError, AttributeError):
        pass
    return obj


def drop_managed_fields_and_share_strings(obj: Any) -> Any:
    """:func:`drop_managed_fields`, then :func:`share_strings`."""
    return share_strings(drop_managed_fields(obj))


def share_strings(obj: Any) -> Any:
    """Make repeated strings of ``obj`` share storage (in place); returns ``obj``.

    Values under :data:`SHARED_FIELDS` keys, label keys and values and annotation keys are interned
    (shared with every other object); any other string equal to one seen earlier in the same object
    is replaced by that earlier one.
    """
    if type(obj) is not dict:
        return obj
    meta = obj.get("metadata")
    if type(meta) is dict:
        intern = sys.intern
        labels = meta.get("labels")
        if type(labels) is dict and labels:
            meta["labels"] = {
                intern(k): intern(v) if type(v) is str else v for k, v in labels.items() if type(k) is str
            }
        annotations = meta.get("annotations")
        if type(annotations) is dict and annotations:
            meta["annotations"] = {intern(k) if type(k) is str else k: v for k, v in annotations.items()}
    _share(obj, {})
    return obj


def _share(d: dict[str, Any], seen: dict[str, str]) -> None:
    intern = sys.intern
    shared = SHARED_FIELDS
    for key, value in d.items():  # only values are replaced: safe while iterating
        kind = type(value)
        if kind is str:
            d[key] = intern(value) if key in shared else seen.setdefault(value, value)
        elif kind is dict:
            _share(value, seen)
        elif kind is list:
            _share_list(value, seen)


def _share_list(items: list[Any], seen: dict[str, str]) -> None:
    for i, item in enumerate(items):
        kind = type(item)
        if kind is dict:
            _share(item, seen)
        elif kind is str:
            items[i] = seen.setdefault(item, item)
        elif kind is list:
            _share_list(item, seen)
