"""``eventually`` and ``consistently``: assert on what controllers do in the background.

Controllers converge asynchronously, so a test asserts on the state they reach, polling for it
(Gomega's ``Eventually`` for controller-runtime's envtest users), and asserts that something does
*not* happen by checking it over a stretch of time (Gomega's ``Consistently``) instead of sleeping
and looking once::

    from framework.testing import consistently, eventually

    cm = eventually(lambda: cached_configmap("a"), message="configmap a cached")
    consistently(lambda: rec.calls["a"] == 1, duration=0.3, message="no second reconcile of a")
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["consistently", "eventually"]

T = TypeVar("T")


def eventually(
    condition: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.02,
    message: str | Callable[[], str] = "condition",
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``condition`` every ``interval`` seconds until it returns something truthy; return that.

    Exceptions of the types in ``ignore`` (e.g. ``NotFound`` while an object is not created yet) count
    as "not yet"; any other exception fails at once. After ``timeout`` seconds, raises
    ``AssertionError`` naming ``message`` (called, if callable, for a description of the state) and
    the last value or ignored exception seen.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            last: object = condition()
        except ignore as e:
            last = e
        else:
            if last:
                return last  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            what = message() if callable(message) else message
            raise AssertionError(f"{what} not met within {timeout}s (last: {last!r})")
        time.sleep(interval)


def consistently(
    condition: Callable[[], T],
    duration: float = 0.5,
    interval: float = 0.02,
    message: str | Callable[[], str] = "condition",
) -> T:
    """Call ``condition`` every ``interval`` seconds for ``duration`` seconds; it must stay truthy.

    Fails with ``AssertionError`` naming ``message`` and the value the first time it is falsy (an
    exception it raises fails at once, too). Returns the last value. ``duration`` bounds how long a
    wrong event could take to show and is never a performance assertion: pick it generously, the
    test only waits that long when it passes.
    """
    deadline = time.monotonic() + duration
    while True:
        last = condition()
        if not last:
            what = message() if callable(message) else message
            raise AssertionError(f"{what} no longer held (got {last!r})")
        if time.monotonic() >= deadline:
            return last
        time.sleep(interval)
