"""Event TTL controller (gcm.controllers.event): expiry throughput and memory per held event.

Run: ``.venv/bin/python bench/event_bench.py [--quick] [--events N] [--workers W] [--skip-expire]
[--skip-floor] [--skip-hold] [--skip-tracemalloc] [--cache-floor] [--watched-floor] [--pin]``
(1,000,000 events: ``--events 1000000 --skip-expire --skip-floor --skip-tracemalloc``, RSS only).

Every measurement runs in its own process, against a test API server in another process (populated
in-process there, not measured), so gcm's figures are gcm's alone and its peak RSS is its own:

1. **expire**: N events (10 % Shoot events), all expired (reference time 2h ago, TTL 1h), exist before
   gcm starts. gcm (a Manager with the event controller as ``gcm.cmd.app.build_manager`` builds it,
   ``concurrentSyncs`` = W, client without QPS limit) starts; measured: time until its informer holds
   only the Shoot events (checked against the server afterwards), of which the initial list + cache
   sync, and peak RSS of the process above its baseline, per cached event.
2. **floor**: the same events on a fresh server, deleted by a plain client loop (one list of
   everything, then one DELETE per non-Shoot event), sequentially and with W threads.
   ``--cache-floor``: W plain delete threads in a process that also runs gcm's Event informer (it
   lists, and the deletes come back to it as watch events), timed like gcm: until the informer holds
   only the Shoot events. What any watching controller pays, without gcm's queue and reconciler.
3. **hold**: N events that expire only in an hour: gcm lists them and parks every non-Shoot event in
   its work queue with a delay. Measured with tracemalloc: bytes per held event for the informer alone
   and for informer + queue (everything the process allocated, divided by N), with the slim cache
   (``EVENT_CACHE_OPTIONS``) and, for comparison, with the default cache (managedFields dropped only);
   and, without tracemalloc, RSS above baseline per held event once everything is parked (steady)
   and at its peak (the initial list).

CPU seconds of gcm (or the floor's client) and of the server process over the measured interval are
printed with the times: on a small machine both compete for the same cores.

The events mix the three ways an event carries its time: events.k8s.io single events (``eventTime``),
series (``series.lastObservedTime``) and legacy core/v1 events (``lastTimestamp``), spread over 100
namespaces; about 1 KB of JSON each as the server returns them (managedFields included).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import subprocess
import sys
import threading
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import structlog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EV = "events.k8s.io/v1"
NAMESPACES = 100
SHOOT_EVERY = 10  # 10 % Shoot events
TTL = 3600.0

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


# --- the events ----------------------------------------------------------------------------------------


def core_event(i: int, base: datetime) -> tuple[str, dict]:
    """The core/v1 form (the server's storage form) of event ``i``: (namespace, body)."""
    ns = f"garden-p{i % NAMESPACES:03d}"
    # Spread over half an hour before ``base``, microseconds differing: timestamps repeat as rarely as
    # in a real cluster (a legacy event's second-precision time is shared by events of the same second).
    at = base - timedelta(seconds=i % 1800, microseconds=(i * 7919) % 1_000_000)
    micro = at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    secs = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    first = (at - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if i % SHOOT_EVERY == 0:
        involved = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "name": f"shoot-{i}"}
        reason, message = "Reconciled", f"Reconciled Shoot cluster state of shoot-{i} successfully"
    elif i % 7 == 1:
        ns = "default"  # events about cluster-scoped objects live in default
        involved = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "name": f"proj-{i}"}
        reason, message = "ProjectReconciled", f"Project proj-{i} reconciled"
    else:
        involved = {"apiVersion": "v1", "kind": "Secret", "name": f"secret-{i}"}
        reason, message = "Updated", f"Secret secret-{i} was rotated by the certificate manager"
    if ns != "default":
        involved["namespace"] = ns
    involved["uid"] = f"00000000-0000-4000-8000-{i:012d}"
    body: dict[str, Any] = {
        "metadata": {"name": f"{involved['name']}.{0x17E0000000000000 + i:x}"},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": "Normal",
    }
    style = (i // SHOOT_EVERY + i) % 3
    if style == 0:  # events.k8s.io, single occurrence
        body.update(
            eventTime=micro,
            action="Reconcile",
            reportingComponent="gardener.cloud/gardenlet",
            reportingInstance="gardenlet-6c9f7d8b5-x2k4q",
        )
    elif style == 1:  # events.k8s.io series
        body.update(
            eventTime=(at - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            series={"count": 4, "lastObservedTime": micro},
            action="Reconcile",
            reportingComponent="gardener.cloud/gardenlet",
            reportingInstance="gardenlet-6c9f7d8b5-x2k4q",
        )
    else:  # legacy core/v1
        body.update(
            source={"component": "gardener-controller-manager"},
            firstTimestamp=first,
            lastTimestamp=secs,
            count=3,
        )
    return ns, body


def is_shoot_index(i: int) -> bool:
    return i % SHOOT_EVERY == 0


# --- roles (each in its own process) -------------------------------------------------------------------


def role_server(args: argparse.Namespace) -> None:
    """Serve N events until stdin closes; prints ``READY <kubeconfig>``."""
    from framework.testing import APIServer

    base = datetime.now(UTC) - (timedelta(hours=2) if args.expired else timedelta(0))
    with APIServer(min_request_timeout=3600) as server:
        api = server.api
        ns_rt = server.registry.get("", "v1", "namespaces")
        ev_rt = server.registry.get("", "v1", "events")
        names = [f"garden-p{i:03d}" for i in range(NAMESPACES)]
        server.call(lambda: [api.create(ns_rt, None, {"metadata": {"name": n}}) for n in names])
        started = time.perf_counter()
        for start in range(0, args.events, 2000):
            stop = min(args.events, start + 2000)
            server.call(
                lambda start=start, stop=stop: [
                    api.create(ev_rt, *core_event(i, base)) for i in range(start, stop)
                ]
            )
        print(
            f"populated {args.events} events in {time.perf_counter() - started:.1f}s",
            file=sys.stderr,
            flush=True,
        )
        print(f"READY {server.kubeconfig}", flush=True)
        sys.stdin.read()


def rusage() -> dict:
    """This process's user and system CPU seconds and its voluntary / involuntary context switches."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"user": r.ru_utime, "sys": r.ru_stime, "vcsw": r.ru_nvcsw, "ivcsw": r.ru_nivcsw}


def rusage_since(r0: dict) -> dict:
    r1 = rusage()
    return {k: round(r1[k] - r0[k], 3) for k in r0}


def cpu_seconds(ru: dict) -> float:
    """CPU seconds of a :func:`rusage_since` (what ``time.process_time`` counts: user + sys)."""
    return ru["user"] + ru["sys"]


def usage_text(result: dict) -> str:
    """``user U s, sys S s, C switches/delete``: whether a run's extra CPU is the interpreter's work
    (user) or the kernel's thread hand-offs (sys, context switches)."""
    ru, deleted = result["rusage"], max(1, result["deleted"])
    switches = (ru["vcsw"] + ru["ivcsw"]) / deleted
    return f"user {ru['user']:.1f} s, sys {ru['sys']:.1f} s, {switches:.2f} switches/delete"


def rss_kb() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in KiB."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values["VmRSS"], values["VmHWM"]


def make_manager(kubeconfig: str, workers: int, build: bool = True, slim: bool = True) -> tuple[Any, Any]:
    """gcm's manager for ``controllers.event`` (build: via ``gcm.cmd.app.build_manager``, with the
    controller; else a bare Manager with or without the slim Event cache, controller not added)."""
    from framework.client import Client
    from framework.manager import Manager
    from gcm.cmd import app
    from gcm.config import EventControllerConfiguration, default_config
    from gcm.controllers.add import add_event_controller
    from gcm.controllers.event import EVENT_CACHE_OPTIONS

    cfg = default_config()
    cfg.leader_election.leader_elect = False
    cfg.server.metrics = cfg.server.health_probes = cfg.server.webhooks = cfg.server.https = None
    cfg.controllers.event = EventControllerConfiguration(concurrent_syncs=workers, ttl_non_shoot_events=TTL)
    client = Client.from_kubeconfig(kubeconfig, qps=0)
    client.mapping(EV, "Event")  # discovery before the baseline
    if build:
        # The other controllers are not part of this bench.
        return app.build_manager(cfg, client, add_controllers=add_event_controller, add_indexes=None), cfg
    return Manager(client, cache_options=EVENT_CACHE_OPTIONS if slim else None), cfg


def run_manager(mgr: Any) -> threading.Thread:
    thread = threading.Thread(target=mgr.start, name="gcm", daemon=True)
    thread.start()
    return thread


def metric(mgr: Any, result: str) -> float:
    value = mgr.registry.get_sample_value(
        "controller_runtime_reconcile_total", {"controller": "event", "result": result}
    )
    return value or 0.0


def role_expire(args: argparse.Namespace) -> dict:
    mgr, _ = make_manager(args.kubeconfig, args.workers)
    shoots = sum(1 for i in range(args.events) if is_shoot_index(i))
    gc.collect()
    rss0, _ = rss_kb()
    informer = mgr.cache.informer(EV, "Event")
    ru0 = rusage()
    t0 = time.perf_counter()
    thread = run_manager(mgr)
    informer.wait_for_cache_sync(600)
    t_sync = time.perf_counter() - t0
    while len(informer.indexer) > shoots:
        time.sleep(0.05)
    t_done = time.perf_counter() - t0
    ru = rusage_since(ru0)  # the run only: not the check and the shutdown below
    _, hwm = rss_kb()
    remaining = mgr.api_reader.list(EV, "Event")["items"]
    assert len(remaining) == shoots, (len(remaining), shoots)
    mgr.stop()
    thread.join(30)
    return {
        "seconds": t_done,
        "cpu_seconds": cpu_seconds(ru),
        "rusage": ru,
        "sync_seconds": t_sync,
        "deleted": args.events - shoots,
        "peak_rss_per_event": (hwm - rss0) * 1024 / args.events,
        "errors": mgr.registry.get_sample_value(
            "controller_runtime_reconcile_errors_total", {"controller": "event"}
        ),
    }


def delete_in_threads(todo: list[tuple[str, str]], clients: list[Any]) -> None:
    """DELETE every ``(namespace, name)`` of ``todo``: one plain thread per client, each its share."""
    n = len(clients)

    def delete(part: list[tuple[str, str]], c: Any) -> None:
        for ns, name in part:
            c.delete(EV, "Event", name, ns)

    workers = [threading.Thread(target=delete, args=(todo[k::n], clients[k])) for k in range(n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def role_floor(args: argparse.Namespace) -> dict:
    from framework.client import Client
    from gcm.controllers.event import is_shoot_event

    client = Client.from_kubeconfig(args.kubeconfig, qps=0)
    client.mapping(EV, "Event")
    ru0 = rusage()
    t0 = time.perf_counter()
    todo: list[tuple[str, str]] = []
    cont = None
    while True:
        page = (
            client.list(EV, "Event", limit=500, continue_=cont)
            if cont
            else client.list(EV, "Event", limit=500)
        )
        todo += [
            (e["metadata"]["namespace"], e["metadata"]["name"])
            for e in page["items"]
            if not is_shoot_event(e)
        ]
        cont = page["metadata"].get("continue")
        if not cont:
            break
    t_list = time.perf_counter() - t0
    threads = max(1, args.threads)
    clients = [client] + [Client.from_kubeconfig(args.kubeconfig, qps=0) for _ in range(threads - 1)]
    delete_in_threads(todo, clients)
    ru = rusage_since(ru0)
    return {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": cpu_seconds(ru),
        "rusage": ru,
        "list_seconds": t_list,
        "deleted": len(todo),
    }


def role_cache_floor(args: argparse.Namespace) -> dict:
    """The floor with the minimum a controller needs: gcm's Event informer (slim cache, no
    controller) lists and watches, and W plain threads delete every listed non-Shoot event; done,
    as gcm is, when the informer holds only the Shoot events. gcm minus its work queue, workers'
    machinery and reconciler."""
    from gcm.controllers.event import is_shoot_event

    mgr, _ = make_manager(args.kubeconfig, args.workers, build=False)
    shoots = sum(1 for i in range(args.events) if is_shoot_index(i))
    informer = mgr.cache.informer(EV, "Event")
    ru0 = rusage()
    t0 = time.perf_counter()
    thread = run_manager(mgr)
    informer.wait_for_cache_sync(600)
    todo = [
        (e["metadata"]["namespace"], e["metadata"]["name"])
        for e in informer.indexer.list()
        if not is_shoot_event(e)
    ]
    delete_in_threads(todo, [mgr.client] * max(1, args.threads))
    while len(informer.indexer) > shoots:
        time.sleep(0.05)
    ru = rusage_since(ru0)
    result = {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": cpu_seconds(ru),
        "rusage": ru,
        "deleted": len(todo),
    }
    mgr.stop()
    thread.join(30)
    return result


def role_watch(args: argparse.Namespace) -> dict:
    """gcm's Event informer alone (slim cache, no controller) until stdin closes: the watch the server
    feeds gcm, one DELETED event per delete, without gcm's reconcilers and deletes."""
    mgr, _ = make_manager(args.kubeconfig, args.workers, build=False)
    ru0 = rusage()
    thread = run_manager(mgr)
    informer = mgr.cache.synced_informer(EV, "Event")
    print("SYNCED", flush=True)
    sys.stdin.read()
    held = len(informer.indexer)
    mgr.stop()
    thread.join(30)
    return {"cpu_seconds": cpu_seconds(rusage_since(ru0)), "held": held}


def role_hold(args: argparse.Namespace) -> dict:
    """Bytes per held event: informer alone, then informer + queue (every non-Shoot event parked)."""
    from gcm.controllers.event import add_to_manager

    if args.tracemalloc:
        tracemalloc.start(1)
    mgr, cfg = make_manager(args.kubeconfig, args.workers, build=False, slim=not args.full_cache)
    mgr.cache.sync_timeout = 3600.0  # tracemalloc slows the initial list down a lot
    non_shoot = sum(1 for i in range(args.events) if not is_shoot_index(i))

    def used() -> int:
        gc.collect()
        return tracemalloc.get_traced_memory()[0] if args.tracemalloc else rss_kb()[0] * 1024

    base = used()
    thread = run_manager(mgr)
    mgr.cache.synced_informer(EV, "Event")
    informer_bytes = used() - base
    add_to_manager(mgr, cfg)
    while metric(mgr, "requeue_after") < non_shoot:
        time.sleep(0.05)
    time.sleep(0.5)  # let the last handler/queue bookkeeping settle
    total_bytes = used() - base
    _, hwm = rss_kb()
    mgr.stop()
    thread.join(30)
    return {
        "informer_per_event": informer_bytes / args.events,
        "total_per_event": total_bytes / args.events,
        "peak_rss_per_event": None if args.tracemalloc else (hwm * 1024 - base) / args.events,
        "parked": metric(mgr, "requeue_after"),
    }


# --- orchestration -------------------------------------------------------------------------------------


# --pin: the server on CPU 0, the measured process on CPU 1 (no GIL hand-offs across cores).
SERVER_CPU, CLIENT_CPU = 0, 1


def client_cpu_flag(args: argparse.Namespace) -> list[str]:
    """The ``--cpu`` of a measured child process: CPU 1 with ``--pin`` or ``--pin-client``."""
    return ["--cpu", str(CLIENT_CPU)] if args.pin or args.pin_client else []


def placement(args: argparse.Namespace) -> str:
    """Where the processes run, for the header line."""
    if args.pin:
        return f"; server on CPU {SERVER_CPU}, measured process on CPU {CLIENT_CPU}"
    if args.pin_client:
        return f"; measured process on CPU {CLIENT_CPU}, server not pinned"
    return ""


class Server:
    def __init__(self, events: int, expired: bool, pin: bool = False) -> None:
        """``pin``: run the server on :data:`SERVER_CPU` (else wherever the scheduler puts it)."""
        cmd = [sys.executable, __file__, "--role", "server", "--events", str(events)]
        if expired:
            cmd.append("--expired")
        if pin:
            cmd += ["--cpu", str(SERVER_CPU)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r}")
        self.kubeconfig = line.split(" ", 1)[1].strip()

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_role(role: str, kubeconfig: str, args: argparse.Namespace, *extra: str) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--role",
        role,
        "--kubeconfig",
        kubeconfig,
        "--events",
        str(args.events),
        "--workers",
        str(args.workers),
        *client_cpu_flag(args),
        *extra,
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=7200)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_on_fresh_server(role: str, args: argparse.Namespace, *extra: str) -> tuple[dict, float]:
    """``role`` against a new server holding the expired events: (its result, the server's CPU seconds)."""
    server = Server(args.events, expired=True, pin=args.pin)
    try:
        cpu0 = server.cpu_seconds()
        result = run_role(role, server.kubeconfig, args, *extra)
        return result, server.cpu_seconds() - cpu0
    finally:
        server.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10,000 events instead of 100,000")
    p.add_argument("--events", type=int, default=None)
    p.add_argument("--workers", type=int, default=5, help="concurrentSyncs (default 5)")
    p.add_argument("--skip-expire", action="store_true")
    p.add_argument("--skip-floor", action="store_true")
    p.add_argument(
        "--skip-tracemalloc", action="store_true", help="hold: RSS only (tracemalloc is slow at 1M events)"
    )
    p.add_argument("--skip-full-cache", action="store_true", help="hold: no default-cache comparison")
    p.add_argument("--skip-hold", action="store_true")
    p.add_argument(
        "--watched-floor",
        action="store_true",
        help="also run the W-thread floor while gcm's Event informer watches the events",
    )
    p.add_argument(
        "--cache-floor",
        action="store_true",
        help="also the floor with gcm's Event informer in its process (lists and watches; no controller)",
    )
    p.add_argument(
        "--pin",
        action="store_true",
        help=f"run the server on CPU {SERVER_CPU} and gcm / the floor on CPU {CLIENT_CPU} (Linux)",
    )
    p.add_argument(
        "--pin-client",
        action="store_true",
        help=f"run gcm / the floor on CPU {CLIENT_CPU} and the server wherever the scheduler puts it",
    )
    p.add_argument("--cpu", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--role", default=None, help=argparse.SUPPRESS)
    p.add_argument("--kubeconfig", default=None, help=argparse.SUPPRESS)
    p.add_argument("--expired", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--tracemalloc", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--full-cache", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.events is None:
        args.events = 10_000 if args.quick else 100_000

    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    if args.role == "server":
        role_server(args)
        return
    if args.role is not None:
        roles = {
            "expire": role_expire,
            "floor": role_floor,
            "cache-floor": role_cache_floor,
            "hold": role_hold,
            "watch": role_watch,
        }
        result = roles[args.role](args)
        print(json.dumps(result))
        return

    n, w = args.events, args.workers
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
        f"{n:,} events ({n // SHOOT_EVERY:,} Shoot events), concurrentSyncs {w}" + placement(args),
        flush=True,
    )
    rows: list[tuple[str, str]] = []

    def row(label: str, value: str) -> None:
        rows.append((label, value))
        print(f"  {label}: {value}", flush=True)

    r: dict[str, Any] = {}
    if not args.skip_expire:
        r, server_cpu = run_on_fresh_server("expire", args)
        row(
            "gcm: expired events until only Shoot events remain",
            f"{r['seconds']:.1f} s ({r['deleted'] / r['seconds']:,.0f} deletes/s;"
            f" list + sync {r['sync_seconds']:.1f} s; errors {r['errors'] or 0:.0f};"
            f" CPU gcm {r['cpu_seconds']:.1f} s ({usage_text(r)}), server {server_cpu:.1f} s)",
        )
        row("gcm: peak RSS above baseline per cached event (expire run)", f"{r['peak_rss_per_event']:,.0f} B")

    if not args.skip_floor:
        for threads in sorted({1, w}):
            f, server_cpu = run_on_fresh_server("floor", args, "--threads", str(threads))
            row(
                f"floor: list + plain DELETE loop, {threads} thread{'s' if threads > 1 else ''}",
                f"{f['seconds']:.1f} s ({f['deleted'] / f['seconds']:,.0f} deletes/s;"
                f" list {f['list_seconds']:.1f} s; CPU client {f['cpu_seconds']:.1f} s"
                f" ({usage_text(f)}), server {server_cpu:.1f} s)"
                + (f"; gcm / floor = {r['seconds'] / f['seconds']:.2f}" if r else ""),
            )

    if args.cache_floor:
        f, server_cpu = run_on_fresh_server("cache-floor", args, "--threads", str(w))
        row(
            f"cache floor: gcm's Event informer + plain DELETE loop, {w} threads, one process",
            f"{f['seconds']:.1f} s ({f['deleted'] / f['seconds']:,.0f} deletes/s;"
            f" CPU client {f['cpu_seconds']:.1f} s ({usage_text(f)}), server {server_cpu:.1f} s)"
            + (f"; gcm / cache floor = {r['seconds'] / f['seconds']:.2f}" if r else ""),
        )

    if args.watched_floor:
        # Where the gap between gcm and the floor is: the same floor while gcm's informer watches.
        server = Server(n, expired=True, pin=args.pin)
        try:
            watcher = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--role",
                    "watch",
                    "--kubeconfig",
                    server.kubeconfig,
                    "--events",
                    str(n),
                    *client_cpu_flag(args),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert watcher.stdin is not None and watcher.stdout is not None
            if watcher.stdout.readline().strip() != "SYNCED":
                raise RuntimeError("the watching informer did not sync")
            cpu0 = server.cpu_seconds()
            f = run_role("floor", server.kubeconfig, args, "--threads", str(w))
            server_cpu = server.cpu_seconds() - cpu0
            watcher.stdin.close()
            watched = json.loads(watcher.stdout.read().strip().splitlines()[-1])
            watcher.wait(60)
        finally:
            server.close()
        row(
            f"floor, {w} threads, while gcm's Event informer watches (another process)",
            f"{f['seconds']:.1f} s ({f['deleted'] / f['seconds']:,.0f} deletes/s; CPU client"
            f" {f['cpu_seconds']:.1f} s, informer {watched['cpu_seconds']:.1f} s, server {server_cpu:.1f} s)"
            + (f"; gcm / watched floor = {r['seconds'] / f['seconds']:.2f}" if r else ""),
        )

    if not args.skip_hold:
        server = Server(n, expired=False, pin=args.pin)
        try:
            if not args.skip_tracemalloc:
                slim = run_role("hold", server.kubeconfig, args, "--tracemalloc")
                full = (
                    None
                    if args.skip_full_cache
                    else run_role("hold", server.kubeconfig, args, "--tracemalloc", "--full-cache")
                )
            rss = run_role("hold", server.kubeconfig, args)
        finally:
            server.close()
        if not args.skip_tracemalloc:
            row(
                "held event, slim cache (tracemalloc): informer / informer + queue",
                f"{slim['informer_per_event']:,.0f} B / {slim['total_per_event']:,.0f} B",
            )
            if full is not None:
                row(
                    "held event, default cache (tracemalloc): informer / informer + queue",
                    f"{full['informer_per_event']:,.0f} B / {full['total_per_event']:,.0f} B",
                )
        row(
            "held event, slim cache (RSS): steady / peak above baseline",
            f"{rss['total_per_event']:,.0f} B / {rss['peak_rss_per_event']:,.0f} B",
        )

    print("\n| measurement | result |\n|---|---|")
    for label, value in rows:
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()
