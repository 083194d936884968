"""``gcm_webhook_decisions_total{webhook,decision}`` (gcm.webhooks.metrics): admission reviews posted over
HTTPS to a webhook server whose handlers are wrapped with ``counted``; each verdict is counted once as
``allowed``, ``denied`` (status code below 500) or ``errored`` (500 and above, a handler that raised, a
handler that returned no AdmissionResponse), every label pair exported at zero from the start. gcm's
two webhooks count on the manager's registry: ``test_gcm_embedded_webhooks.py`` and
tests/gcm/monitoring/test_prometheus.py see the series on a running gcm's ``/metrics``."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import urllib3
from prometheus_client import CollectorRegistry

from framework.certs import self_signed_cert
from framework.testing import free_port
from framework.webhook import AdmissionRequest, WebhookServer, allowed, denied, errored
from gcm.webhooks.metrics import DECISIONS, counted, webhook_decisions


def verdict(req: AdmissionRequest) -> Any:
    """Answers what the object's name asks for."""
    name = req.name
    if name == "allow":
        return allowed()
    if name == "deny":
        return denied("no", code=403)
    if name == "invalid":
        return denied("bad field", code=422)
    if name == "error":
        return errored(500, "cannot tell")
    if name == "raise":
        raise RuntimeError("boom")
    return "not a response"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, bytes, CollectorRegistry]]:
    certs = tmp_path_factory.mktemp("decisions-certs")
    _, _, ca_pem = self_signed_cert(certs)
    registry = CollectorRegistry()
    server = WebhookServer("127.0.0.1", free_port(), cert_dir=str(certs), registry=registry)
    server.register("/a", counted(verdict, "/a", registry))
    server.register("/b", counted(verdict, "/b", registry))
    server.start()
    try:
        yield server.url, ca_pem, registry
    finally:
        server.stop(5)


def post(served: tuple[str, bytes, CollectorRegistry], path: str, name: str) -> dict:
    url, ca_pem, _ = served
    request = {
        "uid": f"u-{name}",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": name,
        "namespace": "default",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
    }
    body = orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    http = urllib3.PoolManager(ssl_context=ssl.create_default_context(cadata=ca_pem.decode()), retries=False)
    r = http.request("POST", url + path, body=body, headers={"Content-Type": "application/json"})
    assert r.status == 200
    return orjson.loads(r.data)["response"]


def counts(served: tuple[str, bytes, CollectorRegistry], path: str) -> dict[str, float | None]:
    registry = served[2]
    return {
        d: registry.get_sample_value("gcm_webhook_decisions_total", {"webhook": path, "decision": d})
        for d in DECISIONS
    }


def test_every_pair_is_exported_at_zero():
    registry = CollectorRegistry()
    counted(verdict, "/x", registry)
    assert {d: registry.get_sample_value("gcm_webhook_decisions_total", {"webhook": "/x", "decision": d})
            for d in DECISIONS} == dict.fromkeys(DECISIONS, 0.0)  # fmt: skip
    assert webhook_decisions(registry) is webhook_decisions(registry)  # one counter per registry


def test_each_verdict_is_counted_once(served):
    before = counts(served, "/a")
    assert post(served, "/a", "allow")["allowed"] is True
    assert post(served, "/a", "deny")["status"]["code"] == 403
    assert post(served, "/a", "invalid")["status"]["code"] == 422
    assert post(served, "/a", "error")["status"]["code"] == 500
    after = counts(served, "/a")
    assert {d: after[d] - before[d] for d in DECISIONS} == {"allowed": 1, "denied": 2, "errored": 1}


def test_a_handler_that_fails_is_counted_errored(served):
    before = counts(served, "/a")
    assert post(served, "/a", "raise")["status"]["code"] == 500
    assert post(served, "/a", "nonsense")["status"]["code"] == 500
    after = counts(served, "/a")
    assert {d: after[d] - before[d] for d in DECISIONS} == {"allowed": 0, "denied": 0, "errored": 2}


def test_webhooks_are_counted_apart(served):
    before_a, before_b = counts(served, "/a"), counts(served, "/b")
    post(served, "/b", "deny")
    assert counts(served, "/a") == before_a
    assert counts(served, "/b")["denied"] == before_b["denied"] + 1
