"""framework.testing polling: eventually waits for truthy, consistently fails at the first falsy."""

from __future__ import annotations

import itertools

import pytest

from framework.client import NotFound
from framework.testing import consistently, eventually


def test_returns_the_first_truthy_value() -> None:
    calls = itertools.count()
    assert eventually(lambda: next(calls) >= 3 and "ready", interval=0) == "ready"
    assert next(calls) == 4  # called exactly until it held


def test_ignored_exceptions_mean_not_yet() -> None:
    calls = itertools.count()

    def get() -> dict:
        if next(calls) < 2:
            raise NotFound(404, "NotFound", "not created yet")
        return {"metadata": {"name": "a"}}

    assert eventually(get, interval=0, ignore=(NotFound,)) == {"metadata": {"name": "a"}}


def test_other_exceptions_fail_at_once() -> None:
    with pytest.raises(ZeroDivisionError):
        eventually(lambda: 1 / 0, timeout=5, ignore=(NotFound,))


def test_timeout_names_the_condition_and_the_last_value() -> None:
    with pytest.raises(AssertionError, match=r"project ready not met within 0.05s \(last: \[\]\)"):
        eventually(lambda: [], timeout=0.05, message="project ready")


def test_timeout_reports_the_last_ignored_error() -> None:
    def get() -> dict:
        raise NotFound(404, "NotFound", 'projects.core.gardener.cloud "a" not found')

    with pytest.raises(AssertionError, match="not found"):
        eventually(get, timeout=0.05, message=lambda: "project a", ignore=(NotFound,))


def test_consistently_calls_until_the_duration_passed_and_returns_the_last_value() -> None:
    calls = itertools.count(1)
    assert consistently(lambda: next(calls), duration=0.05, interval=0.001) >= 2


def test_consistently_fails_at_the_first_falsy_value() -> None:
    calls = itertools.count()
    with pytest.raises(AssertionError, match=r"no second reconcile no longer held \(got False\)"):
        consistently(lambda: next(calls) < 3, duration=60, interval=0, message="no second reconcile")
    assert next(calls) == 4  # stopped at the first falsy value, long before the duration


def test_consistently_lets_exceptions_through() -> None:
    def boom() -> bool:
        raise KeyError("x")

    with pytest.raises(KeyError):
        consistently(boom, duration=60)
