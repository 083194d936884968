"""Throughput of the in-process test API server (framework.testing.APIServer).

Run: ``python bench/apiserver_bench.py [--quick] [--profile PHASE] [--storage memory,sqlite]
[--cold-start N]`` (see bench/README.md).

The server runs on its own event-loop thread in this process, so client and server share one GIL:
every figure is "what a test in this process gets", not what the server could do alone. Each write
figure is measured twice, with the official ``kubernetes`` client (whose model deserialization
dominates) and with plain urllib3 + orjson, and the ratio is printed next to them.

``--storage memory,sqlite`` (the default) runs every group twice in one run, in memory and with a
data directory (SQLite, ``APIServer(data_dir=...)``), and prints the data-directory / memory ratios.
``--cold-start N`` stores N ConfigMaps in a data directory and times a restart over them.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import urllib3
from kubernetes import client, watch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from framework.testing import APIServer

CM_DATA = {"key": "value", "config.yaml": "a: 1\nb: [x, y]\n" * 4}


@dataclass
class Sizes:
    writes: int  # sequential creates / updates per client
    threaded: int  # creates / updates per thread, 4 threads
    list_objects: int
    list_repeats: int
    watch_objects: int  # objects created during each fan-out round
    watchers: tuple[int, ...]


FULL = Sizes(
    writes=3000, threaded=1000, list_objects=10_000, list_repeats=3, watch_objects=1000, watchers=(1, 10, 50)
)
QUICK = Sizes(
    writes=600, threaded=150, list_objects=2_000, list_repeats=2, watch_objects=200, watchers=(1, 10, 50)
)


# -- clients ------------------------------------------------------------------------------------------


class RawClient:
    """urllib3 + orjson: what a client without model classes pays."""

    def __init__(self, server: APIServer) -> None:
        self.url = server.url
        self.http = urllib3.PoolManager(ca_certs=str(server.ca_path), maxsize=4)
        self.headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        raw = orjson.dumps(body) if body is not None else None
        r = self.http.request(method, self.url + path, body=raw, headers=self.headers)
        return r.status, orjson.loads(r.data)

    def create(self, ns: str, name: str) -> dict:
        code, obj = self.request(
            "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": name}, "data": CM_DATA}
        )
        assert code == 201, obj
        return obj

    def update(self, ns: str, obj: dict, i: int) -> dict:
        obj["data"]["counter"] = str(i)
        name = obj["metadata"]["name"]
        code, new = self.request("PUT", f"/api/v1/namespaces/{ns}/configmaps/{name}", obj)
        assert code == 200, new
        return new

    def list(self, ns: str, limit: int = 0) -> int:
        count, token = 0, ""
        while True:
            q = f"?limit={limit}" if limit else ""
            if token:
                q += f"&continue={token}"
            code, body = self.request("GET", f"/api/v1/namespaces/{ns}/configmaps{q}")
            assert code == 200, body
            count += len(body["items"])
            token = body["metadata"].get("continue")
            if not token:
                return count


class OfficialClient:
    """The official client with its generated models."""

    def __init__(self, server: APIServer) -> None:
        self.core = client.CoreV1Api(server.api_client())

    def create(self, ns: str, name: str) -> Any:
        return self.core.create_namespaced_config_map(ns, {"metadata": {"name": name}, "data": dict(CM_DATA)})

    def update(self, ns: str, obj: Any, i: int) -> Any:
        obj.data["counter"] = str(i)
        return self.core.replace_namespaced_config_map(obj.metadata.name, ns, obj)

    def list(self, ns: str, limit: int = 0) -> int:
        count, token = 0, None
        while True:
            kw: dict[str, Any] = {"limit": limit} if limit else {}
            if token:
                kw["_continue"] = token
            lst = self.core.list_namespaced_config_map(ns, **kw)
            count += len(lst.items)
            token = lst.metadata._continue
            if not token:
                return count


# -- measurements -------------------------------------------------------------------------------------


class Bench:
    def __init__(self, server: APIServer, sizes: Sizes, profile: str | None) -> None:
        self.server = server
        self.sizes = sizes
        self.profile = profile
        self.rows: list[tuple[str, str, float | None, float | None]] = []
        self.notes: list[str] = []
        self._ns = 0

    def namespace(self, prefix: str) -> str:
        self._ns += 1
        ns = f"{prefix}-{self._ns}"
        code, body = RawClient(self.server).request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        assert code == 201, body
        return ns

    def timed(self, phase: str, fn: Callable[[], Any]) -> float:
        """Wall time of ``fn``; with ``--profile PHASE`` the server thread is profiled meanwhile."""
        prof = None
        if self.profile and self.profile in phase:
            prof = cProfile.Profile()
            self.server.call(prof.enable)  # profiles the event-loop thread only
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        if prof is not None:
            self.server.call(prof.disable)
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
            print(f"\n--- server profile: {phase} ---\n{out.getvalue()}", file=sys.stderr)
        return elapsed

    def add(self, label: str, unit: str, official: float | None, raw: float | None) -> None:
        self.rows.append((label, unit, official, raw))
        print(f"  {label:<42} {_fmt(official):>10} {_fmt(raw):>10} {unit}", flush=True)

    # -- writes ---------------------------------------------------------------------------------------

    def writes(self) -> None:
        n = self.sizes.writes
        rates: dict[str, dict[str, float]] = {"create": {}, "update": {}}
        for label, factory in (("official", OfficialClient), ("raw", RawClient)):
            c = factory(self.server)
            ns = self.namespace(f"seq-{label}")
            objs: list[Any] = []
            t = self.timed(
                f"create-seq-{label}",
                lambda c=c, ns=ns, objs=objs: objs.extend(c.create(ns, f"cm-{i}") for i in range(n)),
            )
            rates["create"][label] = n / t

            def update_all(c=c, ns=ns, objs=objs) -> None:
                for i, o in enumerate(objs):
                    objs[i] = c.update(ns, o, i)

            t = self.timed(f"update-seq-{label}", update_all)
            rates["update"][label] = n / t
        self.add("creates/s, sequential", "req/s", rates["create"]["official"], rates["create"]["raw"])
        self.add("updates/s, sequential", "req/s", rates["update"]["official"], rates["update"]["raw"])

    def threaded_writes(self, threads: int = 4) -> None:
        n = self.sizes.threaded
        rates: dict[str, dict[str, float]] = {"create": {}, "update": {}}
        for label, factory in (("official", OfficialClient), ("raw", RawClient)):
            ns = self.namespace(f"par-{label}")
            clients = [factory(self.server) for _ in range(threads)]
            objs: list[list[Any]] = [[] for _ in range(threads)]

            def creates(k: int, ns=ns, clients=clients, objs=objs) -> None:
                cl = clients[k]
                objs[k].extend(cl.create(ns, f"cm-{k}-{i}") for i in range(n))

            def updates(k: int, ns=ns, clients=clients, objs=objs) -> None:
                cl = clients[k]
                for i, o in enumerate(objs[k]):
                    objs[k][i] = cl.update(ns, o, i)

            t = self.timed(f"create-par-{label}", lambda: _run_threads(threads, creates))
            rates["create"][label] = threads * n / t
            t = self.timed(f"update-par-{label}", lambda: _run_threads(threads, updates))
            rates["update"][label] = threads * n / t
        self.add(
            f"creates/s, {threads} threads", "req/s", rates["create"]["official"], rates["create"]["raw"]
        )
        self.add(
            f"updates/s, {threads} threads", "req/s", rates["update"]["official"], rates["update"]["raw"]
        )

    # -- list -----------------------------------------------------------------------------------------

    def lists(self) -> None:
        n = self.sizes.list_objects
        ns = self.namespace("list")
        # Populate in-process (not measured): the write path was measured above.
        api, rt = self.server.api, self.server.registry.get("", "v1", "configmaps")
        for start in range(0, n, 1000):
            self.server.call(
                lambda start=start: [
                    api.create(rt, ns, {"metadata": {"name": f"cm-{i:05d}"}, "data": dict(CM_DATA)})
                    for i in range(start, min(n, start + 1000))
                ]
            )
        results: dict[tuple[str, int], float] = {}
        for label, factory in (("official", OfficialClient), ("raw", RawClient)):
            c = factory(self.server)
            for limit in (0, 500):
                best = float("inf")
                for _ in range(self.sizes.list_repeats):
                    got: list[int] = []
                    t = self.timed(
                        f"list-{limit}-{label}",
                        lambda c=c, limit=limit, got=got: got.append(c.list(ns, limit)),
                    )
                    assert got[0] == n + 1, got  # + kube-root-ca.crt
                    best = min(best, t)
                results[(label, limit)] = best
        k = f"{n // 1000}k" if n % 1000 == 0 else str(n)
        self.add(f"list {k} ConfigMaps, one request", "s/list", results[("official", 0)], results[("raw", 0)])
        self.add(
            f"list {k} ConfigMaps, limit=500", "s/list", results[("official", 500)], results[("raw", 500)]
        )

    # -- watch fan-out --------------------------------------------------------------------------------

    def fanout(self) -> None:
        n = self.sizes.watch_objects
        for w in self.sizes.watchers:
            raw_rate, creates = self._fanout_round(w, n, official=False)
            off_rate = None
            if w == 1:
                off_rate, _ = self._fanout_round(w, n, official=True)
            self.add(f"watch fan-out x{w}: events/s delivered", "ev/s", off_rate, raw_rate)
            self.notes.append(f"fan-out x{w}: creates/s while watched (raw writer) {creates:.0f}")

    def _fanout_round(self, watchers: int, n: int, official: bool) -> tuple[float, float]:
        ns = self.namespace(f"watch{watchers}")
        rv = self.server.resource_version
        path = f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=120"
        ready = threading.Barrier(watchers + 1)
        done_at: list[float] = []
        counts = [0] * watchers
        lock = threading.Lock()

        def raw_watcher(k: int) -> None:
            pool = urllib3.PoolManager(ca_certs=str(self.server.ca_path))
            r = pool.request(
                "GET",
                self.server.url + path,
                headers={"Authorization": f"Bearer {self.server.token}"},
                preload_content=False,
                timeout=60,
            )
            assert r.status == 200
            ready.wait()
            seen = 0
            for chunk in r.stream(1 << 16, decode_content=False):
                seen += chunk.count(b"\n")  # one JSON line per event (15-1)
                if seen >= n:
                    break
            counts[k] = seen
            with lock:
                done_at.append(time.perf_counter())
            r.release_conn()
            r.close()

        def official_watcher(k: int) -> None:
            core = client.CoreV1Api(self.server.api_client())
            ready.wait()
            seen = 0
            for _ in watch.Watch().stream(
                core.list_namespaced_config_map, ns, resource_version=str(rv), timeout_seconds=120
            ):
                seen += 1
                if seen >= n:
                    break
            counts[k] = seen
            with lock:
                done_at.append(time.perf_counter())

        target = official_watcher if official else raw_watcher
        threads = [threading.Thread(target=target, args=(k,), name=f"watcher-{k}") for k in range(watchers)]
        for t in threads:
            t.start()
        ready.wait()
        time.sleep(0.05)
        writer = RawClient(self.server)
        start = time.perf_counter()
        for i in range(n):
            writer.create(ns, f"cm-{i}")
        written = time.perf_counter()
        for t in threads:
            t.join(120)
        assert counts == [n] * watchers, counts
        elapsed = max(done_at) - start
        return watchers * n / elapsed, n / (written - start)


def interleaved_writes(servers: dict[str, APIServer], n: int, threads: int, batch: int = 50) -> list[tuple]:
    """Creates then updates on every server, alternating batches of ``batch`` requests per client
    thread between the servers (the order flips each batch), so a load change on a shared machine
    hits both alike. Returns rows ``(label, unit, {storage: (official, raw)})``."""
    rows = []
    for k in (1, threads):
        rates: dict[str, dict[str, dict[str, float]]] = {"create": {}, "update": {}}
        for label, factory in (("official", OfficialClient), ("raw", RawClient)):
            state = {}
            for storage, server in servers.items():
                code, body = RawClient(server).request(
                    "POST", "/api/v1/namespaces", {"metadata": {"name": f"ab-{label}-{k}"}}
                )
                assert code == 201, body
                state[storage] = ([factory(server) for _ in range(k)], [[] for _ in range(k)])
            for op in ("create", "update"):
                spent = dict.fromkeys(servers, 0.0)
                for b, start in enumerate(range(0, n, batch)):
                    order = list(servers) if b % 2 == 0 else list(reversed(servers))
                    for storage in order:
                        clients, objs = state[storage]
                        ns = f"ab-{label}-{k}"

                        def work(t: int, clients=clients, objs=objs, ns=ns, start=start, op=op) -> None:
                            for i in range(start, min(n, start + batch)):
                                if op == "create":
                                    objs[t].append(clients[t].create(ns, f"cm-{t}-{i}"))
                                else:
                                    objs[t][i] = clients[t].update(ns, objs[t][i], i)

                        t0 = time.perf_counter()
                        if k == 1:
                            work(0)
                        else:
                            _run_threads(k, work)
                        spent[storage] += time.perf_counter() - t0
                for storage in servers:
                    rates[op].setdefault(storage, {})[label] = k * n / spent[storage]
        where = "sequential" if k == 1 else f"{k} threads"
        for op in ("create", "update"):
            by_storage = {st: (rates[op][st]["official"], rates[op][st]["raw"]) for st in servers}
            rows.append((f"{op}s/s, {where}, interleaved", "req/s", by_storage))
    return rows


def interleaved_reads(benches: dict[str, Bench], sizes: Sizes) -> list[tuple]:
    """Lists and watch fan-out on every server, one measurement at a time alternating between the
    servers (best of 3 x ``list_repeats`` lists, of 3 fan-out rounds). Rows as interleaved_writes'."""
    n = sizes.list_objects
    namespaces = {}
    for storage, b in benches.items():
        ns = namespaces[storage] = b.namespace("list")
        api, rt = b.server.api, b.server.registry.get("", "v1", "configmaps")
        for start in range(0, n, 1000):
            b.server.call(
                lambda start=start, api=api, rt=rt, ns=ns: [
                    api.create(rt, ns, _configmap(f"cm-{i:05d}")) for i in range(start, min(n, start + 1000))
                ]
            )
    best: dict[tuple, float] = {}
    clients = {
        (st, label): factory(b.server)
        for st, b in benches.items()
        for label, factory in (("official", OfficialClient), ("raw", RawClient))
    }
    for rep in range(3 * sizes.list_repeats):
        for label in ("official", "raw"):
            for limit in (0, 500):
                order = list(benches) if rep % 2 == 0 else list(reversed(benches))
                for st in order:
                    c, ns = clients[(st, label)], namespaces[st]
                    t0 = time.perf_counter()
                    assert c.list(ns, limit) == n + 1  # + kube-root-ca.crt
                    t = time.perf_counter() - t0
                    best[(st, label, limit)] = min(best.get((st, label, limit), t), t)
    k = f"{n // 1000}k" if n % 1000 == 0 else str(n)
    rows: list[tuple] = []
    for limit, what in ((0, "one request"), (500, "limit=500")):
        by = {st: (best[(st, "official", limit)], best[(st, "raw", limit)]) for st in benches}
        rows.append((f"list {k} ConfigMaps, {what}, interleaved", "s/list", by))
    for w in sizes.watchers:
        rates: dict[str, list[float]] = {st: [0.0, 0.0] for st in benches}
        for rep in range(3):
            order = list(benches) if rep % 2 == 0 else list(reversed(benches))
            for st in order:
                raw, _ = benches[st]._fanout_round(w, sizes.watch_objects, official=False)
                rates[st][1] = max(rates[st][1], raw)
                if w == 1:
                    off, _ = benches[st]._fanout_round(w, sizes.watch_objects, official=True)
                    rates[st][0] = max(rates[st][0], off)
        by = {st: (r[0] or None, r[1]) for st, r in rates.items()}
        rows.append((f"watch fan-out x{w}: events/s delivered, interleaved", "ev/s", by))
    return rows


def _run_threads(k: int, fn: Callable[[int], None]) -> None:
    threads = [threading.Thread(target=fn, args=(i,), name=f"client-{i}") for i in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def table(rows: list[tuple[str, str, float | None, float | None]]) -> str:
    head = ("measurement", "official client", "raw urllib3", "raw / official", "unit")
    lines = []
    for label, unit, off, raw in rows:
        ratio = "-"
        if off and raw:
            # "how many times better raw is": rates divide one way, durations the other.
            ratio = f"{(off / raw if unit.startswith('s/') else raw / off):.1f}x"
        lines.append((label, _fmt(off), _fmt(raw), ratio, unit))
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]
    fmt = "| " + " | ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt.format(*head), sep, *(fmt.format(*r) for r in lines)])


def compare(by_storage: dict[str, list[tuple[str, str, float | None, float | None]]]) -> str:
    """Memory and data-directory figures side by side, with data dir / memory (>1 = data dir better)."""
    mem, disk = by_storage["memory"], by_storage["sqlite"]
    head = (
        "measurement",
        "memory official",
        "data dir official",
        "memory raw",
        "data dir raw",
        "ratio",
        "unit",
    )
    lines = []
    for (label, unit, m_off, m_raw), (_, _, d_off, d_raw) in zip(mem, disk, strict=True):
        ratios = []
        for m, d in ((m_off, d_off), (m_raw, d_raw)):
            if m and d:
                ratios.append(f"{(m / d if unit.startswith('s/') else d / m):.2f}")
        lines.append((label, _fmt(m_off), _fmt(d_off), _fmt(m_raw), _fmt(d_raw), " / ".join(ratios), unit))
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]
    fmt = "| " + " | ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt.format(*head), sep, *(fmt.format(*r) for r in lines)])


def _best(
    old: list[tuple[str, str, float | None, float | None]] | None,
    new: list[tuple[str, str, float | None, float | None]],
) -> list[tuple[str, str, float | None, float | None]]:
    """Per row, the better figure of two rounds (higher rate, lower duration)."""
    if old is None:
        return new

    def pick(unit: str, a: float | None, b: float | None) -> float | None:
        if a is None or b is None:
            return a if b is None else b
        return min(a, b) if unit.startswith("s/") else max(a, b)

    pairs = zip(old, new, strict=True)
    return [(lbl, u, pick(u, o1, n1), pick(u, o2, n2)) for (lbl, u, o1, o2), (_, _, n1, n2) in pairs]


def _configmap(name: str) -> dict:
    return {"metadata": {"name": name}, "data": dict(CM_DATA)}


def ab_table(rows: list[tuple]) -> str:
    head = (
        "measurement",
        "memory official",
        "data dir official",
        "memory raw",
        "data dir raw",
        "ratio",
        "unit",
    )
    lines = []
    for label, unit, by in rows:
        (m_off, m_raw), (d_off, d_raw) = by["memory"], by["sqlite"]
        # > 1: the data dir is better (rates divide one way, durations the other).
        pairs = [(m, d) for m, d in ((m_off, d_off), (m_raw, d_raw)) if m and d]
        ratio = " / ".join(f"{(m / d if unit.startswith('s/') else d / m):.2f}" for m, d in pairs)
        lines.append((label, _fmt(m_off), _fmt(d_off), _fmt(m_raw), _fmt(d_raw), ratio, unit))
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]
    fmt = "| " + " | ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt.format(*head), sep, *(fmt.format(*r) for r in lines)])


# -- CEL: a CRD with five x-kubernetes-validations rules against the same CRD without them -----------

CEL_GROUP = "bench.example.com"
CEL_RULES = {
    "root": [{"rule": "self.metadata.name.size() <= 63", "message": "name too long"}],
    "spec": [
        {
            "rule": "self.replicas >= 0 && self.replicas <= self.maxReplicas",
            "message": "replicas out of range",
        },
        {"rule": "self.image.matches('^[a-z0-9./:-]+$')", "message": "bad image"},
        {"rule": "self.ports.all(p, p.port > 0 && p.port < 65536)", "message": "bad port"},
        {"rule": "!has(self.labels) || self.labels.all(k, k.size() <= 63)", "message": "label key too long"},
    ],
}


def cel_crd(plural: str, kind: str, rules: bool) -> dict:
    spec: dict[str, Any] = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"},
            "image": {"type": "string", "maxLength": 128},
            "ports": {
                "type": "array",
                "maxItems": 16,
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "maxLength": 15}, "port": {"type": "integer"}},
                },
            },
            "labels": {
                "type": "object",
                "maxProperties": 16,
                "additionalProperties": {"type": "string", "maxLength": 63},
            },
        },
    }
    root: dict[str, Any] = {"type": "object", "properties": {"spec": spec}}
    if rules:
        spec["x-kubernetes-validations"] = CEL_RULES["spec"]
        root["x-kubernetes-validations"] = CEL_RULES["root"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{CEL_GROUP}"},
        "spec": {
            "group": CEL_GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": root}}
            ],
        },
    }


def cel_creates(n: int) -> dict[str, tuple[float, float]]:
    """Raw creates of custom resources without and with five CEL rules on one server, alternating
    request by request (the order flipping each pair) so that both see the same load and the same
    store size. Per kind: (creates/s over the whole run, creates/s at the median request time); the
    median resists the GIL hand-offs that make single requests on a shared machine take up to a
    switch interval longer (see above)."""
    kinds = {"plain": ("plains", "Plain"), "ruled": ("ruleds", "Ruled")}
    times: dict[str, list[float]] = {"plain": [], "ruled": []}
    with APIServer() as server:
        server.install_crds([cel_crd(p, k, name == "ruled") for name, (p, k) in kinds.items()])
        c = RawClient(server)
        body = {
            "replicas": 2,
            "maxReplicas": 5,
            "image": "registry.example.com/app:1.2.3",
            "ports": [
                {"name": "http", "port": 80},
                {"name": "https", "port": 443},
                {"name": "dns", "port": 53},
            ],
            "labels": {"app": "bench", "tier": "web"},
        }
        for i in range(n):
            for name in ("plain", "ruled") if i % 2 == 0 else ("ruled", "plain"):
                plural, kind = kinds[name]
                obj = {
                    "apiVersion": f"{CEL_GROUP}/v1",
                    "kind": kind,
                    "metadata": {"name": f"o-{i:06d}"},
                    "spec": body,
                }
                t0 = time.perf_counter()
                code, got = c.request("POST", f"/apis/{CEL_GROUP}/v1/namespaces/default/{plural}", obj)
                times[name].append(time.perf_counter() - t0)
                assert code == 201, got
    return {name: (n / sum(ts), 1 / sorted(ts)[len(ts) // 2]) for name, ts in times.items()}


def cold_start(n: int, parent: str | None) -> None:
    """Store ``n`` ConfigMaps (in-process, as the list phase does), stop, and time the restart."""
    directory = tempfile.mkdtemp(prefix="apiserver-bench-", dir=parent)
    try:
        with APIServer(data_dir=directory) as server:
            api, rt = server.api, server.registry.get("", "v1", "configmaps")
            t0 = time.perf_counter()
            for start in range(0, n, 1000):
                server.call(
                    lambda start=start: [
                        api.create(rt, "default", _configmap(f"cm-{i:06d}"))
                        for i in range(start, min(n, start + 1000))
                    ]
                )
            stored = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in Path(directory).iterdir() if f.is_file())
        t0 = time.perf_counter()
        server = APIServer(data_dir=directory).start()
        try:
            started = time.perf_counter() - t0
            count = RawClient(server).list("default", 500)
            first_list = time.perf_counter() - t0
        finally:
            server.stop()
        assert count == n + 1, count  # + kube-root-ca.crt
        print(
            f"cold start over {n:,} stored ConfigMaps ({size / 1e6:.0f} MB): serving after {started:.2f} s, "
            f"first full list (limit=500) done after {first_list:.2f} s; storing them took {stored:.1f} s "
            f"({n / stored:,.0f} creates/s in-process)",
            flush=True,
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="scaled-down run (~10 s)")
    p.add_argument(
        "--profile",
        metavar="PHASE",
        help="cProfile the server thread during phases whose name contains PHASE "
        "(e.g. create-seq-raw, update-par, list-500-raw, fanout) and print the top functions to stderr",
    )
    p.add_argument(
        "--only",
        metavar="GROUPS",
        default="writes,threads,list,fanout,cel",
        help="comma-separated subset of: writes, threads, list, fanout, cel (none: only --cold-start)",
    )
    p.add_argument(
        "--storage",
        default="memory,sqlite",
        help="comma-separated: memory (no data dir), sqlite (a data dir); both by default, side by side",
    )
    p.add_argument(
        "--cold-start", type=int, default=0, metavar="N", help="time a restart over N stored objects"
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the storages alternately this many times and keep each figure's best (shared machines)",
    )
    p.add_argument("--data-dir-parent", metavar="DIR", help="where to make data directories (default: temp)")
    args = p.parse_args(argv)
    groups = set(args.only.split(",")) - {"", "none"}
    sizes = QUICK if args.quick else FULL
    t0 = time.perf_counter()
    by_storage: dict[str, list[tuple[str, str, float | None, float | None]]] = {}
    if "cel" in groups:
        groups.discard("cel")
        rates = cel_creates(sizes.writes)
        (plain, plain_med), (ruled, ruled_med) = rates["plain"], rates["ruled"]
        print("CRD creates, raw, one server, alternating request by request between two CRDs of one schema:")
        print(f"  without rules {plain:,.0f}/s, with five x-kubernetes-validations rules {ruled:,.0f}/s:")
        print(f"    ratio with/without {ruled / plain:.2f}, CEL adds {plain / ruled - 1:.0%} time per create")
        print(f"  at the median request time {plain_med:,.0f}/s and {ruled_med:,.0f}/s:")
        print(f"    ratio with/without {ruled_med / plain_med:.2f}, CEL adds {plain_med / ruled_med - 1:.0%}")
        print(flush=True)
    storages = args.storage.split(",") if groups else []
    if {"memory", "sqlite"} <= set(storages) and groups & {"writes", "threads"}:
        # Writes side by side at a fine grain: both servers at once, batches alternating.
        directory = tempfile.mkdtemp(prefix="apiserver-bench-", dir=args.data_dir_parent)
        try:
            with APIServer() as mem, APIServer(data_dir=directory) as disk:
                print("writes, memory and data dir interleaved in batches of 50 requests", flush=True)
                ab = interleaved_writes({"memory": mem, "sqlite": disk}, sizes.writes, 4)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        print(ab_table(ab))
        print()
        groups -= {"writes", "threads"}
    if {"memory", "sqlite"} <= set(storages) and groups & {"list", "fanout"}:
        directory = tempfile.mkdtemp(prefix="apiserver-bench-", dir=args.data_dir_parent)
        try:
            with APIServer() as mem, APIServer(data_dir=directory) as disk:
                print("lists and watch fan-out, memory and data dir alternating", flush=True)
                benches = {"memory": Bench(mem, sizes, None), "sqlite": Bench(disk, sizes, None)}
                ab = interleaved_reads(benches, sizes)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        print(ab_table(ab))
        print()
        groups -= {"list", "fanout"}
    for storage in storages * args.rounds if groups else ():
        directory = tempfile.mkdtemp(prefix="apiserver-bench-", dir=args.data_dir_parent)
        try:
            with APIServer(data_dir=directory if storage == "sqlite" else None) as server:
                b = Bench(server, sizes, args.profile)
                print(f"{storage:<44} {'official':>10} {'raw':>10}", flush=True)
                if "writes" in groups:
                    b.writes()
                if "threads" in groups:
                    b.threaded_writes()
                if "list" in groups:
                    b.lists()
                if "fanout" in groups:
                    if args.profile and "fanout" in args.profile:
                        b.timed("fanout", b.fanout)
                    else:
                        b.fanout()
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        by_storage[storage] = _best(by_storage.get(storage), b.rows)
        print()
        print(table(b.rows))
        for note in b.notes:
            print(f"  {note}")
        print()
    if {"memory", "sqlite"} <= by_storage.keys():
        print("data dir (SQLite) vs memory, ratio = data dir / memory (official / raw):")
        print(compare(by_storage))
    if args.cold_start:
        cold_start(args.cold_start, args.data_dir_parent)
    mode = "quick" if args.quick else "full"
    print(f"\ntotal {time.perf_counter() - t0:.1f} s ({mode} run, python {sys.version.split()[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
