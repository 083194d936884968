"""Leader election against the in-process API server over HTTP, with the real clock and short durations
(lease 1.0 s, renew deadline 0.6 s, retry period 0.2 s): one elector's Lease, three candidates with one
leader at a time, hand-over on release and on abandonment, a leader that cannot renew, and candidates
racing to create and to update the Lease. Configuration rules are checked here too."""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from framework.client import AlreadyExists, Client, Conflict, NotFound
from framework.leaderelection import (
    JITTER_FACTOR,
    LEASE_API_VERSION,
    LEASE_KIND,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
)
from framework.testing import APIServer, consistently, eventually

NAMESPACE = "default"
LEASE_NAME = "test-election"
LEASE = 1.0
RENEW = 0.6
RETRY = 0.2
# Worst case for a standby to notice a change, or an expiry: one jittered acquire period.
JITTERED_RETRY = RETRY * (1 + JITTER_FACTOR)
MICRO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


class Recorder:
    """Leader-only work of every candidate: asserts no two run at once, live and over the whole run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active: set[str] = set()
        self.intervals: list[tuple[str, float, float]] = []
        self.violations: list[str] = []

    def work(self, identity: str, stop: threading.Event) -> None:
        with self.lock:
            if self.active:
                self.violations.append(f"{identity} started leading while {sorted(self.active)} led")
            self.active.add(identity)
        began = time.monotonic()
        try:
            while not stop.wait(0.01):
                with self.lock:
                    if len(self.active) > 1:
                        self.violations.append(f"two leaders at once: {sorted(self.active)}")
        finally:
            with self.lock:
                self.active.discard(identity)
                self.intervals.append((identity, began, time.monotonic()))

    def starts(self, identity: str) -> list[float]:
        with self.lock:
            return [start for who, start, _ in self.intervals if who == identity]

    def assert_never_two_leaders(self) -> None:
        with self.lock:
            assert not self.violations, self.violations
            ordered = sorted(self.intervals, key=lambda i: i[1])
        for (who, _, end), (next_who, next_start, _) in itertools.pairwise(ordered):
            assert next_start >= end, f"{next_who} started at {next_start} before {who} stopped at {end}"


class RecordingLeaseLock(LeaseLock):
    """A LeaseLock that notes when each successful update was sent (the write happened after that)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.successful_updates: list[float] = []

    def update(self, record: LeaderElectionRecord, **kwargs: Any) -> dict[str, Any]:
        sent = time.monotonic()
        lease = super().update(record, **kwargs)
        self.successful_updates.append(sent)
        return lease


class Candidate:
    """One replica: its own Client, LeaseLock and elector, running on a named thread."""

    def __init__(
        self,
        apiserver: APIServer,
        identity: str,
        recorder: Recorder,
        registry: CollectorRegistry,
        *,
        release_on_cancel: bool = False,
        lock_factory: Callable[..., LeaseLock] = RecordingLeaseLock,
    ) -> None:
        self.identity = identity
        self.recorder = recorder
        self.client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
        self.lock = lock_factory(self.client, NAMESPACE, LEASE_NAME, identity)
        self.started_at: list[float] = []
        self.stopped_at: list[float] = []
        self.new_leaders: list[str] = []
        self.elector = LeaderElector(
            LeaderElectionConfig(
                lock=self.lock,
                lease_duration=LEASE,
                renew_deadline=RENEW,
                retry_period=RETRY,
                release_on_cancel=release_on_cancel,
                name=LEASE_NAME,
                on_started_leading=self._lead,
                on_stopped_leading=lambda: self.stopped_at.append(time.monotonic()),
                on_new_leader=self.new_leaders.append,
            ),
            registry=registry,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self.elector.run, args=(self.stop,), name=f"candidate-{identity}", daemon=True
        )

    def _lead(self, stop: threading.Event) -> None:
        self.started_at.append(time.monotonic())
        self.recorder.work(self.identity, stop)

    def start(self) -> Candidate:
        self.thread.start()
        return self

    def shutdown(self, timeout: float = 5.0) -> None:
        self.stop.set()
        if self.thread.is_alive() or self.thread.ident is not None:
            self.thread.join(timeout)
        assert not self.thread.is_alive(), f"{self.identity} did not stop"
        self.client.close()


@pytest.fixture
def candidates(apiserver: APIServer, registry: CollectorRegistry) -> Any:
    """``make(identity, **kwargs)`` builds a Candidate; all are shut down after the test."""
    made: list[Candidate] = []
    recorder = Recorder()

    def make(identity: str, **kwargs: Any) -> Candidate:
        candidate = Candidate(apiserver, identity, recorder, registry, **kwargs)
        made.append(candidate)
        return candidate

    make.recorder = recorder  # type: ignore[attr-defined]
    yield make
    for candidate in made:
        candidate.shutdown()
    recorder.assert_never_two_leaders()


def read_lease(apiserver: APIServer) -> dict[str, Any]:
    with Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as client:
        return client.get(LEASE_API_VERSION, LEASE_KIND, LEASE_NAME, NAMESPACE)


def wait_for_leader(
    group: list[Candidate], timeout: float = 5.0, exclude: Candidate | None = None
) -> Candidate:
    def leader() -> Candidate | None:
        # is_leader() turns True just before on_started_leading runs on its own thread.
        leading = [c for c in group if c is not exclude and c.elector.is_leader() and c.started_at]
        return leading[0] if len(leading) == 1 else None

    return eventually(leader, timeout, message="no single leader elected")


# --- configuration ---------------------------------------------------------------------------------------


class _Lock:
    identity = "me"
    name = "lock"

    def describe(self) -> str:
        return "ns/lock"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"lease_duration": 10, "renew_deadline": 10}, "lease_duration"),
        ({"lease_duration": 5, "renew_deadline": 10}, "lease_duration"),
        ({"renew_deadline": 2.4, "retry_period": 2}, "renew_deadline"),
        ({"lease_duration": 0}, "lease_duration"),
        ({"renew_deadline": -1}, "renew_deadline"),
        ({"retry_period": 0}, "retry_period"),
        ({"retry_period": float("nan")}, "retry_period"),
        ({"lease_duration": True}, "lease_duration"),
        ({"on_started_leading": "not callable"}, "on_started_leading"),
    ],
)
def test_config_validation_names_the_field(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        LeaderElectionConfig(lock=_Lock(), **settings)


def test_config_defaults_and_empty_identity() -> None:
    config = LeaderElectionConfig(lock=_Lock())
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15.0, 10.0, 2.0)
    assert config.release_on_cancel is False
    LeaderElectionConfig(lock=_Lock(), lease_duration=1.0, renew_deadline=0.6, retry_period=0.2)
    nobody = _Lock()
    nobody.identity = ""
    with pytest.raises(ValueError, match="identity"):
        LeaderElectionConfig(lock=nobody)


# --- the Lease lock ------------------------------------------------------------------------------------


def test_lease_lock_reads_writes_and_is_optimistic(apiserver: APIServer) -> None:
    with (
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as c1,
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as c2,
    ):
        first = LeaseLock(c1, NAMESPACE, LEASE_NAME, "first")
        second = LeaseLock(c2, NAMESPACE, LEASE_NAME, "second")
        assert first.describe() == f"{NAMESPACE}/{LEASE_NAME}"
        with pytest.raises(NotFound):
            first.get()
        with pytest.raises(RuntimeError, match="not initialized"):
            first.update(LeaderElectionRecord("first", 1))

        when = datetime(2024, 5, 1, 10, 0, 0, 120000, tzinfo=UTC)
        first.create(LeaderElectionRecord("first", 15, when, when, 0))
        with pytest.raises(AlreadyExists):
            second.create(LeaderElectionRecord("second", 15, when, when, 0))

        record, lease = second.get()
        assert record == LeaderElectionRecord("first", 15, when, when, 0)
        assert lease["spec"]["acquireTime"] == "2024-05-01T10:00:00.120000Z"
        second.update(LeaderElectionRecord("second", 15, when, when, 1))
        with pytest.raises(Conflict):  # first still holds the resourceVersion it created
            first.update(LeaderElectionRecord("first", 15, when, when, 0))
        record, _ = first.get()
        assert record.holder_identity == "second"


# --- one elector ---------------------------------------------------------------------------------------


def test_single_elector_acquires_and_renews(
    apiserver: APIServer, candidates: Any, registry: CollectorRegistry
) -> None:
    solo = candidates("solo").start()
    eventually(solo.elector.is_leader, 5, message="solo never became leader")
    first = eventually(lambda: read_lease(apiserver)["spec"], 2)
    assert first["holderIdentity"] == "solo"
    assert first["leaseDurationSeconds"] == 1
    assert first["leaseTransitions"] == 0
    assert MICRO_TIME.match(first["acquireTime"]), first["acquireTime"]
    assert MICRO_TIME.match(first["renewTime"]), first["renewTime"]

    eventually(
        lambda: read_lease(apiserver)["spec"]["renewTime"] > first["renewTime"], 2, message="never renewed"
    )
    later = consistently(
        lambda: (
            (spec := read_lease(apiserver)["spec"])["acquireTime"] == first["acquireTime"]
            and spec["leaseTransitions"] == 0
            and spec
        ),
        duration=0.3,
        message="renewals keep acquireTime and leaseTransitions",
    )
    assert MICRO_TIME.match(later["renewTime"])
    assert solo.elector.get_leader() == "solo"
    assert solo.new_leaders == ["solo"]
    assert registry.get_sample_value("leader_election_master_status", {"name": LEASE_NAME}) == 1
    solo.elector.check()

    solo.shutdown()
    assert len(solo.stopped_at) == 1
    assert not solo.elector.lost
    assert registry.get_sample_value("leader_election_master_status", {"name": LEASE_NAME}) == 0
    assert read_lease(apiserver)["spec"]["holderIdentity"] == "solo"  # no release configured


# --- several candidates --------------------------------------------------------------------------------


def test_three_candidates_exactly_one_leads(apiserver: APIServer, candidates: Any) -> None:
    group = [candidates(f"c{i}").start() for i in range(3)]
    leader = wait_for_leader(group)
    consistently(
        lambda: [c.identity for c in group if c.elector.is_leader()] == [leader.identity],
        duration=2.5,
        message=lambda: f"only {leader.identity} leads",
    )
    spec = read_lease(apiserver)["spec"]
    assert spec["holderIdentity"] == leader.identity
    assert spec["leaseTransitions"] == 0
    for c in group:
        assert eventually(lambda c=c: c.elector.get_leader() == leader.identity, 2)
        assert c.new_leaders == [leader.identity]
        assert len(c.started_at) == (1 if c is leader else 0)
    candidates.recorder.assert_never_two_leaders()


def test_graceful_stop_with_release_hands_over_within_a_retry_period(
    apiserver: APIServer, candidates: Any
) -> None:
    group = [candidates(f"r{i}", release_on_cancel=True).start() for i in range(3)]
    leader = wait_for_leader(group)
    time.sleep(0.3)
    stopped = time.monotonic()
    leader.shutdown()
    assert leader.stopped_at and not leader.elector.lost
    successor = wait_for_leader(group, timeout=3, exclude=leader)
    handover = successor.started_at[0] - stopped
    # Released: the next jittered try of any standby takes it (client-go: within one retry period).
    assert handover <= JITTERED_RETRY + 0.3, handover
    spec = read_lease(apiserver)["spec"]
    assert spec["holderIdentity"] == successor.identity
    assert spec["leaseTransitions"] == 1
    assert spec["leaseDurationSeconds"] == 1
    candidates.recorder.assert_never_two_leaders()


def test_abandoned_leader_is_replaced_after_the_lease_expires(apiserver: APIServer, candidates: Any) -> None:
    group = [candidates(f"a{i}").start() for i in range(3)]
    leader = wait_for_leader(group)
    time.sleep(0.3)
    stopped = time.monotonic()
    leader.shutdown()  # no release: the Lease still names it
    assert read_lease(apiserver)["spec"]["holderIdentity"] == leader.identity
    successor = wait_for_leader(group, timeout=5, exclude=leader)
    took_over = successor.started_at[0]
    last_write = leader.lock.successful_updates[-1]
    # Never before the lease expired from the standbys' point of view (written after last_write)...
    assert took_over >= last_write + LEASE, took_over - last_write
    # ...and soon after: lease duration plus a jittered period to see the last change and one to retry.
    assert took_over - stopped <= LEASE + 2 * JITTERED_RETRY + 0.3, took_over - stopped
    assert read_lease(apiserver)["spec"]["leaseTransitions"] == 1
    candidates.recorder.assert_never_two_leaders()


@pytest.mark.parametrize("status", [500, 409])
def test_leader_that_cannot_renew_stops_before_its_lease_expires(
    apiserver: APIServer, candidates: Any, registry: CollectorRegistry, status: int
) -> None:
    group = [candidates(f"f{i}").start() for i in range(3)]
    leader = wait_for_leader(group)
    time.sleep(0.5)
    apiserver.inject_failure("update", "leases.coordination.k8s.io", status, count=None)
    try:
        eventually(lambda: leader.stopped_at, 3, message="leader never stopped")
        last_write = leader.lock.successful_updates[-1]
        stopped = leader.stopped_at[0]
        # Stopped once the renew deadline passed, and before anyone could see the lease expire.
        assert stopped >= last_write + RENEW - 0.1, stopped - last_write
        assert stopped < last_write + LEASE, stopped - last_write
        ends = eventually(
            lambda: [end for who, _, end in list(candidates.recorder.intervals) if who == leader.identity], 2
        )
        work_end = ends[-1]
        assert work_end < last_write + LEASE, work_end - last_write
        leader.thread.join(3)
        assert not leader.thread.is_alive()
        assert leader.elector.lost and not leader.elector.is_leader()
        assert registry.get_sample_value("leader_election_master_status", {"name": LEASE_NAME}) == 0
        # Nobody can write while the failures last; the standbys must not act as leaders meanwhile.
        time.sleep(max(0.0, last_write + LEASE + JITTERED_RETRY - time.monotonic()))
        assert not any(c.elector.is_leader() for c in group)
    finally:
        apiserver.clear_failures()
    successor = wait_for_leader(group, timeout=5, exclude=leader)
    assert successor.started_at[0] >= last_write + LEASE
    assert read_lease(apiserver)["spec"]["holderIdentity"] == successor.identity
    candidates.recorder.assert_never_two_leaders()


class _Gate:
    """Holds the first call of each racer until both arrive, so their requests interleave."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=5)
        self.outcomes: list[str] = []
        self.lock = threading.Lock()

    def note(self, outcome: str) -> None:
        with self.lock:
            self.outcomes.append(outcome)


def racing_lock(gate: _Gate, method: str) -> Callable[..., LeaseLock]:
    class RacingLeaseLock(RecordingLeaseLock):
        gated = False

        def _gate(self) -> None:
            if not self.gated:
                self.gated = True
                gate.barrier.wait()

        def get(self, **kwargs: Any) -> Any:
            try:
                return super().get(**kwargs)
            except NotFound:
                if method == "create":
                    self._gate()
                raise

        def create(self, record: LeaderElectionRecord, **kwargs: Any) -> Any:
            try:
                lease = super().create(record, **kwargs)
            except AlreadyExists:
                gate.note("AlreadyExists")
                raise
            gate.note("created")
            return lease

        def update(self, record: LeaderElectionRecord, **kwargs: Any) -> Any:
            if method == "update":
                self._gate()
            try:
                lease = super().update(record, **kwargs)
            except Conflict:
                gate.note("Conflict")
                raise
            gate.note("updated")
            return lease

    return RacingLeaseLock


def test_two_candidates_racing_to_create(apiserver: APIServer, candidates: Any) -> None:
    gate = _Gate(2)
    group = [candidates(f"create{i}", lock_factory=racing_lock(gate, "create")).start() for i in range(2)]
    leader = wait_for_leader(group)
    eventually(lambda: len(gate.outcomes) >= 2, 3)
    assert sorted(gate.outcomes[:2]) == ["AlreadyExists", "created"]
    loser = next(c for c in group if c is not leader)
    eventually(lambda: loser.elector.get_leader() == leader.identity, 3)
    consistently(
        lambda: leader.elector.is_leader() and not loser.elector.is_leader(),
        duration=0.5,
        message="the leader keeps leading",
    )
    spec = read_lease(apiserver)["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == (leader.identity, 0)


def test_two_candidates_racing_to_take_a_released_lease(apiserver: APIServer, candidates: Any) -> None:
    with Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as client:
        LeaseLock(client, NAMESPACE, LEASE_NAME, "old").create(LeaderElectionRecord("", 1, None, None, 4))
    gate = _Gate(2)
    group = [candidates(f"update{i}", lock_factory=racing_lock(gate, "update")).start() for i in range(2)]
    leader = wait_for_leader(group)
    eventually(lambda: len(gate.outcomes) >= 2, 3)
    assert sorted(gate.outcomes[:2]) == ["Conflict", "updated"]
    loser = next(c for c in group if c is not leader)
    consistently(
        lambda: leader.elector.is_leader() and not loser.elector.is_leader(),
        duration=0.5,
        message="the leader keeps leading",
    )
    spec = read_lease(apiserver)["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == (leader.identity, 5)


def test_lease_trouble_is_a_warning_with_the_error(apiserver: APIServer, registry: CollectorRegistry) -> None:
    """A missing lease namespace and failed renewals are warnings that carry the error text; the
    elector's ``last_error`` says why (for readiness) and clears once a try succeeds."""
    from structlog.testing import capture_logs

    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    lock = LeaseLock(client, "no-such-namespace", LEASE_NAME, "me")
    elector = LeaderElector(
        LeaderElectionConfig(
            lock=lock, lease_duration=LEASE, renew_deadline=RENEW, retry_period=RETRY, name=LEASE_NAME
        ),
        registry=registry,
    )
    stop = threading.Event()
    thread = threading.Thread(target=elector.run, args=(stop,), name="test-elector", daemon=True)
    with capture_logs() as logs:
        thread.start()
        try:
            missing = 'cannot take the lease: its namespace "no-such-namespace" does not exist'
            eventually(lambda: elector.last_error == missing, 5, message="last_error names the namespace")
            warned = eventually(
                lambda: [
                    e for e in logs if e["event"] == "lease request failed" and e["log_level"] == "warning"
                ],
                5,
            )
            assert warned[0]["error"] == missing
            # the same error again, every retry period (0.2 s), is not another warning (one a minute)
            consistently(
                lambda: (
                    sum(e["event"] == "lease request failed" and e["log_level"] == "warning" for e in logs)
                    == 1
                ),
                duration=1.5,
                message="one warning for a repeated error",
            )
            # the namespace appears: the lease is taken and the error clears
            client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "no-such-namespace"}}
            )
            eventually(elector.is_leader, 5, message="leading once the namespace exists")
            assert elector.last_error is None
            assert any(e["event"] == "lease requests succeed again" for e in logs)
            # renewals that fail: warnings with the error, not info lines without it
            apiserver.inject_failure("update", "leases.coordination.k8s.io", 500, count=None)
            try:
                renew = eventually(
                    lambda: [e for e in logs if e["event"] == "failed to renew lease"],
                    5,
                    message="renew failure",
                )
                assert renew[0]["log_level"] == "warning" and "500" in (renew[0]["error"] or "")
            finally:
                apiserver.clear_failures()
        finally:
            stop.set()
            thread.join(5)
