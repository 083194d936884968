"""Cooperative deadlines for client calls.

A controller runs each reconcile inside :func:`deadline`; every client request made after the deadline
passed raises :class:`~framework.client.errors.Timeout` instead of going out. Threads are never killed
(a key is never handed to two workers), so a reconcile that stops calling the client is not interrupted.
The deadline lives in a context variable, so it applies to the calling thread only.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Protocol

from .errors import Timeout
from .rate_limit import SystemClock


class _Monotonic(Protocol):
    def monotonic(self) -> float: ...


_SYSTEM = SystemClock()

_current: ContextVar[tuple[_Monotonic, float, float] | None] = ContextVar(
    "framework_client_deadline", default=None
)


class deadline:  # lower case: used like a function, ``with deadline(seconds):``
    """Client calls inside the block raise ``Timeout`` once ``seconds`` have passed (None: no limit).

    A class rather than a ``@contextmanager`` generator: a controller enters one per reconcile, and
    the generator's machinery cost twice as much as the rest of it."""

    __slots__ = ("_clock", "_seconds", "_token")

    def __init__(self, seconds: float | None, clock: _Monotonic | None = None) -> None:
        self._seconds = seconds
        self._clock = clock
        self._token: Token[tuple[_Monotonic, float, float] | None] | None = None

    def __enter__(self) -> None:
        seconds = self._seconds
        if seconds is not None:
            clock = self._clock or _SYSTEM
            self._token = _current.set((clock, clock.monotonic() + seconds, seconds))

    def __exit__(self, *exc: object) -> None:
        token = self._token
        if token is not None:
            self._token = None
            _current.reset(token)


def check_deadline() -> None:
    """Raise ``Timeout`` if the calling context's deadline has passed."""
    current = _current.get()
    if current is not None:
        clock, at, seconds = current
        if clock.monotonic() >= at:
            raise Timeout(
                0, "Timeout", f"deadline of {seconds:g}s exceeded; no further API calls allowed", {}
            )


def deadline_exceeded() -> bool:
    current = _current.get()
    return current is not None and current[0].monotonic() >= current[1]
