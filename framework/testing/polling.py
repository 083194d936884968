"""``eventually``: wait in a test until something a controller does in the background has happened.

Controllers converge asynchronously, so a test asserts on the state they reach, polling for it
(Gomega's ``Eventually`` for controller-runtime's envtest users)::

    from framework.testing import eventually

    cm = eventually(lambda: cached_configmap("a"), message="configmap a cached")
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["eventually"]

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
