"""framework.meta.conditions: SetStatusCondition and friends (api/meta/conditions.go)."""

from __future__ import annotations

from datetime import UTC, datetime

from framework.clock import FakeClock
from framework.meta import (
    find_status_condition,
    is_status_condition_false,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)


def test_new_condition_is_appended_with_now_as_transition_time():
    clock = FakeClock(T0)
    conditions: list[dict] = []
    assert set_status_condition(conditions, {"type": "Ready", "status": "False", "reason": "Init"}, clock.now)
    assert conditions == [
        {"type": "Ready", "status": "False", "reason": "Init", "lastTransitionTime": "2024-05-01T10:00:00Z"}
    ]


def test_given_transition_time_is_kept_on_append():
    conditions: list[dict] = []
    set_status_condition(
        conditions, {"type": "A", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}
    )
    assert conditions[0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"


def test_transition_time_moves_only_when_status_changes():
    clock = FakeClock(T0)
    conditions: list[dict] = []
    set_status_condition(conditions, {"type": "Ready", "status": "False", "reason": "A"}, clock.now)
    clock.step(300)
    # Same status, new reason and message: changed, but the transition time stays.
    assert set_status_condition(
        conditions, {"type": "Ready", "status": "False", "reason": "B", "message": "m"}, clock.now
    )
    assert conditions[0]["lastTransitionTime"] == "2024-05-01T10:00:00Z"
    assert conditions[0]["reason"] == "B" and conditions[0]["message"] == "m"
    # Nothing new: unchanged.
    assert not set_status_condition(
        conditions, {"type": "Ready", "status": "False", "reason": "B", "message": "m"}, clock.now
    )
    # New status: the transition time moves to now.
    assert set_status_condition(
        conditions, {"type": "Ready", "status": "True", "reason": "B", "message": "m"}, clock.now
    )
    assert conditions[0]["lastTransitionTime"] == "2024-05-01T10:05:00Z"
    assert is_status_condition_true(conditions, "Ready") and not is_status_condition_false(
        conditions, "Ready"
    )


def test_observed_generation_is_kept_and_updated():
    conditions: list[dict] = []
    set_status_condition(conditions, {"type": "Ready", "status": "True", "observedGeneration": 3})
    assert conditions[0]["observedGeneration"] == 3
    assert set_status_condition(conditions, {"type": "Ready", "status": "True", "observedGeneration": 4})
    assert conditions[0]["observedGeneration"] == 4
    # Go's zero values: a missing message equals an empty one.
    assert not set_status_condition(
        conditions, {"type": "Ready", "status": "True", "observedGeneration": 4, "message": ""}
    )


def test_other_fields_of_other_conditions_are_untouched():
    conditions = [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]
    set_status_condition(
        conditions, {"type": "B", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    )
    assert conditions[0] == {"type": "A", "status": "True"}
    assert conditions[1] == {"type": "B", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}


def test_find_and_remove():
    conditions = [{"type": "A", "status": "True"}, {"type": "B", "status": "Unknown"}]
    found = find_status_condition(conditions, "B")
    assert found is conditions[1]
    assert find_status_condition(conditions, "C") is None and find_status_condition(None, "A") is None
    assert not is_status_condition_true(conditions, "B") and not is_status_condition_true(conditions, "C")
    assert remove_status_condition(conditions, "A") and conditions == [{"type": "B", "status": "Unknown"}]
    assert not remove_status_condition(conditions, "A")
    assert not remove_status_condition([], "A")
