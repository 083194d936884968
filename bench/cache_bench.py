"""Indexer memory per cached object and bulk-load throughput.

Run: ``.venv/bin/python bench/cache_bench.py [--objects 100000] [--memory-objects 20000]``

1. Bytes per cached object (tracemalloc): a realistic core/v1 Event (~1 KB of JSON, of which ~400 B
   managedFields) is decoded with orjson, as the client does, and added to an Indexer, with and without
   a transform that drops ``metadata.managedFields``. Everything the cache keeps alive is counted: the
   decoded dict, its key and the namespace index entry.
2. Indexer add throughput for N decoded objects, with the cyclic GC enabled vs ``gc.disable()`` +
   ``gc.freeze()`` around the bulk load; plus decode+add (the informer's initial-list path) and
   DeltaFIFO replace + pop into the Indexer.
"""

from __future__ import annotations

import argparse
import gc
import logging
import platform
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from framework.cache import DeltaFIFO, Indexer

NODES = [f"worker-{i:02d}" for i in range(20)]
REASONS = [
    ("Pulled", 'Pulled image "registry.example.com/team/api:v1.{i}" in 1.{i}s'),
    ("Created", "Created container api-{i}"),
    ("Started", "Started container api-{i}"),
    ("BackOff", "Back-off restarting failed container api-{i}"),
]


def make_event(i: int) -> dict[str, Any]:
    """A core/v1 Event as the API server returns it (~1 KB JSON, ~400 B of it managedFields)."""
    pod = f"api-7d9f8c6b5-{i:06d}"
    ns = f"team-{i % 40:02d}"
    node = NODES[i % len(NODES)]
    reason, message = REASONS[i % len(REASONS)]
    ts = f"2026-07-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}Z"
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "name": f"{pod}.17e{i:013x}",
            "namespace": ns,
            "uid": str(uuid.UUID(int=i * 7919 + 1)),
            "resourceVersion": str(1_000_000 + i),
            "creationTimestamp": ts,
            "managedFields": [
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": ts,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:action": {},
                        "f:count": {},
                        "f:eventTime": {},
                        "f:firstTimestamp": {},
                        "f:involvedObject": {},
                        "f:lastTimestamp": {},
                        "f:message": {},
                        "f:reason": {},
                        "f:reportingComponent": {},
                        "f:reportingInstance": {},
                        "f:source": {"f:component": {}, "f:host": {}},
                        "f:type": {},
                    },
                }
            ],
        },
        "involvedObject": {
            "kind": "Pod",
            "namespace": ns,
            "name": pod,
            "uid": str(uuid.UUID(int=i * 104729 + 3)),
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
        "eventTime": None,
        "reportingComponent": "kubelet",
        "reportingInstance": node,
    }


def drop_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The transform informers install to save memory: managedFields are never read by controllers."""
    obj["metadata"].pop("managedFields", None)
    return obj


# Fields whose values repeat across objects (few distinct values cluster-wide): share one string.
SHARED_FIELDS = frozenset(
    {
        "apiVersion",
        "kind",
        "namespace",
        "type",
        "reason",
        "action",
        "fieldPath",
        "component",
        "host",
        "reportingComponent",
        "reportingController",
        "reportingInstance",
    }
)


def drop_managed_fields_and_share_strings(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop managedFields, intern low-cardinality values and dedupe equal strings within the object.

    Each Python str costs 49 B + its length; an Event repeats its namespace, node and timestamps and
    shares kind/apiVersion/reason/type with every other Event.
    """
    obj["metadata"].pop("managedFields", None)
    _share_strings(obj, {})
    return obj


def _share_strings(d: dict[str, Any], seen: dict[str, str]) -> None:
    intern = sys.intern
    for key, value in d.items():  # only values are replaced: safe while iterating
        kind = type(value)
        if kind is str:
            d[key] = intern(value) if key in SHARED_FIELDS else seen.setdefault(value, value)
        elif kind is dict:
            _share_strings(value, seen)
        elif kind is list:
            for item in value:
                if type(item) is dict:
                    _share_strings(item, seen)


def encoded_events(n: int) -> list[bytes]:
    return [orjson.dumps(make_event(i)) for i in range(n)]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC for a bulk load, then freeze what was loaded into the permanent generation.

    Each young collection during a bulk load walks ever more surviving dicts; freezing afterwards keeps
    the loaded cache out of later full collections too.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def bytes_per_object(payloads: list[bytes], transform: Callable[[dict], dict] | None) -> float:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    indexer = Indexer()
    loads = orjson.loads
    for raw in payloads:
        obj = loads(raw)
        if transform is not None:
            obj = transform(obj)
        indexer.add(obj)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del indexer
    return used / len(payloads)


def dict_bytes_per_object(payloads: list[bytes], transform: Callable[[dict], dict] | None) -> float:
    """The decoded dicts alone (kept in a list), to separate the Indexer's own overhead."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = []
    for raw in payloads:
        obj = orjson.loads(raw)
        kept.append(obj if transform is None else transform(obj))
    used = tracemalloc.get_traced_memory()[0] - base - sys.getsizeof(kept)
    tracemalloc.stop()
    del kept
    return used / len(payloads)


def run_once(fn: Callable[[], Any], pause_gc: bool) -> float:
    gc.collect()
    if pause_gc:
        with gc_paused():
            start = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - start
    else:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
    del result
    gc.unfreeze()
    gc.collect()
    return elapsed


def timed_pair(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best-of-``repeat`` seconds with the GC enabled and paused, runs interleaved against load drift."""
    on = off = float("inf")
    for _ in range(repeat):
        on = min(on, run_once(fn, pause_gc=False))
        off = min(off, run_once(fn, pause_gc=True))
    return on, off


def transform_cost_us(payloads: list[bytes], transform: Callable[[dict], dict]) -> float:
    objs = [orjson.loads(p) for p in payloads]
    start = time.perf_counter()
    for obj in objs:
        transform(obj)
    return (time.perf_counter() - start) / len(objs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--objects", type=int, default=100_000, help="objects for the throughput runs")
    parser.add_argument("--memory-objects", type=int, default=20_000, help="objects for tracemalloc runs")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    # The FIFO's slow-process warning fires when the machine is loaded; keep the report readable.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))

    sample = make_event(1)
    json_size = len(orjson.dumps(sample))
    mf_size = len(orjson.dumps(sample["metadata"]["managedFields"]))
    print(f"python {platform.python_version()} on {platform.machine()}, orjson {orjson.__version__}")
    print(f"event JSON: {json_size} B, of which managedFields {mf_size} B")

    payloads = encoded_events(args.memory_objects)
    print(f"\nmemory per cached object ({args.memory_objects} objects, tracemalloc; target <= 2500 B):")
    for label, transform in (
        ("no transform", None),
        ("drop managedFields", drop_managed_fields),
        ("drop managedFields + share strings", drop_managed_fields_and_share_strings),
    ):
        total = bytes_per_object(payloads, transform)
        alone = dict_bytes_per_object(payloads, transform)
        cost = f"{transform_cost_us(payloads, transform):5.1f} us/obj" if transform else ""
        verdict = "OK" if total <= 2500 else "over"
        print(
            f"  {label:36s} {total:6.0f} B  (dict {alone:4.0f} B + indexer {total - alone:3.0f} B)"
            f"  {verdict:4s}  {cost}"
        )
    del payloads

    payloads = encoded_events(args.objects)
    n = len(payloads)
    decoded = [drop_managed_fields(orjson.loads(p)) for p in payloads]

    def add_only() -> Indexer:
        indexer = Indexer()
        add = indexer.add
        for obj in decoded:
            add(obj)
        return indexer

    def decode_and_add() -> Indexer:
        indexer = Indexer()
        add = indexer.add
        loads = orjson.loads
        for raw_obj in payloads:
            add(drop_managed_fields(loads(raw_obj)))
        return indexer

    def fifo_replace_and_pop() -> Indexer:
        indexer = Indexer()
        fifo = DeltaFIFO(known_objects=indexer, transform=drop_managed_fields)
        fifo.replace([orjson.loads(p) for p in payloads], "1")

        def process(deltas: list, is_in_initial_list: bool) -> None:
            for delta in deltas:
                indexer.update(delta.object)

        while len(fifo):
            fifo.pop(process)
        return indexer

    print(f"\nthroughput, {n} objects (best of {args.repeat}):")
    print(f"  {'':36s} {'gc enabled':>14s} {'gc paused':>14s} {'speedup':>8s}")
    for label, fn in (
        ("Indexer.add (pre-decoded)", add_only),
        ("orjson decode + transform + add", decode_and_add),
        ("decode + DeltaFIFO replace/pop + add", fifo_replace_and_pop),
    ):
        on, off = timed_pair(fn, args.repeat)
        print(f"  {label:36s} {n / on:10,.0f} /s {n / off:10,.0f} /s {on / off:7.2f}x")


if __name__ == "__main__":
    main()
