"""Event TTL controller (Gardener's pkg/controllermanager/controller/event).

Unit tests run the Reconciler against the test API server with a FakeClock (TTL 1h, as Gardener's unit
tests). Integration tests run the controller in a Manager whose clock is a FakeClock (TTL 30m, as
Gardener's integration test), so "an hour later" is one ``step()``; one test uses the real clock, a TTL
of 2 s and ``gcm.cmd.app.build_manager``. Events are written through both ``core/v1`` and
``events.k8s.io/v1``. The last section checks the controller's metrics (expired Events and their delay).
"""

from __future__ import annotations

import copy
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

import gcm.cmd.app
import gcm.controllers.add
from framework.client import Client, Conflict, NotFound
from framework.clock import FakeClock
from framework.manager import Manager
from framework.reconcile import Request, Result
from framework.testing import consistently, eventually
from gcm.config import EventControllerConfiguration, default_config
from gcm.controllers.event import (
    CREATE_ONLY,
    EVENT_CACHE_OPTIONS,
    Reconciler,
    add_to_manager,
    is_shoot_event,
    reference_time,
    slim_event,
)
from gcm.controllers.event.metrics import EXPIRY_DELAY_BUCKETS, EventTTLMetrics
from gcm.controllers.event.reconciler import ZERO_TIME

HOUR = 3600.0
EV = "events.k8s.io/v1"
NS = "default"
GARDEN = "core.gardener.cloud/v1beta1"

SHOOT = {"apiVersion": GARDEN, "kind": "Shoot", "name": "s", "namespace": NS}
PROJECT = {"apiVersion": GARDEN, "kind": "Project", "name": "p"}
SEED = {"apiVersion": GARDEN, "kind": "Seed", "name": "seed"}
OTHER_SHOOT = {"apiVersion": "example.com/v1", "kind": "Shoot", "name": "s", "namespace": NS}
SECRET = {"apiVersion": "v1", "kind": "Secret", "name": "sec", "namespace": NS}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "name": NS}
DEV_SHOOT = {**SHOOT, "namespace": "garden-dev"}
DEV_CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "namespace": "garden-dev"}


# --- helpers ------------------------------------------------------------------------------------------


def micro(t: datetime) -> str:
    """MicroTime (eventTime, series.lastObservedTime)."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seconds(t: datetime) -> str:
    """Time (core/v1 firstTimestamp/lastTimestamp)."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def new_event(
    client: Client,
    name: str,
    event_time: datetime,
    regarding: dict | None = None,
    series_time: datetime | None = None,
    namespace: str = NS,
) -> dict:
    """An Event written through events.k8s.io/v1."""
    body: dict[str, Any] = {
        "apiVersion": EV,
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "eventTime": micro(event_time),
        "reason": "Test",
        "note": "note",
        "type": "Normal",
        "action": "Testing",
        "reportingController": "gardener.cloud/test",
        "reportingInstance": "test-1",
    }
    if regarding is not None:
        body["regarding"] = regarding
    if series_time is not None:
        body["series"] = {"count": 2, "lastObservedTime": micro(series_time)}
    return client.create(body)


def core_event(
    client: Client,
    name: str,
    last: datetime | None,
    involved: dict | None = None,
    first: datetime | None = None,
    count: int | None = None,
    namespace: str = NS,
) -> dict:
    """An Event written through the legacy core/v1 API (no eventTime)."""
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "reason": "Test",
        "message": "message",
        "type": "Normal",
        "source": {"component": "test"},
    }
    if involved is not None:
        body["involvedObject"] = involved
    if last is not None:
        body["lastTimestamp"] = seconds(last)
    if first is not None:
        body["firstTimestamp"] = seconds(first)
    if count is not None:
        body["count"] = count
    return client.create(body)


def exists(client: Client, name: str, namespace: str = NS) -> bool:
    try:
        client.get(EV, "Event", name, namespace)
    except NotFound:
        return False
    return True


def names(client: Client) -> set[str]:
    return {e["metadata"]["name"] for e in client.list(EV, "Event")["items"]}


@pytest.fixture
def client(apiserver) -> Client:
    return Client.from_kubeconfig(apiserver.kubeconfig, qps=0)


@pytest.fixture
def clock() -> FakeClock:
    # Whole seconds: legacy timestamps have second precision, so "now" round-trips exactly.
    return FakeClock(start=datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def reconciler(client, clock) -> Reconciler:
    return Reconciler(client, clock, HOUR)


def req(name: str, namespace: str = NS) -> Request:
    return Request(name, namespace)


# --- §H unit scenarios (77-83) and the spec's example table ----------------------------------------------


def test_77_event_gone_before_reconcile(reconciler):
    assert reconciler.reconcile(req("missing")) is None


@pytest.mark.parametrize("api", ["events.k8s.io", "core"])
def test_78_shoot_event_is_kept_forever(api, client, clock, reconciler):
    now = clock.now()
    if api == "core":
        core_event(client, "shoot", last=now - timedelta(hours=5), involved=SHOOT)
    else:
        new_event(client, "shoot", now - timedelta(hours=5), regarding=SHOOT)
    assert reconciler.reconcile(req("shoot")) is None
    clock.step(1000 * HOUR)
    assert reconciler.reconcile(req("shoot")) is None
    assert exists(client, "shoot")


def test_79_project_event_requeued_exactly_ttl_then_deleted(client, clock, reconciler):
    new_event(client, "project", clock.now(), regarding=PROJECT)
    assert reconciler.reconcile(req("project")) == Result(requeue_after=HOUR)
    assert exists(client, "project")
    clock.step(HOUR - 1)
    assert reconciler.reconcile(req("project")) == Result(requeue_after=1.0)
    clock.step(1)
    assert reconciler.reconcile(req("project")) is None
    assert not exists(client, "project")


def test_80_series_last_observed_time_wins(client, clock, reconciler):
    now = clock.now()
    new_event(client, "series", now - timedelta(hours=2), regarding=PROJECT, series_time=now)
    assert reconciler.reconcile(req("series")) == Result(requeue_after=HOUR)
    assert exists(client, "series")
    clock.step(HOUR)
    assert reconciler.reconcile(req("series")) is None
    assert not exists(client, "series")


@pytest.mark.parametrize("regarding", [None, {}], ids=["absent", "empty"])
def test_81_event_without_regarding(regarding, client, clock, reconciler):
    new_event(client, "noref", clock.now(), regarding=regarding)
    assert reconciler.reconcile(req("noref")) == Result(requeue_after=HOUR)
    clock.step(HOUR)
    assert reconciler.reconcile(req("noref")) is None
    assert not exists(client, "noref")


def test_82_core_object_event(client, clock, reconciler):
    new_event(client, "ns", clock.now(), regarding=NAMESPACE)
    assert reconciler.reconcile(req("ns")) == Result(requeue_after=HOUR)
    clock.step(HOUR)
    assert reconciler.reconcile(req("ns")) is None
    assert not exists(client, "ns")


def test_83_legacy_timestamps_only(client, clock, reconciler):
    now = clock.now()
    core_event(client, "legacy", last=now, first=now - timedelta(hours=2), count=2, involved=NAMESPACE)
    ev = client.get(EV, "Event", "legacy", NS)
    # events.k8s.io/v1 serves eventTime as null when unset (a non-pointer MicroTime without omitempty).
    assert ev.get("eventTime") is None and ev["deprecatedLastTimestamp"] == seconds(now)
    assert reconciler.reconcile(req("legacy")) == Result(requeue_after=HOUR)
    clock.step(HOUR)
    assert reconciler.reconcile(req("legacy")) is None
    assert not exists(client, "legacy")


def test_expired_events_are_deleted_at_once(client, clock, reconciler):
    """Spec §5: a Namespace event 1h30m old is deleted now; an event without any timestamp at once."""
    now = clock.now()
    new_event(client, "old", now - timedelta(minutes=90), regarding=NAMESPACE)
    core_event(client, "no-time", last=None, involved=SECRET)
    for name in ("old", "no-time"):
        assert reconciler.reconcile(req(name)) is None
        assert not exists(client, name)


@pytest.mark.parametrize(
    "regarding",
    [
        PROJECT,
        SEED,
        OTHER_SHOOT,
        {"apiVersion": "core.gardener.cloud", "kind": "Shoot"},  # a bare version: core group
        {"apiVersion": "core.gardener.cloud/v1beta1/x", "kind": "Shoot"},  # parse error
        {"apiVersion": GARDEN, "kind": "shoot"},
        {"kind": "Shoot"},
    ],
    ids=["project", "seed", "other-group-shoot", "no-slash", "two-slashes", "lowercase", "no-apiversion"],
)
@pytest.mark.parametrize("api", ["events.k8s.io", "core"])
def test_non_shoot_events_are_deleted(api, regarding, client, clock, reconciler):
    old = clock.now() - timedelta(minutes=61)
    if api == "core":
        core_event(client, "ev", last=old, involved={**regarding, "name": "x"})
    else:
        new_event(client, "ev", old, regarding={**regarding, "name": "x"})
    assert reconciler.reconcile(req("ev")) is None
    assert not exists(client, "ev")


def test_shoot_event_of_any_gardener_version_is_kept(client, clock, reconciler):
    new_event(
        client,
        "v1",
        clock.now() - timedelta(hours=3),
        regarding={**SHOOT, "apiVersion": "core.gardener.cloud/v1"},
    )
    assert reconciler.reconcile(req("v1")) is None
    assert exists(client, "v1")


class StaleReader:
    """Reads a snapshot taken earlier (like a cache that has not seen a change yet); deletes live."""

    def __init__(self, live: Client, snapshot: dict) -> None:
        self.live, self.snapshot = live, snapshot

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict:
        return copy.deepcopy(self.snapshot)

    def delete(self, *args: Any, **kwargs: Any) -> dict:
        return self.live.delete(*args, **kwargs)


def test_delete_of_an_event_deleted_meanwhile_is_success(client, clock):
    """The cache still holds an event someone else deleted: NotFound on DELETE is success."""
    ev = new_event(client, "gone", clock.now() - timedelta(hours=2), regarding=SECRET)
    client.delete(EV, "Event", "gone", NS)
    assert Reconciler(StaleReader(client, ev), clock, HOUR).reconcile(req("gone")) is None


@pytest.mark.parametrize("cached", ["full", "slim"])
def test_delete_never_removes_a_recreated_event(cached, client, clock):
    """An expired event recreated under the same name is not deleted on the strength of the old one
    (the slim cache keeps no uid: the resourceVersion precondition suffices)."""
    ev = new_event(client, "again", clock.now() - timedelta(hours=2), regarding=SECRET)
    if cached == "slim":
        ev = slim_event(ev)
        assert "uid" not in ev["metadata"]
    client.delete(EV, "Event", "again", NS)
    new_event(client, "again", clock.now(), regarding=SECRET)
    with pytest.raises(Conflict):  # retried by the controller, which then reads the new event
        Reconciler(StaleReader(client, ev), clock, HOUR).reconcile(req("again"))
    assert exists(client, "again")


def test_updated_series_is_not_deleted_on_a_stale_read(client, clock):
    """A series bumped after the cache was read: the delete is refused (Conflict), the event stays."""
    now = clock.now()
    ev = new_event(client, "bumped", now - timedelta(hours=2), regarding=SECRET)
    live = client.get(EV, "Event", "bumped", NS)
    live["series"] = {"count": 2, "lastObservedTime": micro(now)}
    client.update(live)
    with pytest.raises(Conflict):
        Reconciler(StaleReader(client, ev), clock, HOUR).reconcile(req("bumped"))
    assert Reconciler(client, clock, HOUR).reconcile(req("bumped")) == Result(requeue_after=HOUR)


# --- pure functions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("regarding", "shoot"),
    [
        ({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot"}, True),
        ({"apiVersion": "core.gardener.cloud/v1", "kind": "Shoot"}, True),
        ({"apiVersion": "core.gardener.cloud/", "kind": "Shoot"}, True),
        ({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project"}, False),
        ({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed"}, False),
        ({"apiVersion": "example.com/v1", "kind": "Shoot"}, False),
        ({"apiVersion": "core.gardener.cloud", "kind": "Shoot"}, False),
        ({"apiVersion": "core.gardener.cloud/v1beta1/x", "kind": "Shoot"}, False),
        ({"apiVersion": "", "kind": "Shoot"}, False),
        ({"kind": "Shoot"}, False),
        ({"apiVersion": "core.gardener.cloud/v1beta1"}, False),
        ({}, False),
        (None, False),
    ],
)
def test_is_shoot_event(regarding, shoot):
    event = {} if regarding is None else {"regarding": regarding}
    assert is_shoot_event(event) is shoot


T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"eventTime": "2026-01-01T10:00:00.000000Z", "series": {"lastObservedTime": micro(T0)}}, T0),
        ({"eventTime": micro(T0), "series": {"count": 2}}, T0),
        ({"eventTime": micro(T0), "series": {"lastObservedTime": "0001-01-01T00:00:00.000000Z"}}, T0),
        ({"eventTime": micro(T0), "deprecatedLastTimestamp": "2020-01-01T00:00:00Z"}, T0),
        ({"eventTime": None, "deprecatedLastTimestamp": seconds(T0)}, T0),
        ({"deprecatedFirstTimestamp": "2020-01-01T00:00:00Z", "deprecatedLastTimestamp": seconds(T0)}, T0),
        ({"eventTime": "2026-01-01T12:00:00.250000Z"}, T0 + timedelta(milliseconds=250)),
        ({"deprecatedFirstTimestamp": seconds(T0)}, ZERO_TIME),
        ({}, ZERO_TIME),
    ],
)
def test_reference_time(fields, expected):
    assert reference_time(fields) == expected


def test_create_only_predicate():
    ev = {"metadata": {"name": "e"}}
    assert CREATE_ONLY.create(ev)
    assert not CREATE_ONLY.update(ev, ev)
    assert not CREATE_ONLY.delete(ev)
    assert not CREATE_ONLY.generic(ev)


FULL_EVENT = {
    "apiVersion": EV,
    "kind": "Event",
    "metadata": {
        "name": "shoot--dev--x.17e3c1a2b3c4d5e6",
        "namespace": "garden-dev",
        "uid": "5b0c9f2e-0d6c-4c0e-9d4e-1f2a3b4c5d6e",
        "resourceVersion": "123456",
        "creationTimestamp": "2026-01-01T10:00:00Z",
        "managedFields": [{"manager": "gardenlet", "operation": "Update", "fieldsV1": {"f:note": {}}}],
    },
    "eventTime": "2026-01-01T10:00:00.000000Z",
    "series": {"count": 3, "lastObservedTime": "2026-01-01T11:30:00.000000Z"},
    "reportingController": "gardener.cloud/gardenlet",
    "reportingInstance": "gardenlet-abc",
    "action": "Reconcile",
    "reason": "Reconciled",
    "regarding": {"apiVersion": GARDEN, "kind": "Project", "name": "dev", "uid": "u", "resourceVersion": "1"},
    "note": "x" * 500,
    "type": "Normal",
    "deprecatedFirstTimestamp": "2026-01-01T09:00:00Z",
    "deprecatedLastTimestamp": "2026-01-01T09:30:00Z",
    "deprecatedCount": 3,
}


def test_slim_event_keeps_only_what_the_reconciler_reads():
    slim = slim_event(copy.deepcopy(FULL_EVENT))
    assert slim == {
        "apiVersion": EV,
        "kind": "Event",
        "metadata": {
            "name": "shoot--dev--x.17e3c1a2b3c4d5e6",
            "namespace": "garden-dev",
            "resourceVersion": "123456",
        },
        "regarding": {"apiVersion": GARDEN, "kind": "Project"},
        "series": {"lastObservedTime": "2026-01-01T11:30:00.000000Z"},
    }
    # one shared regarding dict per (apiVersion, kind); interned namespace
    other = slim_event({**copy.deepcopy(FULL_EVENT), "metadata": {"name": "b", "namespace": "garden-dev"}})
    assert other["regarding"] is slim["regarding"]
    assert other["metadata"]["namespace"] is slim["metadata"]["namespace"]
    shoot = slim_event({**copy.deepcopy(FULL_EVENT), "regarding": {**SHOOT}})
    assert set(shoot) == {"apiVersion", "kind", "metadata", "regarding"}  # no timestamp: never deleted


VARIANTS = [
    {},
    {"series": None},
    {"series": {"count": 2}},
    {"series": {"count": 2}, "eventTime": None},
    {"series": None, "eventTime": None},
    {"series": None, "eventTime": None, "deprecatedLastTimestamp": None},
    {"regarding": {"apiVersion": GARDEN, "kind": "Shoot", "name": "s"}},
    {"regarding": {"apiVersion": "example.com/v1", "kind": "Shoot"}},
    {"regarding": {}},
    {"regarding": None},
    # The zero time written out, an empty string, and unreadable values: the slim event keeps what
    # gives the same reference time or the same error.
    {"series": {"count": 2, "lastObservedTime": "0001-01-01T00:00:00Z"}},
    {"series": {"count": 2, "lastObservedTime": ""}, "eventTime": "0001-01-01T00:00:00.000000Z"},
    {"series": None, "eventTime": "2026-13-45T99:00:00Z"},
    {"series": None, "eventTime": "yesterday"},
    {"series": {"count": 2, "lastObservedTime": 17}},
    {"series": None, "eventTime": None, "deprecatedLastTimestamp": "0999-12-31T23:59:59Z"},
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_slim_event_keeps_the_reconcilers_decision(variant):
    full = {**copy.deepcopy(FULL_EVENT), **variant}
    full = {k: v for k, v in full.items() if v is not None}
    slim = slim_event(copy.deepcopy(full))
    assert is_shoot_event(slim) == is_shoot_event(full)
    if is_shoot_event(full):
        return
    try:
        expected: object = reference_time(full)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)) as got:
            reference_time(slim)
        assert str(got.value) == str(e)
    else:
        assert reference_time(slim) == expected


# --- the controller in a manager (FakeClock) -----------------------------------------------------------


def event_config(ttl: float, workers: int = 2) -> Any:
    cfg = default_config()
    cfg.controllers.event = EventControllerConfiguration(concurrent_syncs=workers, ttl_non_shoot_events=ttl)
    return cfg


class Gcm:
    """A manager running only the event controller, as gcm builds it, on ``clock``."""

    def __init__(self, apiserver, clock, ttl: float) -> None:
        self.mgr = Manager(
            Client.from_kubeconfig(apiserver.kubeconfig, qps=0),
            cache_options=EVENT_CACHE_OPTIONS,
            clock=clock,
        )
        self.controller = add_to_manager(self.mgr, event_config(ttl))
        assert self.controller is not None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="gcm", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.mgr.start()
        except BaseException as e:  # pragma: no cover - reported by stop()
            self.error = e

    def count(self, result: str) -> float:
        value = self.mgr.registry.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": "event", "result": result}
        )
        return value or 0.0

    def errors(self) -> float:
        value = self.mgr.registry.get_sample_value(
            "controller_runtime_reconcile_errors_total", {"controller": "event"}
        )
        return value or 0.0

    def wait_parked(self, n: int) -> None:
        """Until ``n`` reconciles ended in a requeue-after (so stepping the clock fires them)."""
        eventually(lambda: self.count("requeue_after") >= n, message=f"{n} events requeued")
        assert self.count("requeue_after") == n

    def stop(self) -> None:
        self.mgr.stop()
        self.thread.join(15)
        assert not self.thread.is_alive()
        assert self.error is None


def observe(client: Client, expected: set[str], window: float = 0.3) -> None:
    """``expected`` is exactly what exists, now and over a short observation window."""
    consistently(lambda: names(client) == expected, duration=window, message=f"exactly {sorted(expected)}")


def test_84_controller_expires_non_shoot_events_of_both_apis(apiserver, client, clock):
    """Scenario 84 (TTL 30m), events existing before gcm starts and created while it runs, Gardener
    kinds other than Shoot and other groups' Shoots, series and legacy timestamps, an event deleted by
    someone else while it waits."""
    ttl = 1800.0
    now = clock.now()
    old = now - timedelta(minutes=45)
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-dev"}})
    kept = {"shoot-core-now", "shoot-core-old", "shoot-new-now", "shoot-new-old"}
    core_event(client, "shoot-core-now", last=now, involved=SHOOT)
    core_event(client, "shoot-core-old", last=old, involved=SHOOT)
    new_event(client, "shoot-new-now", now, regarding=SHOOT)
    new_event(client, "shoot-new-old", old, regarding=DEV_SHOOT, namespace="garden-dev")
    waiting = {"secret-core-now", "secret-new-now", "series", "deleted-by-someone"}
    core_event(client, "secret-core-now", last=now, first=old, count=3, involved=SECRET)
    new_event(client, "secret-new-now", now, regarding=DEV_CONFIGMAP, namespace="garden-dev")
    new_event(client, "series", now - timedelta(hours=2), regarding=SECRET, series_time=now)
    new_event(client, "deleted-by-someone", now, regarding=SECRET)
    core_event(client, "secret-core-old", last=old, involved=SECRET)
    new_event(client, "secret-new-old", old, regarding=SECRET)
    new_event(client, "project-old", old, regarding=PROJECT)
    new_event(client, "seed-old", old, regarding=SEED)
    new_event(client, "other-shoot-old", old, regarding=OTHER_SHOOT)

    gcm = Gcm(apiserver, clock, ttl)
    try:
        # Events older than gcm: the expired ones go at once, the others wait for their TTL.
        eventually(lambda: names(client) == kept | waiting, message="expired events deleted")
        gcm.wait_parked(len(waiting))

        # Created while gcm runs.
        new_event(client, "project-now", now, regarding=PROJECT)
        core_event(client, "legacy-now", last=now, involved=DEV_CONFIGMAP, namespace="garden-dev")
        core_event(client, "shoot-core-later", last=now, involved=SHOOT)
        new_event(client, "seed-expired", now - timedelta(hours=1), regarding=SEED)
        kept.add("shoot-core-later")
        waiting |= {"project-now", "legacy-now"}
        eventually(lambda: names(client) == kept | waiting, message="new expired event deleted")
        gcm.wait_parked(len(waiting))

        # Someone else deletes a waiting event.
        client.delete(EV, "Event", "deleted-by-someone", NS)
        waiting.discard("deleted-by-someone")

        clock.step(ttl - 60)
        observe(client, kept | waiting)  # within the TTL: all still there
        clock.step(60)
        eventually(lambda: names(client) == kept, message="waiting events deleted after the TTL")
        clock.step(1000 * HOUR)
        observe(client, kept)  # Shoot events are never deleted
        assert gcm.errors() == 0
        assert gcm.count("requeue_after") == 6  # no reconcile was repeated by an update
    finally:
        gcm.stop()


def test_the_event_cache_is_read_without_copies(apiserver, client, clock):
    """gcm's Event cache hands its reconciler the slim cached object itself (the reconciler only
    reads it): no JSON round trip per reconcile."""
    new_event(client, "waiting", clock.now(), regarding=SECRET)
    gcm = Gcm(apiserver, clock, 1800.0)
    try:
        gcm.wait_parked(1)
        first = gcm.mgr.client.get(EV, "Event", "waiting", NS)
        assert gcm.mgr.client.get(EV, "Event", "waiting", NS) is first
        assert set(first) == {"apiVersion", "kind", "metadata", "regarding", "eventTime"}  # slim
    finally:
        gcm.stop()


def test_restart_of_gcm_mid_way(apiserver, client, clock):
    """gcm stops while events wait for their TTL and starts again: the new start lists every event
    (old and created meanwhile) and expires each at its own time."""
    now = clock.now()
    new_event(client, "secret", now, regarding=SECRET)
    core_event(client, "shoot", last=now, involved=SHOOT)
    first = Gcm(apiserver, clock, HOUR)
    try:
        first.wait_parked(1)
    finally:
        first.stop()

    clock.step(600)  # gcm is down for 10 minutes
    later = clock.now()
    new_event(client, "project", later, regarding=PROJECT)
    core_event(client, "legacy", last=later, involved=NAMESPACE)
    new_event(client, "seed-expired", later - timedelta(hours=2), regarding=SEED)
    new_event(client, "shoot-new", later - timedelta(hours=2), regarding=SHOOT)
    new_event(client, "gone-meanwhile", later, regarding=SECRET)
    assert exists(client, "secret")

    second = Gcm(apiserver, clock, HOUR)
    try:
        eventually(lambda: not exists(client, "seed-expired"), message="expired event deleted after restart")
        second.wait_parked(4)
        client.delete(EV, "Event", "gone-meanwhile", NS)
        clock.step(HOUR - 600)  # the first event's TTL
        eventually(lambda: not exists(client, "secret"), message="event older than the restart deleted")
        observe(client, {"shoot", "shoot-new", "project", "legacy"})
        clock.step(600)
        eventually(lambda: names(client) == {"shoot", "shoot-new"}, message="events of the downtime deleted")
        assert second.errors() == 0
    finally:
        second.stop()


# --- gcm.cmd.app wiring and the real clock --------------------------------------------------------------


@pytest.fixture
def only_event_controller():
    """``build_manager`` adding the event controller only (the others are tested elsewhere), without the
    Project controllers' indexes (their kinds are not served here)."""
    return {"add_controllers": gcm.controllers.add.add_event_controller, "add_indexes": None}


def quiet(cfg: Any) -> Any:
    cfg.leader_election.leader_elect = False
    cfg.server.metrics = None
    cfg.server.health_probes = None
    cfg.server.webhooks = None
    cfg.server.https = None
    return cfg


def test_85_without_event_section_nothing_is_registered(apiserver, client, only_event_controller):
    cfg = quiet(default_config())
    assert cfg.controllers.event is None
    mgr = gcm.cmd.app.build_manager(cfg, client, **only_event_controller)
    # Only the API server connection check runs (on every replica); no controller.
    assert mgr._leader_runnables == []
    assert [type(r).__name__ for r in mgr._runnables] == ["APIServerConnection"]
    assert (EV, "Event") not in mgr.cache.options
    assert add_to_manager(mgr, cfg) is None
    new_event(client, "old", datetime.now(UTC) - timedelta(days=3), regarding=SECRET)
    thread = threading.Thread(target=mgr.start, daemon=True)
    thread.start()
    try:
        observe(client, {"old"})
    finally:
        mgr.stop()
        thread.join(15)


def test_build_manager_real_clock_short_ttl(apiserver, client, only_event_controller):
    """gcm.cmd.app.build_manager with ``controllers.event: {ttlNonShootEvents: 2s}``, on the real clock."""
    cfg = quiet(event_config(2.0))
    mgr = gcm.cmd.app.build_manager(cfg, client, **only_event_controller)
    assert mgr.cache.options[(EV, "Event")].transform is slim_event
    assert mgr.cache.informer(EV, "Event").resync_period == 0  # create-only: no periodic resync
    [controller] = mgr._leader_runnables
    assert controller.name == "event" and controller.max_concurrent_reconciles == 2
    now = datetime.now(UTC)
    new_event(client, "secret", now, regarding=SECRET)
    core_event(client, "shoot", last=now - timedelta(days=1), involved=SHOOT)
    new_event(client, "expired", now - timedelta(seconds=3), regarding=PROJECT)
    thread = threading.Thread(target=mgr.start, daemon=True)
    thread.start()
    try:
        eventually(lambda: names(client) == {"secret", "shoot"}, message="expired event deleted")
        started = time.monotonic()
        new_event(client, "later", datetime.now(UTC), regarding=NAMESPACE)
        eventually(lambda: names(client) == {"shoot"}, timeout=10, message="events deleted after 2 s")
        assert time.monotonic() - started >= 1.5
        # What the informer holds is the slim form.
        cached = mgr.client.get(EV, "Event", "shoot", NS)
        assert set(cached) == {"apiVersion", "kind", "metadata", "regarding"}
    finally:
        mgr.stop()
        thread.join(15)


# --- metrics: gcm_events_expired_total, gcm_event_expiry_delay_seconds ---------------------------------
# Events the controller deleted, and how long after their TTL; kept Events, Events not yet due and
# Events gone before the reconcile are not counted.


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def counted(client, clock, registry) -> Reconciler:
    return Reconciler(client, clock, HOUR, metrics=EventTTLMetrics.create(registry))


def expired(registry: CollectorRegistry) -> float | None:
    return registry.get_sample_value("gcm_events_expired_total")


def bucket(registry: CollectorRegistry, le: float) -> float | None:
    return registry.get_sample_value("gcm_event_expiry_delay_seconds_bucket", {"le": str(le)})


def test_metrics_both_series_exist_at_zero_before_any_delete(registry, counted):
    assert expired(registry) == 0.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_count") == 0.0
    assert [bucket(registry, le) for le in EXPIRY_DELAY_BUCKETS] == [0.0] * len(EXPIRY_DELAY_BUCKETS)


def test_metrics_a_delete_counts_once_with_its_delay_past_the_ttl(client, clock, registry, counted):
    new_event(client, "late", clock.now() - timedelta(seconds=HOUR + 90), regarding=PROJECT)
    assert counted.reconcile(Request("late", NS)) is None
    assert expired(registry) == 1.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_sum") == pytest.approx(90.0, abs=1.0)
    assert bucket(registry, 60.0) == 0.0
    assert bucket(registry, 120.0) == 1.0


def test_metrics_an_event_deleted_on_time_has_no_delay(client, clock, registry, counted):
    new_event(client, "due", clock.now(), regarding=PROJECT)
    assert counted.reconcile(Request("due", NS)) == Result(requeue_after=HOUR)
    assert expired(registry) == 0.0  # not due yet: nothing counted
    clock.step(HOUR)
    assert counted.reconcile(Request("due", NS)) is None
    assert expired(registry) == 1.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_sum") == 0.0
    assert bucket(registry, 1.0) == 1.0


def test_metrics_kept_and_missing_events_are_not_counted(client, clock, registry, counted):
    new_event(client, "shoot", clock.now() - timedelta(hours=5), regarding=SHOOT)
    assert counted.reconcile(Request("shoot", NS)) is None  # a Shoot event is kept
    assert counted.reconcile(Request("missing", NS)) is None  # gone before the reconcile
    assert expired(registry) == 0.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_count") == 0.0


def test_metrics_register_once_per_registry(registry):
    EventTTLMetrics.create(registry)
    with pytest.raises(ValueError):
        EventTTLMetrics.create(registry)
    assert registry.get_sample_value("gcm_events_expired_total") == 0.0  # the first set stays


def test_metrics_on_the_manager_when_the_controller_is_on(client):
    cfg = default_config()
    cfg.controllers.event = EventControllerConfiguration(ttl_non_shoot_events=HOUR)
    cfg.leader_election = None
    cfg.server.metrics = None
    cfg.server.health_probes = None
    on = gcm.cmd.app.build_manager(cfg, client)
    assert on.registry.get_sample_value("gcm_events_expired_total") == 0.0
    cfg.controllers.event = None
    off = gcm.cmd.app.build_manager(cfg, client)
    assert off.registry.get_sample_value("gcm_events_expired_total") is None
