"""``framework.record`` — Kubernetes Events from controllers, never blocking a reconcile.

Modelled on client-go's ``tools/events``: Events are ``events.k8s.io/v1`` objects (core/v1 Events
when discovery says that group is not served), written by background threads from a bounded queue.

::

    from framework.client import Client
    from framework.record import NORMAL, WARNING, EventBroadcaster

    client = Client.from_kubeconfig()
    broadcaster = EventBroadcaster(client)  # queue_size=1000, workers=1, clock=RealClock()
    recorder = broadcaster.new_recorder("app-controller")  # instance: app-controller-<hostname>

    def reconcile(request):
        app = client.get("apps/v1", "Deployment", request.name, request.namespace)
        try:
            ...
        except Exception as e:
            recorder.eventf(app, WARNING, "ReconcileFailed", "Reconcile", "could not reconcile: %s", e)
            raise
        recorder.eventf(app, NORMAL, "Reconciled", "Reconcile", "config %s is ready", cm_name,
                        related=config_map)

    ...
    broadcaster.shutdown(timeout=10)  # drain what is queued, for at most 10 s

What happens to an ``eventf`` call:

- It formats ``note % args`` (cut to 1024 bytes), snapshots the object reference (apiVersion, kind,
  namespace, name, uid, resourceVersion) and appends to the queue — or, when the queue is full,
  drops the event, counts it in ``events_dropped_total{reason="queue_full"}`` and logs a warning at
  most every 10 s. It returns at once either way (True when queued).
- A worker writes it in the object's namespace (``default`` for cluster-scoped objects), named
  ``<object name>.<UnixNano hex>``, with MicroTime ``eventTime``, ``reportingController`` = the
  recorder's controller name and ``reportingInstance``.
- A repeat (same object, related object, type, reason, action, note and recorder) within 6 minutes of
  the previous one patches that Event's ``series`` (``count`` 2, 3, …, ``lastObservedTime``) instead
  of creating another; after 6 minutes of quiet the next one starts a new Event. If the Event was
  deleted meanwhile, a new one is created carrying the series.
- Failures without an answer, 429s and 5xx are retried with exponential backoff (0.5 s doubling to
  10 s, 12 tries); other refusals are logged and dropped (``reason="write_failed"``).

For tests pass ``clock=FakeClock()`` (series expiry and backoff follow ``step()``), a private
``registry=CollectorRegistry()``, and ``flush()`` to wait until queued events are written; ``api="v1"``
or ``api="events.k8s.io/v1"`` skips discovery.
"""

from ._format import MAX_NOTE_BYTES, object_reference
from .broadcaster import (
    CORE_V1,
    EVENTS_V1,
    NORMAL,
    SERIES_WINDOW,
    WARNING,
    EventBroadcaster,
    EventRecorder,
)
from .metrics import DROP_REASONS, EventMetrics, event_metrics

__all__ = [
    "CORE_V1",
    "DROP_REASONS",
    "EVENTS_V1",
    "MAX_NOTE_BYTES",
    "NORMAL",
    "SERIES_WINDOW",
    "WARNING",
    "EventBroadcaster",
    "EventMetrics",
    "EventRecorder",
    "event_metrics",
    "object_reference",
]
