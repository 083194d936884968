"""Issue 31's attacks at CI sizes (``bench/abuse.py --quick``) against one real ``gcm --embedded``.

One gcm process serves the module. The harness is checked first: gcm is judged well when nothing
is sent and not well while frozen; the connection and watch probes tell a closing server from one
that never closes; the nesting probe passes shallow objects. Then every attack runs once and each is
its own test case, so a failure names the defect it found. An attack passes only when the server
answered as kube-apiserver does and gcm kept reconciling and holding its Lease afterwards.
"""

from __future__ import annotations

import dataclasses
import signal
import socket
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from framework.certs import self_signed_cert

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
try:
    import abuse
finally:
    sys.path.pop(0)

# Bounded by the harness (every request and wait has a bound); this only catches a harness bug.
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def garden(tmp_path_factory: pytest.TempPathFactory) -> Iterator[abuse.Garden]:
    g = abuse.Garden(abuse.QUICK, workdir=tmp_path_factory.mktemp("abuse"))
    try:
        yield g.start()
    finally:
        g.stop()


@pytest.fixture(scope="module")
def results(garden: abuse.Garden) -> dict[str, abuse.Result]:
    return {r.attack.name: r for r in abuse.run_attacks(garden, abuse.ATTACKS)}


def test_gcm_is_well_when_nothing_is_attacked(garden: abuse.Garden) -> None:
    assert garden.well(garden.renewed()) == []
    assert garden.restarts == 0


def test_a_frozen_gcm_is_not_well(garden: abuse.Garden) -> None:
    """The reconcile and lease checks fail while gcm (and its API server) cannot answer."""
    assert garden.proc is not None
    sizes = garden.sizes
    garden.sizes = dataclasses.replace(sizes, reconcile_timeout=2.0, lease_timeout=2.0)
    before = garden.renewed()
    garden.proc.send_signal(signal.SIGSTOP)
    try:
        problems = garden.well(before)
    finally:
        garden.proc.send_signal(signal.SIGCONT)
        garden.sizes = sizes
    assert [p.split(" ")[0] for p in problems] == ["creating", "Lease"], problems
    assert "within 2 s" in problems[1]
    # Resumed within its lease duration (15 s): the same gcm, well again.
    assert garden.well(garden.renewed()) == []


def test_the_watch_probe_passes_a_watch_that_ends(garden: abuse.Garden) -> None:
    outcome = abuse.watch_ends(garden, "1")
    assert outcome.ok, outcome.observed
    assert outcome.observed.startswith("200, stream ended after 1.")


def test_the_nesting_probe_passes_shallow_objects_and_cleans_up(garden: abuse.Garden) -> None:
    outcome = abuse._deep_shoots(garden, (3, 4), (3, 4))
    assert outcome.ok, outcome.observed
    assert outcome.observed == "3 levels: create 201; 4 levels: create 201; LIST 200"
    left = garden.member.raw("GET", f"/apis/{abuse.CORE}/v1beta1/namespaces/{abuse.PROJECT_NS}/shoots")
    assert not abuse.lists(left, "deep-3") and not abuse.lists(left, "deep-4"), left.body[:300]


class _TLSServer(threading.Thread):
    """A TLS listener that closes each connection after ``close_after`` seconds (None: never)."""

    def __init__(self, tmp: Path, close_after: float | None) -> None:
        super().__init__(name="abuse-test-tls", daemon=True)
        cert, key, _ = self_signed_cert(tmp, ("127.0.0.1",))
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.close_after = close_after
        self.stopping = threading.Event()
        self.held: list[socket.socket] = []

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            tls = self.ctx.wrap_socket(conn, server_side=True)
            self.held.append(tls)
            if self.close_after is not None:
                threading.Timer(self.close_after, tls.close).start()

    def stop(self) -> None:
        self.stopping.set()
        self.join(5)
        for s in self.held:
            s.close()
        self.sock.close()


@pytest.mark.parametrize(("close_after", "closed"), [(0.5, True), (None, False)])
@pytest.mark.parametrize("trickle", [b"", b"X-Slow: aaaa"])
def test_a_held_connection_tells_a_closing_server_from_one_that_never_closes(
    tmp_path: Path, close_after: float | None, closed: bool, trickle: bytes
) -> None:
    server = _TLSServer(tmp_path, close_after)
    server.start()
    try:
        held = abuse.HeldConnection("test", ("127.0.0.1", server.port), limit=2.0, trickle=trickle)
        start = time.monotonic()
        held.start()
        ok, text = held.verdict()
    finally:
        server.stop()
    assert ok is closed, text
    assert text.startswith("closed by the server after 0.") if closed else text == "still open after 2 s"
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("name", [a.name for a in abuse.ATTACKS])
def test_attack(results: dict[str, abuse.Result], name: str) -> None:
    result = results[name]
    assert result.ok, result.line()
