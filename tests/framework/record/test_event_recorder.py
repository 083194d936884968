"""framework.record: EventRecorder against the test API server (events.k8s.io/v1 and core/v1)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from prometheus_client import CollectorRegistry

from framework.client import Client
from framework.clock import FakeClock, RealClock
from framework.record import (
    CORE_V1,
    EVENTS_V1,
    NORMAL,
    WARNING,
    EventBroadcaster,
    object_reference,
)
from framework.record._format import event_name
from framework.testing import APIServer

START = datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture
def client(apiserver) -> Iterator[Client]:
    with Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as c:
        yield c


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def make_broadcaster(client, clock, registry):
    made: list[EventBroadcaster] = []

    def make(**kwargs) -> EventBroadcaster:
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("registry", registry)
        kwargs.setdefault("hostname", "testhost")
        b = EventBroadcaster(client, **kwargs)
        made.append(b)
        return b

    yield make
    for b in made:
        b.shutdown(timeout=2)


def configmap(client: Client, name: str = "settings", namespace: str = "default") -> dict:
    return client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {"a": "1"},
        }
    )


def events(client: Client, namespace: str = "default", api: str = EVENTS_V1) -> list[dict]:
    items = client.list(api, "Event", namespace=namespace)["items"]
    return sorted(items, key=lambda e: e["metadata"]["name"])


def dropped(registry: CollectorRegistry, reason: str) -> float:
    return registry.get_sample_value("events_dropped_total", {"reason": reason}) or 0.0


def test_namespaced_object_event_fields_through_both_apis(client, make_broadcaster, clock):
    cm = configmap(client)
    owner = configmap(client, "owner")
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    assert rec.instance == "config-controller-testhost"

    assert rec.eventf(cm, NORMAL, "Synced", "Sync", "synced %d keys from %s", 3, "git", related=owner)
    assert b.flush(5)
    assert b.api_version == EVENTS_V1  # discovered

    [ev] = events(client)
    name = ev["metadata"]["name"]
    assert name.startswith("settings.")
    assert ev["regarding"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "settings",
        "namespace": "default",
        "uid": cm["metadata"]["uid"],
        "resourceVersion": cm["metadata"]["resourceVersion"],
    }
    assert ev["related"]["name"] == "owner" and ev["related"]["uid"] == owner["metadata"]["uid"]
    assert ev["note"] == "synced 3 keys from git"
    assert (ev["type"], ev["reason"], ev["action"]) == ("Normal", "Synced", "Sync")
    assert ev["reportingController"] == "config-controller"
    assert ev["reportingInstance"] == "config-controller-testhost"
    assert ev["eventTime"] == "2024-05-01T10:00:00.123456Z"
    assert "series" not in ev and "deprecatedCount" not in ev

    core = client.get("v1", "Event", name, namespace="default")
    assert core["involvedObject"] == ev["regarding"]
    assert core["message"] == "synced 3 keys from git"
    assert core["reportingComponent"] == "config-controller"
    assert core["reportingInstance"] == "config-controller-testhost"
    assert core["eventTime"] == ev["eventTime"] and core["action"] == "Sync"
    assert core["metadata"]["uid"] == ev["metadata"]["uid"]
    assert b.stats()["created"] == 1


def test_cluster_scoped_object_event_lands_in_default(client, make_broadcaster, clock):
    ns = client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    b = make_broadcaster()
    rec = b.new_recorder("gardener.cloud/namespace-controller", instance="replica-1")
    clock.set(datetime(2024, 5, 1, 11, 0, 0, tzinfo=UTC))
    rec.eventf(ns, WARNING, "Stuck", "Delete", "namespace has %d finalizers", 2)
    assert b.flush(5)

    [ev] = events(client, "default")
    assert ev["metadata"]["namespace"] == "default"
    assert ev["regarding"]["kind"] == "Namespace" and ev["regarding"]["name"] == "team-a"
    assert "namespace" not in ev["regarding"]
    assert ev["regarding"]["uid"] == ns["metadata"]["uid"]
    assert ev["type"] == "Warning" and ev["reportingInstance"] == "replica-1"
    assert ev["reportingController"] == "gardener.cloud/namespace-controller"
    assert ev["eventTime"] == "2024-05-01T11:00:00.000000Z"  # six fraction digits even at .0
    [core] = events(client, "default", api=CORE_V1)
    assert core["metadata"]["name"] == ev["metadata"]["name"]
    assert core["involvedObject"]["name"] == "team-a" and core["message"] == "namespace has 2 finalizers"
    assert events(client, "team-a") == []


def test_repeats_fold_into_one_series(client, make_broadcaster, clock):
    cm = configmap(client)
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    rec.eventf(cm, WARNING, "Failed", "Sync", "boom")
    assert b.flush(5)
    [first] = events(client)

    for count, step in ((2, 10.0), (3, 200.0), (4, 359.0)):
        clock.step(step)
        cm = client.patch("v1", "ConfigMap", "settings", {"data": {"b": str(count)}}, namespace="default")
        rec.eventf(cm, WARNING, "Failed", "Sync", "boom")  # a new resourceVersion still folds
        assert b.flush(5)
        [ev] = events(client)
        assert ev["metadata"]["name"] == first["metadata"]["name"]
        assert ev["series"]["count"] == count
        assert ev["series"]["lastObservedTime"] == f"{clock.now():%Y-%m-%dT%H:%M:%S}.123456Z"
        assert MICRO.match(ev["series"]["lastObservedTime"])
        assert ev["eventTime"] == first["eventTime"]

    core = client.get("v1", "Event", first["metadata"]["name"], namespace="default")
    assert core["series"]["count"] == 4

    rec.eventf(cm, WARNING, "Failed", "Sync", "another note")  # a different note is another Event
    rec.eventf(cm, NORMAL, "Failed", "Sync", "boom")  # so is another type
    assert b.flush(5)
    assert len(events(client)) == 3
    stats = b.stats()
    assert (stats["created"], stats["patched"]) == (3, 3)


def test_series_ends_after_six_minutes_of_quiet(client, make_broadcaster, clock):
    cm = configmap(client)
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    clock.step(60)
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    [old] = events(client)
    assert old["series"]["count"] == 2

    clock.step(361)  # six minutes after the last repeat: the series is over
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    evs = events(client)
    assert len(evs) == 2
    [new] = [e for e in evs if e["metadata"]["name"] != old["metadata"]["name"]]
    assert "series" not in new
    assert new["eventTime"] == f"{clock.now():%Y-%m-%dT%H:%M:%S}.123456Z"

    clock.step(1)
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    assert client.get(EVENTS_V1, "Event", new["metadata"]["name"], "default")["series"]["count"] == 2
    assert client.get(EVENTS_V1, "Event", old["metadata"]["name"], "default")["series"]["count"] == 2


def test_deleted_series_event_is_recreated(client, make_broadcaster, clock):
    cm = configmap(client)
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    [ev] = events(client)
    client.delete(EVENTS_V1, "Event", ev["metadata"]["name"], "default")

    clock.step(5)
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")  # the series patch gets NotFound
    assert b.flush(5)
    [again] = events(client)
    assert again["metadata"]["name"] != ev["metadata"]["name"]
    assert again["series"]["count"] == 2 and again["eventTime"] == ev["eventTime"]
    assert b.stats()["created"] == 2 and b.stats()["dropped"]["write_failed"] == 0


def test_full_queue_drops_without_blocking_and_retries_later(
    apiserver, client, make_broadcaster, clock, registry
):
    cm = configmap(client)
    b = make_broadcaster(queue_size=2)
    rec = b.new_recorder("config-controller")
    apiserver.inject_failure("create", "events.events.k8s.io", 500, count=None)

    rec.eventf(cm, NORMAL, "Synced", "Sync", "event 0")
    # The worker took event 0, failed, and now waits out its backoff on the fake clock.
    assert clock.wait_for_waiters(1, timeout=5)
    assert b.stats()["queued"] == 0

    slowest = 0.0
    results = []
    for i in range(1, 11):
        t0 = time.perf_counter()
        results.append(rec.eventf(cm, NORMAL, "Synced", "Sync", "event %d", i))
        slowest = max(slowest, time.perf_counter() - t0)
    assert slowest < 0.05
    assert results == [True, True] + [False] * 8
    assert dropped(registry, "queue_full") == 8
    assert b.stats()["dropped"]["queue_full"] == 8

    apiserver.clear_failures()
    clock.step(0.5)  # backoff over: the retry succeeds and the two queued events follow
    assert b.flush(5)
    notes = sorted(e["note"] for e in events(client))
    assert notes == ["event 0", "event 1", "event 2"]
    assert registry.get_sample_value("events_written_total", {"verb": "create"}) == 3


def test_eventf_returns_fast_while_the_server_fails(apiserver, client, make_broadcaster, registry):
    cm = configmap(client)
    b = make_broadcaster(clock=RealClock(), max_attempts=2, retry_initial=0.01)
    rec = b.new_recorder("config-controller")
    apiserver.inject_failure("create", "events.events.k8s.io", 503, count=None)

    t0 = time.perf_counter()
    for i in range(5):
        assert rec.eventf(cm, WARNING, "Failed", "Sync", "failure %d", i)
    assert time.perf_counter() - t0 < 0.1
    assert b.flush(5)
    assert dropped(registry, "write_failed") == 5
    assert events(client) == []

    apiserver.clear_failures()
    apiserver.inject_failure("create", "events.events.k8s.io", 403, count=1)
    rec.eventf(cm, WARNING, "Failed", "Sync", "forbidden")  # a refusal is not retried
    assert b.flush(5)
    assert dropped(registry, "write_failed") == 6
    rec.eventf(cm, WARNING, "Failed", "Sync", "fine again")
    assert b.flush(5)
    assert [e["note"] for e in events(client)] == ["fine again"]


def test_shutdown_drains_and_is_bounded(apiserver, client, make_broadcaster):
    cm = configmap(client)
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    for i in range(5):
        rec.eventf(cm, NORMAL, "Synced", "Sync", "n%d", i)
    assert b.shutdown(timeout=5) is True
    assert len(events(client)) == 5
    assert rec.eventf(cm, NORMAL, "Synced", "Sync", "late") is False
    assert b.stats()["dropped"]["shutdown"] == 1

    # A worker stuck in a long backoff: shutdown gives up after its timeout.
    stuck = make_broadcaster(clock=RealClock(), retry_initial=30.0)
    rec = stuck.new_recorder("config-controller")
    apiserver.inject_failure("create", "events.events.k8s.io", 500, count=None)
    rec.eventf(cm, NORMAL, "Synced", "Sync", "never")
    rec.eventf(cm, NORMAL, "Synced", "Sync", "queued")
    t0 = time.perf_counter()
    assert stuck.shutdown(timeout=0.3) is False
    assert time.perf_counter() - t0 < 1.0
    assert stuck.flush(2)
    assert stuck.stats()["dropped"]["shutdown"] == 2


def test_core_v1_when_forced(client, make_broadcaster, clock):
    cm = configmap(client)
    b = make_broadcaster(api=CORE_V1)
    rec = b.new_recorder("config-controller")
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    [core] = events(client, api=CORE_V1)
    assert core["involvedObject"]["kind"] == "ConfigMap" and core["involvedObject"]["name"] == "settings"
    assert core["involvedObject"]["uid"] == cm["metadata"]["uid"]
    assert core["message"] == "ok" and core["reason"] == "Synced" and core["type"] == "Normal"
    assert core["source"] == {"component": "config-controller"}
    assert core["firstTimestamp"] == core["lastTimestamp"] == "2024-05-01T10:00:00Z"
    assert core["count"] == 1
    assert core["eventTime"] == "2024-05-01T10:00:00.123456Z"
    assert core["reportingComponent"] == "config-controller"
    assert core["reportingInstance"] == "config-controller-testhost"

    clock.step(30)
    rec.eventf(cm, NORMAL, "Synced", "Sync", "ok")
    assert b.flush(5)
    [core] = events(client, api=CORE_V1)
    assert core["count"] == 2 and core["lastTimestamp"] == "2024-05-01T10:00:30Z"
    assert core["series"] == {"count": 2, "lastObservedTime": "2024-05-01T10:00:30.123456Z"}
    [ev] = events(client)  # and through events.k8s.io/v1
    assert ev["deprecatedCount"] == 2 and ev["deprecatedSource"] == {"component": "config-controller"}
    assert ev["series"]["count"] == 2


def test_core_v1_when_discovery_lacks_events_group():
    """A cluster without events.k8s.io: discovery says so and the recorder writes core/v1 Events."""
    with APIServer(disabled_groups=("events.k8s.io",)) as server:
        client = Client.from_kubeconfig(server.kubeconfig)
        ns = client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
        b = EventBroadcaster(client)
        try:
            assert b.api_version is None
            rec = b.new_recorder("ns-controller")
            rec.eventf(ns, NORMAL, "Created", "Create", "hello")
            assert b.flush(5)
            assert b.api_version == CORE_V1
            [core] = events(client, "default", api=CORE_V1)
            assert core["source"]["component"] == "ns-controller" and core["count"] == 1
            assert core["involvedObject"]["name"] == "team-b"
        finally:
            b.shutdown(5)


def test_note_is_truncated_to_1024_bytes(client, make_broadcaster):
    cm = configmap(client)
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    rec.eventf(cm, NORMAL, "Long", "Sync", "x" * 3000)
    rec.eventf(cm, NORMAL, "Wide", "Sync", "%s", "é" * 1000)  # 2 bytes each
    assert b.flush(5)
    notes = {e["reason"]: e["note"] for e in events(client)}
    assert notes["Long"] == "x" * 1024
    assert notes["Wide"] == "é" * 512


def test_invalid_calls_are_dropped_not_raised(make_broadcaster, registry):
    b = make_broadcaster()
    rec = b.new_recorder("config-controller")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}}
    assert rec.eventf(cm, "Info", "R", "A", "n") is False
    assert rec.eventf({"kind": "ConfigMap"}, NORMAL, "R", "A", "n") is False
    assert rec.eventf(cm, NORMAL, "R", "A", "%d apples", "three") is True  # bad format args are kept
    assert dropped(registry, "invalid") == 2
    with pytest.raises(
        ValueError, match="invalid controller name 'not a valid name': name part must consist"
    ):
        b.new_recorder("not a valid name")
    with pytest.raises(ValueError, match="prefix part a lowercase RFC 1123 subdomain"):
        b.new_recorder("Gardener.cloud/project-controller")
    assert b.new_recorder("gardener.cloud/project-controller") is not None


def test_references_and_names():
    ref = object_reference({"kind": "Pod", "name": "p", "namespace": "ns", "fieldPath": "spec.x", "uid": ""})
    assert ref == {"kind": "Pod", "name": "p", "namespace": "ns", "fieldPath": "spec.x"}
    assert event_name("web-0", 0x17D) == "web-0.17d"
    assert event_name("system:controller:Foo", 1) == "system-controller-foo.1"
    long = event_name("a" * 300, 2**63)
    assert len(long) <= 253 and long.endswith(".8000000000000000")


def test_an_event_refused_for_a_lost_lease_is_dropped_quietly(client, make_broadcaster, registry):
    """The manager's write guard refuses writes once the lease is past its renew deadline: the queued
    event is dropped (write_failed) and logged as not leading, not as a crash with a traceback."""
    import structlog

    from framework.leaderelection import LeaderElectionLost

    cm = configmap(client)
    b = make_broadcaster()
    rec = b.new_recorder("guarded")

    def refuse(method: str, path: str) -> None:
        raise LeaderElectionLost(f"not writing {method} {path}: the lease is past its renew deadline")

    with structlog.testing.capture_logs() as logs:
        client.write_guard = refuse
        try:
            assert rec.eventf(cm, WARNING, "Failed", "Sync", "refused")
            assert b.flush(5)
        finally:
            client.write_guard = None
    assert dropped(registry, "write_failed") == 1, logs
    assert events(client) == []
    assert [e["event"] for e in logs if "writ" in e.get("event", "")] == ["event not written: not leading"]
