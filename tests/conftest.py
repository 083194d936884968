"""Test-wide settings and fixtures.

structlog runs at INFO, so debug chatter of servers and informers stays out of reports.
"""

import logging
import threading
import time
from collections.abc import Iterator

import pytest
import structlog

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))


@pytest.fixture
def no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves threads running (servers and queues must join what they start)."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2.0
    while True:
        leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.002)
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"
