"""SubjectAccessReview and TokenReview as a delegating authorizer/authenticator sees them (the secure
metrics endpoint's reviews): non-resource URLs, and an allowed review's reason naming the binding in
kube's RBAC authorizer's words (``rbac/validation``'s binding describers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from framework.apiserver import APIServer
from framework.client import Client

RBAC = "rbac.authorization.k8s.io/v1"
REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics-reader"}


@pytest.fixture
def server() -> Iterator[APIServer]:
    with APIServer(authorization="RBAC") as s:
        yield s


def sar(client: Client, user: dict, path: str = "/metrics", verb: str = "get") -> dict:
    spec = {
        "user": user["username"],
        "groups": user.get("groups") or [],
        "uid": user.get("uid"),
        "extra": user.get("extra"),
        "nonResourceAttributes": {"path": path, "verb": verb},
    }
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
    return client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)["status"]


def test_service_account_token_review_and_non_resource_access(server):
    admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
    admin.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "prom", "namespace": "default"}}
    )
    token = admin.request(
        "POST",
        "/api/v1/namespaces/default/serviceaccounts/prom/token",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )["status"]["token"]
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    status = admin.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=review)["status"]
    assert status["authenticated"] is True
    user = status["user"]
    assert user["username"] == "system:serviceaccount:default:prom"
    assert set(user["groups"]) == {
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    }
    assert user["uid"] and "authentication.kubernetes.io/credential-id" in user["extra"]

    bad = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "not-a-token"}}
    refused = admin.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", body=bad)["status"]
    assert "authenticated" not in refused and refused["user"] == {} and refused["error"]  # omitempty

    assert sar(admin, user) == {"allowed": False}  # no opinion from RBAC: no reason, as kube
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": "metrics-reader"},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        }
    )
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "prom-metrics"},
            "roleRef": REF,
            "subjects": [{"kind": "ServiceAccount", "name": "prom", "namespace": "default"}],
        }
    )
    assert sar(admin, user) == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "prom-metrics" of ClusterRole "metrics-reader" '
        'to ServiceAccount "prom/default"',
    }
    assert sar(admin, user, verb="post")["allowed"] is False
    assert sar(admin, user, path="/metrics/extra")["allowed"] is False


def test_reason_names_a_group_binding_and_a_role_binding(server):
    admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": "metrics-reader"},
            "rules": [{"nonResourceURLs": ["/metrics*"], "verbs": ["get"]}],
        }
    )
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "scrapers"},
            "roleRef": REF,
            "subjects": [{"kind": "Group", "name": "monitoring", "apiGroup": "rbac.authorization.k8s.io"}],
        }
    )
    status = sar(admin, {"username": "anyone", "groups": ["monitoring"]}, path="/metrics/extra")
    assert status["reason"] == (
        'RBAC: allowed by ClusterRoleBinding "scrapers" of ClusterRole "metrics-reader" to Group "monitoring"'
    )
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "Role",
            "metadata": {"name": "cm-reader", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        }
    )
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": "alice-cm", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        }
    )
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "alice",
            "resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "default"},
        },
    }
    status = admin.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)[
        "status"
    ]
    assert status == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "alice-cm/default" of Role "cm-reader" to User "alice"',
    }
