"""WebhookServer over real TLS: AdmissionReview v1/v1beta1, bad bodies (namespace-deletion-webhook.md §5),
handler failures, certificate rotation, metrics and shutdown."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
import urllib3
from cryptography import x509
from prometheus_client import CollectorRegistry

from framework.certs import CertKeyPair, generate_ca, issue_serving_cert
from framework.testing import consistently
from framework.webhook import (
    MAX_REQUEST_SIZE,
    AdmissionRequest,
    AdmissionResponse,
    WebhookServer,
    allowed,
    denied,
    errored,
    patched,
    self_signed_cert,
)

V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
JSON = {"Content-Type": "application/json"}


pytestmark = pytest.mark.usefixtures("no_leaked_threads")


@pytest.fixture(scope="module")
def ca() -> CertKeyPair:
    return generate_ca("webhook-test-ca")


@pytest.fixture
def cert_dir(tmp_path: Path, ca: CertKeyPair) -> Path:
    issue_serving_cert(ca).write(tmp_path, "tls")
    (tmp_path / "ca.crt").write_bytes(ca.cert_pem)
    return tmp_path


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


class Recorder:
    """Handlers that record the requests they saw."""

    def __init__(self) -> None:
        self.seen: list[AdmissionRequest] = []

    def __call__(self, verdict: Callable[[AdmissionRequest], Any]) -> Callable[[AdmissionRequest], Any]:
        def handler(request: AdmissionRequest) -> Any:
            self.seen.append(request)
            return verdict(request)

        return handler


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def _boom(request: AdmissionRequest) -> AdmissionResponse:
    raise RuntimeError("database on fire")


@pytest.fixture
def server(cert_dir: Path, registry: CollectorRegistry, recorder: Recorder) -> Iterator[WebhookServer]:
    server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=registry, shutdown_timeout=5)
    server.register("/allow", recorder(lambda r: allowed("fine", warnings=["careful"])))
    server.register(
        "/validate-namespace-deletion",
        recorder(
            lambda r: denied(
                f'Namespace "{r.name}" is forbidden: '
                f'direct deletion of namespace "{r.name}" is not permitted',
                details={"name": r.name, "kind": "Namespace"},
            )
        ),
    )
    server.register(
        "/mutate", recorder(lambda r: patched([{"op": "add", "path": "/metadata/labels/x", "value": "y"}]))
    )
    server.register("/boom", recorder(_boom))
    server.register("/not-a-response", recorder(lambda r: {"allowed": True}))
    server.start()
    assert server.wait_ready(5)
    yield server
    assert server.stop(5), "server did not stop cleanly"


@pytest.fixture
def https(cert_dir: Path) -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(ca_certs=str(cert_dir / "ca.crt"), cert_reqs="CERT_REQUIRED", retries=False)
    yield pool
    pool.clear()


def review_body(
    api_version: str = V1, uid: str = "0df28fbd-5f5f-4ed3-9a1e-5b8a4c3a7d01", **request: Any
) -> bytes:
    req = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "Namespace"},
        "resource": {"group": "", "version": "v1", "resource": "namespaces"},
        "name": "garden-dev",
        "operation": "DELETE",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "object": None,
        "oldObject": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-dev"}},
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"},
    }
    req.update(request)
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview", "request": req}).encode()


def post(
    pool: urllib3.PoolManager,
    server: WebhookServer,
    path: str,
    body: bytes,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    response = pool.request(
        "POST", server.url + path, body=body, headers=JSON if headers is None else headers
    )
    assert response.headers["Content-Type"] == "application/json"
    return response.status, json.loads(response.data)


# -- the protocol --------------------------------------------------------------------------------------


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
def test_review_is_answered_in_kind_with_the_request_uid(
    server: WebhookServer, https: urllib3.PoolManager, recorder: Recorder, api_version: str
) -> None:
    status, review = post(https, server, "/allow", review_body(api_version, uid="uid-123"))
    assert status == 200
    assert review["apiVersion"] == api_version
    assert review["kind"] == "AdmissionReview"
    assert review["response"] == {
        "uid": "uid-123",
        "allowed": True,
        "status": {"metadata": {}, "code": 200, "message": "fine"},
        "warnings": ["careful"],
    }
    assert len(recorder.seen) == 1


def test_handler_sees_the_request_fields(
    server: WebhookServer, https: urllib3.PoolManager, recorder: Recorder
) -> None:
    post(https, server, "/allow", review_body(V1BETA1, namespace="", dryRun=True, subResource="status"))
    (request,) = recorder.seen
    assert request.uid == "0df28fbd-5f5f-4ed3-9a1e-5b8a4c3a7d01"
    assert request.kind == ("", "v1", "Namespace")
    assert request.resource == ("", "v1", "namespaces")
    assert request.resource.resource == "namespaces"
    assert request.sub_resource == "status"
    assert (request.name, request.namespace, request.operation) == ("garden-dev", "", "DELETE")
    assert request.user_info["username"] == "alice" and request.username == "alice"
    assert request.object is None
    assert request.old_object == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-dev"}}
    assert request.dry_run is True
    assert request.options == {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
    assert request.raw["userInfo"]["groups"] == ["system:authenticated"]
    assert request.request_kind is None


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
def test_denial_carries_a_forbidden_status(
    server: WebhookServer, https: urllib3.PoolManager, api_version: str
) -> None:
    status, review = post(https, server, "/validate-namespace-deletion", review_body(api_version, uid="u-9"))
    assert status == 200
    assert review["apiVersion"] == api_version
    assert review["response"] == {
        "uid": "u-9",
        "allowed": False,
        "status": {
            "metadata": {},
            "status": "Failure",
            "code": 403,
            "reason": "Forbidden",
            "message": 'Namespace "garden-dev" is forbidden: direct deletion of namespace "garden-dev" is '
            "not permitted",
            "details": {"name": "garden-dev", "kind": "Namespace"},
        },
    }


def test_patch_is_base64_json_patch(server: WebhookServer, https: urllib3.PoolManager) -> None:
    _, review = post(https, server, "/mutate", review_body(operation="CREATE"))
    response = review["response"]
    assert response["allowed"] is True
    assert response["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(response["patch"])) == [
        {"op": "add", "path": "/metadata/labels/x", "value": "y"}
    ]


# -- bad bodies: HTTP 200, allowed false, status.code 400 (413) ------------------------------------------


def _bad(body: bytes, headers: dict[str, str] = JSON) -> tuple[bytes, dict[str, str]]:
    return body, headers


BAD_BODIES = {
    "not json": (_bad(b"this is not json"), V1, "couldn't decode the AdmissionReview"),
    "json array": (_bad(b"[1, 2]"), V1, "expected a JSON object"),
    "truncated": (_bad(review_body()[:-7]), V1, "couldn't decode the AdmissionReview"),
    "wrong kind": (
        _bad(json.dumps({"apiVersion": "v1", "kind": "Pod", "request": {"uid": "x"}}).encode()),
        V1,
        "expected an AdmissionReview",
    ),
    "unknown version": (
        _bad(json.dumps({"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview"}).encode()),
        V1,
        "expected an AdmissionReview",
    ),
    "missing request": (
        _bad(json.dumps({"apiVersion": V1BETA1, "kind": "AdmissionReview"}).encode()),
        V1BETA1,
        "the AdmissionReview has no request",
    ),
    "request not an object": (
        _bad(json.dumps({"apiVersion": V1, "kind": "AdmissionReview", "request": "x"}).encode()),
        V1,
        "request: expected an object",
    ),
    "missing uid": (_bad(review_body(uid="")), V1, "request.uid is missing"),
    "field of the wrong type": (_bad(review_body(V1BETA1, name=5)), V1BETA1, "request.name: expected str"),
    "empty body": (_bad(b""), V1, "request body is empty"),
    "wrong content type": (
        _bad(review_body(V1BETA1), {"Content-Type": "text/plain"}),
        V1BETA1,
        "contentType=text/plain, expected application/json",
    ),
    "no content type": (_bad(review_body(), {}), V1, "contentType=, expected application/json"),
}


@pytest.mark.parametrize("case", BAD_BODIES.values(), ids=list(BAD_BODIES))
def test_bad_bodies_get_a_400_review(
    server: WebhookServer, https: urllib3.PoolManager, recorder: Recorder, case: tuple[Any, str, str]
) -> None:
    (body, headers), api_version, message = case
    status, review = post(https, server, "/allow", body, headers)
    assert status == 200
    assert review["apiVersion"] == api_version
    assert review["kind"] == "AdmissionReview"
    response = review["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 400
    assert response["status"]["status"] == "Failure"
    assert "reason" not in response["status"]
    assert message in response["status"]["message"]
    assert recorder.seen == []


def test_wrong_content_type_still_echoes_the_uid(server: WebhookServer, https: urllib3.PoolManager) -> None:
    _, review = post(https, server, "/allow", review_body(uid="abc"), {"Content-Type": "application/yaml"})
    assert review["response"]["uid"] == "abc"
    assert review["response"]["status"]["code"] == 400


def test_body_over_7_mib_is_413_and_exactly_7_mib_is_accepted(
    server: WebhookServer, https: urllib3.PoolManager, recorder: Recorder
) -> None:
    body = review_body()
    exact = body + b" " * (MAX_REQUEST_SIZE - len(body))
    assert len(exact) == MAX_REQUEST_SIZE
    status, review = post(https, server, "/allow", exact)
    assert (status, review["response"]["allowed"]) == (200, True)

    status, review = post(https, server, "/allow", exact + b" ")
    assert status == 200
    assert review["response"]["allowed"] is False
    assert review["response"]["status"]["code"] == 413
    assert review["response"]["status"]["message"] == "request entity is too large; limit is 7340032 bytes"
    assert len(recorder.seen) == 1
    # The short leftover was drained: the same keep-alive connection keeps working.
    status, review = post(https, server, "/allow", review_body())
    assert (status, review["response"]["allowed"]) == (200, True)


def test_chunked_body(server: WebhookServer, https: urllib3.PoolManager) -> None:
    body = review_body(uid="chunky")
    response = https.request(
        "POST", server.url + "/allow", body=iter([body[:10], body[10:]]), headers=JSON, chunked=True
    )
    assert response.status == 200
    assert json.loads(response.data)["response"]["uid"] == "chunky"


# -- handler failures ----------------------------------------------------------------------------------


def test_handler_exception_is_a_logged_500(server: WebhookServer, https: urllib3.PoolManager) -> None:
    with structlog.testing.capture_logs() as logs:
        status, review = post(https, server, "/boom", review_body(V1BETA1, uid="u-boom"))
    assert status == 200
    assert review["apiVersion"] == V1BETA1
    response = review["response"]
    assert response["uid"] == "u-boom"
    assert response["allowed"] is False
    assert response["status"]["code"] == 500
    assert "RuntimeError: database on fire" in response["status"]["message"]
    (entry,) = [e for e in logs if e["event"] == "admission handler raised"]
    assert entry["log_level"] == "error"
    assert entry["exc_info"] is True
    assert (entry["uid"], entry["webhook"]) == ("u-boom", "/boom")


def test_handler_returning_garbage_is_a_500(server: WebhookServer, https: urllib3.PoolManager) -> None:
    _, review = post(https, server, "/not-a-response", review_body())
    assert review["response"]["allowed"] is False
    assert review["response"]["status"]["code"] == 500
    assert "not an AdmissionResponse" in review["response"]["status"]["message"]


def test_unknown_path_is_404(server: WebhookServer, https: urllib3.PoolManager) -> None:
    response = https.request("POST", server.url + "/nope", body=review_body(), headers=JSON)
    assert response.status == 404
    assert response.data == b"404 page not found\n"


def test_plain_http_client_does_not_disturb_the_server(
    server: WebhookServer, https: urllib3.PoolManager
) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /allow HTTP/1.1\r\nHost: x\r\n\r\n")  # not a TLS ClientHello
        sock.settimeout(5)
        try:
            leftover = sock.recv(1024)
        except ConnectionResetError:
            leftover = b""
        assert b"HTTP/1.1 200" not in leftover
    status, _ = post(https, server, "/allow", review_body())
    assert status == 200


# -- certificates --------------------------------------------------------------------------------------


def served_serial(port: int, ca_file: Path) -> int:
    context = ssl.create_default_context(cafile=str(ca_file))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def test_rotated_certificate_is_served_to_new_connections(
    server: WebhookServer, cert_dir: Path, ca: CertKeyPair, registry: CollectorRegistry
) -> None:
    first = x509.load_pem_x509_certificate((cert_dir / "tls.crt").read_bytes()).serial_number
    assert served_serial(server.port, cert_dir / "ca.crt") == first
    assert server.certs.serial_number == first

    rotated = issue_serving_cert(ca)
    rotated.write(cert_dir, "tls")
    assert served_serial(server.port, cert_dir / "ca.crt") == rotated.cert.serial_number
    assert server.certs.serial_number == rotated.cert.serial_number
    assert registry.get_sample_value("certwatcher_read_certificate_total") == 2
    # and a full review over a fresh pool verifies against the CA with the new certificate
    pool = urllib3.PoolManager(ca_certs=str(cert_dir / "ca.crt"), cert_reqs="CERT_REQUIRED", retries=False)
    status, review = post(pool, server, "/allow", review_body())
    assert (status, review["response"]["allowed"]) == (200, True)
    pool.clear()


def test_broken_rotation_keeps_the_old_certificate(
    server: WebhookServer, cert_dir: Path, ca: CertKeyPair, registry: CollectorRegistry
) -> None:
    first = served_serial(server.port, cert_dir / "ca.crt")
    one, other = issue_serving_cert(ca), issue_serving_cert(ca)
    (cert_dir / "tls.crt").write_bytes(one.cert_pem)
    (cert_dir / "tls.key").write_bytes(other.key_pem)  # does not match the certificate
    with structlog.testing.capture_logs() as logs:
        assert served_serial(server.port, cert_dir / "ca.crt") == first
        assert served_serial(server.port, cert_dir / "ca.crt") == first
    assert registry.get_sample_value("certwatcher_read_certificate_errors_total") == 1  # once per change
    assert [e["log_level"] for e in logs if "cannot reload" in e["event"]] == ["warning"]

    (cert_dir / "tls.key").write_bytes(one.key_pem)
    assert served_serial(server.port, cert_dir / "ca.crt") == one.cert.serial_number


def test_start_fails_without_certificates(tmp_path: Path, registry: CollectorRegistry) -> None:
    server = WebhookServer("127.0.0.1", 0, cert_dir=tmp_path / "missing", registry=registry)
    with pytest.raises(FileNotFoundError):
        server.start()
    assert not server.is_running()
    assert server.stop(1)


def test_self_signed_cert_for_development(tmp_path: Path, registry: CollectorRegistry) -> None:
    cert_path, key_path, ca_pem = self_signed_cert(tmp_path / "certs", hosts=["localhost", "127.0.0.1"])
    assert (cert_path.name, key_path.name) == ("tls.crt", "tls.key")
    assert key_path.stat().st_mode & 0o077 == 0
    (tmp_path / "ca.pem").write_bytes(ca_pem)
    with WebhookServer("127.0.0.1", 0, cert_dir=tmp_path / "certs", registry=registry) as server:
        server.register("/ok", lambda r: allowed())
        pool = urllib3.PoolManager(
            ca_certs=str(tmp_path / "ca.pem"), cert_reqs="CERT_REQUIRED", retries=False
        )
        status, review = post(pool, server, "/ok", review_body())
        pool.clear()
    assert (status, review["response"]["allowed"]) == (200, True)


# -- metrics, registration, shutdown ---------------------------------------------------------------------


def test_metrics(server: WebhookServer, https: urllib3.PoolManager, registry: CollectorRegistry) -> None:
    for _ in range(3):
        post(https, server, "/allow", review_body())
    post(https, server, "/boom", review_body())
    post(https, server, "/allow", b"garbage")
    https.request("POST", server.url + "/nope", body=b"{}", headers=JSON)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert sample("controller_runtime_webhook_requests_total", webhook="/allow", code="200") == 4
    assert sample("controller_runtime_webhook_requests_total", webhook="/boom", code="200") == 1
    assert sample("controller_runtime_webhook_requests_total", webhook="/nope", code="404") is None
    assert sample("controller_runtime_webhook_latency_seconds_count", webhook="/allow") == 4
    assert sample("controller_runtime_webhook_latency_seconds_bucket", webhook="/allow", le="10.0") == 4
    assert sample("controller_runtime_webhook_requests_in_flight", webhook="/allow") == 0


def test_in_flight_gauge_and_graceful_stop(cert_dir: Path, registry: CollectorRegistry) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(request: AdmissionRequest) -> AdmissionResponse:
        entered.set()
        release.wait(5)
        return allowed()

    server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=registry)
    server.register("/slow", slow)
    server.start()
    pool = urllib3.PoolManager(ca_certs=str(cert_dir / "ca.crt"), cert_reqs="CERT_REQUIRED", retries=False)
    # an idle keep-alive connection, which stop() must close rather than wait for
    idle = urllib3.PoolManager(ca_certs=str(cert_dir / "ca.crt"), cert_reqs="CERT_REQUIRED", retries=False)
    idle.request("POST", server.url + "/nope", body=b"")
    results: list[tuple[int, dict[str, Any]]] = []
    client = threading.Thread(target=lambda: results.append(post(pool, server, "/slow", review_body())))
    client.start()
    assert entered.wait(5)
    assert (
        registry.get_sample_value("controller_runtime_webhook_requests_in_flight", {"webhook": "/slow"}) == 1
    )

    stopped: list[bool] = []
    stopper = threading.Thread(target=lambda: stopped.append(server.stop(5)))
    stopper.start()
    consistently(lambda: not stopped, duration=0.1, message="stop() waits while a review is in flight")
    with pytest.raises(urllib3.exceptions.HTTPError):  # no new connections once stopping
        urllib3.PoolManager(ca_certs=str(cert_dir / "ca.crt"), retries=False).request(
            "POST", server.url + "/slow", body=review_body(), headers=JSON, timeout=1
        )
    release.set()
    client.join(5)
    stopper.join(5)
    assert stopped == [True]
    assert results[0][0] == 200 and results[0][1]["response"]["allowed"] is True
    pool.clear()
    idle.clear()


def test_stop_is_bounded_when_a_handler_hangs(cert_dir: Path, registry: CollectorRegistry) -> None:
    entered, release = threading.Event(), threading.Event()

    def stuck(request: AdmissionRequest) -> AdmissionResponse:
        entered.set()
        release.wait(10)
        return allowed()

    server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=registry)
    server.register("/stuck", stuck)
    server.start()
    pool = urllib3.PoolManager(ca_certs=str(cert_dir / "ca.crt"), cert_reqs="CERT_REQUIRED", retries=False)
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(post(pool, server, "/stuck", review_body()))
        except Exception as error:
            outcome.append(error)

    client = threading.Thread(target=call, name="client")
    client.start()
    assert entered.wait(5)
    started = time.monotonic()
    assert server.stop(0.3) is False
    assert time.monotonic() - started < 1.5
    release.set()  # let the stuck thread finish so nothing leaks past the test
    client.join(5)
    assert len(outcome) == 1 and isinstance(outcome[0], Exception)  # its connection was cut at the bound
    pool.clear()


def test_registration_rules(server: WebhookServer) -> None:
    with pytest.raises(ValueError, match="already registered"):
        server.register("/allow", lambda r: allowed())
    with pytest.raises(ValueError, match="must start with '/'"):
        server.register("relative", lambda r: allowed())
    with pytest.raises(RuntimeError, match="single-use"):
        server.start()
    assert set(server.webhooks) >= {"/allow", "/mutate", "/boom"}


def test_register_after_start(server: WebhookServer, https: urllib3.PoolManager) -> None:
    server.register("/late", lambda r: denied("late", code=422))
    _, review = post(https, server, "/late", review_body())
    assert review["response"]["status"]["code"] == 422
    assert review["response"]["status"]["reason"] == "Invalid"


def test_threads_are_named(server: WebhookServer, https: urllib3.PoolManager) -> None:
    seen: list[str] = []

    def record(request: AdmissionRequest) -> AdmissionResponse:
        seen.append(threading.current_thread().name)
        return allowed()

    server.register("/record-thread", record)
    post(https, server, "/record-thread", review_body())
    assert "webhook-server" in {t.name for t in threading.enumerate()}  # the event-loop thread
    assert len(seen) == 1 and seen[0].startswith("webhook-server-handler")  # handlers run off the loop


# -- response helpers ----------------------------------------------------------------------------------


def test_response_helpers() -> None:
    assert allowed().to_dict("u") == {"uid": "u", "allowed": True, "status": {"metadata": {}, "code": 200}}
    assert denied("no").status == {"status": "Failure", "code": 403, "reason": "Forbidden", "message": "no"}
    assert denied("gone", code=404).status["reason"] == "NotFound"
    assert denied("custom", code=403, reason="Conflict").status["reason"] == "Conflict"
    assert "reason" not in denied("odd", code=499).status
    assert errored(500, ValueError("bad")).status == {"status": "Failure", "code": 500, "message": "bad"}
    assert errored(400, "x").code == 400
    assert AdmissionResponse(False).to_dict("u")["status"]["code"] == 200  # defaulted like Complete()
    assert "patch" not in patched([]).to_dict("u")
    with pytest.raises(ValueError, match="not a JSONPatch operation"):
        patched([{"op": "merge", "path": "/x"}])
    with pytest.raises(ValueError, match="not a JSONPatch operation"):
        patched([{"op": "add"}])
