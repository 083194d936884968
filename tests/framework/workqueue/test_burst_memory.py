"""After a burst drains, the queues give back its memory (CPython never shrinks a dict or set).

An informer's initial list of a million Events passes through the DeltaFIFO and the work queue once;
what stays allocated afterwards must not grow with the burst. Measured with tracemalloc, counting only
what the queue modules themselves allocated (not the test's items, nor any other thread's work).
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import CollectorRegistry

from framework.cache import DeltaFIFO
from framework.clock import FakeClock
from framework.workqueue import DelayingQueue, Queue

# Large enough that a table kept at the burst's size (a dict or set of 20 000 keys: 0.6-1 MB) is well
# over KEPT_BYTES; tracemalloc makes every item slow, so no larger (50 000 took half a minute in CI).
BURST = 20_000
# What a drained queue may keep: far below the ~40 bytes per burst item (800 kB) a kept table costs.
KEPT_BYTES = 200_000


QUEUE_MODULES = [
    tracemalloc.Filter(True, f"*/framework/{path}")
    for path in (
        "workqueue/queue.py",
        "workqueue/metrics.py",
        "workqueue/delaying_queue.py",
        "cache/delta_fifo.py",
    )
]


@pytest.fixture
def traced() -> Iterator[Callable[[], int]]:
    tracemalloc.start()

    def used() -> int:
        """Bytes now held by allocations made in the queue modules."""
        gc.collect()
        snapshot = tracemalloc.take_snapshot().filter_traces(QUEUE_MODULES)
        return sum(stat.size for stat in snapshot.statistics("filename"))

    try:
        yield used
    finally:
        tracemalloc.stop()


def test_work_queue_with_metrics_gives_back_a_drained_burst(traced) -> None:
    items = [f"ns/event-{i}" for i in range(BURST)]
    q: Queue[str] = Queue(name="burst", registry=CollectorRegistry())
    base = traced()
    for item in items:
        q.add(item)
    assert traced() - base > BURST * 20  # the burst is held while queued
    for _ in items:
        item, _shutdown = q.get()
        q.done(item)
    assert len(q) == 0
    assert traced() - base < KEPT_BYTES
    q.add("again")  # still a working queue
    assert q.get() == ("again", False)


def test_delaying_queue_gives_back_fired_items(traced) -> None:
    clock = FakeClock()
    items = [f"ns/event-{i}" for i in range(BURST)]
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    try:
        q.add_after("warm-up", 1)  # start the timer thread before the baseline
        clock.step(1)
        assert q.get() == ("warm-up", False)
        q.done("warm-up")
        base = traced()
        for i, item in enumerate(items):
            q.add_after(item, 10 + i % 100)
        clock.step(200)
        for _ in items:
            item, _shutdown = q.get()
            q.done(item)
        assert traced() - base < KEPT_BYTES
    finally:
        q.shut_down()


def test_delta_fifo_gives_back_a_drained_initial_list(traced) -> None:
    objs = [
        {"metadata": {"name": f"event-{i}", "namespace": "ns", "resourceVersion": "1"}} for i in range(BURST)
    ]
    fifo = DeltaFIFO()
    base = traced()
    fifo.replace(objs, "1")
    for _ in objs:
        assert fifo.pop(lambda deltas, initial: None, timeout=0) is not None
    assert traced() - base < KEPT_BYTES
