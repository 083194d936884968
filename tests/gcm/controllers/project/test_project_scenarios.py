"""The Project main reconciler, end to end through the manager.

gcm runs as its ServiceAccount against an RBAC-enforcing API server (see project_harness.py).
"""

from __future__ import annotations

import hashlib
import time

from framework.client import Client
from framework.reconcile import Request, Result
from framework.testing import consistently
from gcm.controllers.project.project.reconciler import ProjectReconciler
from tests.gcm.controllers.project import project_harness as h

P = h.P
OWNER_KEYS = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")


def test_a1_ready_then_deleted(env):
    env.create_project("p1")
    p = env.wait_phase("p1", "Ready")
    assert p["metadata"]["finalizers"] == ["gardener"]
    assert p["status"]["observedGeneration"] == p["metadata"]["generation"]
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")


def test_a2_shoot_blocks_deletion_until_deleted(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    env.create_shoot("s1", "garden-p1")
    # The deletion check reads the metadata-only Shoot cache (as the Shoot-delete watch does).
    h.wait_for(
        lambda: env.mgr.client.list(P, "Shoot", namespace="garden-p1", metadata_only=True)["items"],
        message="shoot cached",
    )
    env.delete_project("p1")
    env.wait_phase("p1", "Terminating")
    ev = env.wait_event("p1", "NamespaceNotEmpty")
    assert ev["type"] == "Warning" and ev["action"] == "Delete"
    assert ev["note"] == 'Cannot release namespace "garden-p1" because it still contains Shoots'
    consistently(
        lambda: (
            env.project("p1") is not None
            and env.get("v1", "Namespace", "garden-p1")["metadata"].get("deletionTimestamp") is None
        ),
        duration=0.3,
        message="project and namespace kept while a Shoot exists",
    )
    env.admin.delete(P, "Shoot", "s1", "garden-p1")
    env.wait_gone(P, "Project", "p1")
    env.wait_gone("v1", "Namespace", "garden-p1")


def test_a3_namespace_created_with_owner_labels_annotations(env):
    p = env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    ns = env.get("v1", "Namespace", "garden-p1")
    meta = ns["metadata"]
    assert [{k: o.get(k) for k in OWNER_KEYS} for o in meta["ownerReferences"]] == [
        {
            "apiVersion": P,
            "kind": "Project",
            "name": "p1",
            "uid": p["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert meta["labels"]["gardener.cloud/role"] == "project"
    assert meta["labels"]["project.gardener.cloud/name"] == "p1"
    assert meta["annotations"] == {
        "namespace.gardener.cloud/project": p["metadata"]["uid"],
        "namespace.gardener.cloud/created-by-project-controller": "true",
    }
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    env.wait_gone("v1", "Namespace", "garden-p1")


def test_a4_keep_after_deletion_releases_namespace(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    env.admin.patch(
        "v1",
        "Namespace",
        "garden-p1",
        {"metadata": {"annotations": {"namespace.gardener.cloud/keep-after-project-deletion": "true"}}},
    )
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    meta = env.get("v1", "Namespace", "garden-p1")["metadata"]
    assert not meta.get("deletionTimestamp")
    assert not meta.get("ownerReferences")
    assert "project.gardener.cloud/name" not in meta["labels"]
    assert "gardener.cloud/role" not in meta["labels"]
    assert not any(k.startswith("namespace.gardener.cloud/") for k in meta.get("annotations") or {})


def test_a5_unlabelled_namespace_fails_and_survives(env):
    before = env.create_namespace("garden-p1")
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Failed")
    ev = env.wait_event("p1", "NamespaceReconcileFailed")
    assert ev["type"] == "Warning" and ev["action"] == "Reconcile"
    assert ev["note"].startswith("namespace cannot be used as it needs the project labels")
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    after = env.get("v1", "Namespace", "garden-p1")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert not after["metadata"].get("deletionTimestamp")


def test_a6_prelabelled_namespace_adopted_and_kept(env):
    env.create_namespace("garden-p1", labels=h.project_labels("p1"))
    p = env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    meta = env.get("v1", "Namespace", "garden-p1")["metadata"]
    assert [o["uid"] for o in meta["ownerReferences"]] == [p["metadata"]["uid"]]
    assert meta["annotations"]["namespace.gardener.cloud/project"] == p["metadata"]["uid"]
    assert meta["annotations"]["namespace.gardener.cloud/keep-after-project-deletion"] == "true"
    assert "namespace.gardener.cloud/created-by-project-controller" not in meta["annotations"]
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    meta = env.get("v1", "Namespace", "garden-p1")["metadata"]
    assert not meta.get("deletionTimestamp")
    assert not meta.get("ownerReferences")
    assert "project.gardener.cloud/name" not in meta["labels"]
    assert "gardener.cloud/role" not in meta["labels"]


def test_a7_namespace_of_another_project_is_refused(env):
    before = env.create_namespace("garden-foo", labels=h.project_labels("foo"))
    env.create_project("p1", namespace="garden-foo")
    env.wait_phase("p1", "Failed")
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    after = env.get("v1", "Namespace", "garden-foo")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_a8_namespace_in_use_by_another_uid(env):
    before = env.create_namespace(
        "garden-p1",
        labels=h.project_labels("p1"),
        annotations={"namespace.gardener.cloud/project": "0000-other-uid"},
    )
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Failed")
    ev = env.wait_event("p1", "NamespaceReconcileFailed")
    assert ev["note"] == "namespace is already in-use by another project"
    after = env.get("v1", "Namespace", "garden-p1")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    # Deleting p1 does not delete the other Project's namespace (stricter than Gardener, see reconciler).
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    after = env.get("v1", "Namespace", "garden-p1")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_a9_generated_namespace_name(env):
    p = env.create_project("p1")
    digest = hashlib.sha256(p["metadata"]["uid"].encode()).hexdigest()[:5]
    ready = env.wait_phase("p1", "Ready")
    assert ready["spec"]["namespace"] == f"garden-p1-{digest}"
    assert env.get("v1", "Namespace", f"garden-p1-{digest}") is not None
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    env.wait_gone("v1", "Namespace", f"garden-p1-{digest}")


def test_a10_generated_name_taken_then_admin_sets_namespace(make_env):
    env = make_env(start=False)
    p = env.create_project("p1")
    taken = "garden-p1-" + hashlib.sha256(p["metadata"]["uid"].encode()).hexdigest()[:5]
    before = env.create_namespace(taken)
    env.start()
    failed = env.wait_phase("p1", "Failed")
    assert not failed["spec"].get("namespace")
    assert (
        env.get("v1", "Namespace", taken)["metadata"]["resourceVersion"]
        == before["metadata"]["resourceVersion"]
    )
    env.admin.patch(P, "Project", "p1", {"spec": {"namespace": "garden-free"}})
    env.wait_phase("p1", "Ready")
    assert env.get("v1", "Namespace", "garden-free") is not None


def test_a11_pending_written_before_namespace(env):
    watch = h.PhaseWatch(env, "p1")
    try:
        env.create_project("p1", namespace="garden-p1")
        env.wait_phase("p1", "Ready")
        h.wait_for(lambda: watch.phases()[-1:] == ["Ready"], message="watch saw Ready")
    finally:
        watch.close()
    phases = watch.phases()
    assert phases[:2] == [None, "Pending"] and phases[-1] == "Ready" and "Failed" not in phases
    pending = next(s for s in watch.seen if s[0] == "Pending")
    assert pending[1] == pending[2]  # observedGeneration written with the phase
    ns = env.get("v1", "Namespace", "garden-p1")
    assert int(ns["metadata"]["resourceVersion"]) > pending[3]


def test_a12_only_generation_changes_reconcile(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    time.sleep(0.3)
    before = env.reconciles()
    env.admin.patch(P, "Project", "p1", {"metadata": {"labels": {"x": "y"}, "annotations": {"a": "b"}}})
    consistently(lambda: env.reconciles() == before, duration=0.5, message="no reconcile of metadata changes")
    p = env.admin.patch(P, "Project", "p1", {"spec": {"description": "changed"}})
    ready = env.wait_phase("p1", "Ready")
    assert ready["status"]["observedGeneration"] == p["metadata"]["generation"]
    # The status write comes before the reconcile returns and is counted: wait for the count too.
    h.wait_for(lambda: env.reconciles() > before, message="the spec change counted as a reconcile")


def test_a13_success_event(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    ev = env.wait_event("p1", "NamespaceReconcileSuccessful")
    assert ev["type"] == "Normal" and ev["action"] == "Reconcile"
    assert ev["note"] == 'Successfully reconciled namespace "garden-p1" for project'
    assert ev["reportingController"] == "project-controller"


def test_a14_namespace_already_terminating(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    # A finalizer on content keeps the namespace terminating.
    env.admin.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "held", "namespace": "garden-p1", "finalizers": ["example.com/hold"]},
        }
    )
    env.delete_project("p1")
    env.wait_phase("p1", "Terminating")
    ev = env.wait_event("p1", "NamespaceMarkedForDeletion")
    assert ev["type"] == "Normal" and ev["action"] == "Delete"
    assert ev["note"] == 'Successfully marked project namespace "garden-p1" for deletion'
    h.wait_for(lambda: env.get("v1", "Namespace", "garden-p1")["metadata"].get("deletionTimestamp"))

    # The reconciler itself, run directly on the terminating namespace: no second DELETE, requeue 1 min.
    env.server.reset_request_counts()
    recorder = h.FakeRecorder()
    reconciler = ProjectReconciler(env.admin, recorder, env.cfg.controllers.project)
    result = reconciler.reconcile(Request("p1"))
    assert result == Result(requeue_after=60.0)
    assert recorder.events[-1][:3] == ("Normal", "NamespaceMarkedForDeletion", "Delete")
    deletes = [k for k in env.server.request_counts() if k.verb == "delete" and k.resource == "namespaces"]
    assert deletes == []

    env.admin.patch("v1", "ConfigMap", "held", {"metadata": {"finalizers": None}}, "garden-p1")
    env.wait_gone("v1", "Namespace", "garden-p1")
    env.wait_gone(P, "Project", "p1")


def test_a15_namespace_delete_failure(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    watch = h.PhaseWatch(env, "p1")
    try:
        env.server.inject_failure("delete", "namespaces", 500, count=1)
        env.delete_project("p1")
        ev = env.wait_event("p1", "NamespaceDeletionFailed")
        assert ev["type"] == "Warning" and ev["action"] == "Delete"
        assert ev["note"].startswith('Failed to release project namespace "garden-p1": ')
        env.wait_gone(P, "Project", "p1")
    finally:
        watch.close()
    assert "Failed" in watch.phases()
    env.wait_gone("v1", "Namespace", "garden-p1")


def test_a16_deleting_project_without_finalizer_is_left_alone(make_env):
    env = make_env(start=False)
    p = env.admin.create(
        {
            "apiVersion": P,
            "kind": "Project",
            "metadata": {"name": "p1", "finalizers": ["example.com/other"], "annotations": h.CONFIRM},
            "spec": {"namespace": "garden-p1"},
        }
    )
    env.admin.delete(P, "Project", "p1")
    before = env.project("p1")
    assert before["metadata"]["deletionTimestamp"]
    env.server.reset_request_counts()
    env.start()
    h.wait_for(lambda: env.reconciles() >= 1, message="reconciled")
    consistently(
        lambda: not [k for k in env.gcm_writes() if k[1].startswith("projects")],
        duration=0.3,
        message="no writes to the Project",
    )
    after = env.project("p1")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["metadata"]["finalizers"] == ["example.com/other"]
    assert env.get("v1", "Namespace", "garden-p1") is None
    assert p["metadata"]["uid"] == after["metadata"]["uid"]


def test_full_app_build_manager(tmp_path):
    """The whole gcm application (gcm.cmd.app.build_manager) reconciles a Project to Ready."""
    import threading

    from gcm.cmd.app import build_manager

    e = h.Env(tmp_path, start=False)
    try:
        cfg = h.make_config()
        cfg.server.health_probes = None
        cfg.server.metrics = None
        mgr = build_manager(cfg, Client.from_kubeconfig(e.embedded.gcm_kubeconfig, qps=0))
        t = threading.Thread(target=mgr.start, daemon=True)
        t.start()
        try:
            e.create_project("p1", members=[h.user("alice", role="admin")])
            p = e.wait_phase("p1", "Ready")
            assert e.get("v1", "Namespace", p["spec"]["namespace"]) is not None
        finally:
            mgr.stop()
            t.join(20)
    finally:
        e.close()
