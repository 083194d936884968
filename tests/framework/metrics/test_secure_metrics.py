"""The secure metrics endpoint: HTTPS, callers authenticated by a TokenReview and authorized by a
SubjectAccessReview for ``get`` on ``/metrics``, answers cached as controller-runtime's filter caches them
(counted in the API server's request records, never timed)."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from cryptography import x509
from cryptography.x509.oid import NameOID
from prometheus_client import CollectorRegistry, Counter

from framework.certs import generate_ca, issue_serving_cert
from framework.client import Client
from framework.clock import FakeClock
from framework.manager import Manager
from framework.metrics import MetricsServer
from framework.metrics.filters import ALLOW_CACHE_TTL, DENY_CACHE_TTL, TOKEN_CACHE_TTL, DelegatingAuth
from framework.testing import eventually

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

RBAC = "rbac.authorization.k8s.io/v1"
# What the process serving /metrics needs, and nothing else (controller-runtime's filter docs).
REVIEWER_RULES = [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
]


def admin(apiserver) -> Client:
    return Client.from_kubeconfig(apiserver.kubeconfig, qps=0)


def grant(apiserver, name: str, rules: list[dict], user: str) -> None:
    c = admin(apiserver)
    c.create({"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules})
    c.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
        }
    )


def reader_role(apiserver, user: str, name: str = "metrics-reader") -> None:
    grant(apiserver, name, [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}], user)


@pytest.fixture
def rbac_apiserver() -> Iterator:
    from framework.apiserver import APIServer

    with APIServer(authorization="RBAC") as server:
        yield server


@pytest.fixture
def reviewer(rbac_apiserver) -> Client:
    """The manager's client: a user allowed to create token and subject access reviews only."""
    grant(rbac_apiserver, "metrics-auth", REVIEWER_RULES, "metrics-manager")
    return Client.from_kubeconfig(rbac_apiserver.kubeconfig_for("metrics-manager"), qps=0)


def registry_with_a_series() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("demo_total", "a series to find", registry=registry).inc()
    return registry


class Scraper:
    """HTTPS GETs of ``url`` trusting ``ca_pem``, with a fresh connection each (no keep-alive)."""

    def __init__(self, url: str, ca_pem: bytes) -> None:
        self.url = url
        self.ca_pem = ca_pem

    def get(self, token: str | None = None, path: str = "/metrics") -> urllib3.BaseHTTPResponse:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        with urllib3.PoolManager(ca_cert_data=self.ca_pem.decode(), retries=False) as http:
            return http.request("GET", self.url + path, headers=headers)


def review_counts(apiserver, user: str = "metrics-manager") -> tuple[int, int]:
    """(TokenReviews, SubjectAccessReviews) created by ``user`` so far."""
    counts = apiserver.request_counts()
    tokens = sum(n for k, n in counts.items() if k.user == user and "tokenreviews" in k.resource)
    sars = sum(
        n for k, n in counts.items() if k.user == user and k.resource.startswith("subjectaccessreviews")
    )
    return tokens, sars


@pytest.fixture
def secure(rbac_apiserver, reviewer) -> Iterator[tuple[Manager, Scraper]]:
    """A manager serving secure metrics (self-signed), run on a thread."""
    mgr = Manager(
        reviewer, metrics_bind_address="127.0.0.1:0", metrics_secure=True, registry=registry_with_a_series()
    )
    thread = threading.Thread(target=mgr.start, name="secure-metrics-manager", daemon=True)
    thread.start()
    server = mgr.metrics_server
    assert server is not None
    eventually(server.is_running, timeout=30)
    assert server.url.startswith("https://") and server.ca_pem is not None
    yield mgr, Scraper(server.url, server.ca_pem)
    mgr.stop()
    thread.join(30)
    assert not thread.is_alive()


def test_no_token_and_a_bad_token_are_401(secure, rbac_apiserver):
    _, scrape = secure
    for response in (scrape.get(), scrape.get("not-a-token"), scrape.get("")):
        assert response.status == 401
        assert response.data == b"Unauthorized\n"
    # A token that is not a bearer token at all is not even sent for review.
    with urllib3.PoolManager(ca_cert_data=scrape.ca_pem.decode(), retries=False) as http:
        basic = http.request("GET", scrape.url + "/metrics", headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert basic.status == 401
    assert review_counts(rbac_apiserver) == (1, 0)  # "not-a-token" once; nothing to authorize


def test_a_token_without_get_metrics_is_403_naming_user_and_permission(secure, rbac_apiserver):
    _, scrape = secure
    token = rbac_apiserver.add_user("nosy", groups=["dev"])
    response = scrape.get(token)
    assert response.status == 403
    text = response.data.decode()
    assert text.startswith("Authorization denied for user nosy: get on the non-resource URL /metrics")
    assert 'nonResourceURLs: ["/metrics"], verbs: ["get"]' in text
    assert b"demo_total" not in response.data


def test_a_token_with_get_metrics_reads_them(secure, rbac_apiserver):
    _, scrape = secure
    token = rbac_apiserver.add_user("prometheus")
    reader_role(rbac_apiserver, "prometheus")
    response = scrape.get(token)
    assert response.status == 200, response.data
    assert b"demo_total 1.0" in response.data
    assert b"rest_client_requests_total{" in response.data  # the reviews themselves, counted
    # Another path of the server is authorized for its own path: /metrics/x is not /metrics.
    assert scrape.get(token, "/metrics/x").status in (403, 404)


def test_answers_are_cached_not_asked_per_scrape(secure, rbac_apiserver):
    _, scrape = secure
    allowed = rbac_apiserver.add_user("prometheus")
    reader_role(rbac_apiserver, "prometheus")
    denied = rbac_apiserver.add_user("nosy")
    for _ in range(3):
        assert scrape.get(allowed).status == 200
    assert review_counts(rbac_apiserver) == (1, 1)
    for _ in range(3):
        assert scrape.get(denied).status == 403
    assert review_counts(rbac_apiserver) == (2, 2)
    for _ in range(3):
        assert scrape.get("bogus").status == 401
    assert review_counts(rbac_apiserver) == (3, 2)


def test_cache_lifetimes_are_controller_runtimes(rbac_apiserver, reviewer):
    """A denial is remembered for 30 s, a grant for 5 min, a token for 1 min (a fake clock)."""
    assert (TOKEN_CACHE_TTL, ALLOW_CACHE_TTL, DENY_CACHE_TTL) == (60.0, 300.0, 30.0)
    clock = FakeClock()
    auth = DelegatingAuth(reviewer, clock=clock)
    server = MetricsServer("127.0.0.1:0", registry_with_a_series(), secure=True, auth=auth)
    server.start()
    try:
        assert server.ca_pem is not None
        scrape = Scraper(server.url, server.ca_pem)
        token = rbac_apiserver.add_user("late-reader")
        assert scrape.get(token).status == 403
        reader_role(rbac_apiserver, "late-reader")
        clock.step(DENY_CACHE_TTL - 1)
        assert scrape.get(token).status == 403  # the denial still holds
        assert review_counts(rbac_apiserver) == (1, 1)
        clock.step(2)  # 31 s: the denial expired, and the token's review (60 s) is still good
        assert scrape.get(token).status == 200
        assert review_counts(rbac_apiserver) == (1, 2)
        admin(rbac_apiserver).delete(RBAC, "ClusterRoleBinding", "metrics-reader")
        clock.step(ALLOW_CACHE_TTL - 32)  # t = 299 s: the grant (asked at 31 s) is good until 331 s
        assert scrape.get(token).status == 200  # the grant is still remembered
        assert review_counts(rbac_apiserver) == (2, 2)  # the token was reviewed again after 60 s
        clock.step(ALLOW_CACHE_TTL)
        assert scrape.get(token).status == 403
        assert review_counts(rbac_apiserver) == (3, 3)
    finally:
        assert server.stop(5)


def test_an_unreachable_api_server_is_500_and_not_cached(rbac_apiserver, reviewer):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # closed again: nothing listens there
    cfg = reviewer.configuration
    cfg_copy = type(cfg)()
    cfg_copy.host = f"https://127.0.0.1:{dead}"
    cfg_copy.verify_ssl = False
    unreachable = Client(cfg_copy, qps=0, max_retries=0, timeout=2.0)
    server = MetricsServer(
        "127.0.0.1:0", registry_with_a_series(), secure=True, auth=DelegatingAuth(unreachable)
    )
    server.start()
    try:
        assert server.ca_pem is not None
        scrape = Scraper(server.url, server.ca_pem)
        for _ in range(2):
            response = scrape.get("some-token")
            assert response.status == 500
            assert response.data == b"Authentication failed\n"
        assert scrape.get().status == 401  # no token: nothing to ask
    finally:
        assert server.stop(5)


def test_a_manager_client_without_review_rights_answers_500(rbac_apiserver):
    """The reviews need the manager's client to be allowed them; without, no caller gets in."""
    plain = Client.from_kubeconfig(rbac_apiserver.kubeconfig_for("no-rights"), qps=0)
    server = MetricsServer("127.0.0.1:0", registry_with_a_series(), secure=True, auth=DelegatingAuth(plain))
    server.start()
    try:
        assert server.ca_pem is not None
        token = rbac_apiserver.add_user("prometheus")
        reader_role(rbac_apiserver, "prometheus")
        response = Scraper(server.url, server.ca_pem).get(token)
        assert response.status == 500 and response.data == b"Authentication failed\n"
    finally:
        assert server.stop(5)


def served_certificate(url: str, ca_pem: bytes) -> x509.Certificate:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname=host) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def served_serial(url: str, ca_pem: bytes) -> int:
    return served_certificate(url, ca_pem).serial_number


def test_the_self_signed_certificate_is_issued_by_a_metrics_ca(secure):
    _, scrape = secure
    issuer = served_certificate(scrape.url, scrape.ca_pem).issuer
    assert issuer.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "framework-metrics-ca"


def test_certificate_files_are_reread_when_they_change(tmp_path: Path, rbac_apiserver, reviewer):
    ca = generate_ca("metrics-test-ca")
    cert_dir = tmp_path / "metrics-certs"
    first = issue_serving_cert(ca, ["127.0.0.1"])
    first.write(cert_dir, "tls")
    registry = registry_with_a_series()
    server = MetricsServer(
        "127.0.0.1:0", registry, secure=True, cert_dir=cert_dir, auth=DelegatingAuth(reviewer)
    )
    server.start()
    try:
        assert server.ca_pem is None  # files given: nothing self-signed
        assert served_serial(server.url, ca.cert_pem) == first.cert.serial_number
        second = issue_serving_cert(ca, ["127.0.0.1"])
        second.write(cert_dir, "tls")
        assert served_serial(server.url, ca.cert_pem) == second.cert.serial_number
        assert registry.get_sample_value("certwatcher_read_certificate_total") == 2
        token = rbac_apiserver.add_user("prometheus")
        reader_role(rbac_apiserver, "prometheus")
        assert Scraper(server.url, ca.cert_pem).get(token).status == 200
    finally:
        assert server.stop(5)


def test_missing_certificate_files_fail_start_naming_them(tmp_path: Path, reviewer):
    server = MetricsServer(
        "127.0.0.1:0", secure=True, cert_dir=tmp_path / "none", auth=DelegatingAuth(reviewer)
    )
    with pytest.raises(OSError) as err:
        server.start()
    assert "tls.crt" in str(err.value) or "tls.key" in str(err.value)
    server.stop(1)


def test_plain_http_is_refused_by_the_https_endpoint(secure):
    _, scrape = secure
    plain = scrape.url.replace("https://", "http://")
    with urllib3.PoolManager(retries=False) as http:
        try:
            response = http.request("GET", plain + "/metrics", timeout=5)
        except urllib3.exceptions.HTTPError:
            return  # the TLS listener dropped the plain request
    assert response.status == 400 or b"demo_total" not in response.data
