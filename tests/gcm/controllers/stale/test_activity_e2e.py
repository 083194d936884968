"""The Project-activity scenarios end to end: ``project-activity`` in a Manager running as gcm's
ServiceAccount; the fake clock is the reconciler's and the create filter's now.

Negative checks ("no activity recorded") need to know the event was seen and filtered: a *barrier*
Project holds one object per watched kind; after the action under test the barrier object of the same
kind is changed (same informer, so its event comes after the one under test) and the test waits for
the barrier Project's reconcile. With one worker the queue is FIFO, so a request for the Project under
test would have been reconciled before that.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from framework.meta.time import format_time, rfc3339_copy

CORE = "core.gardener.cloud/v1beta1"
SB_LABEL = {"reference.gardener.cloud/secretbinding": "true"}
CB_LABEL = {"reference.gardener.cloud/credentialsbinding": "true"}
BARRIER = "barrier"
KINDS = {
    "Shoot": (CORE, "Shoot"),
    "BackupEntry": (CORE, "BackupEntry"),
    "Secret": ("v1", "Secret"),
    "Quota": (CORE, "Quota"),
    "InternalSecret": (CORE, "InternalSecret"),
}
_counter = itertools.count()


def make(env, kind: str, ns: str, name: str, labelled: bool = True) -> dict:
    labels = (SB_LABEL if kind != "InternalSecret" else CB_LABEL) if labelled else {}
    if kind == "Shoot":
        return env.shoot(ns, name)
    if kind == "BackupEntry":
        return env.create(CORE, "BackupEntry", ns, name, spec={"bucketName": "b"})
    if kind == "Quota":
        return env.create(CORE, "Quota", ns, name, labels, spec={"clusterLifetimeDays": 7})
    if kind == "InternalSecret":
        return env.create(CORE, "InternalSecret", ns, name, labels, data={"k": "dg=="})
    return env.create("v1", "Secret", ns, name, labels, data={"k": "dg=="})


def change(env, kind: str, ns: str, name: str) -> dict:
    """The scenario-65 update of each kind (a spec/data change)."""
    n = next(_counter)
    api_version, k = KINDS[kind]
    body = {
        "Shoot": {"spec": {"hibernation": {"enabled": n % 2 == 0}}},
        "BackupEntry": {"spec": {"seedName": f"seed-{n}"}},
        "Secret": {"data": {"k": "dg==", "n": f"{n:04d}"}},
        "Quota": {"spec": {"clusterLifetimeDays": 10 + n}},
        "InternalSecret": {"data": {"k": "dg==", "n": f"{n:04d}"}},
    }[kind]
    return env.admin.patch(api_version, k, name, body, namespace=ns)


class Activity:
    def __init__(self, env, h) -> None:
        self.env, self.h = env, h

    def last(self, project: str) -> str | None:
        return self.env.status(project).get("lastActivityTimestamp")

    def now(self) -> str:
        return format_time(rfc3339_copy(self.env.clock.now()))

    def wait_bumped(self, project: str) -> None:
        expected = self.now()
        self.env.wait_for(lambda: self.last(project) == expected, what=f"{project} activity at {expected}")

    def flush(self, kind: str) -> None:
        """Wait until every event of ``kind`` so far has passed the filters (and any request ran)."""
        before = self.h.activity.count(BARRIER)
        change(self.env, kind, f"garden-{BARRIER}", "barrier")
        self.env.wait_for(lambda: self.h.activity.count(BARRIER) > before, what=f"{kind} barrier")


@pytest.fixture
def act(env):
    """Projects p-<kind> (and the barrier) exist; the Manager runs; the clock is at real now."""
    for project in (BARRIER, *(f"p-{k.lower()}" for k in KINDS), "p-unlabelled", "p-late"):
        env.project(project)
    for kind in KINDS:
        make(env, kind, f"garden-{BARRIER}", "barrier")
    real_now = env.clock.now()
    env.clock.set(real_now + timedelta(hours=2))  # the informers' start-up creates are not activity
    h = env.manager(workers=1)
    env.wait_for(h.activity_ctrl.has_synced, what="activity handlers synced")
    for project in (BARRIER, *(f"p-{k.lower()}" for k in KINDS), "p-unlabelled", "p-late"):
        h.sync(project)
    env.clock.set(real_now)
    a = Activity(env, h)
    for kind in KINDS:
        a.flush(kind)  # the start-up events are behind us
    assert all(a.last(f"p-{k.lower()}") is None for k in KINDS)
    return a


def test_60_65_create_update_delete_each_bump_last_activity(act):
    env = act.env
    for kind in KINDS:
        make(env, kind, f"garden-p-{kind.lower()}", "o")
    for kind in KINDS:
        act.wait_bumped(f"p-{kind.lower()}")  # 60: exactly the fake clock's now, whole seconds
    env.clock.step(2 * 3600)
    for kind in KINDS:
        change(env, kind, f"garden-p-{kind.lower()}", "o")
    for kind in KINDS:
        act.wait_bumped(f"p-{kind.lower()}")
    env.clock.step(2 * 3600)
    for kind in KINDS:
        api_version, k = KINDS[kind]
        env.admin.delete(api_version, k, "o", f"garden-p-{kind.lower()}")
    for kind in KINDS:
        act.wait_bumped(f"p-{kind.lower()}")


def test_66_creates_of_old_objects_are_no_activity(act):
    env = act.env
    env.clock.step(2 * 3600)  # the objects' creationTimestamp is now 2h in the past
    for kind in KINDS:
        make(env, kind, "garden-p-late", f"late-{kind.lower()}")
    for kind in KINDS:
        act.flush(kind)
    assert act.last("p-late") is None
    assert act.h.activity.count("p-late") == 0


@pytest.mark.parametrize("kind", ["Secret", "Quota", "InternalSecret"])
def test_67_unlabelled_objects_are_never_activity(act, kind):
    env = act.env
    api_version, k = KINDS[kind]
    make(env, kind, "garden-p-unlabelled", "o", labelled=False)
    act.flush(kind)
    change(env, kind, "garden-p-unlabelled", "o")
    act.flush(kind)
    env.admin.delete(api_version, k, "o", "garden-p-unlabelled")
    act.flush(kind)
    assert act.last("p-unlabelled") is None
    # Removing the label is activity (the old object had it); adding it too.
    make(env, kind, "garden-p-unlabelled", "o2", labelled=True)
    act.wait_bumped("p-unlabelled")
    env.clock.step(3600)
    env.admin.patch(api_version, k, "o2", {"metadata": {"labels": None}}, namespace="garden-p-unlabelled")
    act.wait_bumped("p-unlabelled")


def test_68_shoot_status_only_update_is_no_activity(act):
    env = act.env
    make(env, "Shoot", "garden-p-shoot", "o")
    act.wait_bumped("p-shoot")
    created = act.last("p-shoot")
    env.clock.step(2 * 3600)
    env.admin.patch(
        CORE,
        "Shoot",
        "o",
        {"status": {"lastOperation": {"state": "Succeeded"}}},
        "garden-p-shoot",
        subresource="status",
    )
    act.flush("Shoot")
    assert act.last("p-shoot") == created


def test_64_objects_outside_project_namespaces_map_to_nothing(act):
    env = act.env
    env.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "no-project"}})
    total = sum(len(v) for v in act.h.activity.finished.values())
    make(env, "Secret", "no-project", "o")
    act.flush("Secret")
    after = {name: len(v) for name, v in act.h.activity.finished.items()}
    assert sum(after.values()) == total + 1  # only the barrier's reconcile
