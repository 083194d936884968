"""Informer benchmarks: initial sync vs the official client, watch delivery, memory per cached object.

Run: ``.venv/bin/python bench/informer_bench.py [--objects 100000] [--updates 50000] [--quick]``

The in-process test API server (``framework.testing.APIServer``, HTTPS on a thread of this process) is
filled through its in-process API (``server.call(lambda: server.api.create(...))``, batched), not over
HTTP. Its JSON encoding shares the GIL with the client under test, so every figure includes the
server's work alike.

1. **Initial sync** of N ConfigMaps (~1 KB of JSON each): ``SharedIndexInformer`` from ``start()``
   until ``has_synced()`` and a handler received all N adds (paginated LIST of 500, decode, DeltaFIFO,
   Indexer, handler thread), without and with ``drop_managed_fields``, vs the official client's typed
   ``CoreV1Api.list_namespaced_config_map`` of the same objects (one unpaginated LIST into models).
   Target: >= 4x faster.
2. **Watch delivery** of U updates to a handler (events/s): *live* — the updates are written on the
   server while the informer watches (includes the server's write path); *backlog* — the U updates are
   written while the informer's watch is blind, then the watch is dropped and the informer re-watches
   from its last resourceVersion and receives them as fast as it can.
3. **Memory per cached object** (tracemalloc): an informer syncs M core/v1 Events (~1 KB of JSON, a
   third of it managedFields); allocations made by ``framework.client``, ``framework.cache`` and the JSON
   decoder they use (``framework.meta.jsoncodec``) that are still alive afterwards (decoded dicts, keys,
   index entries) are divided by M. Target: <= 2.5 KB with the transform.

``--quick`` (about 10 s): 10k objects, 3k updates, 3k Events, the official client on the same 10k. The
4x target is for 100k objects: the official client's per-object cost grows with the heap.
"""

from __future__ import annotations

import argparse
import gc
import logging
import platform
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from framework.cache import (
    SharedIndexInformer,
    drop_managed_fields,
    drop_managed_fields_and_share_strings,
)
from framework.client import Client
from framework.testing import APIServer

CM_NAMESPACE = "bench"
EVENT_NAMESPACE = "bench-events"
BATCH = 1000


def configmap(i: int) -> dict[str, Any]:
    """~1.1 KB of JSON once the server adds uid, timestamps, resourceVersion and managedFields."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"cm-{i:06d}",
            "namespace": CM_NAMESPACE,
            "labels": {"app": f"app-{i % 50}", "tier": "backend", "bench": "informer"},
            "annotations": {"example.com/owner": f"team-{i % 7}"},
        },
        "data": {
            "config.yaml": ("server:\n  port: 8080\n  replicas: 3\nfeatures: [a, b, c]\n" * 8)[:380],
            "index": str(i),
            "checksum": f"{i * 2654435761 % 2**32:08x}" * 4,
        },
    }


NODES = [f"worker-{i:02d}" for i in range(20)]
REASONS = [
    ("Pulled", 'Pulled image "registry.example.com/team/api:v1.{i}" in 1.{i}s'),
    ("Created", "Created container api-{i}"),
    ("Started", "Started container api-{i}"),
    ("BackOff", "Back-off restarting failed container api-{i}"),
]


def event(i: int) -> dict[str, Any]:
    """A kubelet-style core/v1 Event (the server adds uid, timestamps and managedFields)."""
    pod = f"api-7d9f8c6b5-{i:06d}"
    node = NODES[i % len(NODES)]
    reason, message = REASONS[i % len(REASONS)]
    ts = f"2026-07-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.17e{i:013x}", "namespace": EVENT_NAMESPACE},
        "involvedObject": {
            "kind": "Pod",
            "namespace": EVENT_NAMESPACE,
            "name": pod,
            "uid": f"00000000-0000-4000-8000-{i:012d}",
            "apiVersion": "v1",
            "resourceVersion": str(900_000 + i),
            "fieldPath": "spec.containers{api}",
        },
        "reason": reason,
        "message": message.format(i=i),
        "source": {"component": "kubelet", "host": node},
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1 + i % 5,
        "type": "Warning" if reason == "BackOff" else "Normal",
        "reportingComponent": "kubelet",
        "reportingInstance": node,
    }


def populate(server: APIServer, resource: str, namespace: str, make: Callable[[int], dict], n: int) -> int:
    """Create ``n`` objects in a new namespace; return how many the namespace holds (controllers add
    some, e.g. ``kube-root-ca.crt``)."""
    api, registry = server.api, server.registry
    rt = registry.get("", "v1", resource)
    ns_rt = registry.get("", "v1", "namespaces")
    assert rt is not None and ns_rt is not None
    server.call(lambda: api.create(ns_rt, None, {"metadata": {"name": namespace}}))
    for start in range(0, n, BATCH):
        stop = min(n, start + BATCH)
        server.call(
            lambda start=start, stop=stop: [api.create(rt, namespace, make(i)) for i in range(start, stop)]
        )
    table = server.storage.table(rt.storage)
    return server.call(lambda: sum(1 for ns, _ in table.objects if ns == namespace))


class Counter:
    """A handler counting notifications; ``wait(n)`` blocks until n arrived."""

    def __init__(self) -> None:
        self.n = 0
        self.cond = threading.Condition()
        self.target = -1

    def __call__(self, *args: Any) -> None:
        self.n += 1  # only the handler's own thread writes
        if self.n == self.target:
            with self.cond:
                self.cond.notify_all()

    def wait(self, n: int, timeout: float = 600) -> bool:
        with self.cond:
            self.target = n
            return self.cond.wait_for(lambda: self.n >= n, timeout)


def informer_sync(client: Client, n: int, transform: Any, page_size: int = 500) -> float:
    gc.collect()
    adds = Counter()
    informer = SharedIndexInformer(
        client, "v1", "ConfigMap", namespace=CM_NAMESPACE, transform=transform, page_size=page_size
    )
    informer.add_event_handler(on_add=adds)
    t0 = time.perf_counter()
    informer.start()
    assert informer.wait_for_cache_sync(600)
    assert adds.wait(n)
    elapsed = time.perf_counter() - t0
    assert len(informer.indexer) == n
    assert informer.stop(10)
    del informer
    gc.collect()
    return elapsed


def official_list(server: APIServer, n: int) -> float:
    from kubernetes import client as k8s

    api = k8s.CoreV1Api(server.api_client())
    gc.collect()
    t0 = time.perf_counter()
    result = api.list_namespaced_config_map(CM_NAMESPACE)
    elapsed = time.perf_counter() - t0
    assert len(result.items) == n
    del result
    api.api_client.close()
    gc.collect()
    return elapsed


def watch_delivery(server: APIServer, client: Client, n: int, updates: int) -> tuple[float, float, float]:
    """(live events/s, seconds the server spent writing them, backlog events/s)."""
    rt = server.registry.get("", "v1", "configmaps")
    api = server.api
    counter = Counter()
    informer = SharedIndexInformer(
        client, "v1", "ConfigMap", namespace=CM_NAMESPACE, transform=drop_managed_fields
    )
    informer.add_event_handler(on_update=counter)
    informer.start()
    assert informer.wait_for_cache_sync(600)

    def write(start: int, stop: int, round_: int) -> None:
        def batch() -> None:
            for j in range(start, stop):
                obj = configmap(j % n)
                obj["data"]["round"] = str(round_)
                api.update(rt, CM_NAMESPACE, obj["metadata"]["name"], obj)

        server.call(batch)

    def write_all(round_: int) -> float:
        t0 = time.perf_counter()
        for start in range(0, updates, 500):
            write(start, min(updates, start + 500), round_)
        return time.perf_counter() - t0

    t0 = time.perf_counter()
    written = write_all(1)
    assert counter.wait(updates)
    live = updates / (time.perf_counter() - t0)

    # Backlog: blind the open watch, write everything, then let the informer re-watch and catch up.
    server.call(lambda: [t.watchers.clear() for t in server.storage.tables.values()])
    write_all(2)
    t0 = time.perf_counter()
    server.drop_watches()
    assert counter.wait(2 * updates)
    backlog = updates / (time.perf_counter() - t0)
    relists = informer.reflector.list_count - 1
    assert informer.stop(10)
    if relists:
        print(f"  (note: {relists} relist(s) happened during the watch runs)")
    return live, written, backlog


def memory_per_object(client: Client, m: int, transform: Any) -> tuple[float, float]:
    """(bytes per cached object held by framework.client/cache, seconds to sync)."""
    gc.collect()
    tracemalloc.start(1)
    informer = SharedIndexInformer(client, "v1", "Event", namespace=EVENT_NAMESPACE, transform=transform)
    t0 = time.perf_counter()
    informer.start()
    assert informer.wait_for_cache_sync(600)
    elapsed = time.perf_counter() - t0
    informer.stop(10)
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [
            tracemalloc.Filter(True, "*/framework/client/*"),
            tracemalloc.Filter(True, "*/framework/cache/*"),
            # the client's JSON decoding (orjson, with the deep-value fallback) lives in framework.meta
            tracemalloc.Filter(True, "*/framework/meta/jsoncodec.py"),
        ]
    )
    tracemalloc.stop()
    held = sum(stat.size for stat in snapshot.statistics("filename"))
    assert len(informer.indexer) == m
    del informer, snapshot
    gc.collect()
    return held / m, elapsed


def section_sync(server: APIServer, client: Client, n: int, repeat: int) -> None:
    print(f"\n1. initial sync of {n} ConfigMaps (best of {repeat}; seconds, objects/s)")
    results: dict[str, float] = {}
    variants = [
        ("informer, pages of 500", None, 500),
        ("informer, pages of 500, drop_managed_fields", drop_managed_fields, 500),
        ("informer, one unpaginated list", None, 0),
    ]
    for _ in range(repeat):
        for label, transform, page_size in variants:
            t = informer_sync(client, n, transform, page_size)
            results[label] = min(results.get(label, float("inf")), t)
    official = official_list(server, n)
    for label, t in results.items():
        print(f"  {label:<46} {t:7.2f} s {n / t:>10,.0f}/s  {official / t:5.1f}x faster")
    print(f"  {'official typed list_namespaced_config_map':<46} {official:7.2f} s {n / official:>10,.0f}/s")
    best = results["informer, pages of 500"]
    verdict = "OK" if official / best >= 4 else "below target"
    scale = "" if n >= 100_000 else "; the target is stated for 100k objects"
    print(f"  ratio (default informer vs official): {official / best:.1f}x (target >= 4x: {verdict}{scale})")


def section_watch(server: APIServer, client: Client, n: int, updates: int) -> None:
    print(f"\n2. watch delivery of {updates} updates to a handler (drop_managed_fields)")
    live, written, backlog = watch_delivery(server, client, n, updates)
    print(f"  live (server writing meanwhile, {updates / written:,.0f} writes/s): {live:>10,.0f} events/s")
    print(f"  backlog after a re-watch:                               {backlog:>10,.0f} events/s")


def section_memory(client: Client, m: int) -> None:
    print(f"\n3. memory per cached Event ({m} objects, tracemalloc; target <= 2500 B with transform)")
    for label, transform in (
        ("no transform", None),
        ("drop_managed_fields", drop_managed_fields),
        ("drop_managed_fields_and_share_strings", drop_managed_fields_and_share_strings),
    ):
        per, t = memory_per_object(client, m, transform)
        verdict = "" if transform is None else ("OK" if per <= 2500 else "over")
        print(f"  {label:<40} {per:7.0f} B/object  {verdict:<4} (sync {m / t:,.0f}/s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--objects", type=int, default=100_000, help="ConfigMaps for the initial sync")
    p.add_argument("--updates", type=int, default=50_000, help="updates for watch delivery")
    p.add_argument("--memory-objects", type=int, default=20_000, help="Events for the memory figure")
    p.add_argument("--repeat", type=int, default=2, help="informer sync runs per variant (best is shown)")
    p.add_argument("--quick", action="store_true", help="10k objects, 3k updates, 3k Events (~10 s)")
    p.add_argument("--sections", default="1,2,3", help="which benchmarks to run (comma-separated)")
    args = p.parse_args(argv)
    if args.quick:
        args.objects, args.updates, args.memory_objects, args.repeat = 10_000, 3_000, 3_000, 1
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    t_start = time.perf_counter()
    sections = {int(x) for x in args.sections.split(",") if x.strip()}
    n, updates, m = args.objects, args.updates, args.memory_objects
    if 3 not in sections:
        m = 0
    if 1 not in sections and 2 not in sections:
        n = 0

    # History and per-watch buffers big enough that the backlog run replays instead of relisting.
    with APIServer(watch_cache_size=max(1000, 2 * updates + 10), watch_buffer=4 * updates + 10) as server:
        t0 = time.perf_counter()
        n_cms = populate(server, "configmaps", CM_NAMESPACE, configmap, n)
        m_events = populate(server, "events", EVENT_NAMESPACE, event, m)
        # Drop the creation history (the watch cache): it only inflates the heap every GC pass walks.
        server.compact()
        client = Client.from_kubeconfig(server.kubeconfig, qps=0)
        cm_size = ev_size = mf_size = 0
        if n:
            cm_size = len(orjson.dumps(client.list("v1", "ConfigMap", CM_NAMESPACE, limit=1)["items"][0]))
        if m:
            sample = client.list("v1", "Event", EVENT_NAMESPACE, limit=1)["items"][0]
            ev_size = len(orjson.dumps(sample))
            mf_size = len(orjson.dumps(sample["metadata"].get("managedFields") or []))
        print(
            f"populated {n} ConfigMaps ({cm_size} B JSON each) and {m} Events ({ev_size} B, managedFields"
            f" {mf_size} B) in {time.perf_counter() - t0:.1f} s"
        )

        if 1 in sections:
            section_sync(server, client, n_cms, args.repeat)
        if 2 in sections:
            section_watch(server, client, n, updates)
        if 3 in sections:
            section_memory(client, m_events)
        client.close()

    print(
        f"\npython {platform.python_version()} on {platform.machine()}, kubernetes "
        f"{metadata.version('kubernetes')}, orjson {metadata.version('orjson')}; "
        f"total {time.perf_counter() - t_start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
