"""Status conditions (``metav1.Condition`` lists as dicts): ``k8s.io/apimachinery/pkg/api/meta``.

``set_status_condition(obj["status"].setdefault("conditions", []), {...})`` as Go's
``meta.SetStatusCondition``: a new condition is appended (``lastTransitionTime`` now unless given);
an existing one takes the new status, reason, message and observedGeneration, and its
``lastTransitionTime`` moves only when the status changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from framework.meta.time import format_time, now

__all__ = [
    "find_status_condition",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_status_condition",
]

# Copied from the new condition; Go's zero value ("" or 0) and absence are the same.
_COPIED = {"reason": "", "message": "", "observedGeneration": 0}


def set_status_condition(
    conditions: list[dict[str, Any]],
    condition: Mapping[str, Any],
    clock: Callable[[], datetime] = now,
) -> bool:
    """Set ``condition`` (by ``type``) in ``conditions`` in place; returns whether anything changed.

    ``clock`` gives "now" for ``lastTransitionTime`` (pass ``FakeClock.now`` in tests).
    """
    if conditions is None:
        return False
    existing = find_status_condition(conditions, condition.get("type", ""))
    if existing is None:
        new = dict(condition)
        if not new.get("lastTransitionTime"):
            new["lastTransitionTime"] = format_time(clock())
        conditions.append(new)
        return True
    changed = False
    if existing.get("status") != condition.get("status"):
        existing["status"] = condition.get("status")
        existing["lastTransitionTime"] = condition.get("lastTransitionTime") or format_time(clock())
        changed = True
    for field, zero in _COPIED.items():
        new_value = condition.get(field) or zero
        if (existing.get(field) or zero) != new_value:
            if new_value == zero:
                existing.pop(field, None)
            else:
                existing[field] = new_value
            changed = True
    return changed


def remove_status_condition(conditions: list[dict[str, Any]], condition_type: str) -> bool:
    """Remove every condition of ``condition_type`` in place; returns whether one was present."""
    if not conditions:
        return False
    kept = [c for c in conditions if c.get("type") != condition_type]
    removed = len(kept) != len(conditions)
    conditions[:] = kept
    return removed


def find_status_condition(
    conditions: list[dict[str, Any]] | None, condition_type: str
) -> dict[str, Any] | None:
    """The condition of ``condition_type`` (the list's own dict, to modify in place), or ``None``."""
    return next((c for c in conditions or () if c.get("type") == condition_type), None)


def is_status_condition_present_and_equal(
    conditions: list[dict[str, Any]] | None, condition_type: str, status: str
) -> bool:
    found = find_status_condition(conditions, condition_type)
    return found is not None and found.get("status") == status


def is_status_condition_true(conditions: list[dict[str, Any]] | None, condition_type: str) -> bool:
    """Whether the condition is present with status ``"True"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "True")


def is_status_condition_false(conditions: list[dict[str, Any]] | None, condition_type: str) -> bool:
    """Whether the condition is present with status ``"False"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, "False")
