"""Small helpers on stored objects shared by the REST operations."""

from __future__ import annotations

from typing import Any

from framework.apiserver.storage.store import ObjKey
from framework.meta import jsoncodec
from framework.meta.conditions import set_status_condition


def deep_copy(obj: Any) -> Any:
    """A deep copy of a JSON value (storage keeps what it is given: never hand out its dicts)."""
    return jsoncodec.copy(obj)


def object_key(ns: str | None, name: str) -> ObjKey:
    """The storage key of an object (the namespace is empty for cluster-scoped ones)."""
    return (ns or "", name)


def set_condition(obj: dict, ctype: str, status: str, reason: str, message: str) -> bool:
    """Set a status condition of ``obj`` (``meta.SetStatusCondition``). True if changed."""
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    condition = {"type": ctype, "status": status, "reason": reason, "message": message}
    return set_status_condition(conds, condition)
