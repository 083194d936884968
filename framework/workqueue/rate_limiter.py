"""Rate limiters deciding how long an item waits before it is retried (client-go default_rate_limiters.go).

All durations are float seconds. Every limiter is thread-safe.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from typing import Protocol, runtime_checkable

from framework.clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]


@runtime_checkable
class RateLimiter(Protocol):
    """Decides retry delays per item."""

    def when(self, item: Hashable) -> float:
        """Seconds to wait before ``item`` is processed again; records one more requeue of it."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking ``item`` (e.g. after it was processed successfully)."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """How many times ``item`` has been requeued since it was last forgotten."""
        ...


class ItemExponentialFailureRateLimiter:
    """Per item ``base * 2**failures``, capped at ``max_delay`` (controller default: 5 ms .. 1000 s)."""

    def __init__(self, base: float = 0.005, max_delay: float = 1000.0) -> None:
        if base < 0 or max_delay < 0:
            raise ValueError("base and max_delay must be >= 0")
        self.base = base
        self.max_delay = max_delay
        self._lock = threading.Lock()
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        with self._lock:
            exp = self._failures.get(item, 0)
            self._failures[item] = exp + 1
        if exp >= 1024:  # 2.0**1024 overflows a float; the cap was reached long before
            return self.max_delay
        return min(self.base * 2.0**exp, self.max_delay)

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """Per item ``fast_delay`` for the first ``max_fast_attempts`` requeues, ``slow_delay`` after."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._lock = threading.Lock()
        self._attempts: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        with self._lock:
            attempts = self._attempts.get(item, 0) + 1
            self._attempts[item] = attempts
        return self.fast_delay if attempts <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._attempts.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._attempts.get(item, 0)


class BucketRateLimiter:
    """A token bucket shared by all items: ``burst`` immediate slots, refilled at ``qps`` per second.

    Like Go's ``rate.Limiter.Reserve()``, ``when`` always reserves a token, possibly in the future, so
    once the burst is spent consecutive calls get delays growing by ``1/qps``. It tracks no items:
    ``forget`` does nothing and ``num_requeues`` is 0.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError("qps must be > 0 (math.inf disables limiting)")
        if burst < 0:
            raise ValueError("burst must be >= 0")
        self.qps = qps
        self.burst = burst
        self._clock: Clock = clock if clock is not None else RealClock()
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = self._clock.monotonic()

    def when(self, item: Hashable) -> float:
        if math.isinf(self.qps):
            return 0.0
        with self._lock:
            now = self._clock.monotonic()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters (each of which records the requeue)."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters: tuple[RateLimiter, ...] = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """client-go's ``DefaultControllerRateLimiter``: per-item exponential 5 ms .. 1000 s, and an overall
    token bucket of 10 qps with a burst of 100."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=10.0, burst=100, clock=clock),
    )
