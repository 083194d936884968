"""Security rules and robustness of the Project controller (issue 7 "Tests"):

- ``kube-system``, ``default``, ``garden`` and unlabelled namespaces are never adopted, modified or
  deleted (the CRD rejects the first two; the reconciler refuses them anyway);
- two Projects racing for one namespace: exactly one wins;
- 200 Projects created at once all reach Ready with complete RBAC;
- a restart mid-way (including after failed writes) converges with nothing half-done;
- a second pass over a Ready Project writes nothing.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from framework.client import Client, Invalid
from framework.manager import Manager
from framework.testing import consistently
from gcm.controllers.project.project.reconciler import (
    NamespaceError,
    ProjectReconciler,
    generated_namespace_name,
)
from tests.gcm.controllers.project import project_harness as h

P, RBAC = h.P, h.RBAC
STANDARD_ROLEBINDINGS = {
    "gardener.cloud:system:project-member",
    "gardener.cloud:system:project-viewer",
    "gardener.cloud:system:project-serviceaccountmanager",
}


def snapshot(env, name):
    ns = env.get("v1", "Namespace", name)
    return ns["metadata"]["resourceVersion"], ns["metadata"].get("labels"), ns["metadata"].get("annotations")


@pytest.mark.parametrize("namespace", ["kube-system", "default"])
def test_system_namespaces_rejected_by_schema(env, namespace):
    before = snapshot(env, namespace)
    with pytest.raises(Invalid):
        env.create_project("p1", namespace=namespace)
    assert env.project("p1") is None
    assert snapshot(env, namespace) == before


@pytest.mark.parametrize("namespace", ["kube-system", "default", "garden"])
def test_reconciler_refuses_unlabelled_namespaces_even_without_schema(env, namespace):
    """Defence in depth: the reconciler itself neither adopts nor releases an unlabelled namespace."""
    gcm = Client.from_kubeconfig(env.embedded.gcm_kubeconfig, qps=0)
    reconciler = ProjectReconciler(gcm, h.FakeRecorder(), env.cfg.controllers.project)
    project = {"metadata": {"name": "evil", "uid": "uid-evil"}, "spec": {"namespace": namespace}}
    before = snapshot(env, namespace)
    with pytest.raises(NamespaceError, match="needs the project labels"):
        reconciler.ensure_namespace(project)
    assert reconciler.release_namespace(project, namespace) is True  # released without touching it
    assert snapshot(env, namespace) == before
    assert env.get("v1", "Namespace", namespace)["metadata"].get("deletionTimestamp") is None


def test_adoption_is_decided_again_on_the_live_namespace(env):
    """A cache that still shows the project labels does not decide an adoption: the labels were removed
    since, and the live re-check refuses the namespace before anything is written."""
    gcm = Client.from_kubeconfig(env.embedded.gcm_kubeconfig, qps=0)
    env.create_namespace("garden-lag", labels=h.project_labels("lag"))
    stale = Manager(gcm)
    cached_labels = stale.client.get("v1", "Namespace", "garden-lag")["metadata"]["labels"]
    assert h.project_labels("lag").items() <= cached_labels.items()
    assert stale.cache.stop()  # from here on the cache lags behind every write
    env.admin.patch(
        "v1", "Namespace", "garden-lag", {"metadata": {"labels": {"project.gardener.cloud/name": None}}}
    )
    before = snapshot(env, "garden-lag")
    reconciler = ProjectReconciler(
        stale.client, h.FakeRecorder(), env.cfg.controllers.project, api_reader=gcm
    )
    project = {"metadata": {"name": "lag", "uid": "uid-lag"}, "spec": {"namespace": "garden-lag"}}
    with pytest.raises(NamespaceError, match="needs the project labels"):
        reconciler.ensure_namespace(project)
    assert snapshot(env, "garden-lag") == before
    # Labelled again (live only): the adoption goes ahead on the live namespace, at its resourceVersion.
    env.admin.patch("v1", "Namespace", "garden-lag", {"metadata": {"labels": h.project_labels("lag")}})
    adopted = reconciler.ensure_namespace(project)
    assert adopted["metadata"]["annotations"]["namespace.gardener.cloud/project"] == "uid-lag"
    assert (
        adopted["metadata"]["annotations"]["namespace.gardener.cloud/keep-after-project-deletion"] == "true"
    )


def test_garden_namespace_is_not_adopted(env):
    """``garden`` passes the schema (it is gcm's own namespace here): Failed, untouched, survives deletion."""
    before = snapshot(env, "garden")
    env.create_project("p1", namespace="garden", members=[h.user("alice", role="admin")])
    env.wait_phase("p1", "Failed")
    ev = env.wait_event("p1", "NamespaceReconcileFailed")
    assert ev["type"] == "Warning"
    assert snapshot(env, "garden") == before
    bindings = env.admin.list(RBAC, "RoleBinding", namespace="garden")["items"]
    assert not [rb for rb in bindings if rb["metadata"]["name"].startswith("gardener.cloud:system:project")]
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    assert snapshot(env, "garden") == before


def test_unlabelled_garden_namespace_with_content(env):
    before = snapshot(env, env.create_namespace("garden-data")["metadata"]["name"])
    env.admin.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "precious", "namespace": "garden-data"},
        }
    )
    env.create_project("p1", namespace="garden-data")
    env.wait_phase("p1", "Failed")
    env.wait_event("p1", "NamespaceReconcileFailed")
    env.delete_project("p1")
    env.wait_gone(P, "Project", "p1")
    assert snapshot(env, "garden-data") == before
    assert env.get("v1", "ConfigMap", "precious", "garden-data") is not None


def test_two_projects_race_for_one_namespace(make_env):
    env = make_env(start=False)
    a = env.create_project("pa", namespace="garden-race", members=[h.user("a", role="admin")])
    b = env.create_project("pb", namespace="garden-race", members=[h.user("b", role="admin")])
    env.start()

    def settled():
        phases = {n: (env.project(n).get("status") or {}).get("phase") for n in ("pa", "pb")}
        return phases if set(phases.values()) == {"Ready", "Failed"} else None

    phases = h.wait_for(settled, message="one Ready, one Failed")
    consistently(lambda: settled() == phases, duration=0.3, message="the race outcome stays")
    winner, loser = ("pa", "pb") if phases["pa"] == "Ready" else ("pb", "pa")
    uid = {"pa": a, "pb": b}[winner]["metadata"]["uid"]
    meta = env.get("v1", "Namespace", "garden-race")["metadata"]
    assert meta["labels"]["project.gardener.cloud/name"] == winner
    assert meta["annotations"]["namespace.gardener.cloud/project"] == uid
    assert [o["name"] for o in meta["ownerReferences"]] == [winner]
    member = env.get(RBAC, "RoleBinding", "gardener.cloud:system:project-member", "garden-race")
    assert [s["name"] for s in member["subjects"]] == [{"pa": "a", "pb": "b"}[winner]]
    assert env.get(RBAC, "ClusterRole", f"gardener.cloud:system:project:{loser}") is None
    # Deleting the loser leaves the winner's namespace alone.
    env.delete_project(loser)
    env.wait_gone(P, "Project", loser)
    after = env.get("v1", "Namespace", "garden-race")["metadata"]
    assert not after.get("deletionTimestamp") and after["labels"]["project.gardener.cloud/name"] == winner


# --- scale, restart, idempotence -------------------------------------------------------------------------


def create_many(env, names, threads=4, **kw):
    chunks = [names[i::threads] for i in range(threads)]

    def run(chunk):
        client = Client.from_kubeconfig(env.embedded.admin_kubeconfig, qps=0)
        for n in chunk:
            client.create(
                {"apiVersion": P, "kind": "Project", "metadata": {"name": n}, "spec": kw.get("spec", {})}
            )

    ts = [threading.Thread(target=run, args=(c,)) for c in chunks]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def complete(env, names, timeout=60.0):
    """Wait until every Project is Ready (current generation) and its namespace and RBAC are complete."""

    def ready():
        projects = {p["metadata"]["name"]: p for p in env.admin.list(P, "Project")["items"]}
        for n in names:
            p = projects.get(n)
            st = (p or {}).get("status") or {}
            if st.get("phase") != "Ready" or st.get("observedGeneration") != p["metadata"]["generation"]:
                return None
        return projects

    projects = h.wait_for(ready, timeout, "all projects Ready")
    namespaces = {
        n["metadata"]["name"]: n
        for n in env.admin.list("v1", "Namespace", label_selector="gardener.cloud/role=project")["items"]
    }
    rbs = Counter()
    for rb in env.admin.list(RBAC, "RoleBinding")["items"]:
        if rb["metadata"]["name"] in STANDARD_ROLEBINDINGS:
            rbs[rb["metadata"]["namespace"]] += 1
    crs = {c["metadata"]["name"] for c in env.admin.list(RBAC, "ClusterRole")["items"]}
    crbs = {c["metadata"]["name"] for c in env.admin.list(RBAC, "ClusterRoleBinding")["items"]}
    for n in names:
        ns = projects[n]["spec"]["namespace"]
        assert ns == generated_namespace_name(projects[n])
        assert namespaces[ns]["metadata"]["labels"]["project.gardener.cloud/name"] == n
        assert rbs[ns] == 3, (n, rbs[ns])
        for prefix in ("", "-uam", "-member", "-viewer"):
            assert f"gardener.cloud:system:project{prefix}:{n}" in crs
            assert f"gardener.cloud:system:project{prefix}:{n}" in crbs
    return projects, namespaces


def test_200_projects_at_once(env):
    names = [f"s{i:03d}" for i in range(200)]
    create_many(env, names)
    _, namespaces = complete(env, names, timeout=90)
    assert len(namespaces) == 200  # the time it takes is bench/project_bench.py's to measure


def test_restart_midway_converges(make_env):
    env = make_env()
    # Phase 1: every spec.namespace write fails, so namespaces exist but the Projects do not point at them.
    env.server.inject_failure("update", "projects.core.gardener.cloud", 500, count=None)
    first = [f"r{i:02d}" for i in range(20)]
    create_many(env, first)
    h.wait_for(
        lambda: all((env.project(n).get("status") or {}).get("phase") == "Failed" for n in first),
        30,
        "all Failed",
    )
    env.stop()
    env.server.clear_failures()
    # Phase 2: more Projects arrive while gcm is down; then gcm restarts and is stopped again mid-way.
    second = [f"q{i:02d}" for i in range(30)]
    create_many(env, second)
    env.start()
    time.sleep(0.2)
    env.stop()
    env.start()
    projects, namespaces = complete(env, first + second, timeout=60)
    # Nothing half-done: exactly one namespace per Project (the deterministic names were reused).
    assert sorted(namespaces) == sorted(p["spec"]["namespace"] for p in projects.values())


def test_second_pass_writes_nothing(make_env):
    cfg = h.make_config(
        quotas=[
            {
                "config": {
                    "apiVersion": "v1",
                    "kind": "ResourceQuota",
                    "spec": {"hard": {"count/configmaps": "50"}},
                },
                "projectSelector": {},
            }
        ]
    )
    env = make_env(cfg)
    env.create_namespace("garden-p1", labels=h.project_labels("p1"))  # adopted: exercises the update path
    env.create_project(
        "p1",
        namespace="garden-p1",
        owner=h.user("alice"),
        members=[h.user("alice", role="owner"), h.user("bob", roles=["viewer", "extension:foo"])],
    )
    env.wait_phase("p1", "Ready")
    h.wait_for(
        lambda: (
            (env.get("v1", "ResourceQuota", "gardener", "garden-p1") or {})
            .get("metadata", {})
            .get("annotations")
        ),
        message="quota adjusted",
    )
    time.sleep(0.5)
    env.server.reset_request_counts()
    for _ in range(2):
        env.reconcile_again("p1")
    writes = {k: v for k, v in env.gcm_writes().items() if not k[1].startswith("events")}
    assert writes == {}
    assert env.reconciles(result="error") == 0
