"""``EventBroadcaster`` and ``EventRecorder``: client-go's ``tools/events`` on threads.

``EventRecorder.eventf`` snapshots what it is told into an observation and appends it to the
broadcaster's bounded queue; it never waits for the API server, and when the queue is full the
observation is dropped and counted. Worker threads write the observations as ``events.k8s.io/v1``
Events (``core/v1`` when discovery says the group is not served) and fold repeats into an
``EventSeries``.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from framework.client import AlreadyExists, APIError, Client, NoKindMatchError, NotFound
from framework.clock import Clock, RealClock
from framework.leaderelection import LeaderElectionLost
from framework.meta.time import format_micro_time, format_time

from ._format import (
    event_name,
    object_reference,
    truncate_note,
    validate_controller_name,
)
from .metrics import DROP_REASONS, event_metrics

__all__ = [
    "CORE_V1",
    "EVENTS_V1",
    "NORMAL",
    "SERIES_WINDOW",
    "WARNING",
    "EventBroadcaster",
    "EventRecorder",
]

log = structlog.get_logger("framework.record")

NORMAL = "Normal"
WARNING = "Warning"
EVENTS_V1 = "events.k8s.io/v1"
CORE_V1 = "v1"

SERIES_WINDOW = 6 * 60.0
"""Seconds of quiet after which a repeat starts a new Event instead of extending the series."""

_DROP_LOG_INTERVAL = 10.0  # at most one "queue full" warning per this many seconds (clock time)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class _Observation:
    """One ``eventf`` call, snapshotted on the caller's thread."""

    key: tuple[Any, ...]
    namespace: str
    regarding: dict[str, str]
    related: dict[str, str] | None
    type: str
    reason: str
    action: str
    note: str
    controller: str
    instance: str
    when: datetime  # clock.now() at eventf
    mono: float  # clock.monotonic() at eventf


@dataclass(slots=True)
class _Series:
    """What the broadcaster remembers about the latest Event of one identity (guarded by ``lock``)."""

    first_time: datetime
    last_time: datetime
    last_seen: float  # monotonic time of the latest observation (guarded by the cache lock)
    count: int = 0  # observations folded into the current Event
    name: str | None = None  # the written Event, None until a create succeeded
    lock: threading.Lock = field(default_factory=threading.Lock)


def _reference_key(ref: Mapping[str, str] | None) -> tuple[Any, ...] | None:
    if ref is None:
        return None
    # resourceVersion is left out: it changes on every write to the object (a reconciler's status
    # updates), a series patch cannot change ``regarding`` anyway, and client-go's core/v1 recorder
    # leaves it out of its aggregation key too.
    return tuple(sorted((k, v) for k, v in ref.items() if k != "resourceVersion"))


def _retryable(err: APIError) -> bool:
    """No answer, throttled, or a server-side failure: the same write may succeed later."""
    return err.status == 0 or err.status == 429 or err.status >= 500


class EventRecorder:
    """Records Events for one controller; get one from :meth:`EventBroadcaster.new_recorder`.

    Thread-safe and cheap: ``eventf`` only formats the note and enqueues.
    """

    def __init__(self, broadcaster: EventBroadcaster, controller_name: str, instance: str) -> None:
        self._broadcaster = broadcaster
        self.controller_name = controller_name
        self.instance = instance

    def eventf(
        self,
        regarding: Mapping[str, Any],
        type: str,
        reason: str,
        action: str,
        note: str,
        *args: Any,
        related: Mapping[str, Any] | None = None,
    ) -> bool:
        """Record an Event about ``regarding`` (an object dict or an ObjectReference dict).

        ``type`` is ``"Normal"`` or ``"Warning"``; ``reason`` says why (``"Reconciled"``), ``action``
        what was done or failed (``"Reconcile"``); ``note % args`` is the human-readable text (at most
        1024 bytes are kept). ``related`` is an optional second object. Never blocks and never raises:
        returns False when the event was dropped (queue full, shut down, or invalid arguments).
        """
        return self._broadcaster._record(self, regarding, type, reason, action, note, args, related)

    def __repr__(self) -> str:
        return f"EventRecorder(controller={self.controller_name!r}, instance={self.instance!r})"


class EventBroadcaster:
    """Queues Events from any number of recorders and writes them with worker threads.

    Args:
        client: the :class:`~framework.client.Client` Events are written with.
        clock: time source for event timestamps, series expiry and retry backoff (default
            ``RealClock()``); a ``FakeClock`` makes series expiry and retries test-controlled.
        queue_size: capacity of the queue between ``eventf`` and the workers; when full, new events
            are dropped and counted (client-go's broadcaster also holds 1000).
        workers: writer threads (started on the first event).
        registry: Prometheus registry for ``events_dropped_total{reason}`` and
            ``events_written_total{verb}`` (default: the global registry).
        api: ``"events.k8s.io/v1"`` or ``"v1"`` to skip discovery; ``None`` asks discovery once
            whether ``events.k8s.io/v1`` is served and falls back to core/v1 Events if not.
        max_attempts: tries per write on retryable failures (no answer, 429, 5xx) before dropping.
        retry_initial, retry_max: exponential backoff between tries, in seconds of ``clock``.
        series_cache_size: identities remembered for series folding (least recently used evicted).
        request_timeout: per-request timeout passed to the client, seconds.
        hostname: used in the default recorder instance name (default ``socket.gethostname()``).
    """

    def __init__(
        self,
        client: Client,
        clock: Clock | None = None,
        queue_size: int = 1000,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        *,
        api: str | None = None,
        max_attempts: int = 12,
        retry_initial: float = 0.5,
        retry_max: float = 10.0,
        series_cache_size: int = 4096,
        request_timeout: float = 10.0,
        hostname: str | None = None,
    ) -> None:
        if api not in (None, EVENTS_V1, CORE_V1):
            raise ValueError(f"api must be None, {EVENTS_V1!r} or {CORE_V1!r}, not {api!r}")
        if queue_size < 1 or workers < 1 or max_attempts < 1 or series_cache_size < 1:
            raise ValueError("queue_size, workers, max_attempts and series_cache_size must be >= 1")
        self._client = client
        self._clock = clock or RealClock()
        self._queue_size = queue_size
        self._worker_count = workers
        self._metrics = event_metrics(registry)
        self._api_version = api
        self._api_lock = threading.Lock()
        self._max_attempts = max_attempts
        self._retry_initial = retry_initial
        self._retry_max = retry_max
        self._series_cache_size = series_cache_size
        self._request_timeout = request_timeout
        self._hostname = hostname or socket.gethostname()

        self._lock = threading.Lock()
        self._has_work = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)
        self._queue: deque[_Observation] = deque()
        self._pending = 0  # queued + being written
        self._closed = False
        self._abort = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_nanos = 0

        self._series_lock = threading.Lock()
        self._series: OrderedDict[tuple[Any, ...], _Series] = OrderedDict()

        self._stats_lock = threading.Lock()
        self._dropped = dict.fromkeys(DROP_REASONS, 0)
        self._written = {"create": 0, "patch": 0}
        self._drop_logged_at: float | None = None
        self._drops_since_log = 0

    # -- public ----------------------------------------------------------------------------------------

    def new_recorder(self, controller_name: str, instance: str | None = None) -> EventRecorder:
        """A recorder reporting as ``controller_name`` (``reportingController``, a qualified name such
        as ``project-controller`` or ``example.com/widget``) and ``instance``
        (``reportingInstance``, default ``<controller_name>-<hostname>``, at most 128 bytes)."""
        validate_controller_name(controller_name)
        if instance is None:
            instance = f"{controller_name}-{self._hostname}".encode()[:128].decode("utf-8", "ignore")
        if not instance or len(instance.encode()) > 128:
            raise ValueError("instance must be 1-128 bytes")
        return EventRecorder(self, controller_name, instance)

    @property
    def api_version(self) -> str | None:
        """``"events.k8s.io/v1"`` or ``"v1"`` once known (forced, or after the first write's discovery)."""
        return self._api_version

    def start(self) -> None:
        """Start the worker threads (otherwise done by the first event)."""
        with self._lock:
            self._start_locked()

    def flush(self, timeout: float | None = None) -> bool:
        """Block until every event queued so far was written or dropped; False if ``timeout`` (real
        seconds) passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._pending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._idle.wait(remaining)
            return True

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Stop accepting events and let the workers drain the queue for at most ``timeout`` real
        seconds (a FakeClock does not stretch it). Events still queued or being retried then are
        dropped (``reason="shutdown"``). Returns True when everything was handled in time.
        Idempotent; later ``eventf`` calls drop their events."""
        with self._lock:
            self._closed = True
            self._has_work.notify_all()
            threads = list(self._threads)
        deadline = time.monotonic() + max(timeout, 0.0)
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        if not any(thread.is_alive() for thread in threads):
            return True
        self._abort.set()  # backoff waits end at once; whatever is left is dropped
        with self._lock:
            left = self._pending
        log.warning("event broadcaster shutdown timed out; dropping remaining events", remaining=left)
        return False

    def stats(self) -> dict[str, Any]:
        """Counts since construction: ``created``, ``patched``, ``dropped`` (by reason), and the
        current ``queued`` and ``pending`` (queued + being written)."""
        with self._lock:
            queued, pending = len(self._queue), self._pending
        with self._stats_lock:
            return {
                "queued": queued,
                "pending": pending,
                "created": self._written["create"],
                "patched": self._written["patch"],
                "dropped": dict(self._dropped),
            }

    def __enter__(self) -> EventBroadcaster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- recording (caller's thread) -----------------------------------------------------------------

    def _record(
        self,
        recorder: EventRecorder,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        action: str,
        note: str,
        args: tuple[Any, ...],
        related: Mapping[str, Any] | None,
    ) -> bool:
        try:
            obs = self._observe_call(recorder, regarding, event_type, reason, action, note, args, related)
        except (TypeError, ValueError) as e:
            self._count_drop("invalid")
            log.error("dropping invalid event", controller=recorder.controller_name, error=str(e))
            return False
        with self._lock:
            if self._closed:
                dropped = "shutdown"
            elif len(self._queue) >= self._queue_size:
                dropped = "queue_full"
            else:
                self._start_locked()
                self._queue.append(obs)
                self._pending += 1
                self._has_work.notify()
                return True
        self._count_drop(dropped)
        if dropped == "queue_full":
            self._warn_queue_full(obs)
        else:
            log.debug("event recorded after shutdown; dropped", reason=reason)
        return False

    def _observe_call(
        self,
        recorder: EventRecorder,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        action: str,
        note: str,
        args: tuple[Any, ...],
        related: Mapping[str, Any] | None,
    ) -> _Observation:
        if event_type not in (NORMAL, WARNING):
            raise ValueError(f"unsupported event type {event_type!r} (Normal or Warning)")
        if not reason or not action:
            raise ValueError("reason and action are required")
        ref = object_reference(regarding)
        rel = object_reference(related) if related is not None else None
        if args:
            try:
                note = note % args
            except (TypeError, ValueError):
                note = " ".join([note, *map(str, args)])
        note = truncate_note(str(note))
        namespace = ref.get("namespace") or "default"
        key = (
            namespace,
            _reference_key(ref),
            _reference_key(rel),
            event_type,
            reason,
            action,
            note,
            recorder.controller_name,
            recorder.instance,
        )
        return _Observation(
            key=key,
            namespace=namespace,
            regarding=ref,
            related=rel,
            type=event_type,
            reason=reason,
            action=action,
            note=note,
            controller=recorder.controller_name,
            instance=recorder.instance,
            when=self._clock.now(),
            mono=self._clock.monotonic(),
        )

    def _count_drop(self, reason: str) -> None:
        self._metrics.dropped.labels(reason).inc()
        with self._stats_lock:
            self._dropped[reason] += 1

    def _warn_queue_full(self, obs: _Observation) -> None:
        now = self._clock.monotonic()
        with self._stats_lock:
            self._drops_since_log += 1
            if self._drop_logged_at is not None and now - self._drop_logged_at < _DROP_LOG_INTERVAL:
                return
            self._drop_logged_at = now
            count, self._drops_since_log = self._drops_since_log, 0
        log.warning(
            "event queue full; dropping events",
            dropped=count,
            queue_size=self._queue_size,
            controller=obs.controller,
            reason=obs.reason,
        )

    # -- workers ---------------------------------------------------------------------------------------

    def _start_locked(self) -> None:
        if self._threads or self._closed:
            return
        for i in range(self._worker_count):
            thread = threading.Thread(target=self._worker, name=f"event-broadcaster-{i}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _worker(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._has_work.wait()
                if not self._queue:
                    return
                obs = self._queue.popleft()
            try:
                if self._abort.is_set():
                    self._count_drop("shutdown")
                else:
                    self._process(obs)
            except LeaderElectionLost as e:
                # Refused by the manager's write guard: this replica no longer leads, so its queued
                # events are not its to write any more (expected on a lease loss, not a crash).
                self._count_drop("write_failed")
                log.info("event not written: not leading", reason=obs.reason, error=str(e))
            except Exception:
                self._count_drop("write_failed")
                log.exception("event write crashed", reason=obs.reason, regarding=obs.regarding)
            finally:
                with self._lock:
                    self._pending -= 1
                    if not self._pending:
                        self._idle.notify_all()

    def _series_entry(self, obs: _Observation) -> _Series:
        with self._series_lock:
            cache = self._series
            # Entries are kept in order of their latest observation: expired ones are at the front.
            while cache:
                oldest = next(iter(cache.values()))
                if obs.mono - oldest.last_seen <= SERIES_WINDOW:
                    break
                cache.popitem(last=False)
            entry = cache.get(obs.key)
            if entry is not None and obs.mono - entry.last_seen > SERIES_WINDOW:
                del cache[obs.key]
                entry = None
            if entry is None:
                entry = _Series(first_time=obs.when, last_time=obs.when, last_seen=obs.mono)
                cache[obs.key] = entry
                while len(cache) > self._series_cache_size:
                    cache.popitem(last=False)
            else:
                cache.move_to_end(obs.key)
                entry.last_seen = max(entry.last_seen, obs.mono)
            return entry

    def _process(self, obs: _Observation) -> None:
        entry = self._series_entry(obs)
        with entry.lock:
            entry.count += 1
            entry.last_time = max(entry.last_time, obs.when)
            self._write(obs, entry)

    # -- writing (worker threads) --------------------------------------------------------------------

    def _resolve_api(self) -> str:
        api = self._api_version
        if api is not None:
            return api
        with self._api_lock:
            if self._api_version is None:
                try:
                    self._client.mapper.mapping(EVENTS_V1, "Event")
                except NoKindMatchError:
                    log.info("events.k8s.io/v1 is not served; recording core/v1 Events")
                    self._api_version = CORE_V1
                else:
                    self._api_version = EVENTS_V1
            return self._api_version

    def _write(self, obs: _Observation, entry: _Series) -> None:
        delay = self._retry_initial
        name: str | None = None  # the name of the create in progress
        uncertain = False  # a failed try may still have created `name`
        last_error: APIError | None = None
        for attempt in range(1, self._max_attempts + 1):
            if attempt > 1:
                if self._clock.wait(self._abort, delay):
                    self._count_drop("shutdown")
                    return
                delay = min(delay * 2, self._retry_max)
            if self._abort.is_set():
                self._count_drop("shutdown")
                return
            creating = False
            try:
                api = self._resolve_api()
                if entry.name is not None:
                    try:
                        self._patch_series(api, obs, entry)
                    except NotFound:
                        log.debug("series event is gone; creating a new one", name=entry.name)
                        entry.name = None
                    else:
                        self._count_written("patch")
                        return
                creating = True
                name = name or self._new_name(obs)
                try:
                    self._create(api, obs, entry, name)
                except AlreadyExists:
                    if not uncertain:
                        name = self._new_name(obs)  # a name clash with someone else's Event
                        self._create(api, obs, entry, name)
                entry.name = name
                self._count_written("create")
                return
            except APIError as e:
                if not _retryable(e):
                    self._count_drop("write_failed")
                    log.error(
                        "server rejected event (will not retry)",
                        error=str(e),
                        reason=obs.reason,
                        regarding=obs.regarding,
                    )
                    return
                uncertain = uncertain or creating
                log.info("event write failed; retrying", error=str(e), attempt=attempt, reason=obs.reason)
                last_error = e
        self._count_drop("write_failed")
        log.error(
            "event write failed too often; dropping",
            attempts=self._max_attempts,
            error=str(last_error),
            reason=obs.reason,
            regarding=obs.regarding,
        )

    def _count_written(self, verb: str) -> None:
        self._metrics.written.labels(verb).inc()
        with self._stats_lock:
            self._written[verb] += 1

    def _new_name(self, obs: _Observation) -> str:
        nanos = (obs.when - _EPOCH) // _MICROSECOND * 1000
        with self._lock:
            # A FakeClock (or a coarse clock) repeats instants: keep names unique per broadcaster.
            nanos = self._last_nanos = max(nanos, self._last_nanos + 1)
        return event_name(obs.regarding["name"], nanos)

    def _series_body(self, entry: _Series) -> dict[str, Any]:
        return {"count": entry.count, "lastObservedTime": format_micro_time(entry.last_time)}

    def _create(self, api: str, obs: _Observation, entry: _Series, name: str) -> None:
        meta = {"name": name, "namespace": obs.namespace}
        body: dict[str, Any]
        if api == EVENTS_V1:
            body = {
                "apiVersion": EVENTS_V1,
                "kind": "Event",
                "metadata": meta,
                "eventTime": format_micro_time(entry.first_time),
                "reportingController": obs.controller,
                "reportingInstance": obs.instance,
                "action": obs.action,
                "reason": obs.reason,
                "type": obs.type,
                "note": obs.note,
                "regarding": dict(obs.regarding),
            }
        else:
            body = {
                "apiVersion": CORE_V1,
                "kind": "Event",
                "metadata": meta,
                "involvedObject": dict(obs.regarding),
                "reason": obs.reason,
                "message": obs.note,
                "type": obs.type,
                "action": obs.action,
                "source": {"component": obs.controller},
                "firstTimestamp": format_time(entry.first_time),
                "lastTimestamp": format_time(entry.last_time),
                "count": entry.count,
                "eventTime": format_micro_time(entry.first_time),
                "reportingComponent": obs.controller,
                "reportingInstance": obs.instance,
            }
        if obs.related is not None:
            body["related"] = dict(obs.related)
        if entry.count >= 2:  # re-created after the series' Event vanished, or after a failed create
            body["series"] = self._series_body(entry)
        self._client.create(body, timeout=self._request_timeout)

    def _patch_series(self, api: str, obs: _Observation, entry: _Series) -> None:
        assert entry.name is not None
        patch: dict[str, Any] = {"series": self._series_body(entry)}
        if api == CORE_V1:
            patch["count"] = entry.count
            patch["lastTimestamp"] = format_time(entry.last_time)
        self._client.patch(
            api,
            "Event",
            entry.name,
            patch,
            namespace=obs.namespace,
            patch_type="merge",
            timeout=self._request_timeout,
        )
