"""LIST of 10,000 ConfigMaps (~1 KB each): ``framework.client.Client`` vs the official ``kubernetes`` client.

Run: ``.venv/bin/python bench/client_bench.py [--objects 10000] [--rounds 9] [--metrics-only]``

Ways to fetch the same list from the in-process test API server over HTTPS, timed in interleaved
rounds (so drift and GC state hit every variant alike) and reported as medians:

1. ``Client.list("v1", "ConfigMap", ns)`` — urllib3 + orjson, plain dicts, GC paused while decoding
   bodies >= 1 MiB (the default);
2. the same with ``gc_pause_bytes=None`` (GC left running);
3. the official typed ``CoreV1Api.list_namespaced_config_map`` — pydantic models;
4. the official client with ``_preload_content=False`` and ``orjson.loads(resp.data)``;
5. variant 4 with the GC disabled around the decode.

The server runs on a thread of this process: its JSON encoding and HTTP work share the GIL and count in
every figure alike, and its ~10k stored objects sit in the same heap, so full GC collections walk them
too (as they would walk an informer cache in a controller). Then the decode step alone (orjson on the
raw body) is timed with the GC as is, disabled, and after ``gc.freeze()``, with and without 100k extra
long-lived dicts in the heap.

Last, the cost of client-go's ``rest_client_*`` metrics (:mod:`framework.client.metrics`): GETs of one
ConfigMap (where a request's fixed cost weighs most) by a client reporting to a registry and by one
reporting nowhere, alternating rounds in the same run; the median of the rounds' on/off ratios is the
figure (the ratio of the medians is printed too), next to the bookkeeping's own cost per request.
``--metrics-only`` runs that part alone.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
import urllib3
from kubernetes import client as k8s

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client import CollectorRegistry

from framework.client import Client, gc_paused
from framework.client.metrics import rest_client_collector
from framework.testing import APIServer

NAMESPACE = "bench"


def configmap(i: int) -> dict[str, Any]:
    """~1 KB of JSON once the server adds uid, timestamps, resourceVersion and managedFields."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"cm-{i:05d}",
            "namespace": NAMESPACE,
            "labels": {"app": f"app-{i % 50}", "tier": "backend", "bench": "client"},
            "annotations": {"example.com/owner": f"team-{i % 7}"},
        },
        "data": {
            "config.yaml": ("server:\n  port: 8080\n  replicas: 3\nfeatures: [a, b, c]\n" * 8)[:380],
            "index": str(i),
            "checksum": f"{i * 2654435761 % 2**32:08x}" * 4,
        },
    }


def populate(server: APIServer, n: int, threads: int = 8) -> int:
    """Create ``n`` ConfigMaps with raw urllib3 POSTs from a few threads; return the mean item size."""
    http = urllib3.PoolManager(ca_certs=str(server.ca_path), maxsize=threads)
    headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    base = server.url + "/api/v1/namespaces"
    r = http.request("POST", base, body=orjson.dumps({"metadata": {"name": NAMESPACE}}), headers=headers)
    assert r.status == 201, r.data

    def create(i: int) -> None:
        r = http.request(
            "POST", f"{base}/{NAMESPACE}/configmaps", body=orjson.dumps(configmap(i)), headers=headers
        )
        assert r.status == 201, r.data

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(create, range(n)))
    r = http.request("GET", f"{base}/{NAMESPACE}/configmaps", headers=headers)
    items = orjson.loads(r.data)["items"]
    assert len(items) >= n
    return sum(len(orjson.dumps(i)) for i in items) // len(items)


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    """Run every function once per round (after one warm-up round); wall times per function."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds + 1):
        for label, fn in fns.items():
            t0 = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - t0
            del result
            if r:
                times[label].append(elapsed)
    return times


def metrics_cost(server: APIServer, gets: int, rounds: int) -> float:
    """GET one ConfigMap ``gets`` times per round with metrics on and off, alternating; print and
    return the ratio of the median round times (on / off)."""
    registry = CollectorRegistry()
    on = Client.from_kubeconfig(server.kubeconfig, qps=0, registry=registry)
    off = Client.from_kubeconfig(server.kubeconfig, qps=0)
    on.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "metrics-cost", "namespace": "default"},
        },
        field_owner="bench",
    )

    def run(client: Client) -> Callable[[], None]:
        def get_many() -> None:
            for _ in range(gets):
                client.get("v1", "ConfigMap", "metrics-cost", namespace="default")

        return get_many

    times = interleaved({"metrics on": run(on), "metrics off": run(off)}, rounds)
    med_on, med_off = statistics.median(times["metrics on"]), statistics.median(times["metrics off"])
    # Each round's pair ran back to back: the median of the pairs' ratios cancels the drift of a
    # shared machine's load that moves both medians apart.
    ratio = statistics.median(a / b for a, b in zip(times["metrics on"], times["metrics off"], strict=True))
    counted = sum(
        sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == "rest_client_requests_total" and sample.labels["method"] == "GET"
    )
    print(f"\nrequest metrics: {gets} GETs of one ConfigMap per round, {rounds} alternating rounds (s):")
    for label, ts in times.items():
        print(f"  {label:<12} median {statistics.median(ts):.3f}  min {min(ts):.3f}  max {max(ts):.3f}")
    print(
        f"  on / off: median of the rounds' ratios {ratio:.3f}, ratio of the medians {med_on / med_off:.3f}"
        f" ({(med_on - med_off) / gets * 1e6:+.1f} µs per GET); {counted:.0f} GETs counted"
    )
    stats = rest_client_collector(CollectorRegistry()).stats_for("bench:443")

    def bookkeeping(n: int = 100_000) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            started = time.monotonic()
            stats.attempt("GET", 0.0, 0, "200")
            stats.call("GET", time.monotonic() - started, 512)
        return (time.perf_counter() - t0) / n

    cost = min(bookkeeping() for _ in range(5))
    print(f"  the bookkeeping alone (two clock reads, an attempt, a call): {cost * 1e6:.2f} µs per request")
    on.close()
    off.close()
    return ratio


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--objects", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--gets", type=int, default=500, help="GETs per round of the metrics cost part")
    p.add_argument("--metrics-only", action="store_true", help="only the request metrics' cost")
    args = p.parse_args(argv)
    t_start = time.perf_counter()

    if args.metrics_only:
        with APIServer() as server:
            metrics_cost(server, args.gets, max(args.rounds, 41))
        return 0
    with APIServer() as server:
        t0 = time.perf_counter()
        size = populate(server, args.objects)
        print(
            f"created {args.objects} ConfigMaps (~{size} B of JSON each) in {time.perf_counter() - t0:.1f} s"
        )

        ours = Client.from_kubeconfig(server.kubeconfig, qps=0)
        ours_gc = Client.from_kubeconfig(server.kubeconfig, qps=0, gc_pause_bytes=None)
        api = k8s.CoreV1Api(server.api_client())
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"

        def official_orjson(pause: bool) -> Any:
            resp = api.list_namespaced_config_map(NAMESPACE, _preload_content=False)
            data = resp.data
            if pause:
                with gc_paused():
                    return orjson.loads(data)
            return orjson.loads(data)

        fns: dict[str, Callable[[], Any]] = {
            "Client.list (GC paused in decode, default)": lambda: ours.list("v1", "ConfigMap", NAMESPACE),
            "Client.list, gc_pause_bytes=None": lambda: ours_gc.list("v1", "ConfigMap", NAMESPACE),
            "official typed list_namespaced_config_map": lambda: api.list_namespaced_config_map(NAMESPACE),
            "official _preload_content=False + orjson": lambda: official_orjson(False),
            "  same, GC disabled around orjson.loads": lambda: official_orjson(True),
            "(bytes only: Client GET, no decode)": lambda: ours._send("GET", path).data,
        }
        n_items = len(ours.list("v1", "ConfigMap", NAMESPACE)["items"])
        assert n_items == len(api.list_namespaced_config_map(NAMESPACE).items) >= args.objects
        times = interleaved(fns, args.rounds)
        base = statistics.median(times["Client.list (GC paused in decode, default)"])
        print(f"\nLIST {n_items} ConfigMaps over HTTPS, {args.rounds} interleaved rounds (seconds):")
        print(f"  {'':<46} {'median':>7} {'min':>7} {'max':>7} {'÷ Client':>9}")
        for label, ts in times.items():
            med = statistics.median(ts)
            print(f"  {label:<46} {med:>7.3f} {min(ts):>7.3f} {max(ts):>7.3f} {med / base:>8.2f}x")

        body = ours._send("GET", path).data
        print(f"\ndecode only: orjson.loads of the {len(body) / 1e6:.1f} MB body (median, seconds):")
        print(f"  {'heap':<30} {'gc on':>7} {'gc off':>7} {'frozen':>7}")
        for label, ballast_n in (("as is (server + 10k objects)", 0), ("+100k live dicts", 100_000)):
            ballast = [
                {"metadata": {"name": str(i), "labels": {"a": "b"}}, "data": {}} for i in range(ballast_n)
            ]
            gc.collect()

            def off() -> Any:
                with gc_paused():
                    return orjson.loads(body)

            t = interleaved({"on": lambda: orjson.loads(body), "off": off}, args.rounds)
            gc.freeze()
            frozen = interleaved({"frozen": lambda: orjson.loads(body)}, args.rounds)["frozen"]
            gc.unfreeze()
            print(
                f"  {label:<30} {statistics.median(t['on']):>7.3f} {statistics.median(t['off']):>7.3f}"
                f" {statistics.median(frozen):>7.3f}"
            )
            del ballast
        ours.close()
        ours_gc.close()
        metrics_cost(server, args.gets, max(args.rounds, 41))
    print(
        f"\npython {sys.version.split()[0]}, kubernetes {metadata.version('kubernetes')}, "
        f"orjson {metadata.version('orjson')}; total {time.perf_counter() - t_start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
