"""framework.testing.eventually: returns the first truthy value, waits out ignored errors, fails clearly."""

from __future__ import annotations

import itertools

import pytest

from framework.client import NotFound
from framework.testing import eventually


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
