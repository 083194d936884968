"""Stale reconciler units: the predicate (scenario 55), the decision function's edges and the live
re-check before an auto-deletion, with in-memory clients."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from framework.client import Conflict, NotFound
from framework.clock import FakeClock
from framework.meta.strconv import is_true
from framework.meta.time import format_time
from framework.reconcile import Request, Result
from gcm.controllers.project.stale import StalePredicate, StaleReconciler, StaleSettings, evaluate
from gcm.controllers.project.stale.cache import INDEXES
from gcm.controllers.project.stale.reconciler import (
    AUTO_DELETE_DUE,
    AUTO_DELETE_SCHEDULED,
    EXCLUDED,
    IN_USE,
    STALE,
    status_changes,
)

CORE = "core.gardener.cloud/v1beta1"
DAY = timedelta(hours=24)
NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
SETTINGS = StaleSettings(5, 10, 15, 3600.0)


def project(name="p", ns="garden-p", created=NOW - 100 * DAY, status=None, **meta):
    return {
        "apiVersion": CORE,
        "kind": "Project",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": format_time(created), **meta},
        "spec": {"namespace": ns} if ns else {},
        "status": status or {},
    }


class Store:
    """An in-memory client: get/list (with the controller's index functions), patch, delete; a
    cache-like store may have a ``live`` one behind it (``reading_live``, as ``Client.reading_live``)."""

    def __init__(self, *objs: dict, live: Store | None = None) -> None:
        self.objs = {self._key(o): o for o in objs}
        self.calls: list[tuple] = []
        self.live = live

    def reading_live(self, *kinds: tuple[str, str]) -> Store:
        """This store, with ``kinds`` answered by the live store (none: this store)."""
        if self.live is None:
            return self
        routed = Store()
        routed.objs = {k: o for k, o in self.objs.items() if k[:2] not in kinds}
        routed.objs.update({k: o for k, o in self.live.objs.items() if k[:2] in kinds})
        routed.calls = self.calls
        return routed

    @staticmethod
    def _key(o: dict) -> tuple:
        m = o["metadata"]
        return (o["apiVersion"], o["kind"], m.get("namespace") or "", m["name"])

    def get(self, api_version, kind, name, namespace=None, **_):
        try:
            return self.objs[(api_version, kind, namespace or "", name)]
        except KeyError:
            raise NotFound(404, "NotFound", f"{kind} {name} not found") from None

    def list(self, api_version, kind, namespace=None, *, label_selector=None, field_selector=None, **_):
        out = []
        for (av, k, ns, _), o in self.objs.items():
            if (av, k) != (api_version, kind) or (namespace and ns != namespace):
                continue
            labels = o["metadata"].get("labels") or {}
            if label_selector and any(labels.get(a) != b for a, b in label_selector.items()):
                continue
            if any(value not in INDEXES[(av, k)][f](o) for f, value in (field_selector or {}).items()):
                continue
            out.append(o)
        return {"items": out}

    def patch(self, api_version, kind, name, body, namespace=None, subresource=None, **kw):
        self.calls.append(("patch", name, subresource, body))
        return {}

    def delete(self, api_version, kind, name, namespace=None, **kw):
        self.calls.append(("delete", name, kw.get("preconditions")))
        return {}


def _behind(cached: Store, live: Store) -> Store:
    """``cached`` with ``live`` behind it, as the manager's client has the API server."""
    cached.live = live
    return cached


def namespace(name="garden-p", annotations=None):
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "annotations": annotations or {}},
    }


# -- scenario 55: the predicate ---------------------------------------------------------------------------


def test_55_predicate():
    p = StalePredicate()
    old = project(status={"lastActivityTimestamp": "2025-01-01T00:00:00Z", "observedGeneration": 1})
    old["metadata"]["generation"] = 1
    moved = project(status={"lastActivityTimestamp": "2025-01-02T00:00:00Z", "observedGeneration": 1})
    moved["metadata"]["generation"] = 1
    same = project(
        status={"lastActivityTimestamp": "2025-01-01T00:00:00Z", "observedGeneration": 1, "phase": "x"}
    )
    same["metadata"]["generation"] = 1
    new_gen = project(status={"lastActivityTimestamp": "2025-01-02T00:00:00Z", "observedGeneration": 1})
    new_gen["metadata"]["generation"] = 2
    shoot = {"apiVersion": CORE, "kind": "Shoot", "metadata": {"name": "s"}}
    assert p.create(old) is True
    assert p.update(shoot, old) is False  # old is not a Project
    assert p.update(old, shoot) is False  # new is not a Project
    assert p.update(old, "not an object") is False
    assert p.update(old, moved) is False  # only lastActivityTimestamp moved, generation observed
    assert p.update(old, same) is True  # identical lastActivityTimestamp
    assert p.update(old, new_gen) is True  # generation != observedGeneration
    assert p.delete(old) is False
    assert p.generic(old) is False


# -- the decision ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "skip"),
    [("true", True), ("True", True), ("1", True), ("t", True), ("yes", False), ("false", False), ("", False)],
)
def test_skip_stale_check_annotation_parses_like_go(value, skip):
    store = Store(namespace(annotations={"project.gardener.cloud/skip-stale-check": value}))
    d = evaluate(project(), store, SETTINGS, NOW)
    assert (d.state == EXCLUDED) is skip
    assert is_true(value) is skip


def test_only_the_quota_entry_namespace_and_name_matter_not_its_position():
    sb = {
        "apiVersion": CORE,
        "kind": "SecretBinding",
        "metadata": {"name": "sb", "namespace": "garden-o"},
        "quotas": [
            {"name": "q", "namespace": "garden-x"},
            {"name": "other"},
            {"name": "q", "namespace": "garden-p"},
        ],
    }
    quota = {"apiVersion": CORE, "kind": "Quota", "metadata": {"name": "q", "namespace": "garden-p"}}
    shoot = {
        "apiVersion": CORE,
        "kind": "Shoot",
        "metadata": {"name": "s", "namespace": "garden-o"},
        "spec": {"secretBindingName": "sb"},
    }
    d = evaluate(project(), Store(namespace(), sb, quota, shoot), SETTINGS, NOW)
    assert d.state == IN_USE and d.reason == (
        "in use by Quota garden-p/q via SecretBinding garden-o/sb used by Shoot garden-o/s"
    )
    # The Shoot in another namespace than the binding does not use it.
    shoot["metadata"]["namespace"] = "garden-z"
    assert evaluate(project(), Store(namespace(), sb, quota, shoot), SETTINGS, NOW).state == STALE


def test_timing_math():
    store = Store(namespace())
    since = NOW - 10 * DAY
    d = evaluate(project(status={"staleSinceTimestamp": format_time(since)}), store, SETTINGS, NOW)
    assert (d.state, d.stale_since, d.auto_delete_at) == (AUTO_DELETE_SCHEDULED, since, since + 15 * DAY)
    # An announced later deadline is kept (lowered expiration), an earlier one moved later.
    later = {
        "staleSinceTimestamp": format_time(since),
        "staleAutoDeleteTimestamp": format_time(NOW + 30 * DAY),
    }
    assert evaluate(project(status=later), store, SETTINGS, NOW).auto_delete_at == NOW + 30 * DAY
    earlier = {"staleSinceTimestamp": format_time(since), "staleAutoDeleteTimestamp": format_time(NOW + DAY)}
    assert evaluate(project(status=earlier), store, SETTINGS, NOW).auto_delete_at == since + 15 * DAY
    # A stored deadline equal to now (the candidate is earlier) is due: the comparison is strict.
    due = {"staleSinceTimestamp": format_time(NOW - 40 * DAY), "staleAutoDeleteTimestamp": format_time(NOW)}
    d = evaluate(project(status=due), store, SETTINGS, NOW)
    assert (d.state, d.delete) == (AUTO_DELETE_DUE, True)
    # Sub-second "now" is written as whole seconds, and an unchanged status needs no patch.
    d = evaluate(project(), store, SETTINGS, NOW + timedelta(microseconds=5))
    assert d.stale_since == NOW
    assert status_changes(project(status={"staleSinceTimestamp": "2025-06-01T12:00:00.000Z"}), d) == {}


# -- the reconciler ----------------------------------------------------------------------------------------


def test_not_found_project_is_done_without_requeue():
    rec = StaleReconciler(Store(), SETTINGS, FakeClock(NOW))
    assert rec.reconcile(Request("gone")) is None


def test_40_project_without_namespace_changes_nothing():
    store = Store(project(ns=None))
    assert StaleReconciler(store, SETTINGS, FakeClock(NOW)).reconcile(Request("p")) == Result(
        requeue_after=3600.0
    )
    assert store.calls == []


def test_54_missing_namespace_is_returned():
    store = Store(project())
    with pytest.raises(NotFound):
        StaleReconciler(store, SETTINGS, FakeClock(NOW)).reconcile(Request("p"))
    assert store.calls == []


def test_auto_delete_confirms_first_and_deletes_with_the_uid_precondition():
    due = {"staleSinceTimestamp": format_time(NOW - 40 * DAY), "staleAutoDeleteTimestamp": format_time(NOW)}
    store = Store(project(status=due), namespace())
    StaleReconciler(store, SETTINGS, FakeClock(NOW)).reconcile(Request("p"))
    assert store.calls == [
        (
            "patch",
            "p",
            None,
            {
                "metadata": {
                    "annotations": {
                        "confirmation.gardener.cloud/deletion": "true",
                        "gardener.cloud/timestamp": "2025-06-01T12:00:00Z",
                    }
                }
            },
        ),
        ("delete", "p", {"uid": "uid-p"}),
    ]


@pytest.mark.parametrize(
    "live_change",
    ["activity", "skip-annotation", "deleting", "gone"],
)
def test_a_lagging_cache_cannot_delete(live_change):
    """The cache says due; the live Project (or its namespace) says otherwise: nothing is deleted."""
    due = {"staleSinceTimestamp": format_time(NOW - 40 * DAY), "staleAutoDeleteTimestamp": format_time(NOW)}
    cached = Store(project(status=due), namespace())
    live_project = project(status=dict(due))
    live_ns = namespace()
    if live_change == "activity":
        live_project["status"]["lastActivityTimestamp"] = format_time(NOW - DAY)
    elif live_change == "skip-annotation":
        live_ns = namespace(annotations={"project.gardener.cloud/skip-stale-check": "true"})
    elif live_change == "deleting":
        live_project["metadata"]["deletionTimestamp"] = format_time(NOW)
    live = Store(*([] if live_change == "gone" else [live_project]), live_ns)
    StaleReconciler(_behind(cached, live), SETTINGS, FakeClock(NOW), api_reader=live).reconcile(Request("p"))
    assert not [c for c in cached.calls if c[0] == "delete"]
    assert not [c for c in cached.calls if c[0] == "patch" and c[2] is None]  # no confirmation
    if live_change in ("activity", "skip-annotation"):
        assert cached.calls == [
            (
                "patch",
                "p",
                "status",
                {"status": {"staleSinceTimestamp": None, "staleAutoDeleteTimestamp": None}},
            )
        ]


class Server(Store):
    """Reads come from the objects given (the cache, which may lag); status patches go to one Project
    held at ``rv``, refused with ``Conflict`` when they carry another ``metadata.resourceVersion`` (the
    API server's precondition check of an update), else applied with the next resourceVersion."""

    def __init__(self, *objs: dict, rv: str) -> None:
        super().__init__(*objs)
        self.rv = rv
        self.written: list[dict] = []

    def patch(self, api_version, kind, name, body, namespace=None, subresource=None, **kw):
        super().patch(api_version, kind, name, body, namespace, subresource, **kw)
        locked = (body.get("metadata") or {}).get("resourceVersion")
        if locked is not None and locked != self.rv:
            raise Conflict(409, "Conflict", f'Operation cannot be fulfilled on projects "{name}"')
        self.rv = str(int(self.rv) + 1)
        self.written.append(body)
        return {"metadata": {"name": name, "resourceVersion": self.rv}}


def test_a_cache_behind_our_own_status_patch_is_not_checked_again():
    """A request queued while the previous check patched runs on a cache without that patch: its patch
    is locked to the cached resourceVersion, so the server refuses it (``Conflict``, which the
    controller requeues) and staleSinceTimestamp is set once."""
    p = project(resourceVersion="7")
    store = Server(p, namespace(), rv="7")
    clock = FakeClock(NOW)
    rec = StaleReconciler(store, SETTINGS, clock)
    assert rec.reconcile(Request("p")) == Result(requeue_after=3600.0)
    assert store.written == [
        {"status": {"staleSinceTimestamp": format_time(NOW)}, "metadata": {"resourceVersion": "7"}}
    ]
    clock.step(5)
    with pytest.raises(Conflict):  # cache still at "7", the server at "8"
        rec.reconcile(Request("p"))
    assert store.calls[-1][3]["status"] == {"staleSinceTimestamp": format_time(NOW + timedelta(seconds=5))}
    assert len(store.written) == 1 and store.rv == "8"
    # The cache caught up (our patch, "8"): checked again, nothing to change.
    p["metadata"]["resourceVersion"] = "8"
    p["status"] = {"staleSinceTimestamp": format_time(NOW)}
    assert rec.reconcile(Request("p")) == Result(requeue_after=3600.0)
    assert len(store.calls) == 2 and len(store.written) == 1


def test_the_live_recheck_patches_locked_to_the_live_object():
    """A Project due by the cache but active live: the cancelling status patch carries the live
    resourceVersion (the decision was computed from the live object), not the cached one."""
    due = {"staleSinceTimestamp": format_time(NOW - 40 * DAY), "staleAutoDeleteTimestamp": format_time(NOW)}
    cached = Server(project(status=due, resourceVersion="7"), namespace(), rv="9")
    live_status = {**due, "lastActivityTimestamp": format_time(NOW - DAY)}
    live = Store(project(status=live_status, resourceVersion="9"), namespace())
    StaleReconciler(_behind(cached, live), SETTINGS, FakeClock(NOW), api_reader=live).reconcile(Request("p"))
    assert cached.calls == [
        (
            "patch",
            "p",
            "status",
            {
                "status": {"staleSinceTimestamp": None, "staleAutoDeleteTimestamp": None},
                "metadata": {"resourceVersion": "9"},
            },
        )
    ]
    assert len(cached.written) == 1


def test_a_project_that_changes_after_the_live_recheck_is_not_deleted():
    """Due by the cache and by the live re-check, but written again before the confirmation patch: the
    patch is locked to the re-checked object, so the server refuses it and no delete is sent."""
    due = {"staleSinceTimestamp": format_time(NOW - 40 * DAY), "staleAutoDeleteTimestamp": format_time(NOW)}
    cached = Server(project(status=due, resourceVersion="9"), namespace(), rv="10")  # changed after the read
    live = Store(project(status=dict(due), resourceVersion="9"), namespace())
    with pytest.raises(Conflict):
        StaleReconciler(_behind(cached, live), SETTINGS, FakeClock(NOW), api_reader=live).reconcile(
            Request("p")
        )
    (call,) = cached.calls
    assert call[:3] == ("patch", "p", None) and call[3]["metadata"]["resourceVersion"] == "9"
    assert call[3]["metadata"]["annotations"]["confirmation.gardener.cloud/deletion"] == "true"
    assert cached.written == []
    assert not [c for c in cached.calls if c[0] == "delete"]


def test_a_due_project_unchanged_since_the_recheck_is_confirmed_and_deleted():
    due = {"staleSinceTimestamp": format_time(NOW - 40 * DAY), "staleAutoDeleteTimestamp": format_time(NOW)}
    cached = Server(project(status=due, resourceVersion="9"), namespace(), rv="9")
    live = Store(project(status=dict(due), resourceVersion="9"), namespace())
    StaleReconciler(_behind(cached, live), SETTINGS, FakeClock(NOW), api_reader=live).reconcile(Request("p"))
    assert [c[0] for c in cached.calls] == ["patch", "delete"]
    assert cached.written[0]["metadata"]["resourceVersion"] == "9"
    assert cached.calls[1] == ("delete", "p", {"uid": "uid-p"})
