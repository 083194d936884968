"""Per-request records of the accounting (``APIServer.record_requests`` / ``recorded_requests``): the
attributes authorization saw, refused requests included, and watches the client closed."""

from __future__ import annotations

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from framework.apiserver.accounting.requests import RequestRecord
from framework.testing import APIServer, eventually


@pytest.fixture
def rbac_server():
    with APIServer(authorization="RBAC") as server:
        yield server


def api_for(server: APIServer, user: str) -> client.ApiClient:
    return config.new_client_from_config(config_file=server.kubeconfig_for(user))


def test_off_by_default(rbac_server):
    client.CoreV1Api(rbac_server.api_client()).list_namespace()
    assert rbac_server.recorded_requests() == []
    assert rbac_server.request_counts()  # counting is always on


def test_records_what_authorization_saw(rbac_server):
    admin = rbac_server.api_client()
    client.RbacAuthorizationV1Api(admin).create_namespaced_role(
        "default",
        {
            "metadata": {"name": "cm"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "watch"]}],
        },
    )
    client.RbacAuthorizationV1Api(admin).create_namespaced_role_binding(
        "default",
        {
            "metadata": {"name": "cm"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ann"}],
        },
    )
    rbac_server.record_requests()
    ann = client.CoreV1Api(api_for(rbac_server, "ann"))
    ann.create_namespaced_config_map("default", {"metadata": {"name": "c1"}})
    ann.read_namespaced_config_map("c1", "default")
    with pytest.raises(ApiException) as e:
        ann.delete_namespaced_config_map("c1", "default")
    assert e.value.status == 403
    with pytest.raises(ApiException):
        client.CoordinationV1Api(api_for(rbac_server, "ann")).read_namespaced_lease("l", "kube-system")
    # a watch the client closes is recorded though never answered in full
    w = watch.Watch()
    for _ in w.stream(ann.list_namespaced_config_map, "default", timeout_seconds=5):
        w.stop()
    client.CoreV1Api(rbac_server.api_client()).list_namespace()

    records = eventually(
        lambda: r if len(r := rbac_server.recorded_requests("ann")) == 5 else None,
        message="five requests of ann recorded",
    )
    assert records == [
        RequestRecord("ann", "create", "", "configmaps", "", "default", "", 201),
        RequestRecord("ann", "get", "", "configmaps", "", "default", "c1", 200),
        RequestRecord("ann", "delete", "", "configmaps", "", "default", "c1", 403),
        RequestRecord("ann", "get", "coordination.k8s.io", "leases", "", "kube-system", "l", 403),
        RequestRecord("ann", "watch", "", "configmaps", "", "default", "", records[4].code),
    ]
    assert records[4].code in (0, 200) and records[4].allowed
    assert [r.allowed for r in records[:4]] == [True, True, False, False]
    assert {r.user for r in rbac_server.recorded_requests()} == {"ann", "admin"}
    rbac_server.record_requests()  # starts over
    assert rbac_server.recorded_requests() == []
