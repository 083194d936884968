"""The Event TTL controller's metrics: ``gcm_events_expired_total`` counts the Events it deleted,
``gcm_event_expiry_delay_seconds`` how long after their TTL; kept Events, Events not yet due and Events
someone else deleted first are not counted. Run against the test API server with a FakeClock; the
wiring onto a manager's ``/metrics`` is checked through ``build_manager``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import CollectorRegistry

import gcm.cmd.app
from framework.client import Client
from framework.clock import FakeClock
from framework.reconcile import Request, Result
from gcm.config import EventControllerConfiguration, default_config
from gcm.controllers.event import Reconciler
from gcm.controllers.event.metrics import EXPIRY_DELAY_BUCKETS, EventTTLMetrics

HOUR = 3600.0
EV = "events.k8s.io/v1"
NS = "default"
SHOOT = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "name": "s", "namespace": NS}
PROJECT = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "name": "p"}


def event(client: Client, name: str, at: datetime, regarding: dict) -> dict:
    return client.create(
        {
            "apiVersion": EV,
            "kind": "Event",
            "metadata": {"name": name, "namespace": NS},
            "eventTime": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "regarding": regarding,
            "reason": "Test",
            "note": "note",
            "type": "Normal",
            "action": "Testing",
            "reportingController": "gardener.cloud/test",
            "reportingInstance": "test-1",
        }
    )


@pytest.fixture
def client(apiserver) -> Client:
    return Client.from_kubeconfig(apiserver.kubeconfig, qps=0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def reconciler(client, clock, registry) -> Reconciler:
    return Reconciler(client, clock, HOUR, metrics=EventTTLMetrics.create(registry))


def expired(registry: CollectorRegistry) -> float | None:
    return registry.get_sample_value("gcm_events_expired_total")


def bucket(registry: CollectorRegistry, le: float) -> float | None:
    return registry.get_sample_value("gcm_event_expiry_delay_seconds_bucket", {"le": str(le)})


def test_both_series_exist_at_zero_before_any_delete(registry, reconciler):
    assert expired(registry) == 0.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_count") == 0.0
    assert [bucket(registry, le) for le in EXPIRY_DELAY_BUCKETS] == [0.0] * len(EXPIRY_DELAY_BUCKETS)


def test_a_delete_counts_once_with_its_delay_past_the_ttl(client, clock, registry, reconciler):
    event(client, "late", clock.now() - timedelta(seconds=HOUR + 90), PROJECT)
    assert reconciler.reconcile(Request("late", NS)) is None
    assert expired(registry) == 1.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_sum") == pytest.approx(90.0, abs=1.0)
    assert bucket(registry, 60.0) == 0.0
    assert bucket(registry, 120.0) == 1.0


def test_an_event_deleted_on_time_has_no_delay(client, clock, registry, reconciler):
    event(client, "due", clock.now(), PROJECT)
    assert reconciler.reconcile(Request("due", NS)) == Result(requeue_after=HOUR)
    assert expired(registry) == 0.0  # not due yet: nothing counted
    clock.step(HOUR)
    assert reconciler.reconcile(Request("due", NS)) is None
    assert expired(registry) == 1.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_sum") == 0.0
    assert bucket(registry, 1.0) == 1.0


def test_kept_and_missing_events_are_not_counted(client, clock, registry, reconciler):
    event(client, "shoot", clock.now() - timedelta(hours=5), SHOOT)
    assert reconciler.reconcile(Request("shoot", NS)) is None  # a Shoot event is kept
    assert reconciler.reconcile(Request("missing", NS)) is None  # gone before the reconcile
    assert expired(registry) == 0.0
    assert registry.get_sample_value("gcm_event_expiry_delay_seconds_count") == 0.0


def test_metrics_register_once_per_registry(registry):
    EventTTLMetrics.create(registry)
    with pytest.raises(ValueError):
        EventTTLMetrics.create(registry)
    assert registry.get_sample_value("gcm_events_expired_total") == 0.0  # the first set stays


def test_build_manager_serves_them_when_the_controller_is_on(client):
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
