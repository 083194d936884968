"""Fixtures for the workqueue and clock tests: a fake clock, a private metrics registry, and queues that
are always shut down (so no timer thread outlives its test)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from framework.clock import FakeClock
from framework.testing import eventually
from framework.workqueue import Queue


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def make_queue() -> Iterator[Callable[..., Any]]:
    """``make_queue(QueueClass, *args, **kwargs)``; every queue made is shut down after the test."""
    made: list[Queue[Any]] = []

    def make(cls: type[Queue[Any]], *args: Any, **kwargs: Any) -> Any:
        queue = cls(*args, **kwargs)
        made.append(queue)
        return queue

    yield make
    for queue in made:
        queue.shut_down()


@pytest.fixture(name="eventually")
def eventually_fixture() -> Callable[..., Any]:
    """``framework.testing.eventually`` polling every 0.5 ms: queue hand-offs take microseconds."""
    return functools.partial(eventually, timeout=2.0, interval=0.0005)


@pytest.fixture(autouse=True)
def _no_leaked_threads(no_leaked_threads: None) -> None:
    """Every queue test must stop the threads it starts (the shared check lives in tests/conftest.py)."""
