"""Member RBAC (Gardener's pkg/component/garden/projectrbac), end to end and per component.

The end-to-end tests run gcm as its ServiceAccount with RBAC authorization on; members' access is
exercised with ``kubectl --token``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from framework.client import Client, Forbidden
from gcm.controllers.project.rbac import ProjectRBAC, RBACError, subject_buckets
from tests.gcm.controllers.project import project_harness as h

P, RBAC = h.P, h.RBAC
ROOT = Path(__file__).resolve().parents[4]
KUBECTL = "/usr/bin/kubectl"
RBAC_GROUP = "rbac.authorization.k8s.io"


def u(name: str) -> dict:
    return {"apiGroup": RBAC_GROUP, "kind": "User", "name": name}


def ns_rule(ns: str) -> dict:
    return {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [ns], "verbs": ["get"]}


def project_rule(p: str, verbs: list[str]) -> dict:
    return {
        "apiGroups": ["core.gardener.cloud"],
        "resources": ["projects"],
        "resourceNames": [p],
        "verbs": verbs,
    }


WORKED_EXAMPLE_MEMBERS = [
    {**u("member1"), "role": "extension:foo", "roles": ["viewer"]},
    {**u("member2"), "roles": ["admin", "uam"]},
    {**u("member3"), "roles": ["owner", "viewer", "admin"]},
    {**u("member4"), "roles": ["serviceaccountmanager"]},
]


def rbac_state(env, project: str, ns: str) -> dict[tuple[str, str], dict]:
    out = {}
    for kind, namespace in (("ClusterRole", None), ("ClusterRoleBinding", None), ("RoleBinding", ns)):
        for obj in env.admin.list(RBAC, kind, namespace=namespace)["items"]:
            name = obj["metadata"]["name"]
            if (
                name.endswith(f":{project}")
                or f":{project}:" in name
                or (kind == "RoleBinding" and name.startswith("gardener.cloud:"))
            ):
                out[(kind, name)] = obj
    return out


def subjects(state, kind, name):
    return [s["name"] for s in state[(kind, name)].get("subjects") or []]


# --- end to end ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")
def test_d31_member_access_with_kubectl_token(env, tmp_path):
    """Scenario 31, plus: each role gets exactly its access (checked with the member's own token)."""
    tokens = {name: env.server.add_user(name) for name in ("alice", "vera", "ursula", "stranger")}
    kube_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}

    def kubectl(who: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [KUBECTL, "--kubeconfig", env.embedded.admin_kubeconfig, "--token", tokens[who], *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=kube_env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
        )

    env.create_project("p1", namespace="garden-p1", members=[])
    env.wait_phase("p1", "Ready")
    r = kubectl("alice", "get", "namespace", "garden-p1")
    assert r.returncode != 0 and "Forbidden" in r.stderr, r.stderr

    env.admin.patch(
        P,
        "Project",
        "p1",
        {
            "spec": {
                "members": [
                    {**u("alice"), "role": "admin"},
                    {**u("vera"), "role": "viewer"},
                    {**u("ursula"), "role": "uam"},
                ]
            }
        },
    )
    env.wait_phase("p1", "Ready")
    h.wait_for(
        lambda: kubectl("alice", "get", "namespace", "garden-p1").returncode == 0, message="admin access"
    )

    def ok(who: str, *args: str) -> bool:
        return kubectl(who, *args).returncode == 0

    def can(who: str, verb: str, resource: str, ns: str | None = "garden-p1") -> bool:
        r = kubectl(who, "auth", "can-i", verb, resource, *(["-n", ns] if ns else []))
        return r.stdout.strip() == "yes"

    # admin: namespace read, Project edit, namespaced member permissions; nothing elsewhere.
    assert ok("alice", "get", "project", "p1")
    assert ok("alice", "create", "secret", "generic", "s1", "-n", "garden-p1")
    assert can("alice", "create", "shoots.core.gardener.cloud")
    assert can("alice", "delete", "projects.core.gardener.cloud/p1", None)
    assert not can("alice", "manage-members", "projects.core.gardener.cloud/p1", None)
    assert not can("alice", "delete", "namespace/garden-p1", None)
    assert not can("alice", "get", "secrets", "kube-system")
    assert not ok("alice", "get", "namespace", "kube-system")
    # viewer: read, but no secrets and no writes.
    assert ok("vera", "get", "namespace", "garden-p1")
    assert ok("vera", "get", "configmaps", "-n", "garden-p1")
    assert not ok("vera", "get", "secrets", "-n", "garden-p1")
    assert not can("vera", "create", "configmaps")
    assert not can("vera", "update", "projects.core.gardener.cloud/p1", None)
    # uam: manage-members on the Project only, no namespace access.
    assert can("ursula", "manage-members", "projects.core.gardener.cloud/p1", None)
    assert not ok("ursula", "get", "namespace", "garden-p1")
    # non-member: nothing.
    assert not ok("stranger", "get", "namespace", "garden-p1")
    assert not ok("stranger", "get", "project", "p1")

    # Removing the member removes the access.
    env.admin.patch(P, "Project", "p1", {"spec": {"members": [{**u("vera"), "role": "viewer"}]}})
    h.wait_for(lambda: not ok("alice", "get", "namespace", "garden-p1"), message="admin access revoked")


def test_d32_worked_example_subjects_and_rules(ext_env):
    env = ext_env
    env.create_project(
        "foobar", namespace="garden-foobar", members=WORKED_EXAMPLE_MEMBERS, owner=u("member3")
    )
    p = env.wait_phase("foobar", "Ready")
    state = rbac_state(env, "foobar", "garden-foobar")
    base = "gardener.cloud:system:project"
    assert subjects(state, "ClusterRoleBinding", f"{base}:foobar") == ["member3"]
    assert subjects(state, "ClusterRoleBinding", f"{base}-uam:foobar") == ["member2"]
    assert subjects(state, "RoleBinding", f"{base}-serviceaccountmanager") == ["member3", "member4"]
    assert subjects(state, "ClusterRoleBinding", f"{base}-member:foobar") == ["member2", "member3"]
    assert subjects(state, "RoleBinding", f"{base}-member") == ["member2", "member3"]
    assert subjects(state, "ClusterRoleBinding", f"{base}-viewer:foobar") == ["member1", "member3"]
    assert subjects(state, "RoleBinding", f"{base}-viewer") == ["member1", "member3"]
    ext = "gardener.cloud:extension:project:foobar:foo"
    assert subjects(state, "RoleBinding", ext) == ["member1"]
    assert state[("ClusterRole", ext)]["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.gardener.cloud/aggregate-to-extension-role": "foo"}}]
    }
    labels = {"gardener.cloud/role": "extension-project-role", "project.gardener.cloud/name": "foobar"}
    assert state[("ClusterRole", ext)]["metadata"]["labels"] == labels
    assert state[("RoleBinding", ext)]["metadata"]["labels"] == labels

    rules = {
        f"{base}:foobar": [
            ns_rule("garden-foobar"),
            project_rule("foobar", ["get", "patch", "manage-members", "update", "delete"]),
        ],
        f"{base}-uam:foobar": [project_rule("foobar", ["get", "manage-members", "patch", "update"])],
        f"{base}-member:foobar": [
            ns_rule("garden-foobar"),
            project_rule("foobar", ["get", "patch", "update", "delete"]),
        ],
        f"{base}-viewer:foobar": [ns_rule("garden-foobar"), project_rule("foobar", ["get"])],
    }
    for name, want in rules.items():
        assert state[("ClusterRole", name)]["rules"] == want, name
    owner = {
        "apiVersion": P,
        "kind": "Project",
        "name": "foobar",
        "uid": p["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": False,
    }
    standard = [k for k in state if not k[1].startswith("gardener.cloud:extension:")]
    assert len(standard) == 11
    for key, obj in state.items():
        assert obj["metadata"]["ownerReferences"] == [owner], key
        if key in standard:
            assert not obj["metadata"].get("labels"), key
        if key[0] != "ClusterRole":
            assert obj["roleRef"] == {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": key[1]}


def test_d39_member_changes_update_bindings_exactly(ext_env):
    env = ext_env
    env.create_project("p1", namespace="garden-p1", members=WORKED_EXAMPLE_MEMBERS)
    env.wait_phase("p1", "Ready")
    # member2 loses every role, member5 arrives, member1's extension role changes foo -> bar.
    members = [
        {**u("member1"), "role": "extension:bar", "roles": ["viewer"]},
        {**u("member2")},
        {**u("member3"), "roles": ["owner", "viewer", "admin"]},
        {**u("member4"), "roles": ["serviceaccountmanager"]},
        {**u("member5"), "role": "admin"},
    ]
    env.admin.patch(P, "Project", "p1", {"spec": {"members": members}})
    env.wait_phase("p1", "Ready")
    base = "gardener.cloud:system:project"

    def converged():
        state = rbac_state(env, "p1", "garden-p1")
        return (
            ("RoleBinding", "gardener.cloud:extension:project:p1:foo") not in state
            and ("ClusterRole", "gardener.cloud:extension:project:p1:foo") not in state
            and state
        )

    state = h.wait_for(converged, message="stale extension role removed")
    assert subjects(state, "ClusterRoleBinding", f"{base}-uam:p1") == []
    assert subjects(state, "ClusterRoleBinding", f"{base}-member:p1") == ["member3", "member5"]
    assert subjects(state, "RoleBinding", f"{base}-member") == ["member3", "member5"]
    assert subjects(state, "RoleBinding", f"{base}-serviceaccountmanager") == ["member3", "member4"]
    assert subjects(state, "RoleBinding", f"{base}-viewer") == ["member1", "member3"]
    assert subjects(state, "RoleBinding", "gardener.cloud:extension:project:p1:bar") == ["member1"]
    assert ("ClusterRole", "gardener.cloud:extension:project:p1:bar") in state
    for obj in state.values():
        assert "member2" not in [s["name"] for s in obj.get("subjects") or []]


def test_d38_viewer_reads_namespacedcloudprofile(env, tmp_path):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "namespacedcloudprofiles.core.gardener.cloud"},
        "spec": {
            "group": "core.gardener.cloud",
            "scope": "Namespaced",
            "names": {"plural": "namespacedcloudprofiles", "kind": "NamespacedCloudProfile"},
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
    env.server.install_crds([crd])
    env.create_project("p1", namespace="garden-p1", members=[{**u("vera"), "role": "viewer"}])
    env.wait_phase("p1", "Ready")
    env.admin.create(
        {
            "apiVersion": P,
            "kind": "NamespacedCloudProfile",
            "metadata": {"name": "ncp", "namespace": "garden-p1"},
            "spec": {"parent": "x"},
        }
    )

    def as_user(name: str) -> Client:
        return Client.from_kubeconfig(env.server.kubeconfig_for(name), qps=0)

    vera, stranger = as_user("vera"), as_user("stranger")
    obj = h.wait_for(lambda: vera.get(P, "NamespacedCloudProfile", "ncp", "garden-p1"))
    with pytest.raises(Forbidden):
        vera.update(obj)
    with pytest.raises(Forbidden):
        stranger.get(P, "NamespacedCloudProfile", "ncp", "garden-p1")


# --- the component against a live client (scenarios 33-37) --------------------------------------------


@pytest.fixture
def live(apiserver):
    apiserver.install_crds(ROOT / "manifests" / "crds")
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-foobar"}})
    project = client.create(
        {
            "apiVersion": P,
            "kind": "Project",
            "metadata": {"name": "foobar"},
            "spec": {"namespace": "garden-foobar", "owner": u("member3"), "members": WORKED_EXAMPLE_MEMBERS},
        }
    )
    return apiserver, client, project


def _names(client, kind, namespace=None, selector=None):
    return {
        o["metadata"]["name"]
        for o in client.list(RBAC, kind, namespace=namespace, label_selector=selector)["items"]
    }


def test_d32_buckets_unit():
    project = {
        "metadata": {"name": "foobar", "uid": "u"},
        "spec": {"namespace": "garden-foobar", "owner": u("member3"), "members": WORKED_EXAMPLE_MEMBERS},
    }
    b = subject_buckets(project)
    names = {k: [s["name"] for s in v] for k, v in b.items() if k != "extensions"}
    assert names == {
        "admins": ["member3"],
        "members": ["member2", "member3"],
        "uams": ["member2"],
        "serviceaccountmanagers": ["member3", "member4"],
        "viewers": ["member1", "member3"],
    }
    assert {k: [s["name"] for s in v] for k, v in b["extensions"].items()} == {"foo": ["member1"]}


def test_d33_destroy(live):
    _, client, project = live
    rbac = ProjectRBAC(client, project)
    rbac.deploy()
    assert len(_names(client, "RoleBinding", "garden-foobar")) == 4
    rbac.destroy()
    assert _names(client, "RoleBinding", "garden-foobar") == set()
    assert not {n for n in _names(client, "ClusterRole") if "foobar" in n}
    assert not {n for n in _names(client, "ClusterRoleBinding") if "foobar" in n}


def test_d34_cleanup_without_extension_objects(live):
    _, client, project = live
    ProjectRBAC(client, project).delete_stale_extension_roles()


@pytest.mark.parametrize("resource", ["rolebindings", "clusterroles"])
def test_d35_list_failure_is_returned(live, resource):
    server, client, project = live
    server.inject_failure("list", f"{resource}.rbac.authorization.k8s.io", 500)
    with pytest.raises(Exception, match=r"500|Internal"):
        ProjectRBAC(client, project).delete_stale_extension_roles()


@pytest.mark.parametrize("resource", ["rolebindings", "clusterroles"])
def test_d36_delete_failure_is_returned(live, resource):
    server, client, project = live
    rbac = ProjectRBAC(client, project)
    rbac.deploy()
    server.inject_failure("delete", f"{resource}.rbac.authorization.k8s.io", 500)
    with pytest.raises(Exception, match=r"500|Internal"):
        rbac.delete_stale_extension_roles(wanted=set())


def test_d37_only_unused_extension_roles_are_deleted(live):
    _, client, project = live
    both = {
        **project,
        "spec": {**project["spec"], "members": [{**u("m"), "roles": ["extension:foo", "extension:bar"]}]},
    }
    ProjectRBAC(client, both).deploy()
    selector = "gardener.cloud/role=extension-project-role,project.gardener.cloud/name=foobar"
    assert _names(client, "RoleBinding", "garden-foobar", selector) == {
        "gardener.cloud:extension:project:foobar:foo",
        "gardener.cloud:extension:project:foobar:bar",
    }
    only_foo = {**project, "spec": {**project["spec"], "members": [{**u("m"), "role": "extension:foo"}]}}
    ProjectRBAC(client, only_foo).delete_stale_extension_roles()
    assert _names(client, "RoleBinding", "garden-foobar", selector) == {
        "gardener.cloud:extension:project:foobar:foo"
    }
    assert _names(client, "ClusterRole", None, selector) == {"gardener.cloud:extension:project:foobar:foo"}


def test_only_extension_objects_named_so_are_deleted(live):
    """An object with the extension labels but not named gardener.cloud:extension:project:<p>:<r> is not
    deleted (Gardener would delete it; gcm's admission policy refuses it, docs/rbac.md)."""
    _, client, project = live
    labels = {"gardener.cloud/role": "extension-project-role", "project.gardener.cloud/name": "foobar"}
    role_ref = {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "view"}
    client.create(
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "labelled", "labels": labels}}
    )
    client.create(
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": "labelled", "namespace": "garden-foobar", "labels": labels},
            "roleRef": role_ref,
        }
    )
    rbac = ProjectRBAC(client, project)
    rbac.deploy()
    rbac.delete_stale_extension_roles(wanted=set())
    selector = "gardener.cloud/role=extension-project-role,project.gardener.cloud/name=foobar"
    assert _names(client, "ClusterRole", None, selector) == {"labelled"}
    assert _names(client, "RoleBinding", "garden-foobar", selector) == {"labelled"}
    rbac.destroy()
    assert _names(client, "ClusterRole", None, selector) == {"labelled"}


def test_deploy_collects_every_error(live):
    server, client, project = live
    server.inject_failure("create", "rolebindings.rbac.authorization.k8s.io", 500, count=None)
    with pytest.raises(RBACError) as exc:
        ProjectRBAC(client, project).deploy()
    assert len(exc.value.errors) == 4  # three standard RoleBindings and the extension one
    server.clear_failures()
    assert len(_names(client, "ClusterRoleBinding") & {"gardener.cloud:system:project:foobar"}) == 1


def test_rbac_needs_namespace():
    with pytest.raises(ValueError):
        ProjectRBAC(None, {"metadata": {"name": "p", "uid": "u"}, "spec": {}})


def test_extension_roles_off_writes_none_and_removes_leftovers(live):
    """controllers.project.extensionRoles: false (docs/rbac.md): the 11 standard objects only, and the
    extension objects written while it was on are deleted although a member still uses the role."""
    _, client, project = live
    ProjectRBAC(client, project).deploy()
    selector = "gardener.cloud/role=extension-project-role,project.gardener.cloud/name=foobar"
    assert _names(client, "ClusterRole", None, selector) == {"gardener.cloud:extension:project:foobar:foo"}
    off = ProjectRBAC(client, project, extension_roles=False)
    off.deploy()
    off.delete_stale_extension_roles()
    assert _names(client, "ClusterRole", None, selector) == set()
    assert _names(client, "RoleBinding", "garden-foobar", selector) == set()
    assert len(_names(client, "RoleBinding", "garden-foobar")) == 3
    assert {n for n in _names(client, "ClusterRole") if n.endswith(":foobar")} == {
        f"gardener.cloud:system:{role}:foobar"
        for role in ("project", "project-uam", "project-member", "project-viewer")
    }
