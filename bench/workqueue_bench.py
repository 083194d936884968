"""Workqueue throughput: ``framework.workqueue.Queue`` add+get+done cycles per second against
``queue.Queue`` put+get+task_done, measured in the same run. Target: ratio >= 0.5.

Run: ``.venv/bin/python bench/workqueue_bench.py [--cycles N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import queue as stdlib_queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from framework.workqueue import Queue, RateLimitingQueue


@dataclass(frozen=True)
class Row:
    scenario: str
    ours: float
    stdlib: float

    @property
    def ratio(self) -> float:
        return self.ours / self.stdlib


def single_thread_ours(q: Queue[int], n: int) -> None:
    add, get, done = q.add, q.get, q.done
    for i in range(n):
        add(i)
        item, _ = get()
        done(item)


def single_thread_stdlib(n: int) -> None:
    q: stdlib_queue.Queue[int] = stdlib_queue.Queue()
    put, get, task_done = q.put, q.get, q.task_done
    for i in range(n):
        put(i)
        get()
        task_done()


def producer_consumer_ours(q: Queue[int], n: int) -> None:
    def consume() -> None:
        get, done = q.get, q.done
        for _ in range(n):
            item, _ = get()
            done(item)

    consumer = threading.Thread(target=consume, name="bench-consumer")
    consumer.start()
    add = q.add
    for i in range(n):
        add(i)
    consumer.join(600)


def producer_consumer_stdlib(n: int) -> None:
    q: stdlib_queue.Queue[int] = stdlib_queue.Queue()

    def consume() -> None:
        get, task_done = q.get, q.task_done
        for _ in range(n):
            get()
            task_done()

    consumer = threading.Thread(target=consume, name="bench-consumer")
    consumer.start()
    put = q.put
    for i in range(n):
        put(i)
    consumer.join(600)


def rate(fn: Callable[[], None], n: int, repeat: int) -> float:
    """Best cycles/s over ``repeat`` runs (best-of filters scheduler noise)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return n / best


def run(n: int, repeat: int) -> list[Row]:
    registry = CollectorRegistry()
    ours_variants: list[tuple[str, Callable[[], Queue[int]]]] = [
        ("Queue", lambda: Queue()),
        ("Queue (named: metrics)", lambda: Queue("bench", registry=registry)),
        ("RateLimitingQueue", lambda: RateLimitingQueue()),
    ]
    rows = []
    for label, make in ours_variants:
        rows.append(
            Row(
                f"single thread, {label}",
                rate(lambda make=make: single_thread_ours(make(), n), n, repeat),
                rate(lambda: single_thread_stdlib(n), n, repeat),
            )
        )
    for label, make in ours_variants:
        rows.append(
            Row(
                f"producer/consumer, {label}",
                rate(lambda make=make: producer_consumer_ours(make(), n), n, repeat),
                rate(lambda: producer_consumer_stdlib(n), n, repeat),
            )
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = run(args.cycles, args.repeat)
    width = max(len(row.scenario) for row in rows)
    out = sys.stdout
    out.write(f"python {sys.version.split()[0]}, {args.cycles} cycles, best of {args.repeat}\n")
    out.write(f"{'scenario':<{width}}  {'ours cycles/s':>14}  {'queue.Queue/s':>14}  {'ratio':>6}\n")
    for row in rows:
        out.write(f"{row.scenario:<{width}}  {row.ours:>14,.0f}  {row.stdlib:>14,.0f}  {row.ratio:>5.2f}x\n")
    worst = min(row.ratio for row in rows if "metrics" not in row.scenario)
    out.write(f"worst ratio without metrics: {worst:.2f}x (target >= 0.5x)\n")
    return 0 if worst >= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
