"""Cached reads per second through the manager's client (``mgr.client.get`` / ``list``).

The manager's client answers ``get`` and ``list`` from its cache (issue 32: the live ``Client`` with
``mgr.cache`` in front of its reads, formerly a hand-written ``CachedClient``). This measures what a
reconciler pays per cached read, copies included, over N ConfigMaps in one namespace of the
in-process test API server: ``get`` by name, ``list`` of the namespace with a label selector that
matches one object, and ``get`` with ``unsafe_disable_deep_copy`` (the read path alone). Runs on any
checkout that has ``mgr.client`` (compare two with ``PYTHONPATH=<checkout>``).

    python bench/reader_bench.py [--objects 1000] [--reads 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time

from framework.client import Client
from framework.manager import CacheOptions, Manager
from framework.testing import APIServer

NAMESPACE = "bench"


def best_rate(read, n: int, rounds: int) -> float:
    """Reads per second, best of ``rounds``."""
    best = 0.0
    for _ in range(rounds):
        t0 = time.perf_counter()
        for i in range(n):
            read(i)
        best = max(best, n / (time.perf_counter() - t0))
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--objects", type=int, default=1000)
    p.add_argument("--reads", type=int, default=20_000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    n, objects = args.reads, args.objects
    with APIServer() as server:
        client = Client.from_kubeconfig(server.kubeconfig, qps=0)
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        for i in range(objects):
            client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": NAMESPACE, "labels": {"i": str(i)}},
                    "data": {"k": "v" * 200},
                }
            )
        copying = Manager(client)
        nocopy = Manager(
            client, cache_options={("v1", "ConfigMap"): CacheOptions(unsafe_disable_deep_copy=True)}
        )
        try:
            for mgr in (copying, nocopy):
                mgr.client.list("v1", "ConfigMap", NAMESPACE)  # informer started and synced
            c, nc = copying.client, nocopy.client
            rows = [
                (
                    "get",
                    best_rate(
                        lambda i: c.get("v1", "ConfigMap", f"cm-{i % objects}", NAMESPACE), n, args.rounds
                    ),
                ),
                (
                    "list, label selector (1 match)",
                    best_rate(
                        lambda i: c.list(
                            "v1", "ConfigMap", NAMESPACE, label_selector={"i": str(i % objects)}
                        ),
                        n // 4,
                        args.rounds,
                    ),
                ),
                (
                    "get, unsafe_disable_deep_copy",
                    best_rate(
                        lambda i: nc.get("v1", "ConfigMap", f"cm-{i % objects}", NAMESPACE), n, args.rounds
                    ),
                ),
            ]
            for label, rate in rows:
                print(f"{label:<34} {rate:>12,.0f} reads/s")
        finally:
            for mgr in (copying, nocopy):
                mgr.cache.stop()
            client.close()


if __name__ == "__main__":
    main()
