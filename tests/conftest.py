"""Test-wide settings and fixtures.

structlog runs at INFO, so debug chatter of servers and informers stays out of reports. Hypothesis
runs without its timing checks (the 200 ms deadline and the "input generation is slow" health check):
they are timed assertions, and fail on a loaded 2-core CI machine though nothing is wrong.
"""

import logging
import threading
import time
from collections.abc import Iterator

import pytest
import structlog
from hypothesis import HealthCheck, settings

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("untimed")


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
