"""The watches, predicates and mappers of the Project controller."""

from __future__ import annotations

from framework.client import NotFound
from framework.reconcile import Request
from gcm.controllers.project.project import RoleBindingPredicate, map_shoot_to_project_in_deletion
from tests.gcm.controllers.project import project_harness as h

P, RBAC = h.P, h.RBAC
MEMBER_RB = "gardener.cloud:system:project-member"
VIEWER_RB = "gardener.cloud:system:project-viewer"
SAM_RB = "gardener.cloud:system:project-serviceaccountmanager"


def rb(rv="1", role="r", subjects=None, labels=None):
    return {
        "metadata": {"name": "x", "namespace": "n", "resourceVersion": rv, "labels": labels or {}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects or [{"kind": "User", "name": "a"}],
    }


def test_c26_rolebinding_predicate():
    p = RoleBindingPredicate()
    assert p.create(rb()) is False
    assert p.update(rb("1"), rb("1")) is True  # resync
    assert p.update(rb("1"), rb("2", role="other")) is True
    assert p.update(rb("1"), rb("2", subjects=[{"kind": "User", "name": "a"}, {"kind": "User", "name": "b"}]))
    assert p.update(rb("1"), rb("2", labels={"x": "y"})) is False
    assert p.delete(rb()) is True
    assert p.generic(rb()) is False


def test_c27_deleted_member_rolebindings_are_recreated(env):
    env.create_project("p1", namespace="garden-p1", members=[h.user("alice", role="admin")])
    env.wait_phase("p1", "Ready")
    old = {
        n: env.get(RBAC, "RoleBinding", n, "garden-p1")["metadata"]["uid"]
        for n in (MEMBER_RB, VIEWER_RB, SAM_RB)
    }
    for name in old:
        env.admin.delete(RBAC, "RoleBinding", name, "garden-p1")

    def recreated():
        objs = {n: env.get(RBAC, "RoleBinding", n, "garden-p1") for n in old}
        return all(o is not None and o["metadata"]["uid"] != old[n] for n, o in objs.items()) and objs

    objs = h.wait_for(recreated, message="rolebindings recreated")
    assert [s["name"] for s in objs[MEMBER_RB]["subjects"]] == ["alice"]


def test_c28_extension_rolebinding_recreated(ext_env):
    env = ext_env
    env.create_project("p1", namespace="garden-p1", members=[h.user("alice", role="extension:test")])
    env.wait_phase("p1", "Ready")
    name = "gardener.cloud:extension:project:p1:test"
    uid = env.get(RBAC, "RoleBinding", name, "garden-p1")["metadata"]["uid"]
    env.admin.delete(RBAC, "RoleBinding", name, "garden-p1")
    h.wait_for(
        lambda: (
            (env.get(RBAC, "RoleBinding", name, "garden-p1") or {"metadata": {"uid": uid}})["metadata"]["uid"]
            != uid
        ),
        message="extension rolebinding recreated",
    )


def test_hand_edited_subjects_are_restored(env):
    env.create_project("p1", namespace="garden-p1", members=[h.user("alice", role="viewer")])
    env.wait_phase("p1", "Ready")
    env.admin.patch(RBAC, "RoleBinding", VIEWER_RB, {"subjects": [h.user("mallory")]}, "garden-p1")
    h.wait_for(
        lambda: (
            [s["name"] for s in env.get(RBAC, "RoleBinding", VIEWER_RB, "garden-p1")["subjects"]] == ["alice"]
        ),
        message="subjects restored",
    )


def test_changed_roleref_is_recreated(env):
    """roleRef is immutable: a binding replaced with another roleRef is deleted and created again."""
    env.create_project("p1", namespace="garden-p1", members=[h.user("alice", role="admin")])
    env.wait_phase("p1", "Ready")
    env.stop()
    live = env.get(RBAC, "RoleBinding", MEMBER_RB, "garden-p1")
    env.admin.delete(RBAC, "RoleBinding", MEMBER_RB, "garden-p1")
    env.admin.create(
        {
            **live,
            "metadata": {
                "name": MEMBER_RB,
                "namespace": "garden-p1",
                "ownerReferences": live["metadata"]["ownerReferences"],
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        }
    )
    env.start()  # the initial list enqueues every Project
    # The binding is deleted, then created again: between the two it is not there at all.
    h.wait_for(
        lambda: (
            ((env.get(RBAC, "RoleBinding", MEMBER_RB, "garden-p1") or {}).get("roleRef") or {}).get("name")
            == MEMBER_RB
        ),
        message="roleRef restored",
    )


# --- Shoot-delete mapper (29, 30) ---------------------------------------------------------------------


class FakeCache:
    def __init__(self, shoots=(), namespaces=None, projects=None, fail=False):
        self.shoots, self.namespaces, self.projects, self.fail = (
            list(shoots),
            namespaces or {},
            projects or {},
            fail,
        )

    def list(self, api_version, kind, namespace=None, *, label_selector=None, metadata_only=None, **_):
        if self.fail:
            raise RuntimeError("boom")
        assert metadata_only, "the mapper reads Shoots metadata-only, as Gardener"
        return {"items": [s for s in self.shoots if s["metadata"]["namespace"] == namespace]}

    def get(self, api_version, kind, name, namespace=None, **_):
        table = self.namespaces if kind == "Namespace" else self.projects
        if name not in table:
            raise NotFound(404, "NotFound", f"{name} not found")
        return table[name]


def shoot(name, ns="garden-p1"):
    return {"apiVersion": P, "kind": "Shoot", "metadata": {"name": name, "namespace": ns}}


NS = {"garden-p1": {"metadata": {"name": "garden-p1", "labels": {"project.gardener.cloud/name": "p1"}}}}
DELETING = {"p1": {"metadata": {"name": "p1", "deletionTimestamp": "2024-01-01T00:00:00Z"}}}


def test_c29_shoot_mapper():
    m = map_shoot_to_project_in_deletion
    assert m(FakeCache(namespaces=NS, projects=DELETING))({"kind": "Secret", "metadata": {"name": "x"}}) == []
    other = FakeCache(shoots=[shoot("s2")], namespaces=NS, projects=DELETING)
    assert m(other)(shoot("s1")) == []
    assert m(FakeCache(namespaces=NS, projects=DELETING))(shoot("s1")) == [Request("p1")]
    alive = {"p1": {"metadata": {"name": "p1"}}}
    assert m(FakeCache(namespaces=NS, projects=alive))(shoot("s1")) == []
    assert m(FakeCache(fail=True))(shoot("s1")) == []  # lookup errors produce no request
    assert m(FakeCache(namespaces=NS))(shoot("s1")) == []  # project gone


def test_c30_namespace_without_project_label():
    ns = {"garden-p1": {"metadata": {"name": "garden-p1", "labels": {}}}}
    assert map_shoot_to_project_in_deletion(FakeCache(namespaces=ns))(shoot("s1")) == []
    no_labels = {"garden-p1": {"metadata": {"name": "garden-p1"}}}
    assert map_shoot_to_project_in_deletion(FakeCache(namespaces=no_labels))(shoot("s1")) == []
