"""Leader-election logic on a FakeClock with an in-memory lock: expiry from the observed change, lease
transitions, the fast and slow paths, the renew deadline, release, the health check and metrics.

One try is exercised through ``LeaderElector._try_acquire_or_renew`` (no threads); the run loop is
driven by stepping the fake clock in exact binary fractions once the elector's threads are parked on it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from framework.client import AlreadyExists, Conflict, NotFound, ServerError
from framework.clock import FakeClock
from framework.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionLost,
    LeaderElectionRecord,
    LeaderElector,
    ResourceLock,
)

LEASE = 10.0
RENEW = 6.0
RETRY = 1.0


class MemoryStore:
    """The lock object shared by candidates, with resourceVersions and injectable update failures."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.record: LeaderElectionRecord | None = None
        self.rv = 0
        self.fail_updates: Exception | None = None
        self.fail_next_update: Exception | None = None

    def put(self, record: LeaderElectionRecord) -> None:
        """Another writer (not one of the electors) changes the record."""
        with self.lock:
            self.record = record
            self.rv += 1


class MemoryLock:
    def __init__(self, store: MemoryStore, identity: str, name: str = "memory-lease") -> None:
        self.store = store
        self.identity = identity
        self.name = name
        self._rv: int | None = None

    def describe(self) -> str:
        return f"memory/{self.name}"

    def get(self, *, timeout: Any = None) -> tuple[LeaderElectionRecord, Any]:
        with self.store.lock:
            if self.store.record is None:
                raise NotFound(404, "NotFound", "lease not found")
            self._rv = self.store.rv
            return self.store.record, {"resourceVersion": self.store.rv}

    def create(self, record: LeaderElectionRecord, *, timeout: Any = None) -> Any:
        with self.store.lock:
            if self.store.record is not None:
                raise AlreadyExists(409, "AlreadyExists", "lease already exists")
            self.store.record = record
            self.store.rv += 1
            self._rv = self.store.rv

    def update(self, record: LeaderElectionRecord, *, timeout: Any = None) -> Any:
        with self.store.lock:
            if self.store.fail_updates is not None:
                raise self.store.fail_updates
            if self.store.fail_next_update is not None:
                err, self.store.fail_next_update = self.store.fail_next_update, None
                raise err
            if self._rv is None:
                raise RuntimeError("lease not initialized, call get or create first")
            if self._rv != self.store.rv:
                raise Conflict(409, "Conflict", "the object has been modified")
            self.store.record = record
            self.store.rv += 1
            self._rv = self.store.rv


def make_elector(
    store: MemoryStore,
    identity: str,
    clock: FakeClock,
    registry: CollectorRegistry,
    **overrides: Any,
) -> LeaderElector:
    settings: dict[str, Any] = {
        "lease_duration": LEASE,
        "renew_deadline": RENEW,
        "retry_period": RETRY,
        "name": "unit",
    }
    settings.update(overrides)
    config = LeaderElectionConfig(lock=MemoryLock(store, identity), **settings)
    return LeaderElector(config, clock=clock, registry=registry)


def try_once(elector: LeaderElector) -> bool:
    return elector._try_acquire_or_renew(elector.clock.monotonic() + 100.0)


def held_by(holder: str, when: datetime, transitions: int = 3) -> LeaderElectionRecord:
    return LeaderElectionRecord(
        holder_identity=holder,
        lease_duration_seconds=int(LEASE),
        acquire_time=when,
        renew_time=when,
        lease_transitions=transitions,
    )


def settle(clock: FakeClock, waiters: int, until: Callable[[], bool] | None = None) -> None:
    """Wait (real time) until the elector's threads are parked on the clock, or ``until()``."""
    deadline = time.monotonic() + 5.0
    while clock.waiter_count() < waiters and not (until is not None and until()):
        assert time.monotonic() < deadline, "elector threads did not park on the fake clock"
        time.sleep(0.0005)


def drive(clock: FakeClock, seconds: float, *, waiters: int, until: Callable[[], bool] | None = None) -> None:
    """Step the clock by 0.25 s at a time, each step once the threads are parked."""
    for _ in range(round(seconds / 0.25)):
        settle(clock, waiters, until)
        if until is not None and until():
            return
        clock.step(0.25)
    settle(clock, waiters, until)


def sample(registry: CollectorRegistry, metric: str, name: str = "unit") -> float | None:
    return registry.get_sample_value(metric, {"name": name})


# --- the record and its wire format ------------------------------------------------------------------


def test_record_round_trips_through_a_lease_spec() -> None:
    when = datetime(2024, 5, 1, 10, 0, 0, 5, tzinfo=UTC)
    record = held_by("a", when)
    spec = record.to_lease_spec()
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 10,
        "leaseTransitions": 3,
        "acquireTime": "2024-05-01T10:00:00.000005Z",
        "renewTime": "2024-05-01T10:00:00.000005Z",
    }
    assert LeaderElectionRecord.from_lease_spec(spec) == record


def test_lease_times_are_micro_times_and_garbage_reads_as_unset() -> None:
    # The formats themselves are framework.meta.time's (tests/framework/meta/test_time.py).
    plus_two = datetime(2024, 1, 1, 12, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    spec = LeaderElectionRecord("me", 10, acquire_time=plus_two).to_lease_spec()
    assert spec["acquireTime"] == "2024-01-01T12:00:00.000000Z"
    assert LeaderElectionRecord.from_lease_spec({"renewTime": "yesterday"}).renew_time is None
    garbage = LeaderElectionRecord.from_lease_spec({"leaseDurationSeconds": "x", "acquireTime": 5})
    assert garbage == LeaderElectionRecord()


def test_memory_lock_satisfies_the_protocol() -> None:
    assert isinstance(MemoryLock(MemoryStore(), "a"), ResourceLock)


# --- one try -------------------------------------------------------------------------------------------


def test_first_candidate_creates_the_record(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    assert try_once(a)
    assert store.record == LeaderElectionRecord("a", 10, clock.now(), clock.now(), 0)
    assert a.get_leader() == "a"


@pytest.mark.parametrize(
    "stamp",
    [datetime(1990, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)],
    ids=["ancient-renew-time", "future-renew-time"],
)
def test_expiry_counts_from_the_observed_change_not_the_timestamps(
    registry: CollectorRegistry, stamp: datetime
) -> None:
    clock, store = FakeClock(), MemoryStore()
    store.put(held_by("other", stamp, transitions=3))
    b = make_elector(store, "b", clock, registry)

    assert not try_once(b)  # first sight: the lease counts as fresh whatever its timestamps say
    assert b.get_leader() == "other"
    clock.step(LEASE - 0.25)
    assert not try_once(b)
    clock.step(0.25)  # exactly lease_duration after the change was seen: expired
    assert try_once(b)
    assert store.record is not None
    assert store.record.holder_identity == "b"
    assert store.record.lease_transitions == 4
    assert store.record.acquire_time == clock.now()


def test_a_record_that_keeps_changing_is_never_taken(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    b = make_elector(store, "b", clock, registry)
    for i in range(8):  # the holder renews every 6 s: 48 s, far beyond one lease duration
        store.put(held_by("other", clock.now()))
        assert not try_once(b), f"took over a live lease at round {i}"
        clock.step(6.0)
        assert not try_once(b)
    last_change = clock.monotonic() - 6.0
    clock.step(LEASE - 6.0 - 0.25)
    assert not try_once(b)
    clock.step(0.25)
    assert try_once(b)
    assert clock.monotonic() - last_change == LEASE


def test_released_lease_is_taken_at_once_with_a_transition(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    store.put(LeaderElectionRecord("", 1, clock.now(), clock.now(), 5))
    b = make_elector(store, "b", clock, registry)
    assert try_once(b)
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_transitions) == ("b", 6)


def test_renewal_keeps_acquire_time_and_transitions(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    assert try_once(a)
    acquired = clock.now()
    clock.step(1.0)
    assert try_once(a)
    assert store.record == LeaderElectionRecord("a", 10, acquired, clock.now(), 0)
    assert sample(registry, "leader_election_slowpath_total") == 0


def test_failed_fast_path_falls_back_to_the_slow_path(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    assert try_once(a)
    store.fail_next_update = Conflict(409, "Conflict", "the object has been modified")
    clock.step(1.0)
    assert try_once(a)  # read again, still ours, written with the fresh resourceVersion
    assert store.record is not None
    assert store.record.renew_time == clock.now()
    assert sample(registry, "leader_election_slowpath_total") == 1


def test_a_takeover_that_loses_the_race_conflicts(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    store.put(LeaderElectionRecord("", 1, clock.now(), clock.now(), 0))
    a = make_elector(store, "a", clock, registry)
    b = make_elector(store, "b", clock, registry)
    read = b.lock.get

    def read_then_lose_the_race(**kwargs: Any) -> Any:
        result = read(**kwargs)
        assert try_once(a)  # a writes between b's read and b's update
        return result

    b.lock.get = read_then_lose_the_race  # type: ignore[method-assign]
    assert not try_once(b)  # b's update carries the old resourceVersion: Conflict
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_transitions) == ("a", 1)
    assert not b.is_leader()


def test_update_errors_make_the_try_fail(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    assert try_once(a)
    store.fail_updates = ServerError(500, "InternalError", "injected")
    clock.step(1.0)
    assert not try_once(a)
    store.fail_updates = None
    assert try_once(a)


# --- the run loop -------------------------------------------------------------------------------------


class Calls:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.events: list[tuple[str, Any, float]] = []
        self.stopped = threading.Event()
        self.worker_saw_stop = threading.Event()

    def started(self, stop: threading.Event) -> None:
        self.events.append(("started", None, self.clock.monotonic()))
        stop.wait()
        self.worker_saw_stop.set()

    def on_stopped(self) -> None:
        self.events.append(("stopped", None, self.clock.monotonic()))
        self.stopped.set()

    def new_leader(self, identity: str) -> None:
        self.events.append(("new_leader", identity, self.clock.monotonic()))

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_started_leading": self.started,
            "on_stopped_leading": self.on_stopped,
            "on_new_leader": self.new_leader,
        }

    def names(self) -> list[str]:
        """Callback names, sorted: on_new_leader runs on its own thread, unordered with the others."""
        return sorted(e[0] for e in self.events)

    def when(self, name: str) -> float:
        return next(t for n, _, t in self.events if n == name)


def start(elector: LeaderElector, stop: threading.Event) -> threading.Thread:
    thread = threading.Thread(target=elector.run, args=(stop,), name="candidate-unit", daemon=True)
    thread.start()
    return thread


def test_leader_stops_at_the_renew_deadline_before_the_lease_can_expire(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    calls = Calls(clock)
    a = make_elector(store, "a", clock, registry, **calls.callbacks())
    stop = threading.Event()
    thread = start(a, stop)
    try:
        settle(clock, 2)  # acquired at t=0; the run thread and the renewer are parked
        assert a.is_leader()
        assert sample(registry, "leader_election_master_status") == 1
        drive(clock, 2.0, waiters=2)  # renewed at t=1 and t=2
        assert store.record is not None
        last_renewal = clock.monotonic()
        assert store.record.renew_time == clock.now()
        store.fail_updates = ServerError(500, "InternalError", "injected")

        drive(clock, 10.0, waiters=2, until=calls.stopped.is_set)
        assert calls.stopped.wait(5)
        thread.join(5)
        assert not thread.is_alive()
    finally:
        stop.set()
        thread.join(5)

    stopped_at = calls.when("stopped")
    assert stopped_at == last_renewal + RENEW  # exactly at the deadline, not a retry period later
    assert stopped_at < last_renewal + LEASE  # standbys cannot have taken over yet
    assert calls.worker_saw_stop.wait(2)
    assert a.lost and not a.is_leader()
    assert sample(registry, "leader_election_master_status") == 0
    assert calls.names() == ["new_leader", "started", "stopped"]
    assert calls.when("started") <= calls.when("stopped")
    assert store.record.holder_identity == "a"  # not released after a loss

    # Health adaptor: the record last seen still names us; fail once the lease is long overdue.
    a.check()
    clock.step(LEASE - RENEW + 0.25)
    with pytest.raises(LeaderElectionLost):
        a.check()
    a.check(max_tolerable_expired_lease=1.0)


def test_graceful_stop_releases_and_the_next_candidate_takes_over_at_once(
    registry: CollectorRegistry,
) -> None:
    clock, store = FakeClock(), MemoryStore()
    calls = Calls(clock)
    a = make_elector(store, "a", clock, registry, release_on_cancel=True, **calls.callbacks())
    stop = threading.Event()
    thread = start(a, stop)
    try:
        settle(clock, 2)
        drive(clock, 3.0, waiters=2)
        stop.set()
        thread.join(5)
        assert not thread.is_alive()
    finally:
        stop.set()
        thread.join(5)
    assert calls.names() == ["new_leader", "started", "stopped"]
    assert calls.when("started") <= calls.when("stopped")
    assert calls.worker_saw_stop.is_set()
    assert not a.lost and not a.is_leader()
    assert store.record == LeaderElectionRecord("", 1, clock.now(), clock.now(), 0)
    assert a.get_leader() is None
    a.check()  # released: nothing to be unhealthy about

    b = make_elector(store, "b", clock, registry)
    assert try_once(b)
    assert store.record.holder_identity == "b"
    assert store.record.lease_transitions == 1


def test_graceful_stop_without_release_leaves_the_lease(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    stop = threading.Event()
    thread = start(a, stop)
    try:
        settle(clock, 2)
        drive(clock, 1.0, waiters=2)
        stop.set()
        thread.join(5)
        assert not thread.is_alive()
    finally:
        stop.set()
        thread.join(5)
    assert store.record is not None
    assert store.record.holder_identity == "a"
    assert not a.lost


def test_on_stopped_leading_runs_even_when_never_leading(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    store.put(held_by("other", clock.now()))
    calls = Calls(clock)
    b = make_elector(store, "b", clock, registry, **calls.callbacks())
    stop = threading.Event()
    thread = start(b, stop)
    try:
        settle(clock, 1)  # tried once, waiting for the next (jittered) try
        drive(clock, 4.0, waiters=1)
        assert not b.is_leader()
        assert b.get_leader() == "other"
        b.check()  # standbys are healthy
        stop.set()
        thread.join(5)
        assert not thread.is_alive()
    finally:
        stop.set()
        thread.join(5)
    assert calls.names() == ["new_leader", "stopped"]
    assert next(who for n, who, _ in calls.events if n == "new_leader") == "other"


def test_acquire_retries_are_jittered_within_one_to_2_2_retry_periods(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    store.put(held_by("other", clock.now()))
    reads: list[float] = []
    b = make_elector(store, "b", clock, registry)
    original_get = b.lock.get

    def counting_get(**kwargs: Any) -> Any:
        reads.append(clock.monotonic())
        return original_get(**kwargs)

    b.lock.get = counting_get  # type: ignore[method-assign]
    stop = threading.Event()
    thread = start(b, stop)
    try:
        settle(clock, 1)
        for _ in range(8):  # the holder keeps renewing, so b stays a standby throughout
            store.put(held_by("other", clock.now()))
            drive(clock, 4.0, waiters=1)
        assert not b.is_leader()
    finally:
        stop.set()
        thread.join(5)
    gaps = [later - earlier for earlier, later in itertools.pairwise(reads)]
    assert len(gaps) >= 10
    assert all(RETRY <= gap <= RETRY * 2.2 + 0.25 for gap in gaps), gaps
    assert len({round(g, 2) for g in gaps}) > 1  # not a fixed period


def test_run_twice_at_once_is_refused(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    stop = threading.Event()
    thread = start(a, stop)
    try:
        settle(clock, 2)
        with pytest.raises(RuntimeError, match="already running"):
            a.run(threading.Event())
    finally:
        stop.set()
        thread.join(5)


# --- metrics -------------------------------------------------------------------------------------------


def test_metrics_are_shared_per_registry(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    electors = [make_elector(store, f"c{i}", clock, registry) for i in range(5)]
    assert sample(registry, "leader_election_master_status") == 0
    assert sample(registry, "leader_election_slowpath_total") == 0
    # The default registry too: several electors, no duplicate-registration error.
    for i in range(3):
        LeaderElector(LeaderElectionConfig(lock=MemoryLock(store, f"d{i}"), name="default-registry"))
    assert len(electors) == 5


def test_master_status_is_one_while_any_elector_of_the_name_leads(registry: CollectorRegistry) -> None:
    clock, store = FakeClock(), MemoryStore()
    a = make_elector(store, "a", clock, registry)
    b = make_elector(store, "b", clock, registry)
    a._set_metric(True)
    b._set_metric(True)
    a._set_metric(False)
    assert sample(registry, "leader_election_master_status") == 1
    b._set_metric(False)
    b._set_metric(False)  # idempotent per elector
    assert sample(registry, "leader_election_master_status") == 0
