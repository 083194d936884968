"""Fixtures for the leader-election tests: a private metrics registry and a check that no elector thread
outlives its test."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture(autouse=True)
def no_leaked_elector_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 3.0
    while True:
        leaked = [
            t
            for t in threading.enumerate()
            if t not in before and t.is_alive() and t.name.startswith(("leader-elector-", "candidate-"))
        ]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"
