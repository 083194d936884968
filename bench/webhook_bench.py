"""Webhook server throughput and latency: AdmissionReviews per second and p50/p99 latency through
``framework.webhook.WebhookServer`` over TLS on 127.0.0.1, for a plain handler (``allowed()``) and a
typed defaulter (copy, change, minimal JSON patch), with keep-alive connections and with a new TLS
connection per review (as the test API server calls webhooks). The baseline for moving the server to
another HTTP stack (issue 20 item 3): run it before and after, side by side, and compare ratios.

Run: ``.venv/bin/python bench/webhook_bench.py [--requests N] [--clients C] [--baseline REV]``. Servers
run in their own processes (a separate GIL from the clients); with ``--baseline REV`` a second server
runs the ``framework`` of git revision REV (a temporary worktree) and the two alternate scenario by
scenario, best of ``--rounds``, with the ratio in the last column.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

import orjson
import urllib3
from prometheus_client import CollectorRegistry

from framework.webhook import WebhookServer, allowed, defaulter, self_signed_cert


def review(i: int) -> bytes:
    obj = {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": f"m{i}", "namespace": "default", "labels": {"app": "memcached"}},
        "spec": {"containerPort": 11211},
    }
    request = {
        "uid": f"uid-{i}",
        "kind": {"group": "cache.example.com", "version": "v1alpha1", "kind": "Memcached"},
        "resource": {"group": "cache.example.com", "version": "v1alpha1", "resource": "memcacheds"},
        "operation": "CREATE",
        "userInfo": {"username": "bench"},
        "object": obj,
    }
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def default(obj: dict) -> None:
    obj["spec"].setdefault("size", 1)


def run(url: str, ca: str, n: int, clients: int, keep_alive: bool) -> tuple[float, float, float]:
    latencies: list[float] = []
    lock = threading.Lock()
    per_client = n // clients

    def client() -> None:
        ctx = ssl.create_default_context(cafile=ca)
        pool = urllib3.PoolManager(ssl_context=ctx, retries=False, maxsize=1)
        mine = []
        for i in range(per_client):
            headers = {"Content-Type": "application/json"}
            if not keep_alive:
                headers["Connection"] = "close"
            started = time.perf_counter()
            r = pool.request("POST", url, body=review(i), headers=headers)
            mine.append(time.perf_counter() - started)
            assert r.status == 200 and orjson.loads(r.data)["response"]["allowed"] is True
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, name=f"bench-client-{c}") for c in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    return len(latencies) / elapsed, latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]


def serve(cert_dir: str) -> None:
    """Serve the bench's webhooks from this process until stdin closes; prints the port first."""
    server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=CollectorRegistry())
    server.register("/plain", lambda req: allowed())
    server.register("/mutate", defaulter("cache.example.com/v1alpha1", "Memcached", default))
    server.start()
    print(f"port={server.port}", flush=True)  # logs go to stdout too: the driver looks for this line
    try:
        sys.stdin.read()
    finally:
        server.stop(10)


@contextlib.contextmanager
def server_process(cert_dir: str, tree: str | None) -> Iterator[int]:
    """A server subprocess running ``framework`` from ``tree`` (None: this checkout); yields its port."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree  # before site-packages: that tree's framework wins over the install
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", cert_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(b"port="):
                yield int(line[5:])
                break
        else:
            raise RuntimeError("the server process ended before listening")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(30)


@contextlib.contextmanager
def baseline_tree(rev: str) -> Iterator[str]:
    """A temporary git worktree of ``rev`` (removed afterwards)."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
    with tempfile.TemporaryDirectory() as d:
        tree = os.path.join(d, "tree")
        subprocess.run(
            ["git", "-C", root.stdout.strip(), "worktree", "add", "--detach", tree, rev],
            check=True,
            capture_output=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", root.stdout.strip(), "worktree", "remove", "--force", tree], check=False
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="alternations of baseline and current")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the server of git revision REV, alternating"
    )
    parser.add_argument("--serve", metavar="CERT_DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    scenarios = [(path, keep_alive) for keep_alive in (True, False) for path in ("/plain", "/mutate")]
    with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
        _, _, ca_pem = self_signed_cert(d)  # tls.crt / tls.key for localhost; the clients trust ca_pem
        ca = f"{d}/ca.crt"
        with open(ca, "wb") as f:
            f.write(ca_pem)
        trees: dict[str, str | None] = {"current": None}
        if args.baseline:
            trees = {"baseline": stack.enter_context(baseline_tree(args.baseline)), "current": None}
        ports = {name: stack.enter_context(server_process(d, tree)) for name, tree in trees.items()}
        best: dict[tuple[str, str, bool], tuple[float, float, float]] = {}
        for round_ in range(args.rounds):
            order = list(ports) if round_ % 2 == 0 else list(reversed(ports))
            for path, keep_alive in scenarios:
                for name in order:  # side by side: both servers see the same load swings
                    n = args.requests if keep_alive else args.requests // 4
                    url = f"https://localhost:{ports[name]}{path}"
                    result = run(url, ca, n, args.clients, keep_alive)
                    key = (name, path, keep_alive)
                    if key not in best or result[0] > best[key][0]:
                        best[key] = result
        print(f"best of {args.rounds} rounds, {args.clients} clients, load average {os.getloadavg()[0]:.1f}")
        header = f"{'scenario':<34}" + "".join(
            f" {n + ' rev/s':>16} {'p50 ms':>7} {'p99 ms':>7}" for n in ports
        )
        print(header + (f" {'current/baseline':>17}" if len(ports) > 1 else ""))
        for path, keep_alive in scenarios:
            label = f"{path[1:]} {'keep-alive' if keep_alive else 'new connection each'}"
            row = f"{label:<34}"
            for name in ports:
                rate, p50, p99 = best[(name, path, keep_alive)]
                row += f" {rate:>16.0f} {p50 * 1000:>7.2f} {p99 * 1000:>7.2f}"
            if len(ports) > 1:
                ratio = best[("current", path, keep_alive)][0] / best[("baseline", path, keep_alive)][0]
                row += f" {ratio:>16.2f}x"
            print(row)


if __name__ == "__main__":
    main()
