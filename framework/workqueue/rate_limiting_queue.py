"""``RateLimitingQueue``: a ``DelayingQueue`` whose retries are paced by a ``RateLimiter``."""

from __future__ import annotations

from typing import TypeVar

from prometheus_client import CollectorRegistry

from framework.clock import Clock
from framework.workqueue.delaying_queue import DelayingQueue
from framework.workqueue.rate_limiter import RateLimiter, default_controller_rate_limiter

__all__ = ["RateLimitingQueue"]

T = TypeVar("T")


class RateLimitingQueue(DelayingQueue[T]):
    """A ``DelayingQueue`` with ``add_rate_limited``/``forget``/``num_requeues``.

    ``rate_limiter`` defaults to ``default_controller_rate_limiter()`` on the queue's clock.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter | None = None,
        name: str | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        super().__init__(name, clock, registry)
        self.rate_limiter: RateLimiter = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter(self._clock)
        )

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter assigns to it (one more requeue of it)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Reset the limiter's history for ``item``; call it when the item was processed successfully.
        It does not remove the item from the queue."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many times ``item`` was requeued through the limiter since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)
