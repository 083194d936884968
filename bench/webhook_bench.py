"""Webhook server throughput and latency: AdmissionReviews per second and p50/p99 latency through
``framework.webhook.WebhookServer`` over TLS on 127.0.0.1, for a plain handler (``allowed()``) and a
typed defaulter (copy, change, minimal JSON patch), with keep-alive connections and with a new TLS
connection per review (as the test API server calls webhooks). The baseline for moving the server to
another HTTP stack (issue 20 item 3): run it before and after, side by side, and compare ratios.

Run: ``.venv/bin/python bench/webhook_bench.py [--requests N] [--clients C]``
"""

from __future__ import annotations

import argparse
import ssl
import tempfile
import threading
import time
from collections.abc import Callable

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        _, _, ca_pem = self_signed_cert(d)  # tls.crt / tls.key for localhost; the clients trust ca_pem
        ca = f"{d}/ca.crt"
        with open(ca, "wb") as f:
            f.write(ca_pem)
        server = WebhookServer("127.0.0.1", 0, cert_dir=d, registry=CollectorRegistry())
        handlers: dict[str, Callable] = {
            "/plain": lambda req: allowed(),
            "/mutate": defaulter("cache.example.com/v1alpha1", "Memcached", default),
        }
        for path, handler in handlers.items():
            server.register(path, handler)
        server.start()
        try:
            print(f"{'scenario':<34} {'reviews/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
            for keep_alive in (True, False):
                for path in handlers:
                    n = args.requests if keep_alive else args.requests // 4
                    rate, p50, p99 = run(
                        f"https://localhost:{server.port}{path}", ca, n, args.clients, keep_alive
                    )
                    name = f"{path[1:]} {'keep-alive' if keep_alive else 'new connection each'}"
                    print(f"{name:<34} {rate:>10.0f} {p50 * 1000:>8.2f} {p99 * 1000:>8.2f}")
        finally:
            server.stop(10)


if __name__ == "__main__":
    main()
