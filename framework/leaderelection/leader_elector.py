"""The leader elector: client-go's ``tools/leaderelection`` over a resource lock, with threads.

Rules (client-go's, with the differences noted):

* ``lease_duration > renew_deadline > 1.2 * retry_period > 0`` (defaults 15 s / 10 s / 2 s).
* Acquire: try every ``retry_period`` jittered by up to 1.2x. A try takes the fast path (an optimistic
  update of the record last written) when this candidate holds a still-valid lease; otherwise it reads
  the lock (creating it if missing), gives up if another holder's lease is still valid, and else
  writes itself in (``leaseTransitions`` + 1 when the holder changes). Every write carries the
  resourceVersion read, so two candidates can never both succeed.
* Expiry is judged on the elector's monotonic clock from the moment the record was last *seen to
  change*, plus the record's ``leaseDurationSeconds``; the timestamps inside the record are never
  compared with the local clock, so clock offsets between machines do not matter.
* Renew: every ``retry_period``. The leader stops leading once ``renew_deadline`` has passed since the
  start of its last successful write (client-go counts from the end of the wait after it, which
  leaves a retry period less of margin). As that write reached the server after it started, other
  candidates see the lease expire ``lease_duration`` after it at the earliest, so leadership ends at
  least ``lease_duration - renew_deadline`` before anyone else can take over. The deadline is watched
  by the thread in :meth:`LeaderElector.run`, apart from the renewing thread, so a request stuck in
  client-side throttling or retries cannot delay it.
* On a missed deadline the leading ``stop_event`` is set and ``on_stopped_leading`` runs at once, then
  ``run`` returns (``lost`` is True); the lease is not released. On a graceful stop (the ``stop_event``
  given to ``run``), the leading ``stop_event`` is set, the ``on_started_leading`` callback is given up
  to ``renew_deadline`` to return (renewals continue meanwhile), and with ``release_on_cancel`` the
  lease is released — an empty holder with ``leaseDurationSeconds`` 1, written only if the lease is
  still ours — so a standby takes over within a retry period. ``on_stopped_leading`` always runs once
  per ``run``, even if this candidate never led.
* ``leaseDurationSeconds`` is an integer: a fractional ``lease_duration`` is rounded up.
"""

from __future__ import annotations

import math
import queue
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from framework.client import AlreadyExists, APIError, Conflict, NotFound
from framework.clock import Clock, RealClock

from .metrics import ElectionMetrics, election_metrics
from .resourcelock import LeaderElectionRecord, ResourceLock

__all__ = ["JITTER_FACTOR", "LeaderElectionConfig", "LeaderElectionLost", "LeaderElector"]

log = structlog.get_logger("framework.leaderelection")

JITTER_FACTOR = 1.2
"""Acquire retries wait ``retry_period * (1 + JITTER_FACTOR * random())`` (client-go's factor)."""

_MIN_REQUEST_TIMEOUT = 0.05
# A lease error that persists is logged again (as a warning) at most this often; a new error at once.
_REPEAT_WARNING_AFTER = 60.0


class LeaderElectionLost(RuntimeError):
    """Leadership was lost (a renew deadline was missed); leader-only work must stop.

    The elector itself never raises it from :meth:`LeaderElector.run` (which returns, with
    :attr:`LeaderElector.lost` set); a manager raises it from its ``start()``. :meth:`LeaderElector.check`
    raises it for a leader whose lease is long overdue for renewal.
    """


@dataclass
class LeaderElectionConfig:
    """Settings of one :class:`LeaderElector` (durations in seconds).

    Args:
        lock: the :class:`~framework.leaderelection.resourcelock.ResourceLock`, e.g. a ``LeaseLock``.
        lease_duration: how long standbys wait, after last seeing the record change, before taking over.
        renew_deadline: how long the leader keeps retrying to renew before it gives up leading.
        retry_period: the interval between tries (acquire and renew).
        release_on_cancel: release the lease when ``run`` is stopped gracefully while leading.
        name: the election's name for logs and the ``name`` label of metrics (default: the lock's name).
        on_started_leading: ``fn(stop_event)`` run in its own thread once leadership is acquired;
            ``stop_event`` is set when leadership ends, and the function should then return.
        on_stopped_leading: ``fn()`` run once when ``run`` finishes, led or not; at once on a loss.
        on_new_leader: ``fn(identity)`` run (in order, on a notifier thread) whenever a different
            holder is observed, including this candidate.

    Raises ``ValueError`` naming the offending field.
    """

    lock: ResourceLock
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False
    name: str = ""
    on_started_leading: Callable[[threading.Event], Any] | None = None
    on_stopped_leading: Callable[[], Any] | None = None
    on_new_leader: Callable[[str], Any] | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check the rules; raises ``ValueError`` naming the field."""
        if self.lock is None:
            raise ValueError("lock must not be None")
        if not getattr(self.lock, "identity", None):
            raise ValueError("lock.identity must not be empty")
        for field in ("lease_duration", "renew_deadline", "retry_period"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{field} must be a finite number of seconds, not {value!r}")
            if value <= 0:
                raise ValueError(f"{field} must be greater than zero, not {value!r}")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError(
                f"lease_duration ({self.lease_duration}) must be greater than renew_deadline "
                f"({self.renew_deadline})"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(
                f"renew_deadline ({self.renew_deadline}) must be greater than retry_period "
                f"({self.retry_period}) * {JITTER_FACTOR}"
            )
        for field in ("on_started_leading", "on_stopped_leading", "on_new_leader"):
            value = getattr(self, field)
            if value is not None and not callable(value):
                raise ValueError(f"{field} must be callable or None")
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, not {self.name!r}")


class _Notifier:
    """Delivers ``on_new_leader`` calls in order on one named thread, so a slow callback never delays a
    renewal."""

    _STOP = object()

    def __init__(self, callback: Callable[[str], Any], thread_name: str, logger: Any) -> None:
        self._callback = callback
        self._log = logger
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=thread_name, daemon=True)
        self._thread.start()

    def notify(self, identity: str) -> None:
        self._queue.put(identity)

    def close(self, timeout: float) -> None:
        self._queue.put(self._STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._log.warning("on_new_leader callback still running; not waiting for it", timeout=timeout)

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is self._STOP:
                return
            try:
                self._callback(item)
            except Exception:
                self._log.exception("on_new_leader callback failed", leader=item)


class LeaderElector:
    """Runs one candidate of a leader election; see the module docstring for the rules.

    Args:
        config: the :class:`LeaderElectionConfig`.
        clock: time source (default :class:`~framework.clock.RealClock`); expiry and deadlines use its
            ``monotonic()``, record timestamps its ``now()``.
        registry: Prometheus registry for the metrics (default ``prometheus_client.REGISTRY``).

    :meth:`run` blocks the calling thread; the query methods are thread-safe.
    """

    def __init__(
        self,
        config: LeaderElectionConfig,
        clock: Clock | None = None,
        *,
        registry: CollectorRegistry | None = None,
    ) -> None:
        config.validate()
        self.config = config
        self.clock: Clock = clock or RealClock()
        self.lock = config.lock
        self.identity: str = config.lock.identity
        self.name: str = config.name or getattr(config.lock, "name", "") or config.lock.describe()
        # leaseDurationSeconds is an integer; rounding up keeps standbys waiting at least lease_duration.
        self._lease_seconds = max(1, math.ceil(config.lease_duration))
        self._metrics: ElectionMetrics = election_metrics(registry)
        self._metrics.register(self.name)
        self._log = log.bind(election=self.name, lock=config.lock.describe(), identity=self.identity)
        self._random = random.Random()
        self._run_guard = threading.Lock()

        self._state = threading.Lock()
        self._observed_record: LeaderElectionRecord | None = None
        self._observed_time = 0.0
        self._leading = False
        self._lost = False
        self._deadline = -math.inf  # monotonic time when the leader must have renewed by
        self._metric_on = False

        self._reported_leader = ""
        self._notifier: _Notifier | None = None
        self._stopped_called = False
        self._last_error: str | None = None
        self._warned: tuple[str, float] | None = None  # (error text, monotonic time) last warned about

    # -- queries ----------------------------------------------------------------------------------

    @property
    def last_error(self) -> str | None:
        """Why the last try to read or write the lock failed; None once a try succeeded (also when it
        found another holder's valid lease: that is no error). For readiness checks."""
        with self._state:
            return self._last_error

    def is_leader(self) -> bool:
        """True while this candidate leads (from acquiring until leadership ends or ``run`` stops)."""
        with self._state:
            return self._leading

    def holds_lease(self) -> bool:
        """True while leading and the renew deadline has not passed. Unlike :meth:`is_leader` this is
        false at once for a leader that was paused (SIGSTOP, a long GC) past its deadline, before the
        deadline watcher has run: leader-only writes check it so they never outlive the lease."""
        with self._state:
            return self._leading and self.clock.monotonic() < self._deadline

    def get_leader(self) -> str | None:
        """The holder identity last observed in the lock (``None`` before any read, or when released)."""
        with self._state:
            record = self._observed_record
        if record is None:
            return None
        return record.holder_identity or None

    @property
    def observed_record(self) -> LeaderElectionRecord | None:
        """The record last read or written."""
        with self._state:
            return self._observed_record

    @property
    def lost(self) -> bool:
        """True when the last ``run`` ended because the lease could not be renewed in time."""
        with self._state:
            return self._lost

    def check(self, max_tolerable_expired_lease: float = 0.0) -> None:
        """Health adaptor: raise :class:`LeaderElectionLost` if the lock last showed this candidate as
        holder but that was over ``lease_duration + max_tolerable_expired_lease`` ago — the elector
        should have renewed or stopped by then (a deadlock, say). Standbys are always healthy."""
        with self._state:
            record, observed = self._observed_record, self._observed_time
        if record is None or record.holder_identity != self.identity:
            return
        overdue = self.clock.since(observed)
        if overdue > self.config.lease_duration + max_tolerable_expired_lease:
            raise LeaderElectionLost(
                f"failed election to renew leadership on lease {self.name}: last renewed "
                f"{overdue:.3f}s ago (lease duration {self.config.lease_duration}s, tolerance "
                f"{max_tolerable_expired_lease}s)"
            )

    # -- running ----------------------------------------------------------------------------------

    def run(self, stop_event: threading.Event) -> None:
        """Campaign until ``stop_event`` is set or leadership is lost; blocks. See the module docstring."""
        if not self._run_guard.acquire(blocking=False):
            raise RuntimeError(f"LeaderElector {self.name!r} is already running")
        try:
            with self._state:
                self._lost = False
                self._leading = False
            self._stopped_called = False
            callback = self.config.on_new_leader
            self._notifier = (
                _Notifier(callback, f"leader-elector-{self.name}-notify", self._log) if callback else None
            )
            try:
                if self._acquire(stop_event):
                    self._lead(stop_event)
            finally:
                self._end_leading()
                self._call_stopped_leading()
                if self._notifier is not None:
                    self._notifier.close(self.config.renew_deadline)
                    self._notifier = None
        finally:
            self._run_guard.release()

    def _acquire(self, stop_event: threading.Event) -> bool:
        self._log.info("attempting to acquire leader lease")
        while not stop_event.is_set():
            started = self.clock.monotonic()
            deadline = started + self.config.renew_deadline
            acquired = self._try_acquire_or_renew(deadline)
            self._maybe_report_transition()
            if acquired:
                if self.clock.monotonic() < deadline:
                    with self._state:
                        self._deadline = deadline
                        self._leading = True
                    self._set_metric(True)
                    self._log.info("successfully acquired lease")
                    return True
                self._log.warning("lease write took longer than the renew deadline; trying again")
            else:
                self._log.debug("failed to acquire lease", leader=self.get_leader())
            period = self.config.retry_period * (1.0 + JITTER_FACTOR * self._random.random())
            if self.clock.wait(stop_event, period):
                break
        return False

    def _lead(self, stop_event: threading.Event) -> None:
        leading_stop = threading.Event()
        worker_done = threading.Event()
        worker: threading.Thread | None = None
        if self.config.on_started_leading is not None:
            worker = threading.Thread(
                target=self._run_started_leading,
                args=(self.config.on_started_leading, leading_stop, worker_done),
                name=f"leader-elector-{self.name}-leading",
                daemon=True,
            )
        else:
            worker_done.set()
        halt = threading.Event()
        renewer = threading.Thread(
            target=self._renew_loop, args=(halt,), name=f"leader-elector-{self.name}-renew", daemon=True
        )
        renewer.start()
        if worker is not None:
            worker.start()
        join_timeout = self.config.renew_deadline + self.config.retry_period

        if self._wait_while_leading(stop_event, None) == "lost":
            self._lose(leading_stop, halt)
            renewer.join(join_timeout)
            return

        # Graceful stop: leader work ends first, while renewals keep the lease ours.
        self._log.info("stopping leading")
        self._end_leading()
        leading_stop.set()
        waited = self._wait_while_leading(worker_done, self.clock.monotonic() + self.config.renew_deadline)
        if waited == "lost":
            self._lose(leading_stop, halt)
            renewer.join(join_timeout)
            return
        release = self.config.release_on_cancel
        if waited == "timeout":
            self._log.warning(
                "on_started_leading did not return after stop; not releasing the lease",
                waited=self.config.renew_deadline,
            )
            release = False
        halt.set()
        renewer.join(join_timeout)
        if renewer.is_alive():
            self._log.warning("renew thread still busy; not releasing the lease", waited=join_timeout)
            release = False
        if release:
            self._release()

    def _wait_while_leading(self, event: threading.Event, until: float | None) -> str:
        """Wait for ``event`` ("done"), ``until`` ("timeout") or the renew deadline to pass ("lost")."""
        while True:
            now = self.clock.monotonic()
            with self._state:
                deadline = self._deadline
            if now >= deadline:
                return "lost"
            if until is not None and now >= until:
                return "timeout"
            if self.clock.wait_until(event, deadline if until is None else min(deadline, until)):
                return "done"

    def _lose(self, leading_stop: threading.Event, halt: threading.Event) -> None:
        with self._state:
            self._lost = True
        self._end_leading()
        leading_stop.set()
        halt.set()
        self._log.warning(
            "failed to renew lease in time; leadership lost", renew_deadline=self.config.renew_deadline
        )
        self._call_stopped_leading()

    def _renew_loop(self, halt: threading.Event) -> None:
        while not self.clock.wait(halt, self.config.retry_period):
            started = self.clock.monotonic()
            with self._state:
                deadline = self._deadline
            if started >= deadline:
                halt.wait()  # the run thread declares the loss and sets halt
                return
            renewed = self._try_acquire_or_renew(deadline)
            self._maybe_report_transition()
            if renewed:
                with self._state:
                    if not halt.is_set():
                        self._deadline = max(self._deadline, started + self.config.renew_deadline)
                self._log.debug("successfully renewed lease")
            else:
                self._log.warning(
                    "failed to renew lease",
                    error=self.last_error,
                    remaining=round(deadline - self.clock.monotonic(), 3),
                )

    def _run_started_leading(
        self, callback: Callable[[threading.Event], Any], stop: threading.Event, done: threading.Event
    ) -> None:
        try:
            callback(stop)
        except Exception:
            self._log.exception("on_started_leading callback failed")
        finally:
            done.set()

    def _end_leading(self) -> None:
        with self._state:
            self._leading = False
        self._set_metric(False)

    def _set_metric(self, on: bool) -> None:
        with self._state:
            if self._metric_on == on:
                return
            self._metric_on = on
        if on:
            self._metrics.leader_on(self.name)
        else:
            self._metrics.leader_off(self.name)

    def _call_stopped_leading(self) -> None:
        if self._stopped_called:
            return
        self._stopped_called = True
        callback = self.config.on_stopped_leading
        if callback is None:
            return
        try:
            callback()
        except Exception:
            self._log.exception("on_stopped_leading callback failed")

    # -- one try ----------------------------------------------------------------------------------

    def _timeout(self, deadline: float) -> float | None:
        remaining = deadline - self.clock.monotonic()
        return None if remaining <= 0 else max(remaining, _MIN_REQUEST_TIMEOUT)

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._state:
            self._observed_record = record
            self._observed_time = self.clock.monotonic()

    def _observed_is_me(self) -> bool:
        with self._state:
            record = self._observed_record
        return record is not None and record.holder_identity == self.identity

    def _observed_valid(self, now: float) -> bool:
        """Whether the observed record's lease is still valid at monotonic ``now``."""
        with self._state:
            record, observed = self._observed_record, self._observed_time
        if record is None:
            return False
        duration: float = record.lease_duration_seconds
        if duration <= 0:
            duration = self.config.lease_duration
        return observed + duration > now

    def _try_acquire_or_renew(self, deadline: float) -> bool:
        """One try to become or stay the holder, with every request finished by ``deadline``."""
        try:
            acquired = self._try_once(deadline)
        except (AlreadyExists, Conflict) as err:
            # Another candidate wrote first: the normal race, not trouble.
            self._log.debug("lost the race for the lease", error=str(err))
            self._set_error(None)
            return False
        except APIError as err:
            self._lease_error(err)
            return False
        except Exception:
            self._log.exception("unexpected error trying to acquire or renew the lease")
            return False
        self._set_error(None)
        return acquired

    def _set_error(self, error: str | None) -> None:
        with self._state:
            self._last_error = error
        if error is None and self._warned is not None:
            self._warned = None
            self._log.info("lease requests succeed again")

    def _lease_error(self, err: APIError) -> None:
        """Trouble with the lock is a warning with the error text; repeats of the same error at most
        once a minute (a replica retries every retry period), a new error at once."""
        namespace = getattr(self.lock, "namespace", None)
        kind = (err.details or {}).get("kind")
        if isinstance(err, NotFound) and namespace and kind == "namespaces":
            text = f'cannot take the lease: its namespace "{namespace}" does not exist'
        else:
            text = str(err)
        self._set_error(text)
        now = self.clock.monotonic()
        warned = self._warned
        if warned is not None and warned[0] == text and now - warned[1] < _REPEAT_WARNING_AFTER:
            self._log.debug("lease request failed", error=text)
            return
        self._warned = (text, now)
        self._log.warning("lease request failed", error=text, error_type=type(err).__name__)

    def _try_once(self, deadline: float) -> bool:
        now_wall = self.clock.now()
        now = self.clock.monotonic()
        desired = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=self._lease_seconds,
            acquire_time=now_wall,
            renew_time=now_wall,
            lease_transitions=0,
        )

        # 1. Fast path: the holder updates the record it wrote last, assuming nobody else wrote since.
        if self._observed_is_me() and self._observed_valid(now):
            observed = self.observed_record
            assert observed is not None
            record = replace(
                desired, acquire_time=observed.acquire_time, lease_transitions=observed.lease_transitions
            )
            timeout = self._timeout(deadline)
            if timeout is None:
                return False
            try:
                self.lock.update(record, timeout=timeout)
            except Exception as err:
                self._log.info("optimistic lease update failed; falling back to slow path", error=str(err))
            else:
                self._set_observed(record)
                return True

        # 2. Read (or create) the record.
        timeout = self._timeout(deadline)
        if timeout is None:
            return False
        try:
            current, _ = self.lock.get(timeout=timeout)
        except NotFound:
            timeout = self._timeout(deadline)
            if timeout is None:
                return False
            self.lock.create(desired, timeout=timeout)  # AlreadyExists: another candidate was first
            self._set_observed(desired)
            return True

        # 3. Judge the holder: expiry counts from when this elector saw the record change.
        with self._state:
            changed = current != self._observed_record
        if changed:
            self._set_observed(current)
        if current.holder_identity and current.holder_identity != self.identity and self._observed_valid(now):
            return False

        # 4. Write ourselves in (keeping acquireTime/transitions when we already hold it).
        if current.holder_identity == self.identity:
            record = replace(
                desired, acquire_time=current.acquire_time, lease_transitions=current.lease_transitions
            )
            self._metrics.slowpath_exercised(self.name)
        else:
            record = replace(desired, lease_transitions=current.lease_transitions + 1)
        timeout = self._timeout(deadline)
        if timeout is None:
            return False
        self.lock.update(record, timeout=timeout)
        self._set_observed(record)
        return True

    def _release(self) -> bool:
        """Write an empty holder (duration 1 s) if the lock is still ours; retried on conflict."""
        deadline = self.clock.monotonic() + self.config.renew_deadline
        refetch = False
        while True:
            timeout = self._timeout(deadline)
            if timeout is None:
                self._log.warning("could not release the lease before the renew deadline")
                return False
            try:
                current: LeaderElectionRecord | None
                if refetch:
                    current, _ = self.lock.get(timeout=timeout)
                    self._set_observed(current)
                else:
                    current = self.observed_record
                if current is None or current.holder_identity != self.identity:
                    self._log.info("lease no longer held by us; nothing to release")
                    return True
                now_wall = self.clock.now()
                released = LeaderElectionRecord(
                    holder_identity="",
                    lease_duration_seconds=1,
                    acquire_time=now_wall,
                    renew_time=now_wall,
                    lease_transitions=current.lease_transitions,
                )
                timeout = self._timeout(deadline)
                if timeout is None:
                    continue
                self.lock.update(released, timeout=timeout)
            except Conflict:
                refetch = True
                continue
            except Exception as err:
                self._log.warning(
                    "failed to release the lease", error=str(err), error_type=type(err).__name__
                )
                return False
            self._set_observed(released)
            self._maybe_report_transition()
            self._log.info("released the lease")
            return True

    def _maybe_report_transition(self) -> None:
        with self._state:
            record = self._observed_record
        holder = record.holder_identity if record is not None else ""
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if holder:
            self._log.info("new leader observed", leader=holder)
            if self._notifier is not None:
                self._notifier.notify(holder)
