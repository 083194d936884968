"""Object keys and the standard namespace index, as client-go's ``MetaNamespaceKeyFunc`` family.

A key is ``"<namespace>/<name>"`` for namespaced objects and ``"<name>"`` for cluster-scoped ones.
Objects are plain JSON dicts as decoded from the API server.
"""

from __future__ import annotations

from typing import Any

from .tombstone import DeletedFinalStateUnknown

NAMESPACE_INDEX = "namespace"
"""Name of the index every :class:`~framework.cache.store.Indexer` has built in."""


def meta_namespace_key_func(obj: Any) -> str:
    """Return the cache key of ``obj``: ``"ns/name"``, or ``"name"`` when it has no namespace.

    A :class:`~framework.cache.tombstone.DeletedFinalStateUnknown` tombstone yields its recorded
    key (client-go's ``DeletionHandlingMetaNamespaceKeyFunc``), so delete handlers can key either form.

    Raises:
        ValueError: ``obj`` has no ``metadata.name``.
    """
    # Hot path (twice per event): plain subscripts; anything unusual falls to the checks below.
    try:
        meta = obj["metadata"]
        name = meta["name"]
        namespace = meta.get("namespace")
    except (KeyError, TypeError, AttributeError):
        return _slow_key(obj)
    if not name or type(name) is not str:
        return _slow_key(obj)
    return f"{namespace}/{name}" if namespace else name


def _slow_key(obj: Any) -> str:
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    if not isinstance(obj, dict):
        raise ValueError(f"cannot compute a key for {type(obj).__name__}: expected an object dict")
    raise ValueError(f"object has no metadata.name: {_describe(obj)}")


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """Split a key into ``(namespace, name)``; the namespace is ``""`` for cluster-scoped keys.

    Raises:
        ValueError: the key has more than one ``/`` or an empty name.
    """
    parts = key.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and parts[1]:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


def meta_namespace_index_func(obj: Any) -> list[str]:
    """Index function of the ``"namespace"`` index: ``[metadata.namespace]``.

    Cluster-scoped objects are indexed under ``""``, as in client-go.
    """
    try:
        return [obj["metadata"].get("namespace") or ""]
    except (KeyError, TypeError, AttributeError):
        raise ValueError(f"object has no metadata: {_describe(obj)}") from None


def _describe(obj: Any) -> str:
    if isinstance(obj, dict):
        return f"kind={obj.get('kind')!r} apiVersion={obj.get('apiVersion')!r}"
    return type(obj).__name__
