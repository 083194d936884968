"""Authentication, RBAC authorization, reviews, impersonation and request accounting (spec §19, §22)."""

from __future__ import annotations

import json
import subprocess

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.testing import APIServer, eventually
from framework.testing.kubectl import Kubectl


@pytest.fixture
def rbac_server():
    with APIServer(authorization="RBAC") as server:
        yield server


def api_for(server: APIServer, user: str, groups=()) -> client.ApiClient:
    return config.new_client_from_config(config_file=server.kubeconfig_for(user, groups))


def status_of(e: ApiException) -> dict:
    return json.loads(e.body)


def rbac(server) -> client.RbacAuthorizationV1Api:
    return client.RbacAuthorizationV1Api(server.api_client())


def role(name: str, rules: list[dict], ns: str | None = None) -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"metadata": meta, "rules": rules}


def binding(name: str, role_kind: str, role_name: str, subjects: list[dict], ns: str | None = None) -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {
        "metadata": meta,
        "subjects": subjects,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
    }


def user(name: str) -> dict:
    return {"kind": "User", "name": name, "apiGroup": "rbac.authorization.k8s.io"}


def test_unauthenticated_is_401(apiserver, raw):
    """22-1: no credentials (anonymous off) and unknown tokens are 401 with the exact Status."""
    expected = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    r = raw.http.request("GET", apiserver.url + "/api/v1/namespaces")
    assert r.status == 401 and json.loads(r.data) == expected
    r = raw.http.request(
        "GET", apiserver.url + "/api/v1/namespaces", headers={"Authorization": "Bearer nope"}
    )
    assert r.status == 401 and json.loads(r.data) == expected


def test_anonymous_when_enabled(tmp_path):
    with APIServer(anonymous=True, authorization="RBAC") as server:
        import urllib3

        http = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)
        assert http.request("GET", server.url + "/healthz").status == 200  # public-info-viewer
        r = http.request("GET", server.url + "/api/v1/namespaces")
        st = json.loads(r.data)
        assert r.status == 403
        assert st["message"] == (
            'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" '
            'in API group "" at the cluster scope'
        )
        r = http.request("GET", server.url + "/api/v1/namespaces", headers={"Authorization": "Bearer bad"})
        assert r.status == 401  # an unknown token is 401 even with anonymous on


def test_always_allow_allows_any_known_user(apiserver):
    core = client.CoreV1Api(api_for(apiserver, "nobody"))
    assert core.list_namespace().items


def test_rbac_forbidden_messages(rbac_server):
    """22-2: the real server's 403 messages, with and without a name, namespaced and cluster-wide."""
    core = client.CoreV1Api(api_for(rbac_server, "bob"))
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("x", "default")
    st = status_of(e.value)
    assert e.value.status == 403 and st["reason"] == "Forbidden"
    assert st["message"] == (
        'configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API group "" '
        'in the namespace "default"'
    )
    assert st["details"] == {"name": "x", "kind": "configmaps"}
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default")
    assert status_of(e.value)["message"] == (
        'configmaps is forbidden: User "bob" cannot list resource "configmaps" '
        'in API group "" in the namespace "default"'
    )
    coord = client.CoordinationV1Api(api_for(rbac_server, "bob"))
    with pytest.raises(ApiException) as e:
        coord.list_lease_for_all_namespaces()
    assert status_of(e.value)["message"] == (
        'leases.coordination.k8s.io is forbidden: User "bob" cannot list resource '
        '"leases" in API group "coordination.k8s.io" at the cluster scope'
    )
    # discovery is open to every authenticated user (system:discovery)
    assert client.VersionApi(api_for(rbac_server, "bob")).get_code().minor == "32"


def test_role_binding_scopes_to_namespace(rbac_server):
    r = rbac(rbac_server)
    client.CoreV1Api(rbac_server.api_client()).create_namespace({"metadata": {"name": "team"}})
    r.create_namespaced_role(
        "team",
        role("reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}], "team"),
    )
    r.create_namespaced_role_binding("team", binding("rb", "Role", "reader", [user("alice")], "team"))
    core = client.CoreV1Api(api_for(rbac_server, "alice"))
    assert core.list_namespaced_config_map("team").items is not None
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default")
    assert e.value.status == 403
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("team", {"metadata": {"name": "c"}})
    assert e.value.status == 403


def test_namespace_requests_are_in_that_namespace(rbac_server):
    """kube-apiserver's RequestInfo reads /api/v1/namespaces/NAME (and its /status, /finalize) as a
    request in namespace NAME: a RoleBinding there grants reading that Namespace (the default ``view``
    and ``admin`` roles rely on it), never another one nor the list."""
    r = rbac(rbac_server)
    admin_core = client.CoreV1Api(rbac_server.api_client())
    for name in ("team", "other"):
        admin_core.create_namespace({"metadata": {"name": name}})
    r.create_namespaced_role_binding("team", binding("view", "ClusterRole", "view", [user("alice")], "team"))
    core = client.CoreV1Api(api_for(rbac_server, "alice"))
    eventually(lambda: core.read_namespace("team").metadata.name == "team")
    assert core.read_namespace_status("team").metadata.name == "team"
    for call in (lambda: core.read_namespace("other"), core.list_namespace):
        with pytest.raises(ApiException) as e:
            call()
        assert e.value.status == 403
    with pytest.raises(ApiException) as e:
        core.delete_namespace("team")  # view does not delete
    assert e.value.status == 403
    assert 'in the namespace "team"' in status_of(e.value)["message"]


def test_resource_names_and_subresources(rbac_server):
    """22-2: resourceNames limit get; `namespaces/status` is its own resource."""
    r = rbac(rbac_server)
    r.create_cluster_role(
        role(
            "one-ns",
            [
                {
                    "apiGroups": [""],
                    "resources": ["namespaces"],
                    "resourceNames": ["default"],
                    "verbs": ["get"],
                },
                {"apiGroups": [""], "resources": ["namespaces/status"], "verbs": ["get"]},
            ],
        )
    )
    r.create_cluster_role_binding(binding("one-ns", "ClusterRole", "one-ns", [user("carol")]))
    core = client.CoreV1Api(api_for(rbac_server, "carol"))
    assert core.read_namespace("default").metadata.name == "default"
    with pytest.raises(ApiException):
        core.read_namespace("kube-system")
    assert core.read_namespace_status("kube-system").metadata.name == "kube-system"
    with pytest.raises(ApiException) as e:
        core.list_namespace()  # resourceNames never grant list
    assert e.value.status == 403


def test_group_and_service_account_subjects(rbac_server):
    r = rbac(rbac_server)
    admin_core = client.CoreV1Api(rbac_server.api_client())
    r.create_cluster_role_binding(
        binding(
            "viewers",
            "ClusterRole",
            "view",
            [
                {"kind": "Group", "name": "viewers", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "robot", "namespace": "default"},
            ],
        )
    )
    eventually(lambda: r.read_cluster_role("view").rules)
    assert client.CoreV1Api(api_for(rbac_server, "dave", ["viewers"])).list_namespaced_config_map("default")
    admin_core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    token = admin_core.create_namespaced_service_account_token(
        "robot", "default", {"spec": {"expirationSeconds": 600}}
    ).status.token
    cfg = client.Configuration()
    cfg.host, cfg.ssl_ca_cert = rbac_server.url, str(rbac_server.ca_path)
    cfg.api_key = {"authorization": "Bearer " + token}
    sa_core = client.CoreV1Api(client.ApiClient(cfg))
    assert sa_core.list_namespaced_config_map("default").items is not None
    review = client.AuthenticationV1Api(rbac_server.api_client()).create_token_review(
        {"spec": {"token": token}}
    )
    assert (
        review.status.authenticated and review.status.user.username == "system:serviceaccount:default:robot"
    )
    admin_core.delete_namespaced_service_account("robot", "default")
    with pytest.raises(ApiException) as e:
        sa_core.list_namespaced_config_map("default")
    assert e.value.status == 401  # tokens die with their ServiceAccount


def test_aggregation(rbac_server):
    """19-3: a ClusterRole labelled aggregate-to-view lands in view."""
    r = rbac(rbac_server)
    rule = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}
    body = role("widget-viewer", [rule])
    body["metadata"]["labels"] = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    r.create_cluster_role(body)
    eventually(lambda: any(x.resources == ["widgets"] for x in r.read_cluster_role("view").rules or []))
    eventually(lambda: any(x.resources == ["widgets"] for x in r.read_cluster_role("admin").rules or []))
    r.delete_cluster_role("widget-viewer")
    eventually(lambda: not any(x.resources == ["widgets"] for x in r.read_cluster_role("view").rules or []))


def test_escalation_prevented(rbac_server):
    """19-2: granting permissions one does not hold needs escalate (roles) or bind (bindings)."""
    r = rbac(rbac_server)
    client.CoreV1Api(rbac_server.api_client()).create_namespace({"metadata": {"name": "esc"}})
    r.create_namespaced_role(
        "esc",
        role(
            "role-admin",
            [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["roles", "rolebindings"],
                    "verbs": ["get", "list", "create", "update", "patch", "delete"],
                }
            ],
            "esc",
        ),
    )  # "*" would include escalate
    r.create_namespaced_role_binding("esc", binding("eve", "Role", "role-admin", [user("eve")], "esc"))
    eve = client.RbacAuthorizationV1Api(api_for(rbac_server, "eve"))
    grant = role("cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}], "esc")
    with pytest.raises(ApiException) as e:
        eve.create_namespaced_role("esc", grant)
    st = status_of(e.value)
    assert e.value.status == 403
    assert st["message"] == (
        'roles.rbac.authorization.k8s.io "cm-reader" is forbidden: user "eve" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}'
    )
    r.create_namespaced_role("esc", grant)  # an admin may
    with pytest.raises(ApiException) as e:
        eve.create_namespaced_role_binding("esc", binding("b", "Role", "cm-reader", [user("eve")], "esc"))
    assert e.value.status == 403 and "attempting to grant RBAC permissions" in status_of(e.value)["message"]
    r.create_namespaced_role(
        "esc",
        role(
            "binder",
            [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["roles"],
                    "verbs": ["bind", "escalate"],
                }
            ],
            "esc",
        ),
    )
    r.create_namespaced_role_binding("esc", binding("eve-binder", "Role", "binder", [user("eve")], "esc"))
    eve.create_namespaced_role_binding("esc", binding("b", "Role", "cm-reader", [user("eve")], "esc"))
    client.CoreV1Api(rbac_server.api_client()).create_namespaced_config_map(
        "esc", {"metadata": {"name": "x"}}
    )
    assert (
        client.CoreV1Api(api_for(rbac_server, "eve")).read_namespaced_config_map("x", "esc").metadata.name
        == "x"
    )
    eve.create_namespaced_role(
        "esc", role("more", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}], "esc")
    )


def test_subject_access_reviews(rbac_server):
    """22-3: SAR, SSAR and LSAR evaluated with the RBAC rules."""
    r = rbac(rbac_server)
    r.create_cluster_role(
        role("lease-get", [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}])
    )
    r.create_cluster_role_binding(binding("frank", "ClusterRole", "lease-get", [user("frank")]))
    authz = client.AuthorizationV1Api(rbac_server.api_client())
    attrs = {"group": "coordination.k8s.io", "resource": "leases", "verb": "get", "namespace": "default"}
    sar = authz.create_subject_access_review({"spec": {"user": "frank", "resourceAttributes": attrs}})
    assert sar.status.allowed is True
    sar = authz.create_subject_access_review(
        {"spec": {"user": "frank", "resourceAttributes": {**attrs, "verb": "list"}}}
    )
    assert sar.status.allowed is False
    with pytest.raises(ApiException) as e:
        authz.create_subject_access_review({"spec": {"resourceAttributes": attrs}})
    assert e.value.status == 422
    frank_authz = client.AuthorizationV1Api(api_for(rbac_server, "frank"))
    ssar = frank_authz.create_self_subject_access_review({"spec": {"resourceAttributes": attrs}})
    assert ssar.status.allowed is True
    lsar = authz.create_namespaced_local_subject_access_review(
        "default", {"spec": {"user": "frank", "resourceAttributes": attrs}}
    )
    assert lsar.status.allowed is True
    with pytest.raises(ApiException) as e:
        authz.create_namespaced_local_subject_access_review(
            "kube-system", {"spec": {"user": "frank", "resourceAttributes": attrs}}
        )
    assert e.value.status == 400


def test_impersonation(rbac_server):
    """22-4: admins impersonate; others need the impersonate verb."""
    admin = rbac_server.api_client()
    admin.set_default_header("Impersonate-User", "grace")
    with pytest.raises(ApiException) as e:
        client.CoreV1Api(admin).list_namespaced_config_map("default")
    assert 'User "grace" cannot list' in status_of(e.value)["message"]
    mallory = api_for(rbac_server, "mallory")
    mallory.set_default_header("Impersonate-User", "admin")
    with pytest.raises(ApiException) as e:
        client.CoreV1Api(mallory).list_namespace()
    assert status_of(e.value)["message"] == (
        'users "admin" is forbidden: User "mallory" cannot impersonate resource '
        '"users" in API group "" at the cluster scope'
    )


def test_client_certificate(rbac_server):
    """22-1: CN is the user, O the groups."""
    api = config.new_client_from_config(
        config_file=rbac_server.kubeconfig_for("ops", ["system:masters"], cert=True)
    )
    assert client.CoreV1Api(api).list_namespace().items


def test_kubectl_token_and_as(rbac_server, tmp_path):
    token = rbac_server.add_user("henry")
    kubectl = Kubectl(rbac_server.kubeconfig, tmp_path).run

    res = kubectl("--token", token, "get", "configmaps")
    assert res.returncode != 0
    assert (
        "Error from server (Forbidden): configmaps is forbidden: "
        'User "henry" cannot list resource "configmaps" in API group "" in the namespace "default"'
    ) in res.stderr
    res = kubectl("--as", "henry", "get", "configmaps")
    assert res.returncode != 0 and 'User "henry" cannot list' in res.stderr
    assert kubectl("get", "configmaps").returncode == 0


def test_request_accounting(apiserver, core, raw):
    apiserver.reset_request_counts()
    core.list_namespaced_config_map("default")
    with pytest.raises(ApiException):
        core.read_namespaced_config_map("missing", "default")
    counts = apiserver.request_counts()
    assert counts[("admin", "list", "configmaps", 200)] == 1
    assert counts[("admin", "get", "configmaps", 404)] == 1
    r = raw.request("GET", "/metrics")
    assert r.status == 200
    assert b'apiserver_request_total{code="404",resource="configmaps",user="admin",verb="GET"} 1.0' in r.data


def test_kubectl_auth_can_i(rbac_server, tmp_path):
    """22-3 through kubectl: SelfSubjectAccessReview (sent as protobuf by kubectl 1.32)."""
    r = rbac(rbac_server)
    r.create_cluster_role(
        role(
            "lease-reader",
            [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list"]}],
        )
    )
    r.create_cluster_role_binding(binding("ivy", "ClusterRole", "lease-reader", [user("ivy")]))

    def can_i(*args: str) -> subprocess.CompletedProcess:
        return Kubectl(rbac_server.kubeconfig, tmp_path).run("auth", "can-i", *args)

    yes = can_i("list", "leases.coordination.k8s.io", "--as", "ivy")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes")
    no = can_i("delete", "leases.coordination.k8s.io", "--as", "ivy")
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    admin = can_i("delete", "configmaps")
    assert admin.stdout.strip() == "yes"
