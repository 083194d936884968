"""MetricsServer scraped over HTTP, bind-address parsing, and the shared server's lifecycle."""

from __future__ import annotations

import gzip
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator

import pytest
import urllib3
from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from framework.metrics import DEFAULT_BIND_ADDRESS, MetricsServer, parse_bind_address
from framework.server import HTTPServer, Request, Response
from framework.testing import consistently, eventually

pytestmark = pytest.mark.usefixtures("no_leaked_threads")


@pytest.fixture
def registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    reconciles = Counter(
        "controller_runtime_reconcile_total",
        "Total reconciliations",
        ["controller", "result"],
        registry=registry,
    )
    reconciles.labels("project", "success").inc(3)
    reconciles.labels("project", "error").inc()
    Gauge("leader_election_master_status", "leader", ["name"], registry=registry).labels("gcm").set(1)
    return registry


@pytest.fixture
def server(registry: CollectorRegistry) -> Iterator[MetricsServer]:
    server = MetricsServer("127.0.0.1:0", registry)
    server.start()
    yield server
    assert server.stop(2)


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def scrape(http: urllib3.PoolManager, server: HTTPServer, query: str = "") -> dict[tuple[str, tuple], float]:
    response = http.request("GET", f"{server.url}/metrics{query}")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.data.decode())
        for sample in family.samples
    }


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        (":8080", ("", 8080)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        ("0.0.0.0:9090", ("0.0.0.0", 9090)),
        ("localhost:8081", ("localhost", 8081)),
        ("[::1]:8443", ("::1", 8443)),
        ("[::]:0", ("::", 0)),
        (" :2718 ", ("", 2718)),
        ("0", None),
        ("", None),
    ],
)
def test_parse_bind_address(address: str, expected: tuple[str, int] | None) -> None:
    assert parse_bind_address(address) == expected


@pytest.mark.parametrize("address", ["8080", "localhost", ":http", ":65536", "::1:8080", "host:-1", "host:"])
def test_parse_bind_address_rejects(address: str) -> None:
    with pytest.raises(ValueError, match="bind address"):
        parse_bind_address(address)


def test_default_bind_address_is_controller_runtimes() -> None:
    assert DEFAULT_BIND_ADDRESS == ":8080"
    with pytest.raises(ValueError, match="disables"):
        MetricsServer("0")


def test_scrape(server: MetricsServer, http: urllib3.PoolManager) -> None:
    samples = scrape(http, server)
    assert (
        samples[("controller_runtime_reconcile_total", (("controller", "project"), ("result", "success")))]
        == 3
    )
    assert (
        samples[("controller_runtime_reconcile_total", (("controller", "project"), ("result", "error")))] == 1
    )
    assert samples[("leader_election_master_status", (("name", "gcm"),))] == 1


def test_scrape_sees_live_values(
    server: MetricsServer, http: urllib3.PoolManager, registry: CollectorRegistry
) -> None:
    gauge = Gauge("controller_runtime_active_workers", "workers", ["controller"], registry=registry)
    gauge.labels("project").set(4)
    assert scrape(http, server)[("controller_runtime_active_workers", (("controller", "project"),))] == 4
    gauge.labels("project").set(0)
    assert scrape(http, server)[("controller_runtime_active_workers", (("controller", "project"),))] == 0


def test_name_filter(server: MetricsServer, http: urllib3.PoolManager) -> None:
    samples = scrape(http, server, "?name[]=leader_election_master_status")
    assert {name for name, _ in samples} == {"leader_election_master_status"}


def test_openmetrics_and_gzip(server: MetricsServer, http: urllib3.PoolManager) -> None:
    response = http.request(
        "GET", server.url + "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
    )
    assert response.headers["Content-Type"].startswith("application/openmetrics-text")
    assert response.data.decode().endswith("# EOF\n")
    response = http.request(
        "GET", server.url + "/metrics", headers={"Accept-Encoding": "gzip"}, decode_content=False
    )
    assert response.headers["Content-Encoding"] == "gzip"
    assert b"controller_runtime_reconcile_total" in gzip.decompress(response.data)


def test_unknown_path_is_404(server: MetricsServer, http: urllib3.PoolManager) -> None:
    response = http.request("GET", server.url + "/metricsz")
    assert (response.status, response.data) == (404, b"404 page not found\n")


class _Broken(Collector):
    def collect(self) -> Iterable[GaugeMetricFamily]:
        raise RuntimeError("collector failed")


def test_failing_collector_is_a_500_and_the_server_survives(
    server: MetricsServer, http: urllib3.PoolManager, registry: CollectorRegistry
) -> None:
    broken = _Broken()
    registry.register(broken)
    assert http.request("GET", server.url + "/metrics").status == 500
    registry.unregister(broken)
    assert scrape(http, server)


def test_all_interfaces_and_extra_routes(registry: CollectorRegistry, http: urllib3.PoolManager) -> None:
    server = MetricsServer(":0", registry, name="metrics-all")
    server.route("/debug/echo", lambda request: Response.text(request.method + " " + request.path))
    with server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert server.port != 0
        assert scrape(http, server)
        response = http.request("POST", server.url + "/debug/echo?x=1")
        assert response.data == b"POST /debug/echo"
        assert "metrics-all" in {t.name for t in threading.enumerate()}


def test_port_in_use_raises_at_start(server: MetricsServer, registry: CollectorRegistry) -> None:
    other = MetricsServer(f"127.0.0.1:{server.port}", registry)
    with pytest.raises(OSError):
        other.start()
    assert other.stop(1)


def test_lifecycle(registry: CollectorRegistry, http: urllib3.PoolManager) -> None:
    server = MetricsServer("127.0.0.1:0", registry)
    assert not server.wait_ready(0)
    assert server.stop(1)  # stop before start is fine, and final
    with pytest.raises(RuntimeError, match="single-use"):
        server.start()

    server = MetricsServer("127.0.0.1:0", registry)
    server.start()
    assert server.wait_ready(1) and server.is_running()
    scrape(http, server)  # leaves an idle keep-alive connection for stop() to close
    started = time.monotonic()
    assert server.stop(2)
    assert time.monotonic() - started < 0.5
    assert server.stop(1)  # idempotent
    with pytest.raises(urllib3.exceptions.HTTPError):
        urllib3.PoolManager(retries=False).request("GET", server.url + "/metrics", timeout=1)


def test_handler_exception_is_a_500(registry: CollectorRegistry, http: urllib3.PoolManager) -> None:
    def broken(request: Request) -> Response:
        raise KeyError("nope")

    with HTTPServer("127.0.0.1", 0, name="plain") as server:
        server.route("/broken", broken)
        server.route("/tree", lambda r: Response.text(r.path), prefix=True)
        response = http.request("GET", server.url + "/broken")
        assert (response.status, response.data) == (500, b"Internal Server Error\n")
        assert http.request("GET", server.url + "/tree/a/b").data == b"/tree/a/b"
        assert http.request("GET", server.url + "/treehouse").status == 404


def test_pipelined_keep_alive_and_unread_bodies(registry: CollectorRegistry) -> None:
    """Two requests on one connection; the first carries a body the handler never reads."""
    server = MetricsServer("127.0.0.1:0", registry)
    with server, socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200 ")
    assert b"HTTP/1.1 404 " in data
    assert data.endswith(b"404 page not found\n")


def _exchange(port: int, payload: bytes, then: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(payload)
        if then:
            assert sock.recv(1024).startswith(b"HTTP/1.1 100 Continue\r\n")
            sock.sendall(then)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_expect_100_continue_and_malformed_requests(registry: CollectorRegistry) -> None:
    with HTTPServer("127.0.0.1", 0, name="raw") as server:
        server.route("/echo", lambda r: Response(200, r.read_body(limit=100)))
        data = _exchange(
            server.port,
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n"
            b"Connection: close\r\n\r\n",
            then=b"ping",
        )
        assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"\r\n\r\nping")
        data = _exchange(server.port, b"GET /echo NOTHTTP/1.1\r\n\r\n")
        assert data.split(b" ", 2)[1] == b"400"  # a malformed request line: 400 with the reason
        assert b"Bad status line" in data
        data = _exchange(
            server.port,
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"
            + b"x" * 1000,
        )
        assert data.startswith(b"HTTP/1.1 500 ")  # BodyTooLarge escaped the handler: logged 500


def test_handlers_run_on_a_bounded_pool_off_the_loop(http: urllib3.PoolManager) -> None:
    """Two workers: a third slow request waits for one, while the loop keeps answering unrouted paths."""
    running, most, lock, release = [0], [0], threading.Lock(), threading.Event()

    def slow(request: Request) -> Response:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        release.wait(10)
        with lock:
            running[0] -= 1
        return Response.text(threading.current_thread().name)

    server = HTTPServer("127.0.0.1", 0, name="pooled", max_workers=2)
    server.route("/slow", slow)
    names: list[str] = []
    with server:
        clients = [
            threading.Thread(
                target=lambda: names.append(
                    urllib3.PoolManager(retries=False).request("GET", server.url + "/slow").data.decode()
                ),
                name=f"client-{i}",
            )
            for i in range(3)
        ]
        for client in clients:
            client.start()
        eventually(lambda: running[0] == 2, message="two handlers running")
        # both workers are busy: the event loop still serves what needs no worker
        assert http.request("GET", server.url + "/unrouted", timeout=5).status == 404
        consistently(lambda: most[0] == 2, duration=0.2, message="no third handler at once")
        release.set()
        for client in clients:
            client.join(10)
    assert most[0] == 2
    assert sorted(set(names)) == ["pooled-handler_0", "pooled-handler_1"]


_HUNG_HANDLER = """
import threading, urllib3, time
from framework.server import HTTPServer, Response

def stuck(request):
    threading.Event().wait()  # never returns
    return Response.text("late")

server = HTTPServer("127.0.0.1", 0, name="exit-test")
server.route("/stuck", stuck)
server.start()
client = lambda: urllib3.PoolManager(retries=False).request("GET", server.url + "/stuck", timeout=30)
threading.Thread(target=client, name="client", daemon=True).start()
while not any(t.name.startswith("exit-test-handler") for t in threading.enumerate()):
    time.sleep(0.01)
print("stopped in time:", server.stop(0.3), flush=True)
"""


def test_a_hung_handler_does_not_keep_the_process_from_exiting() -> None:
    # stop() gives up on the handler at its bound; the process (gcm on SIGTERM) must still exit.
    done = subprocess.run(
        [sys.executable, "-c", _HUNG_HANDLER], capture_output=True, text=True, timeout=60, check=False
    )
    assert "stopped in time: False" in done.stdout, done.stderr
    assert done.returncode == 0, done.stderr
