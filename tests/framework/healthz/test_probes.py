"""Health probes scraped over HTTP: controller-runtime's /healthz and /readyz output."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import urllib3

from framework.healthz import Checks, HealthProbeServer, run_check
from framework.metrics import MetricsServer

pytestmark = pytest.mark.usefixtures("no_leaked_threads")


@pytest.fixture
def probes() -> Iterator[HealthProbeServer]:
    server = HealthProbeServer("127.0.0.1:0")
    server.start()
    yield server
    assert server.stop(2)


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def get(
    http: urllib3.PoolManager, server: HealthProbeServer, path: str, method: str = "GET"
) -> tuple[int, str]:
    response = http.request(method, server.url + path)
    return response.status, response.data.decode()


@pytest.mark.parametrize("endpoint", ["/healthz", "/readyz"])
def test_only_ping_passes(probes: HealthProbeServer, http: urllib3.PoolManager, endpoint: str) -> None:
    assert get(http, probes, endpoint) == (200, "ok")
    assert get(http, probes, endpoint + "?verbose") == (200, "[+]ping ok\nhealthz check passed\n")
    assert get(http, probes, endpoint + "/ping") == (200, "ok")
    assert get(http, probes, endpoint + "/") == (200, "ok")
    response = http.request("GET", probes.url + endpoint)
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_failing_readiness_check(probes: HealthProbeServer, http: urllib3.PoolManager) -> None:
    synced = threading.Event()
    probes.add_readyz_check("informers", lambda: None if synced.is_set() else "caches not synced")
    probes.add_readyz_check("webhook", lambda: None)

    assert get(http, probes, "/readyz") == (
        500,
        "[-]informers failed: reason withheld\n[+]ping ok\n[+]webhook ok\nhealthz check failed\n",
    )
    assert get(http, probes, "/readyz?verbose") == (
        500,
        "[-]informers failed: caches not synced\n[+]ping ok\n[+]webhook ok\nhealthz check failed\n",
    )
    assert get(http, probes, "/readyz/informers") == (500, "internal server error: caches not synced\n")
    assert get(http, probes, "/readyz/webhook") == (200, "ok")
    assert get(http, probes, "/healthz") == (200, "ok")  # liveness is separate

    synced.set()
    assert get(http, probes, "/readyz") == (200, "ok")
    assert get(http, probes, "/readyz?verbose=1") == (
        200,
        "[+]informers ok\n[+]ping ok\n[+]webhook ok\nhealthz check passed\n",
    )


def test_ways_a_check_fails(probes: HealthProbeServer, http: urllib3.PoolManager) -> None:
    def raises() -> None:
        raise ConnectionError("lease renew failed")

    probes.add_healthz_check("raises", raises)
    probes.add_healthz_check("false", lambda: False)
    probes.add_healthz_check("exception-value", lambda: TimeoutError("slow"))
    probes.add_healthz_check("true", lambda: True)
    status, body = get(http, probes, "/healthz?verbose")
    assert status == 500
    assert body.splitlines() == [
        "[-]exception-value failed: slow",
        "[-]false failed: check failed",
        "[+]ping ok",
        "[-]raises failed: lease renew failed",
        "[+]true ok",
        "healthz check failed",
    ]
    assert get(http, probes, "/healthz/raises") == (500, "internal server error: lease renew failed\n")


def test_exclude(probes: HealthProbeServer, http: urllib3.PoolManager) -> None:
    probes.add_healthz_check("broken", lambda: "no")
    assert get(http, probes, "/healthz?exclude=broken") == (200, "ok")
    assert get(http, probes, "/healthz?exclude=broken&exclude=nothing&verbose") == (
        200,
        "[+]broken excluded: ok\n[+]ping ok\n"
        'warn: some health checks cannot be excluded: no matches for "nothing"\n'
        "healthz check passed\n",
    )


def test_unknown_check_and_path_are_404(probes: HealthProbeServer, http: urllib3.PoolManager) -> None:
    assert get(http, probes, "/healthz/nope") == (404, "404 page not found\n")
    assert get(http, probes, "/livez") == (404, "404 page not found\n")
    assert get(http, probes, "/healthzfoo") == (404, "404 page not found\n")


def test_head_request(probes: HealthProbeServer, http: urllib3.PoolManager) -> None:
    response = http.request("HEAD", probes.url + "/healthz")
    assert response.status == 200
    assert response.data == b""
    assert response.headers["Content-Length"] == "2"


def test_check_names_are_unique(probes: HealthProbeServer) -> None:
    probes.add_readyz_check("cache", lambda: None)
    with pytest.raises(ValueError, match="already exists"):
        probes.add_readyz_check("cache", lambda: None)
    with pytest.raises(ValueError, match="already exists"):
        probes.add_healthz_check("ping", lambda: None)
    with pytest.raises(ValueError, match="invalid"):
        probes.add_healthz_check("a/b", lambda: None)
    with pytest.raises(TypeError):
        probes.add_healthz_check("x", "not callable")  # type: ignore[arg-type]
    probes.add_healthz_check("cache", lambda: None)  # the endpoints are independent
    assert probes.readyz.names() == ["cache", "ping"]


def test_started_checker_of_another_server(probes: HealthProbeServer, http: urllib3.PoolManager) -> None:
    metrics = MetricsServer("127.0.0.1:0")
    probes.add_readyz_check("metrics-server", metrics.started_checker())
    assert get(http, probes, "/readyz/metrics-server") == (
        500,
        "internal server error: metrics-server is not running\n",
    )
    metrics.start()
    assert get(http, probes, "/readyz") == (200, "ok")
    assert metrics.stop(2)
    assert get(http, probes, "/readyz")[0] == 500


def test_disabled_bind_address_is_refused() -> None:
    with pytest.raises(ValueError, match="disables"):
        HealthProbeServer("0")


def test_checks_without_a_server() -> None:
    checks = Checks("readyz")
    checks.add("a", lambda: "down")
    assert checks.results() == {"a": "down", "ping": None}
    assert checks.results(frozenset({"a"})) == {"ping": None}
    assert run_check(lambda: 1 / 0) == "division by zero"
    assert run_check(lambda: ValueError()) == "ValueError"
