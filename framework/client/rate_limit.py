"""A thread-safe token bucket: client-go's client-side throttle (``flowcontrol.NewTokenBucketRateLimiter``).

The bucket holds up to ``burst`` tokens and refills at ``qps`` tokens per second. Each request takes
one token; when none is left the caller sleeps until its reserved token is due. Reservations are made
under a lock, so concurrent callers are served in order and never exceed the rate together. ``qps <= 0``
disables throttling.

Time comes from a clock object with ``monotonic()`` and ``sleep(seconds)`` (the default uses
:mod:`time`), so tests can drive the bucket with a fake clock instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["MonotonicClock", "SystemClock", "TokenBucket"]


class MonotonicClock(Protocol):
    """The part of a clock the limiter needs."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """:func:`time.monotonic` and :func:`time.sleep`."""

    monotonic = staticmethod(time.monotonic)  # the builtin itself: no Python frame per read
    sleep = staticmethod(time.sleep)


class TokenBucket:
    """Token bucket with ``qps`` refill rate and ``burst`` capacity; starts full.

    Args:
        qps: tokens per second; ``<= 0`` disables the limiter (every call returns at once).
        burst: bucket capacity (at least 1 when enabled).
        clock: object with ``monotonic()`` and ``sleep()``; defaults to the system clock.
    """

    def __init__(self, qps: float, burst: int, clock: MonotonicClock | None = None) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.clock: MonotonicClock = clock or SystemClock()
        self._lock = threading.Lock()
        self._tokens = float(self.burst)
        self._last = self.clock.monotonic()

    @property
    def enabled(self) -> bool:
        return self.qps > 0

    def _advance(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now

    def reserve(self) -> float:
        """Take a token now or in the future; return how many seconds to wait before using it."""
        if not self.enabled:
            return 0.0
        with self._lock:
            self._advance(self.clock.monotonic())
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def try_accept(self) -> bool:
        """Take a token if one is available right now, without waiting."""
        if not self.enabled:
            return True
        with self._lock:
            self._advance(self.clock.monotonic())
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False

    def accept(self) -> float:
        """Block until a token is available; return the seconds waited."""
        delay = self.reserve()
        if delay > 0:
            self.clock.sleep(delay)
        return delay

    def tokens(self) -> float:
        """Tokens available now (negative while callers are waiting on reservations)."""
        if not self.enabled:
            return float("inf")
        with self._lock:
            self._advance(self.clock.monotonic())
            return self._tokens
