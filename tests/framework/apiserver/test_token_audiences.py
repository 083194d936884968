"""Token audiences as kube-apiserver checks them (10-6, 22-1): a TokenReview answers the audiences it
asked about that the token is good for (``authenticator.Audiences.Intersect``), a token good for none
of them is not authenticated (``pkg/serviceaccount/jwt.go``), a request to the API asks for the API's
audiences; and a TokenRequest whose own name or namespace differs from the URL's is refused
(``pkg/registry/core/serviceaccount/storage/token.go``)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.apiserver.auth.tokens import ISSUER
from framework.testing import APIServer

from .test_bound_tokens import request_status

NS = "default"


def robot(server: APIServer) -> None:
    core = client.CoreV1Api(server.api_client())
    core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})


@pytest.fixture
def server():
    with APIServer(authorization="RBAC") as s:
        robot(s)
        yield s


def token_for(server: APIServer, audiences: list[str] | None = None, metadata: dict | None = None) -> str:
    body: dict = {"spec": {"audiences": audiences} if audiences else {}}
    if metadata is not None:
        body["metadata"] = metadata
    core = client.CoreV1Api(server.api_client())
    return core.create_namespaced_service_account_token("robot", NS, body).status.token


def review(server: APIServer, token: str, audiences: list[str] | None = None) -> client.V1TokenReviewStatus:
    spec: dict = {"token": token}
    if audiences is not None:
        spec["audiences"] = audiences
    api = client.AuthenticationV1Api(server.api_client())
    return api.create_token_review({"spec": spec}).status


def can_read_version(server: APIServer, token: str) -> bool:
    status = request_status(server, token)
    assert status in (200, 401)
    return status == 200


def test_review_answers_the_intersection_in_the_order_asked(server):
    token = token_for(server, ["a", "b", "c"])
    st = review(server, token, ["x", "c", "a"])
    assert st.authenticated is True and st.audiences == ["c", "a"]
    assert st.user.username == "system:serviceaccount:default:robot"


def test_a_token_for_other_audiences_is_not_authenticated(server):
    token = token_for(server, ["vault"])
    st = review(server, token, ["x", "y"])
    assert st.authenticated is None and st.audiences is None
    assert st.error == (
        '[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["x" "y"]]'
    )
    # without audiences the review asks for the API's, which the token is not for
    st = review(server, token)
    assert st.authenticated is None
    assert st.error == (
        f'[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["{ISSUER}"]]'
    )
    assert not can_read_version(server, token)  # nor does the API itself take it


def test_a_token_for_the_api_authenticates_requests_and_reviews(server):
    token = token_for(server)
    assert can_read_version(server, token)
    assert review(server, token).audiences == [ISSUER]
    both = token_for(server, ["vault", ISSUER])
    assert can_read_version(server, both)
    assert review(server, both, ["vault"]).audiences == ["vault"]


def test_a_static_token_is_good_for_the_api_audiences_only(server):
    st = review(server, server.token, ["x", ISSUER])
    assert st.authenticated is True and st.audiences == [ISSUER]
    st = review(server, server.token, ["x"])
    assert st.authenticated is None and st.error == "invalid bearer token"


def test_a_review_without_a_token_is_a_bad_request(server):
    with pytest.raises(ApiException) as e:
        review(server, "")
    body = json.loads(e.value.body)
    assert (e.value.status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == "token is required for TokenReview in authentication"


def test_audiences_survive_a_restart(tmp_path):
    with APIServer(data_dir=tmp_path) as s:
        robot(s)
        token = token_for(s, ["vault"])
    with APIServer(data_dir=tmp_path) as s:
        assert review(s, token, ["vault"]).audiences == ["vault"]
        assert review(s, token).authenticated is None


def test_token_request_name_must_be_the_service_accounts(server):
    with pytest.raises(ApiException) as e:
        token_for(server, metadata={"name": "other"})
    body = json.loads(e.value.body)
    assert (e.value.status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": '
        "must match the service account name if specified"
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "other": must match the service account name if specified',
            "field": "metadata.name",
        }
    ]


def test_token_request_namespace_must_be_the_urls(server):
    with pytest.raises(ApiException) as e:
        token_for(server, metadata={"namespace": "kube-system"})
    body = json.loads(e.value.body)
    assert (e.value.status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def test_token_request_naming_itself_as_the_url_does_is_served(server):
    token = token_for(server, metadata={"name": "robot", "namespace": NS})
    assert review(server, token).authenticated is True
