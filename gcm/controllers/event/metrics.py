"""Metrics of the Event TTL controller, on the manager's registry.

- ``gcm_events_expired_total``: Events the controller deleted because their TTL had passed.
- ``gcm_event_expiry_delay_seconds``: per deleted Event, how long after its expiry (reference time
  plus ``ttlNonShootEvents``) the delete happened. Events past their TTL are deleted within seconds when
  the controller keeps up; a delay that grows means expiry falls behind (too few workers, a throttled
  client, an API server refusing deletes), and after a start the backlog of Events that expired while
  gcm was down shows once.

No labels: the namespace or the regarding kind of an Event would make one series per namespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["EXPIRY_DELAY_BUCKETS", "EventTTLMetrics"]

# From a second (keeping up) to a day (gcm was down, or expiry stalls); an Event's TTL is an hour by
# default, so the buckets around it (10 min .. 3 h) are the ones an alert looks at.
EXPIRY_DELAY_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 10800.0, 86400.0)


@dataclass(frozen=True)
class EventTTLMetrics:
    expired: Counter
    delay: Histogram

    @classmethod
    def create(cls, registry: CollectorRegistry) -> EventTTLMetrics:
        """Register both on ``registry`` (once per registry: a second call raises ValueError)."""
        expired = Counter(
            "gcm_events_expired",
            "Events deleted by the Event TTL controller because ttlNonShootEvents had passed.",
            registry=registry,
        )
        try:
            delay = Histogram(
                "gcm_event_expiry_delay_seconds",
                "Seconds between an Event's expiry (reference time + ttlNonShootEvents) and its deletion.",
                buckets=EXPIRY_DELAY_BUCKETS,
                registry=registry,
            )
        except ValueError:
            registry.unregister(expired)
            raise
        return cls(expired, delay)

    def deleted(self, delay_seconds: float) -> None:
        """An Event was deleted ``delay_seconds`` after it expired."""
        self.expired.inc()
        self.delay.observe(max(delay_seconds, 0.0))
