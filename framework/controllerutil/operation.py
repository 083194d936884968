"""``create_or_update`` and ``create_or_patch``: converge one object on a desired state, writing only
when the mutation changed something (controller-runtime's ``CreateOrUpdate`` / ``CreateOrPatch``)."""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Mapping
from typing import Any

from framework.client import AlreadyExists, NotFound
from framework.client.interfaces import Reader, ReaderWriter
from framework.client.patch import create_merge_patch
from framework.meta.object import get_metadata

__all__ = ["MutateFn", "OperationResult", "create_or_patch", "create_or_update"]

MutateFn = Callable[[dict[str, Any]], object]
"""Changes the object it is given in place into the desired state (its return value is ignored)."""


class OperationResult(enum.StrEnum):
    """What ``create_or_update`` / ``create_or_patch`` did; the values are controller-runtime's, so a
    log line reads "ConfigMap default/x has been created"."""

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"
    """``create_or_patch``: the object and its status were patched."""
    UPDATED_STATUS_ONLY = "updatedStatusOnly"
    """``create_or_patch``: only the status was patched."""


def _read_and_mutate(
    client: ReaderWriter, obj: Mapping[str, Any], mutate: MutateFn | None, live_reader: Reader | None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(existing, mutated copy)``; ``(None, created object)`` when there was none to read, in which
    case ``obj`` mutated has been created (the step both operations share).

    With ``live_reader``, ``existing`` is the live object whenever a write is needed: the cached read
    only decides whether one is.
    """
    key = _key(obj)
    existing = _get(client, key)
    if existing is None:
        try:
            return None, client.create(_mutated(mutate, obj, key))
        except AlreadyExists:
            if live_reader is None:
                raise
            # The reader is behind (a cache that has not seen the object yet): go on with the live one.
            existing = _get(live_reader, key)
            if existing is None:
                raise
            return existing, _mutated(mutate, existing, key)
    desired = _mutated(mutate, existing, key)
    if live_reader is None or desired == existing:
        return existing, desired
    # A write is needed: decide it again on the live object, so mutate's checks see fresh data and the
    # write carries the live resourceVersion.
    live = _get(live_reader, key)
    if live is None:  # deleted since the reader saw it
        return None, client.create(_mutated(mutate, obj, key))
    return live, _mutated(mutate, live, key)


def create_or_update(
    client: ReaderWriter,
    obj: Mapping[str, Any],
    mutate: MutateFn | None = None,
    *,
    live_reader: Reader | None = None,
) -> tuple[dict[str, Any], OperationResult]:
    """Read ``obj`` (by apiVersion, kind, namespace and name), apply ``mutate`` and write the result.

    Missing: ``mutate`` runs on a copy of ``obj`` and the result is created. Present: ``mutate`` runs on
    the object read, and it is updated (PUT, with the resourceVersion read, so a concurrent write is a
    ``Conflict``) only if the mutation changed it; otherwise nothing is written. Returns the object as
    the server (or, for ``UNCHANGED``, the reader) has it and what was done.

    ``obj`` needs only identity (apiVersion, kind, metadata.name/namespace): everything else is
    replaced by what is read before ``mutate`` runs, so set fields inside ``mutate``. Changes to
    ``status`` are not written (use ``create_or_patch``); ``mutate`` must not change name or
    namespace (``ValueError``). With ``mgr.client`` the read comes from the cache.

    ``live_reader`` (an uncached reader, e.g. ``mgr.api_reader``) is for a ``mutate`` that holds
    safety checks which must not pass on stale data: the read through ``client`` only decides whether a
    write is needed; if one is, the object is read live, ``mutate`` runs again on it (and may raise
    there), and the write is based on the live object. The live object unchanged by ``mutate`` gives
    ``UNCHANGED`` without a write; gone live, it is created from ``obj``; a create that finds the object
    already there (``AlreadyExists``, the reader was behind) goes on with the live object.
    """
    existing, desired = _read_and_mutate(client, obj, mutate, live_reader)
    if existing is None:
        return desired, OperationResult.CREATED
    if desired == existing:
        return existing, OperationResult.UNCHANGED
    return client.update(desired), OperationResult.UPDATED


def create_or_patch(
    client: ReaderWriter,
    obj: Mapping[str, Any],
    mutate: MutateFn | None = None,
    *,
    live_reader: Reader | None = None,
) -> tuple[dict[str, Any], OperationResult]:
    """As :func:`create_or_update`, but changes are sent as JSON merge patches: one for the object
    (without ``status``) and, if ``status`` changed, one to the ``/status`` subresource.

    A merge patch carries only what ``mutate`` changed and no resourceVersion, so it never conflicts
    with a concurrent writer of other fields (it also cannot notice one). Results:
    ``UPDATED`` (object only), ``UPDATED_STATUS`` (object and status), ``UPDATED_STATUS_ONLY``,
    ``CREATED`` (status changes are dropped on create, as the API server drops them), ``UNCHANGED``.
    ``live_reader`` as for :func:`create_or_update`: the patches are computed from the live object.
    """
    api_version, kind, namespace, name = _key(obj)
    existing, desired = _read_and_mutate(client, obj, mutate, live_reader)
    if existing is None:
        return desired, OperationResult.CREATED
    before, after = dict(existing), dict(desired)
    before_status, after_status = before.pop("status", None), after.pop("status", None)
    result, current = OperationResult.UNCHANGED, existing
    patch = create_merge_patch(before, after)
    if patch:
        current = client.patch(api_version, kind, name, patch, namespace)
        result = OperationResult.UPDATED
    if before_status != after_status:
        status_patch = create_merge_patch({"status": before_status}, {"status": after_status})
        current = client.patch(api_version, kind, name, status_patch, namespace, subresource="status")
        result = (
            OperationResult.UPDATED_STATUS
            if result is OperationResult.UPDATED
            else OperationResult.UPDATED_STATUS_ONLY
        )
    return current, result


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str | None, str]:
    meta = get_metadata(obj)
    api_version, kind, name = obj.get("apiVersion"), obj.get("kind"), meta.get("name")
    if not api_version or not kind or not name:
        raise ValueError("the object needs apiVersion, kind and metadata.name")
    return api_version, kind, meta.get("namespace") or None, name


def _get(reader: Reader, key: tuple[str, str, str | None, str]) -> dict[str, Any] | None:
    api_version, kind, namespace, name = key
    try:
        return reader.get(api_version, kind, name, namespace)
    except NotFound:
        return None


def _mutated(
    mutate: MutateFn | None, obj: Mapping[str, Any], key: tuple[str, str, str | None, str]
) -> dict[str, Any]:
    """A deep copy of ``obj`` changed by ``mutate`` (``obj`` itself is left alone)."""
    desired = copy.deepcopy(dict(obj))
    if mutate is not None:
        mutate(desired)
    if _key(desired)[2:] != key[2:]:
        raise ValueError("mutate must not change the object's name or namespace")
    return desired
