"""Bound ServiceAccount tokens as kube-apiserver issues and checks them (10-6, 22-1, issue 31): a token
bound to a Secret, Pod or Node dies with that object (and with a new object of the same name), as it
dies with its ServiceAccount; TokenRequest refuses bindings to objects that do not exist."""

from __future__ import annotations

import base64
import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.testing import APIServer
from framework.testing.kubectl import Kubectl

NS = "default"
INVALIDATED = "[invalid bearer token, service account token has been invalidated]"


@pytest.fixture
def server():
    with APIServer(authorization="RBAC") as s:
        core = client.CoreV1Api(s.api_client())
        core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
        yield s


def core_of(server: APIServer) -> client.CoreV1Api:
    return client.CoreV1Api(server.api_client())


def token_for(server: APIServer, bound: dict | None = None, sa: str = "robot") -> str:
    spec: dict = {"expirationSeconds": 600}
    if bound is not None:
        spec["boundObjectRef"] = bound
    return core_of(server).create_namespaced_service_account_token(sa, NS, {"spec": spec}).status.token


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def review(server: APIServer, token: str) -> client.V1TokenReviewStatus:
    api = client.AuthenticationV1Api(server.api_client())
    return api.create_token_review({"spec": {"token": token}}).status


def request_status(server: APIServer, token: str) -> int:
    """The HTTP status of a request authenticated with ``token`` (a read the SA may do: its own groups'
    discovery)."""
    cfg = client.Configuration()
    cfg.host, cfg.ssl_ca_cert = server.url, str(server.ca_path)
    cfg.api_key = {"authorization": "Bearer " + token}
    try:
        client.VersionApi(client.ApiClient(cfg)).get_code()
    except ApiException as e:
        return e.status
    return 200


def secret(server: APIServer, name: str) -> str:
    return core_of(server).create_namespaced_secret(NS, {"metadata": {"name": name}}).metadata.uid


def pod(server: APIServer, name: str, sa: str = "robot", node: str | None = None) -> str:
    spec: dict = {"serviceAccountName": sa, "containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return core_of(server).create_namespaced_pod(NS, {"metadata": {"name": name}, "spec": spec}).metadata.uid


def node(server: APIServer, name: str) -> str:
    return core_of(server).create_node({"metadata": {"name": name}}).metadata.uid


def test_secret_bound_token_dies_with_the_secret(server):
    uid = secret(server, "s1")
    token = token_for(server, {"kind": "Secret", "apiVersion": "v1", "name": "s1", "uid": uid})
    sa_uid = core_of(server).read_namespaced_service_account("robot", NS).metadata.uid
    c = claims(token)
    assert c["kubernetes.io"] == {
        "namespace": NS,
        "serviceaccount": {"name": "robot", "uid": sa_uid},
        "secret": {"name": "s1", "uid": uid},
    }
    st = review(server, token)
    assert st.authenticated is True and st.user.username == "system:serviceaccount:default:robot"
    assert st.user.uid == sa_uid
    assert st.user.extra == {"authentication.kubernetes.io/credential-id": [f"JTI={c['jti']}"]}
    assert request_status(server, token) == 200

    core_of(server).delete_namespaced_secret("s1", NS)
    assert request_status(server, token) == 401
    st = review(server, token)
    assert not st.authenticated and st.error == INVALIDATED  # omitted (omitempty), as kube
    assert st.user is None or not st.user.username

    new_uid = secret(server, "s1")  # the same name again: a new UID, still not the bound object
    assert request_status(server, token) == 401
    assert review(server, token).error == (
        f"[invalid bearer token, secret UID ({new_uid}) does not match service account secret ref claim "
        f"({uid})]"
    )


def test_pod_bound_token_names_pod_and_node_and_dies_with_the_pod(server):
    node_uid = node(server, "n1")
    pod_uid = pod(server, "p1", node="n1")
    token = token_for(server, {"kind": "Pod", "apiVersion": "v1", "name": "p1"})
    c = claims(token)["kubernetes.io"]
    assert c["pod"] == {"name": "p1", "uid": pod_uid}
    assert c["node"] == {"name": "n1", "uid": node_uid}
    st = review(server, token)
    assert st.authenticated is True
    assert st.user.extra == {
        "authentication.kubernetes.io/credential-id": [f"JTI={claims(token)['jti']}"],
        "authentication.kubernetes.io/node-name": ["n1"],
        "authentication.kubernetes.io/node-uid": [node_uid],
        "authentication.kubernetes.io/pod-name": ["p1"],
        "authentication.kubernetes.io/pod-uid": [pod_uid],
    }
    core_of(server).delete_namespaced_pod("p1", NS)
    assert request_status(server, token) == 401
    assert review(server, token).error == INVALIDATED
    new_uid = pod(server, "p1")
    assert review(server, token).error == (
        f"[invalid bearer token, pod UID ({new_uid}) does not match service account pod ref claim "
        f"({pod_uid})]"
    )


def test_pod_on_a_missing_node_names_the_node_without_uid(server):
    pod(server, "p2", node="gone")
    token = token_for(server, {"kind": "Pod", "apiVersion": "v1", "name": "p2"})
    assert claims(token)["kubernetes.io"]["node"] == {"name": "gone"}
    extra = review(server, token).user.extra
    assert extra["authentication.kubernetes.io/node-name"] == ["gone"]
    assert "authentication.kubernetes.io/node-uid" not in extra


def test_node_bound_token_dies_with_the_node(server):
    uid = node(server, "n2")
    token = token_for(server, {"kind": "Node", "apiVersion": "v1", "name": "n2"})
    assert claims(token)["kubernetes.io"]["node"] == {"name": "n2", "uid": uid}
    assert review(server, token).user.extra["authentication.kubernetes.io/node-uid"] == [uid]
    core_of(server).delete_node("n2")
    assert request_status(server, token) == 401
    assert review(server, token).error == INVALIDATED
    new_uid = node(server, "n2")
    assert review(server, token).error == (
        f"[invalid bearer token, node UID ({new_uid}) does not match service account node ref claim ({uid})]"
    )


def test_token_dies_when_the_service_account_is_recreated(server):
    token = token_for(server)
    old = core_of(server).read_namespaced_service_account("robot", NS).metadata.uid
    core_of(server).delete_namespaced_service_account("robot", NS)
    assert review(server, token).error == '[invalid bearer token, serviceaccounts "robot" not found]'
    new = core_of(server).create_namespaced_service_account(NS, {"metadata": {"name": "robot"}}).metadata.uid
    assert request_status(server, token) == 401
    assert review(server, token).error == (
        f"[invalid bearer token, service account UID ({new}) does not match claim ({old})]"
    )


@pytest.mark.parametrize(
    ("bound", "code", "message"),
    [
        ({"kind": "Secret", "apiVersion": "v1", "name": "nope"}, 404, 'secrets "nope" not found'),
        ({"kind": "Pod", "apiVersion": "v1", "name": "nope"}, 404, 'pods "nope" not found'),
        ({"kind": "Node", "apiVersion": "v1", "name": "nope"}, 404, 'nodes "nope" not found'),
        (
            {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"},
            400,
            "cannot bind token to object of type /v1, Kind=ConfigMap",
        ),
        (
            {"kind": "Pod", "apiVersion": "apps/v1", "name": "x"},
            400,
            "cannot bind token to object of type apps/v1, Kind=Pod",
        ),
    ],
)
def test_token_request_refuses_bad_bindings(server, bound, code, message):
    with pytest.raises(ApiException) as e:
        token_for(server, bound)
    assert e.value.status == code
    assert json.loads(e.value.body)["message"] == message


def test_token_request_checks_uid_and_pod_service_account(server):
    secret(server, "s3")
    with pytest.raises(ApiException) as e:
        token_for(server, {"kind": "Secret", "apiVersion": "v1", "name": "s3", "uid": "not-it"})
    body = json.loads(e.value.body)
    assert (e.value.status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on Secret "s3": the UID in the bound object reference (not-it) '
        "does not match the UID in record. The object might have been deleted and then recreated"
    )
    core_of(server).create_namespaced_service_account(NS, {"metadata": {"name": "other"}})
    pod(server, "p4", sa="other")
    with pytest.raises(ApiException) as e:
        token_for(server, {"kind": "Pod", "apiVersion": "v1", "name": "p4"})
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == (
        'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.'
    )


def test_kubectl_create_token_bound_to_a_secret(server, tmp_path):
    uid = secret(server, "s5")
    kubectl = Kubectl(server.kubeconfig, tmp_path).run
    res = kubectl("create", "token", "robot", "--bound-object-kind", "Secret", "--bound-object-name", "s5")
    assert res.returncode == 0, res.stderr
    token = res.stdout.strip()
    assert claims(token)["kubernetes.io"]["secret"] == {"name": "s5", "uid": uid}
    core_of(server).delete_namespaced_secret("s5", NS)
    res = kubectl("--token", token, "get", "--raw", "/version")
    assert res.returncode != 0 and "Unauthorized" in res.stderr
    res = kubectl("create", "token", "robot", "--bound-object-kind", "Secret", "--bound-object-name", "s5")
    assert res.returncode != 0 and 'secrets "s5" not found' in res.stderr


def test_bound_token_keeps_its_binding_across_a_restart(tmp_path):
    """A stored server keeps each token's claims: after a restart the token still works, and still dies
    with its Secret."""
    with APIServer(data_dir=tmp_path, authorization="RBAC") as s:
        core_of(s).create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
        uid = secret(s, "kept")
        token = token_for(s, {"kind": "Secret", "apiVersion": "v1", "name": "kept"})
    with APIServer(data_dir=tmp_path, authorization="RBAC") as s:
        st = review(s, token)
        assert st.authenticated is True
        assert st.user.extra["authentication.kubernetes.io/credential-id"] == [f"JTI={claims(token)['jti']}"]
        assert claims(token)["kubernetes.io"]["secret"]["uid"] == uid
        core_of(s).delete_namespaced_secret("kept", NS)
        assert request_status(s, token) == 401
