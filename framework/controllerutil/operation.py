"""``create_or_update`` and ``create_or_patch``: converge one object on a desired state, writing only
when the mutation changed something (controller-runtime's ``CreateOrUpdate`` / ``CreateOrPatch``)."""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Mapping
from typing import Any

from framework.client import NotFound
from framework.client.interfaces import ReaderWriter
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
    client: ReaderWriter, obj: Mapping[str, Any], mutate: MutateFn | None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(existing, mutated copy)``; ``(None, created object)`` when there was none to read, in which
    case ``obj`` mutated has been created (the step both operations share)."""
    key = _key(obj)
    api_version, kind, namespace, name = key
    try:
        existing = client.get(api_version, kind, name, namespace)
    except NotFound:
        desired = copy.deepcopy(dict(obj))
        _mutate(mutate, desired, key)
        return None, client.create(desired)
    desired = copy.deepcopy(existing)
    _mutate(mutate, desired, key)
    return existing, desired


def create_or_update(
    client: ReaderWriter, obj: Mapping[str, Any], mutate: MutateFn | None = None
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
    """
    existing, desired = _read_and_mutate(client, obj, mutate)
    if existing is None:
        return desired, OperationResult.CREATED
    if desired == existing:
        return existing, OperationResult.UNCHANGED
    return client.update(desired), OperationResult.UPDATED


def create_or_patch(
    client: ReaderWriter, obj: Mapping[str, Any], mutate: MutateFn | None = None
) -> tuple[dict[str, Any], OperationResult]:
    """As :func:`create_or_update`, but changes are sent as JSON merge patches: one for the object
    (without ``status``) and, if ``status`` changed, one to the ``/status`` subresource.

    A merge patch carries only what ``mutate`` changed and no resourceVersion, so it never conflicts
    with a concurrent writer of other fields (it also cannot notice one). Results:
    ``UPDATED`` (object only), ``UPDATED_STATUS`` (object and status), ``UPDATED_STATUS_ONLY``,
    ``CREATED`` (status changes are dropped on create, as the API server drops them), ``UNCHANGED``.
    """
    api_version, kind, namespace, name = _key(obj)
    existing, desired = _read_and_mutate(client, obj, mutate)
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


def _mutate(mutate: MutateFn | None, obj: dict[str, Any], key: tuple[str, str, str | None, str]) -> None:
    if mutate is not None:
        mutate(obj)
    if _key(obj)[2:] != key[2:]:
        raise ValueError("mutate must not change the object's name or namespace")
