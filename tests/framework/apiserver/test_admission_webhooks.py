"""The API server calls admission webhooks (spec §21): matching, selectors, mutation, refusals, call
failures and failurePolicy, TLS and service references, DELETE and deletecollection.

Webhooks are served over TLS by ``framework.webhook.WebhookServer`` (and, for protocol violations, by a
bare HTTPS server that answers whatever a test tells it to).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from prometheus_client import CollectorRegistry

from framework.certs import CertKeyPair, generate_ca, issue_serving_cert
from framework.testing import free_port
from framework.webhook import AdmissionRequest, AdmissionResponse, WebhookServer, allowed, denied, patched

V = "admissionregistration.k8s.io/v1"
VWC = f"/apis/{V}/validatingwebhookconfigurations"
MWC = f"/apis/{V}/mutatingwebhookconfigurations"
HOSTS = ("127.0.0.1", "localhost", "hooks.webhooks.svc")


@pytest.fixture(scope="module")
def ca() -> CertKeyPair:
    return generate_ca("admission-test-ca")


@pytest.fixture(scope="module")
def cert_dir(tmp_path_factory: pytest.TempPathFactory, ca: CertKeyPair) -> Path:
    d = tmp_path_factory.mktemp("hook-certs")
    issue_serving_cert(ca, HOSTS).write(d, "tls")
    return d


def ca_bundle(ca: CertKeyPair) -> str:
    return base64.b64encode(ca.cert_pem).decode()


class Hooks:
    """A WebhookServer whose paths answer with ``behaviours[path](request)``; requests are recorded."""

    def __init__(self, cert_dir: Path) -> None:
        self.server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=CollectorRegistry())
        self.behaviours: dict[str, Callable[[AdmissionRequest], AdmissionResponse]] = {}
        self.requests: dict[str, list[AdmissionRequest]] = {}
        self.raw: dict[str, list[dict]] = {}

    def on(self, path: str, behaviour: Callable[[AdmissionRequest], AdmissionResponse]) -> str:
        if path not in self.behaviours:
            self.server.register(path, lambda req, path=path: self._serve(path, req))
        self.behaviours[path] = behaviour
        self.requests[path] = []
        return f"{self.server.url}{path}"

    def _serve(self, path: str, req: AdmissionRequest) -> AdmissionResponse:
        self.requests[path].append(req)
        return self.behaviours[path](req)


@pytest.fixture
def hooks(cert_dir: Path) -> Iterator[Hooks]:
    h = Hooks(cert_dir)
    h.server.start()
    yield h
    h.server.stop(5)


class RawHTTPS:
    """An HTTPS endpoint answering ``answer(review) -> (status, body)`` (after ``delay`` seconds)."""

    def __init__(self, cert_dir: Path) -> None:
        self.answer: Callable[[dict], tuple[int, bytes]] = lambda review: (200, b"{}")
        self.delay = 0.0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(outer.delay)
                status, data = outer.answer(json.loads(body))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def rawhttps(cert_dir: Path) -> Iterator[RawHTTPS]:
    s = RawHTTPS(cert_dir)
    yield s
    s.close()


def webhook(
    name: str,
    url: str | None,
    ca: CertKeyPair | None,
    *,
    resources: list[str] | None = None,
    operations: list[str] | None = None,
    groups: list[str] | None = None,
    versions: list[str] | None = None,
    scope: str | None = None,
    failure: str = "Fail",
    timeout: int | None = None,
    namespace_selector: dict | None = None,
    object_selector: dict | None = None,
    service: dict | None = None,
    review_versions: list[str] | None = None,
    match_policy: str | None = None,
) -> dict:
    rule: dict[str, Any] = {
        "operations": operations or ["CREATE"],
        "apiGroups": groups if groups is not None else [""],
        "apiVersions": versions or ["v1"],
        "resources": resources or ["configmaps"],
    }
    if scope:
        rule["scope"] = scope
    cc: dict[str, Any] = {"service": service} if service else {"url": url}
    if ca is not None:
        cc["caBundle"] = ca_bundle(ca)
    hook: dict[str, Any] = {
        "name": name,
        "clientConfig": cc,
        "rules": [rule],
        "sideEffects": "None",
        "admissionReviewVersions": review_versions or ["v1"],
        "failurePolicy": failure,
    }
    if timeout is not None:
        hook["timeoutSeconds"] = timeout
    if namespace_selector is not None:
        hook["namespaceSelector"] = namespace_selector
    if object_selector is not None:
        hook["objectSelector"] = object_selector
    if match_policy is not None:
        hook["matchPolicy"] = match_policy
    return hook


def register(raw, *hooks: dict, mutating: bool = False, name: str = "test") -> None:
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    code, body = raw.json(
        "POST",
        MWC if mutating else VWC,
        {"apiVersion": V, "kind": kind, "metadata": {"name": name}, "webhooks": list(hooks)},
    )
    assert code == 201, body


def cm(name: str, ns: str = "default", labels: dict | None = None, generate: bool = False) -> dict:
    meta: dict[str, Any] = {"generateName": name} if generate else {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def create_cm(raw, obj: dict, ns: str = "default", query: str = "") -> tuple[int, dict]:
    return raw.json("POST", f"/api/v1/namespaces/{ns}/configmaps{query}", obj)


def deny_all(req: AdmissionRequest) -> AdmissionResponse:
    return denied("nope")


# --- refusals and the request sent ---------------------------------------------------------------------


def test_validating_denial_status_and_request_shape(raw, hooks, ca):
    url = hooks.on("/deny", lambda req: denied("nope", details={"name": "x", "kind": "ConfigMap"}))
    register(raw, webhook("deny.example.com", url, ca))
    code, body = create_cm(raw, cm("a"))
    assert code == 403
    assert body["message"] == 'admission webhook "deny.example.com" denied the request: nope'
    assert body["reason"] == "Forbidden" and body["status"] == "Failure"
    assert body["details"] == {"name": "x", "kind": "ConfigMap"}
    assert raw.json("GET", "/api/v1/namespaces/default/configmaps/a")[0] == 404
    (req,) = hooks.requests["/deny"]
    r = req.raw
    assert r["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert r["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert r["requestKind"] == r["kind"] and r["requestResource"] == r["resource"]
    assert "subResource" not in r
    assert (r["name"], r["namespace"], r["operation"]) == ("a", "default", "CREATE")
    assert r["userInfo"]["username"] == "admin" and "system:masters" in r["userInfo"]["groups"]
    assert r["object"]["metadata"]["name"] == "a" and r["object"]["data"] == {"k": "v"}
    assert r["oldObject"] is None and r["dryRun"] is False
    assert r["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    assert len(r["uid"]) == 36


def test_denial_without_message_and_low_code(raw, hooks, ca):
    url = hooks.on("/deny", lambda req: AdmissionResponse(False, {"code": 200}))
    register(raw, webhook("quiet.example.com", url, ca))
    code, body = create_cm(raw, cm("a"))
    assert code == 400
    assert body["message"] == 'admission webhook "quiet.example.com" denied the request without explanation'


def test_denial_with_official_client_and_warnings(apiserver, raw, hooks, ca):
    url = hooks.on("/warn", lambda req: allowed(warnings=["be careful"]))
    register(raw, webhook("warn.example.com", url, ca))
    r = raw.request("POST", "/api/v1/namespaces/default/configmaps", cm("w"))
    assert r.status == 201
    assert r.headers["Warning"] == '299 - "be careful"'
    hooks.on("/warn", deny_all)
    api = client.CoreV1Api(apiserver.api_client())
    with pytest.raises(client.ApiException) as e:
        api.create_namespaced_config_map("default", cm("x"))
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"].endswith("denied the request: nope")


def test_dry_run_reaches_webhooks_and_persists_nothing(raw, hooks, ca):
    url = hooks.on("/ok", lambda req: allowed())
    register(raw, webhook("ok.example.com", url, ca))
    code, _ = create_cm(raw, cm("d"), query="?dryRun=All")
    assert code == 201
    assert raw.json("GET", "/api/v1/namespaces/default/configmaps/d")[0] == 404
    (req,) = hooks.requests["/ok"]
    assert req.dry_run is True and req.options["dryRun"] == ["All"]


# --- matching ------------------------------------------------------------------------------------------


def test_rules_operations_groups_versions_and_scope(raw, hooks, ca):
    url = hooks.on("/deny", deny_all)
    register(
        raw,
        webhook("update-only.example.com", url, ca, operations=["UPDATE"]),
        webhook("other-group.example.com", url, ca, groups=["apps"], resources=["*"]),
        webhook("other-version.example.com", url, ca, versions=["v2"]),
        webhook("cluster-scope.example.com", url, ca, scope="Cluster", resources=["*"]),
    )
    assert create_cm(raw, cm("a"))[0] == 201  # none of them matches a ConfigMap CREATE
    assert hooks.requests["/deny"] == []
    obj = raw.json("GET", "/api/v1/namespaces/default/configmaps/a")[1]
    obj["data"] = {"k": "changed"}
    code, body = raw.json("PUT", "/api/v1/namespaces/default/configmaps/a", obj)
    assert code == 403 and '"update-only.example.com"' in body["message"]
    # Cluster scope matches Namespace objects (cluster-scoped) but no namespaced object.
    code, body = raw.json("POST", "/api/v1/namespaces", {"metadata": {"name": "n1"}})
    assert code == 403 and '"cluster-scope.example.com"' in body["message"]


def test_wildcards_and_subresources(raw, hooks, ca):
    url = hooks.on("/deny", deny_all)
    register(
        raw,
        webhook("status.example.com", url, ca, operations=["UPDATE"], resources=["namespaces/status"]),
    )
    assert raw.json("POST", "/api/v1/namespaces", {"metadata": {"name": "n1"}})[0] == 201
    code, _ = raw.json(
        "PATCH", "/api/v1/namespaces/n1", {"metadata": {"labels": {"a": "b"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    assert code == 200  # the main resource does not match namespaces/status
    code, _ = raw.json(
        "PATCH", "/api/v1/namespaces/n1/status", {"status": {"phase": "Active"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    assert code == 403
    req = hooks.requests["/deny"][-1]
    assert req.sub_resource == "status" and req.raw["requestSubResource"] == "status"
    assert req.old_object["metadata"]["name"] == "n1" and req.operation == "UPDATE"
    # "*" matches main resources only; "*/*" matches subresources too.
    raw.json("DELETE", f"{VWC}/test")
    register(raw, webhook("star.example.com", url, ca, operations=["UPDATE"], resources=["*"]))
    code, _ = raw.json(
        "PATCH", "/api/v1/namespaces/n1/status", {"status": {"phase": "Active"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    assert code == 200
    raw.json("DELETE", f"{VWC}/test")
    register(raw, webhook("all.example.com", url, ca, operations=["UPDATE"], resources=["*/*"]))
    code, _ = raw.json(
        "PATCH", "/api/v1/namespaces/n1/status", {"status": {"phase": "Active"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    assert code == 403


def test_webhook_configurations_are_never_sent_to_webhooks(raw, hooks, ca):
    url = hooks.on("/deny", deny_all)
    everything = webhook(
        "everything.example.com", url, ca, operations=["*"], groups=["*"], versions=["*"], resources=["*"]
    )
    register(raw, everything)
    register(raw, everything, name="second")
    register(raw, everything, mutating=True, name="third")
    assert raw.json("DELETE", f"{VWC}/test")[0] == 200
    assert hooks.requests["/deny"] == []


def test_namespace_selector(raw, hooks, ca):
    url = hooks.on("/deny", deny_all)
    for name, env in (("prod", "prod"), ("dev", "dev")):
        body = {"metadata": {"name": name, "labels": {"env": env}}}
        assert raw.json("POST", "/api/v1/namespaces", body)[0] == 201
    sel = {"matchLabels": {"env": "prod"}}
    register(
        raw, webhook("prod.example.com", url, ca, operations=["CREATE", "DELETE"], resources=["*"],
                     namespace_selector=sel)
    )  # fmt: skip
    assert create_cm(raw, cm("a"), "dev")[0] == 201
    assert create_cm(raw, cm("a"), "prod")[0] == 403
    # A Namespace is selected by its own labels: on CREATE those of the new object, on DELETE the stored.
    assert (
        raw.json("POST", "/api/v1/namespaces", {"metadata": {"name": "p2", "labels": {"env": "prod"}}})[0]
        == 403
    )
    assert raw.json("DELETE", "/api/v1/namespaces/dev")[0] == 200
    code, body = raw.json("DELETE", "/api/v1/namespaces/prod")
    assert code == 403
    assert raw.json("GET", "/api/v1/namespaces/prod")[1]["status"]["phase"] == "Active"
    req = hooks.requests["/deny"][-1]
    assert (req.operation, req.name, req.namespace) == ("DELETE", "prod", "prod")
    assert req.object is None and req.old_object["metadata"]["labels"]["env"] == "prod"
    assert req.options["kind"] == "DeleteOptions"
    # Cluster-scoped objects other than Namespaces ignore the namespace selector.
    register(
        raw, webhook("crb.example.com", url, ca, groups=["rbac.authorization.k8s.io"],
                     resources=["clusterroles"], namespace_selector=sel), name="crb",
    )  # fmt: skip
    code, _ = raw.json(
        "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {"metadata": {"name": "r"}, "rules": []}
    )
    assert code == 403


def test_object_selector_new_and_old(raw, hooks, ca):
    url = hooks.on("/deny", deny_all)
    sel = {"matchExpressions": [{"key": "guard", "operator": "Exists"}]}
    register(raw, webhook("guard.example.com", url, ca, operations=["*"], object_selector=sel))
    assert create_cm(raw, cm("free"))[0] == 201
    assert create_cm(raw, cm("guarded", labels={"guard": "x"}))[0] == 403
    # An update is reviewed when either the old or the new object matches.
    code, _ = raw.json(
        "PATCH", "/api/v1/namespaces/default/configmaps/free", {"metadata": {"labels": {"guard": "y"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    assert code == 403
    assert raw.json("DELETE", "/api/v1/namespaces/default/configmaps/free")[0] == 200


def test_match_policy_equivalent_sends_the_matched_version(raw, hooks, ca):
    url = hooks.on("/deny", deny_all)
    register(
        raw, webhook("events.example.com", url, ca, groups=["events.k8s.io"], resources=["events"]),
        webhook("exact.example.com", url, ca, groups=["events.k8s.io"], resources=["events"],
                match_policy="Exact"),
    )  # fmt: skip
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
    }
    code, body = raw.json("POST", "/api/v1/namespaces/default/events", event)
    assert code == 403 and '"events.example.com"' in body["message"]
    (req,) = hooks.requests["/deny"]
    assert req.kind == ("events.k8s.io", "v1", "Event")
    assert req.request_kind == ("", "v1", "Event") and req.request_resource == ("", "v1", "events")
    assert req.object["apiVersion"] == "events.k8s.io/v1" and req.object["note"] == "m"


# --- mutation ------------------------------------------------------------------------------------------


def test_mutating_patch_applied_then_validated_and_seen_by_validating(raw, hooks, ca):
    def mutate(req: AdmissionRequest) -> AdmissionResponse:
        return patched([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])

    seen: list[dict] = []

    def check(req: AdmissionRequest) -> AdmissionResponse:
        seen.append(req.object)
        return allowed()

    register(raw, webhook("mutate.example.com", hooks.on("/mutate", mutate), ca), mutating=True)
    register(raw, webhook("check.example.com", hooks.on("/check", check), ca))
    code, body = create_cm(raw, cm("a"))
    assert code == 201, body
    assert body["metadata"]["labels"] == {"mutated": "yes"}
    stored = raw.json("GET", "/api/v1/namespaces/default/configmaps/a")[1]
    assert stored["metadata"]["labels"] == {"mutated": "yes"}
    assert seen[0]["metadata"]["labels"] == {"mutated": "yes"}
    assert seen[0]["metadata"]["uid"] == stored["metadata"]["uid"]
    # A mutating webhook on CREATE sees neither uid nor creationTimestamp.
    assert "uid" not in hooks.requests["/mutate"][0].object["metadata"]


def test_mutation_is_revalidated(raw, hooks, ca):
    bad = [{"op": "add", "path": "/metadata/labels", "value": {"bad key!": "x"}}]
    register(raw, webhook("bad.example.com", hooks.on("/bad", lambda req: patched(bad)), ca), mutating=True)
    code, body = create_cm(raw, cm("a"))
    assert code == 422 and "metadata.labels" in body["message"]


def test_a_mutation_that_does_not_decode_is_an_internal_error(raw, hooks, ca):
    """The mutating dispatcher decodes the patched object; a wrong type there is kube-apiserver's 500
    InternalError with the decoder's text (the webhook's fault, not the client's), never a traceback."""
    bad = [{"op": "add", "path": "/metadata/labels", "value": {"k": 5}}]
    register(
        raw, webhook("types.example.com", hooks.on("/types", lambda req: patched(bad)), ca), mutating=True
    )
    code, body = create_cm(raw, cm("a"))
    assert code == 500 and body["reason"] == "InternalError"
    assert body["message"] == (
        "Internal error occurred: json: cannot unmarshal number into Go struct field "
        "ObjectMeta.metadata.labels of type string"
    )
    assert raw.json("GET", "/api/v1/namespaces/default/configmaps/a")[0] == 404


def test_mutating_order_and_generate_name(raw, hooks, ca):
    order: list[str] = []

    def add(label: str) -> Callable[[AdmissionRequest], AdmissionResponse]:
        def hook(req: AdmissionRequest) -> AdmissionResponse:
            order.append(label)
            labels = dict(req.object["metadata"].get("labels") or {})
            labels[label] = str(len(labels))
            return patched([{"op": "add", "path": "/metadata/labels", "value": labels}])

        return hook

    register(raw, webhook("b.example.com", hooks.on("/b", add("b")), ca), mutating=True, name="b-config")
    register(raw, webhook("a.example.com", hooks.on("/a", add("a")), ca), mutating=True, name="a-config")
    code, body = create_cm(raw, cm("gen-", generate=True))
    assert code == 201, body
    assert order == ["a", "b"]  # sorted by configuration name
    assert body["metadata"]["labels"] == {"a": "0", "b": "1"}
    assert body["metadata"]["name"].startswith("gen-")
    req = hooks.requests["/a"][0]
    assert req.name == "" and "name" not in req.object["metadata"]
    assert raw.json("GET", f"/api/v1/namespaces/default/configmaps/{body['metadata']['name']}")[0] == 200


def test_mutating_webhook_on_custom_resource_update(raw, apiserver, hooks, ca):
    apiserver.install_crds(
        [
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {
                    "group": "example.com",
                    "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "schema": {
                                "openAPIV3Schema": {
                                    "type": "object",
                                    "properties": {
                                        "spec": {
                                            "type": "object",
                                            "properties": {"size": {"type": "integer", "maximum": 10}},
                                        }
                                    },
                                }
                            },
                        }
                    ],
                },
            }
        ]
    )
    size = {"value": 3}
    url = hooks.on(
        "/size", lambda req: patched([{"op": "replace", "path": "/spec/size", "value": size["value"]}])
    )
    register(
        raw,
        webhook("size.example.com", url, ca, operations=["CREATE", "UPDATE"], groups=["example.com"],
                resources=["widgets"]),
        mutating=True,
    )  # fmt: skip
    path = "/apis/example.com/v1/namespaces/default/widgets"
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}
    code, created = raw.json("POST", path, body)
    assert code == 201 and created["spec"]["size"] == 3 and created["metadata"]["generation"] == 1
    size["value"] = 50  # the schema's maximum applies to the mutated object
    code, out = raw.json(
        "PATCH", f"{path}/w", {"spec": {"size": 2}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert code == 422 and "spec.size" in out["message"]
    size["value"] = 4
    code, out = raw.json(
        "PATCH", f"{path}/w", {"spec": {"size": 2}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert code == 200 and out["spec"]["size"] == 4 and out["metadata"]["generation"] == 2
    req = hooks.requests["/size"][-1]
    assert (
        req.operation == "UPDATE" and req.old_object["spec"]["size"] == 3 and req.object["spec"]["size"] == 2
    )


# --- call failures and failurePolicy ---------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_connection_refused(raw, ca, policy):
    port = free_port()  # nothing listens there
    register(raw, webhook("down.example.com", f"https://127.0.0.1:{port}/hook", ca, failure=policy))
    code, body = create_cm(raw, cm("a"))
    if policy == "Ignore":
        assert code == 201
        return
    assert code == 500 and body["reason"] == "InternalError"
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: '
        f'Post "https://127.0.0.1:{port}/hook?timeout=10s": dial tcp 127.0.0.1:{port}: connect: '
        "connection refused"
    )
    assert body["details"]["causes"][0]["message"].startswith('failed calling webhook "down.example.com"')


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_timeout(raw, rawhttps, ca, policy):
    rawhttps.delay = 1.5
    rawhttps.answer = lambda review: (200, b"{}")
    register(raw, webhook("slow.example.com", rawhttps.url, ca, failure=policy, timeout=1))
    started = time.monotonic()
    code, body = create_cm(raw, cm("a"))
    assert time.monotonic() - started < 1.4
    if policy == "Ignore":
        assert code == 201
    else:
        assert code == 500
        assert body["message"].endswith(f'Post "{rawhttps.url}?timeout=1s": context deadline exceeded')


def answer(doc: dict) -> tuple[int, bytes]:
    return 200, json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("respond", "expected"),
    [
        (lambda r: (500, b"boom"), 'an error on the server ("boom") has prevented the request'),
        (lambda r: (404, b"404 page not found"), "failed to call webhook: the server could not find"),
        (lambda r: (200, b"not json"), "failed to call webhook: couldn't get version/kind; json parse error"),
        (
            lambda r: answer({"apiVersion": r["apiVersion"], "kind": "AdmissionReview",
                              "response": {"uid": "wrong", "allowed": True}}),
            'received invalid webhook response: expected response.uid="',
        ),
        (
            lambda r: answer({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                              "response": {"uid": r["request"]["uid"], "allowed": True}}),
            "received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
            "Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview",
        ),
        (
            lambda r: answer({"apiVersion": r["apiVersion"], "kind": "AdmissionReview"}),
            "received invalid webhook response: webhook response was absent",
        ),
        (
            lambda r: answer({"apiVersion": r["apiVersion"], "kind": "AdmissionReview",
                              "response": {"uid": r["request"]["uid"], "allowed": True, "patch": "W10=",
                                           "patchType": "JSONPatch"}}),
            "received invalid webhook response: validating webhook may not return response.patch",
        ),
    ],
)  # fmt: skip
def test_bad_responses_are_call_failures(raw, rawhttps, ca, respond, expected):
    rawhttps.answer = respond
    register(raw, webhook("bad.example.com", rawhttps.url, ca))
    code, body = create_cm(raw, cm("a"))
    assert code == 500, body
    assert body["message"].startswith('Internal error occurred: failed calling webhook "bad.example.com": ')
    assert expected in body["message"]
    raw.json("DELETE", f"{VWC}/test")
    register(raw, webhook("bad.example.com", rawhttps.url, ca, failure="Ignore"))
    assert create_cm(raw, cm("b"))[0] == 201


def test_v1beta1_review_is_not_checked_for_uid(raw, rawhttps, ca):
    seen: list[dict] = []

    def respond(review: dict) -> tuple[int, bytes]:
        seen.append(review)
        return answer({"response": {"uid": "whatever", "allowed": True}})

    rawhttps.answer = respond
    register(raw, webhook("beta.example.com", rawhttps.url, ca, review_versions=["v1beta1", "v1"]))
    assert create_cm(raw, cm("a"))[0] == 201
    assert seen[0]["apiVersion"] == "admission.k8s.io/v1beta1"


# --- TLS and service references ------------------------------------------------------------------------


def test_ca_bundle_is_verified(raw, hooks):
    url = hooks.on("/ok", lambda req: allowed())
    register(raw, webhook("tls.example.com", url, generate_ca("someone-else")))
    code, body = create_cm(raw, cm("a"))
    assert code == 500 and "tls: failed to verify certificate" in body["message"]
    assert hooks.requests["/ok"] == []


def test_service_reference_resolved_through_the_map(apiserver, raw, hooks, ca):
    hooks.on("/svc", deny_all)
    svc = {"namespace": "webhooks", "name": "hooks", "path": "/svc", "port": 8443}
    register(raw, webhook("svc.example.com", None, ca, service=svc))
    code, body = create_cm(raw, cm("a"))
    assert code == 500
    assert 'Post "https://hooks.webhooks.svc:8443/svc?timeout=10s"' in body["message"]
    apiserver.map_webhook_service("webhooks", "hooks", f"127.0.0.1:{hooks.server.port}", port=8443)
    code, body = create_cm(raw, cm("a"))
    assert code == 403 and body["message"].endswith("denied the request: nope")
    # The certificate must name NAME.NAMESPACE.svc: another service name fails verification.
    apiserver.webhook_service_map[("webhooks", "other", 443)] = f"127.0.0.1:{hooks.server.port}"
    svc = {"namespace": "webhooks", "name": "other", "path": "/svc"}
    raw.json("DELETE", f"{VWC}/test")
    register(raw, webhook("svc.example.com", None, ca, service=svc))
    code, body = create_cm(raw, cm("a"))
    assert code == 500 and "failed to verify certificate" in body["message"]


# --- DELETE and deletecollection --------------------------------------------------------------------------


def test_delete_sends_old_object_and_options(raw, hooks, ca):
    verdict = {"allow": False}
    url = hooks.on("/del", lambda req: allowed() if verdict["allow"] else denied("keep it"))
    register(raw, webhook("del.example.com", url, ca, operations=["DELETE"]))
    assert create_cm(raw, cm("a"))[0] == 201
    code, body = raw.json(
        "DELETE", "/api/v1/namespaces/default/configmaps/a", {"propagationPolicy": "Foreground"}
    )
    assert (
        code == 403 and body["message"] == 'admission webhook "del.example.com" denied the request: keep it'
    )
    req = hooks.requests["/del"][0]
    assert req.operation == "DELETE" and req.object is None
    assert req.old_object["metadata"]["name"] == "a" and req.old_object["data"] == {"k": "v"}
    assert req.options == {
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "propagationPolicy": "Foreground",
    }
    assert raw.json("GET", "/api/v1/namespaces/default/configmaps/a")[0] == 200
    verdict["allow"] = True
    assert raw.json("DELETE", "/api/v1/namespaces/default/configmaps/a")[0] == 200
    assert raw.json("GET", "/api/v1/namespaces/default/configmaps/a")[0] == 404


def test_deletecollection_reviews_each_object(raw, hooks, ca):
    url = hooks.on("/del", lambda req: denied("keep") if req.name == "keep" else allowed())
    for name in ("a", "b", "keep", "z"):
        assert create_cm(raw, cm(name, labels={"set": "1"}))[0] == 201
    register(raw, webhook("del.example.com", url, ca, operations=["DELETE"]))
    code, body = raw.json("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=set%3D1")
    assert code == 403 and body["message"].endswith("denied the request: keep")
    left = [
        i["metadata"]["name"] for i in raw.json("GET", "/api/v1/namespaces/default/configmaps")[1]["items"]
    ]
    assert "a" not in left and "b" not in left and "keep" in left
    assert [r.name for r in hooks.requests["/del"]] == ["a", "b", "keep"]
    assert all(r.operation == "DELETE" and r.old_object for r in hooks.requests["/del"])


def test_webhook_may_call_back_into_the_server(apiserver, raw, hooks, ca):
    api = client.CoreV1Api(apiserver.api_client())

    def lookup(req: AdmissionRequest) -> AdmissionResponse:
        ns = api.read_namespace(req.namespace)  # would deadlock if the server blocked on the call
        return allowed() if ns.metadata.labels.get("open") == "yes" else denied("closed")

    register(raw, webhook("lookup.example.com", hooks.on("/lookup", lookup), ca))
    assert create_cm(raw, cm("a"))[0] == 403
    raw.json(
        "PATCH", "/api/v1/namespaces/default", {"metadata": {"labels": {"open": "yes"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    assert create_cm(raw, cm("a"))[0] == 201


def test_null_selectors_are_defaulted_and_match_everything(raw, hooks, ca):
    """21-2, 21-3, 21-8: kopf registers its webhooks with ``"objectSelector": null``; like
    kube-apiserver (null decodes as nil, then defaulting), the server stores and serves ``{}``, and the
    webhook is called for every object."""
    hook = webhook("nulls.example.com", hooks.on("/nulls", deny_all), ca)
    hook.update(objectSelector=None, namespaceSelector=None, timeoutSeconds=None, matchPolicy=None)
    register(raw, hook)
    code, stored = raw.json("GET", f"{VWC}/test")
    assert code == 200
    served = stored["webhooks"][0]
    assert served["objectSelector"] == {} and served["namespaceSelector"] == {}
    assert served["timeoutSeconds"] == 10 and served["matchPolicy"] == "Equivalent"
    assert None not in served.values()
    assert create_cm(raw, cm("a", labels={"any": "thing"}))[0] == 403


def test_match_conditions_filter_what_is_sent(raw, hooks, ca):
    """A webhook is called only when every matchCondition is true (CEL over object, oldObject, request)."""
    hook = webhook("cel.example.com", hooks.on("/cel", deny_all), ca, operations=["CREATE", "UPDATE"])
    hook["matchConditions"] = [
        {
            "name": "labelled",
            "expression": "has(object.metadata.labels) && 'check' in object.metadata.labels",
        },
        {"name": "not-admin-update", "expression": "request.operation == 'CREATE' || oldObject != null"},
    ]
    register(raw, hook)
    assert create_cm(raw, cm("a"))[0] == 201
    assert hooks.requests["/cel"] == []
    code, body = create_cm(raw, cm("b", labels={"check": "1"}))
    assert code == 403 and "nope" in body["message"]
    assert [r.name for r in hooks.requests["/cel"]] == ["b"]


def test_match_conditions_must_compile(raw, ca):
    hook = webhook("cel.example.com", "https://127.0.0.1:1/x", ca)
    hook["matchConditions"] = [
        {"name": "m", "expression": "object.metadata.name =="},
        {"name": "m", "expression": "params.x"},
    ]
    code, body = raw.json(
        "POST", VWC, {"apiVersion": V, "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "c"},
                      "webhooks": [hook]},
    )  # fmt: skip
    assert code == 422
    fields = [(c["field"], c["reason"]) for c in body["details"]["causes"]]
    assert fields == [
        ("webhooks[0].matchConditions[0].expression", "FieldValueInvalid"),
        ("webhooks[0].matchConditions[1].name", "FieldValueDuplicate"),
        ("webhooks[0].matchConditions[1].expression", "FieldValueInvalid"),
    ]
    causes = body["details"]["causes"]
    assert causes[0]["message"].startswith(
        'Invalid value: "object.metadata.name ==": compilation failed: ERROR:'
    )
    assert "undeclared reference to 'params" in causes[2]["message"]


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_match_condition_errors_follow_the_failure_policy(raw, hooks, ca, policy):
    hook = webhook("cel.example.com", hooks.on("/err", deny_all), ca, failure=policy)
    hook["matchConditions"] = [{"name": "m", "expression": "object.data.missing == 'x'"}]
    register(raw, hook)
    code, body = create_cm(raw, cm("a"))
    assert hooks.requests["/err"] == []
    if policy == "Ignore":
        assert code == 201
        return
    assert code == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'configmaps "a" is forbidden: failed calling webhook "cel.example.com": expression '
        "'object.data.missing == 'x'' resulted in error: no such key: missing"
    )
