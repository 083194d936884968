"""Reconciles per second of a no-op reconciler through ``Controller`` (queue + workers + metrics).

Compares, in one run: calling the reconciler in a plain loop, and the controller with 1 and 10
workers over N requests. The ratio is the framework's overhead per reconcile.

    python bench/controller_bench.py [--n 10000]
"""

from __future__ import annotations

import argparse
import threading
import time

from prometheus_client import CollectorRegistry

from framework.controller import Controller
from framework.reconcile import Request


class NoOp:
    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.lock = threading.Lock()
        self.done = threading.Event()

    def reconcile(self, request: Request) -> None:
        with self.lock:
            self.count += 1
            if self.count == self.n:
                self.done.set()


def loop(n: int) -> float:
    rec = NoOp(n)
    requests = [Request(f"obj-{i}", "default") for i in range(n)]
    start = time.perf_counter()
    for r in requests:
        rec.reconcile(r)
    return time.perf_counter() - start


def controller(n: int, workers: int) -> float:
    rec = NoOp(n)
    ctrl = Controller(
        f"bench-{workers}", rec, max_concurrent_reconciles=workers, registry=CollectorRegistry()
    )
    requests = [Request(f"obj-{i}", "default") for i in range(n)]
    start = time.perf_counter()
    ctrl.start()
    for r in requests:
        ctrl.queue.add(r)
    assert rec.done.wait(300), "not all requests were reconciled"
    elapsed = time.perf_counter() - start
    ctrl.stop(5)
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=10_000)
    n = p.parse_args().n
    base = loop(n)
    rows = [("plain loop", base)] + [(f"Controller, {w} worker(s)", controller(n, w)) for w in (1, 10)]
    print(f"{'variant':<28}{'reconciles/s':>14}{'µs/reconcile':>14}{'× loop time':>13}")
    for name, t in rows:
        print(f"{name:<28}{n / t:>14,.0f}{t / n * 1e6:>14.1f}{t / base:>13.1f}")


if __name__ == "__main__":
    main()
