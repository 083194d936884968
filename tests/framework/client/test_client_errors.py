"""Typed errors from Status reasons and codes, Retry-After handling and client-side timeouts."""

from __future__ import annotations

import pickle
import time

import pytest

from framework.client import (
    AlreadyExists,
    APIError,
    BadRequest,
    Client,
    Conflict,
    Gone,
    Invalid,
    MethodNotAllowed,
    NetworkError,
    NotFound,
    ServerError,
    Timeout,
    TooManyRequests,
    UnsupportedMediaType,
    errors,
)
from framework.testing import free_port


def cm(name: str, **data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


# --- against the server -------------------------------------------------------------------------------


def test_not_found_already_exists_conflict_invalid(client: Client):
    with pytest.raises(NotFound) as nf:
        client.get("v1", "ConfigMap", "missing", "default")
    assert nf.value.status == 404 and nf.value.reason == "NotFound"
    assert nf.value.details["name"] == "missing" and nf.value.details["kind"] == "configmaps"
    assert nf.value.body is not None and nf.value.body["kind"] == "Status"
    assert 'configmaps "missing" not found' in str(nf.value)

    first = client.create(cm("a"))
    with pytest.raises(AlreadyExists) as ae:
        client.create(cm("a"))
    assert ae.value.status == 409 and not isinstance(ae.value, Conflict)

    stale = dict(first, data={"x": "1"})
    client.update(dict(first, data={"x": "0"}))
    with pytest.raises(Conflict) as co:
        client.update(stale)
    assert co.value.status == 409 and co.value.reason == "Conflict"

    with pytest.raises(Invalid) as inv:
        client.create(cm("Not_A_Valid_Name"))
    assert inv.value.status == 422
    assert any(c.get("field") == "metadata.name" for c in inv.value.causes)

    with pytest.raises(BadRequest):
        client.list("v1", "ConfigMap", "default", label_selector="env in (")


def test_gone_from_compacted_watch_and_list(apiserver, client: Client):
    client.create(cm("a"))
    rv = client.list("v1", "ConfigMap", "default")["metadata"]["resourceVersion"]
    client.create(cm("b"))
    apiserver.compact()
    # The watch request succeeds; the 410 arrives as an ERROR event (15-2) and raises while iterating.
    w = client.watch("v1", "ConfigMap", "default", resource_version=rv, read_timeout=5)
    with pytest.raises(Gone) as e:
        list(w)
    assert e.value.status == 410 and e.value.reason == "Expired"
    assert w.closed
    with pytest.raises(Gone):
        client.list("v1", "ConfigMap", "default", resource_version=rv, resource_version_match="Exact")


def test_429_with_retry_after_is_retried(apiserver, client: Client):
    apiserver.inject_failure("list", "configmaps", 429, count=1, retry_after=1)
    start = time.monotonic()
    lst = client.list("v1", "ConfigMap", "default")
    assert lst["kind"] == "ConfigMapList"
    assert time.monotonic() - start >= 0.9  # it waited the second the server asked for


def test_429_exhausting_retries_raises(apiserver, step_clock):
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, max_retries=3, clock=step_clock)
    apiserver.inject_failure("get", "configmaps", 429, count=None, retry_after=7)
    try:
        with pytest.raises(TooManyRequests) as e:
            client.get("v1", "ConfigMap", "x", "default")
    finally:
        apiserver.clear_failures()
    assert e.value.status == 429 and e.value.retry_after == 7
    assert step_clock.sleeps == [7, 7, 7]  # three retries, each after Retry-After


def test_5xx_retried_only_with_retry_after(apiserver, step_clock):
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, clock=step_clock)
    apiserver.inject_failure("list", "configmaps", 500, count=1)
    with pytest.raises(ServerError) as e:
        client.list("v1", "ConfigMap", "default")
    assert e.value.status == 500 and step_clock.sleeps == []

    apiserver.inject_failure("list", "configmaps", 503, count=2, retry_after=2)
    assert client.list("v1", "ConfigMap", "default")["kind"] == "ConfigMapList"
    assert step_clock.sleeps == [2, 2]


def test_timeouts(apiserver):
    # No retries: kube-apiserver adds Retry-After to this 504, which client-go (and we) would retry.
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, max_retries=0)
    client.create(cm("a"))
    future = str(apiserver.resource_version + 1000)
    apiserver.future_rv_wait = 0.2
    # The server's answer to a future resourceVersion: 504 Timeout (5-3).
    with pytest.raises(Timeout) as e:
        client.list("v1", "ConfigMap", "default", resource_version=future, limit=10)
    assert e.value.status == 504
    # A client-side read timeout shorter than the server's wait: Timeout without a status.
    apiserver.future_rv_wait = 2.0
    with pytest.raises(Timeout) as e:
        client.list("v1", "ConfigMap", "default", resource_version=future, limit=10, timeout=(5, 0.2))
    assert e.value.status == 0


def test_method_not_allowed_and_unsupported_media(client: Client):
    with pytest.raises(MethodNotAllowed):
        client.request("PUT", "/api/v1/namespaces/default/configmaps", body={})
    with pytest.raises(UnsupportedMediaType):
        client.request(
            "POST", "/api/v1/namespaces/default/configmaps", body=b"\x00", content_type="application/cbor"
        )


def test_network_error_when_nothing_listens():
    from kubernetes import client as k8s

    port = free_port()
    cfg = k8s.Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    c = Client.from_configuration(cfg, qps=0)
    with pytest.raises(NetworkError) as e:
        c.request("GET", "/version")
    assert e.value.status == 0 and isinstance(e.value, APIError)


# --- unit: building errors ----------------------------------------------------------------------------


def status(code: int, reason: str | None, message: str = "m", **details) -> dict:
    out = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}
    if reason:
        out["reason"] = reason
    if details:
        out["details"] = details
    return out


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (422, "Invalid", Invalid),
        (403, "Forbidden", errors.Forbidden),
        (401, "Unauthorized", errors.Unauthorized),
        (410, "Expired", Gone),
        (410, "Gone", Gone),
        (410, None, Gone),
        (429, "TooManyRequests", TooManyRequests),
        (500, "InternalError", ServerError),
        (503, "ServiceUnavailable", ServerError),
        (502, None, ServerError),
        (504, "Timeout", Timeout),
        (500, "ServerTimeout", Timeout),
        (400, "BadRequest", BadRequest),
        (405, "MethodNotAllowed", MethodNotAllowed),
        (415, "UnsupportedMediaType", UnsupportedMediaType),
        (418, None, APIError),
        (409, "SomethingNew", Conflict),  # unknown reason: the code decides
    ],
)
def test_error_class_from_status(code, reason, cls):
    err = errors.from_status(status(code, reason))
    assert type(err) is cls and err.status == code and err.code == code


def test_from_response_details():
    body = status(504, "Timeout", "Too large resource version", retryAfterSeconds=1, causes=[{"reason": "R"}])
    import orjson

    err = errors.from_response(504, orjson.dumps(body), {})
    assert isinstance(err, Timeout) and err.retry_after == 1 and err.causes == [{"reason": "R"}]
    # The header wins over details.retryAfterSeconds.
    assert (
        errors.from_response(
            429, orjson.dumps(status(429, "TooManyRequests", retryAfterSeconds=1)), {"Retry-After": "3"}
        ).retry_after
        == 3
    )
    # Non-Status bodies: the code decides, the text becomes the message.
    err = errors.from_response(405, b"method not allowed here", {})
    assert isinstance(err, MethodNotAllowed) and err.message == "method not allowed here" and err.body is None
    err = errors.from_response(404, b"", {})
    assert isinstance(err, NotFound) and "could not find" in err.message
    # HTTP-date Retry-After.
    from email.utils import formatdate

    assert 0 < errors.parse_retry_after(formatdate(time.time() + 30, usegmt=True)) <= 30
    assert errors.parse_retry_after("soon") is None
    # Errors survive pickling (e.g. across process pools).
    again = pickle.loads(pickle.dumps(errors.from_status(status(404, "NotFound", "x"))))
    assert isinstance(again, NotFound) and again.message == "x"
