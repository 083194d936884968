"""Activity reconciler units: scenarios 60-64 (reconcile, read error, the two filters, the mapper)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from framework.client import NotFound, ServerError
from framework.clock import FakeClock
from framework.reconcile import Request
from gcm.controllers.project.activity import (
    ActivityReconciler,
    HasBindingReferenceLabel,
    RelevantCreatesAndUpdates,
    project_for_namespace,
)
from gcm.controllers.project.indexes import PROJECT_NAMESPACE_INDEX, project_namespace

CORE = "core.gardener.cloud/v1beta1"
NOW = datetime(2025, 6, 1, 12, 0, 0, 750000, tzinfo=UTC)


class Projects:
    def __init__(self, *projects: dict, fail: Exception | None = None) -> None:
        self.projects = {p["metadata"]["name"]: p for p in projects}
        self.fail = fail
        self.patches: list[tuple] = []

    def get(self, api_version, kind, name, namespace=None, **_):
        if self.fail:
            raise self.fail
        if name not in self.projects:
            raise NotFound(404, "NotFound", "not found")
        return self.projects[name]

    def list(self, api_version, kind, namespace=None, *, field_selector=None, **_):
        if self.fail:
            raise self.fail
        ((index, value),) = field_selector.items()
        assert index == PROJECT_NAMESPACE_INDEX
        return {"items": [p for p in self.projects.values() if value in project_namespace(p)]}

    def patch(self, api_version, kind, name, body, namespace=None, subresource=None, **kw):
        self.patches.append((name, subresource, body))
        return {}


def project(name: str, ns: str | None, status: dict | None = None) -> dict:
    return {
        "apiVersion": CORE,
        "kind": "Project",
        "metadata": {"name": name},
        "spec": {"namespace": ns} if ns else {},
        "status": status or {},
    }


def obj(
    created: datetime | None = None, rv: str = "1", labels: dict | None = None, ns: str = "garden-p"
) -> dict:
    meta = {"name": "o", "namespace": ns, "resourceVersion": rv, "labels": labels or {}}
    if created is not None:
        meta["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta}


def test_60_reconcile_sets_last_activity_to_now_in_whole_seconds():
    client = Projects(project("p", "garden-p"))
    assert ActivityReconciler(client, FakeClock(NOW)).reconcile(Request("p")) is None
    assert client.patches == [("p", "status", {"status": {"lastActivityTimestamp": "2025-06-01T12:00:00Z"}})]
    # Already at this second: no needless write.
    client = Projects(project("p", "garden-p", {"lastActivityTimestamp": "2025-06-01T12:00:00Z"}))
    ActivityReconciler(client, FakeClock(NOW)).reconcile(Request("p"))
    assert client.patches == []


def test_60_missing_project_is_done():
    assert ActivityReconciler(Projects(), FakeClock(NOW)).reconcile(Request("gone")) is None


def test_61_read_error_is_returned():
    error = ServerError(500, "InternalError", "boom")
    with pytest.raises(ServerError):
        ActivityReconciler(Projects(fail=error), FakeClock(NOW)).reconcile(Request("p"))


def test_62_relevant_creates_and_updates():
    clock = FakeClock(NOW.replace(microsecond=0))
    now = clock.now()
    f = RelevantCreatesAndUpdates(clock)
    assert f.create(obj(now - timedelta(minutes=10))) is True
    assert f.create(obj(now - timedelta(hours=1))) is True  # exactly 1h: still relevant
    assert f.create(obj(now - timedelta(hours=1, seconds=1))) is False
    assert f.create(obj(now - timedelta(hours=2))) is False
    assert f.update(obj(rv="5"), obj(rv="5")) is False  # resync
    assert f.update(obj(rv="5"), obj(rv="6")) is True
    assert f.delete(obj(now - timedelta(days=300))) is True
    assert f.generic(obj(now - timedelta(days=300))) is True


@pytest.mark.parametrize(
    "key", ["reference.gardener.cloud/secretbinding", "reference.gardener.cloud/credentialsbinding"]
)
def test_63_binding_reference_label_filter(key):
    f = HasBindingReferenceLabel()
    with_label, without = obj(labels={key: "anything"}), obj(labels={"other": "true"})
    assert f.create(with_label) and not f.create(without)
    assert f.delete(with_label) and not f.delete(without)
    assert f.update(with_label, with_label)
    assert f.update(without, with_label)  # only the new one
    assert f.update(with_label, without)  # only the old one: removing the label counts
    assert not f.update(without, without)
    assert f.generic(without)


def test_64_mapper():
    o = obj(ns="garden-p")
    assert list(project_for_namespace(Projects())(o)) == []
    assert list(project_for_namespace(Projects(project("q", "garden-q")))(o)) == []
    mapped = project_for_namespace(Projects(project("q", "garden-q"), project("p", "garden-p")))(o)
    assert list(mapped) == [Request("p")]
    # A lookup failure is logged, not raised.
    failing = Projects(project("p", "garden-p"), fail=ServerError(500, "x", "y"))
    assert list(project_for_namespace(failing)(o)) == []
