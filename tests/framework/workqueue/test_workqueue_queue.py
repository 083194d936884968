"""framework.workqueue.Queue: client-go's dirty/processing contracts and shutdown."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from framework.clock import FakeClock
from framework.workqueue import Queue


def start_thread(target, name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread


def test_fifo_order_and_len() -> None:
    q: Queue[str] = Queue()
    for item in "abc":
        q.add(item)
    assert len(q) == 3
    assert [q.get() for _ in range(3)] == [("a", False), ("b", False), ("c", False)]
    assert len(q) == 0


def test_add_of_a_waiting_item_is_a_no_op() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.add("a")
    assert len(q) == 2
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)


def test_adds_while_processing_collapse_into_one_rerun() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    assert q.get() == ("a", False)
    for _ in range(5):
        q.add("a")
    # Not handed out again while it is being processed.
    assert len(q) == 0
    q.done("a")
    assert len(q) == 1
    assert q.get() == ("a", False)
    q.done("a")
    assert len(q) == 0


def test_done_without_readd_does_not_requeue() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    q.get()
    q.done(1)
    q.done(1)  # a second done is harmless
    assert len(q) == 0


def test_item_readded_while_processing_goes_behind_waiting_items() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    q.add("a")
    q.add("b")
    q.done("a")
    assert q.get() == ("b", False)
    assert q.get() == ("a", False)


def test_get_blocks_until_add() -> None:
    q: Queue[str] = Queue()
    got: list[tuple[str | None, bool]] = []
    thread = start_thread(lambda: got.append(q.get()), "getter")
    thread.join(0.02)
    assert thread.is_alive() and got == []
    q.add("x")
    thread.join(1.0)
    assert got == [("x", False)]


def test_shut_down_wakes_all_blocked_getters() -> None:
    q: Queue[str] = Queue()
    got: list[tuple[str | None, bool]] = []
    threads = [start_thread(lambda: got.append(q.get()), f"getter-{i}") for i in range(3)]
    time.sleep(0.01)
    q.shut_down()
    for thread in threads:
        thread.join(1.0)
    assert got == [(None, True)] * 3
    assert q.shutting_down()


def test_shut_down_still_drains_queued_items_and_ignores_new_adds() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    assert not q.shutting_down()
    q.shut_down()
    q.add("c")
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)
    assert q.get() == (None, True)


def test_dirty_item_done_after_shut_down_is_still_handed_out() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    q.add("a")
    q.shut_down()
    q.done("a")
    assert q.get() == ("a", False)
    q.done("a")
    assert q.get() == (None, True)


def test_shut_down_with_drain_waits_for_in_flight_items() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.get()
    q.get()
    results: list[bool] = []
    drainer = start_thread(lambda: results.append(q.shut_down_with_drain()), "drainer")
    drainer.join(0.02)
    assert drainer.is_alive()
    assert q.shutting_down()
    q.done("a")
    drainer.join(0.02)
    assert drainer.is_alive()
    q.done("b")
    drainer.join(1.0)
    assert not drainer.is_alive()
    assert results == [True]


def test_shut_down_with_drain_returns_at_once_when_idle() -> None:
    q: Queue[str] = Queue()
    q.add("queued-only")
    assert q.shut_down_with_drain() is True
    assert q.get() == ("queued-only", False)


def test_shut_down_with_drain_times_out_on_the_queue_clock() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock)
    q.add("a")
    q.get()
    results: list[bool] = []
    drainer = start_thread(lambda: results.append(q.shut_down_with_drain(timeout=5)), "drainer")
    assert clock.wait_for_waiters(1)
    clock.step(5)
    drainer.join(1.0)
    assert results == [False]


def test_shut_down_cancels_a_waiting_drain() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    results: list[bool] = []
    drainer = start_thread(lambda: results.append(q.shut_down_with_drain()), "drainer")
    drainer.join(0.02)
    q.shut_down()
    drainer.join(1.0)
    assert results == [False]


def test_getters_keep_serving_during_a_drain() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    q.add("a")  # dirty: requeued by done during the drain
    results: list[bool] = []
    drainer = start_thread(lambda: results.append(q.shut_down_with_drain()), "drainer")
    drainer.join(0.02)
    q.done("a")
    assert q.get() == ("a", False)
    drainer.join(0.02)
    assert drainer.is_alive()
    q.done("a")
    drainer.join(1.0)
    assert results == [True]
    assert q.get() == (None, True)


@settings(max_examples=40, deadline=None)
@given(
    adds=st.lists(st.integers(min_value=0, max_value=7), min_size=1, max_size=150),
    workers=st.integers(min_value=2, max_value=6),
    yield_every=st.integers(min_value=1, max_value=10),
)
def test_an_item_is_never_processed_concurrently_and_latest_add_is_seen(
    adds: list[int], workers: int, yield_every: int
) -> None:
    q: Queue[int] = Queue()
    lock = threading.Lock()
    active: set[int] = set()
    overlaps: list[int] = []
    version: dict[int, int] = defaultdict(int)
    seen: dict[int, int] = defaultdict(int)
    runs: dict[int, int] = defaultdict(int)

    def worker() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            with lock:
                if item in active:
                    overlaps.append(item)
                active.add(item)
                seen[item] = max(seen[item], version[item])
                runs[item] += 1
            time.sleep(0)  # let other workers and the producer interleave with the "work"
            with lock:
                active.discard(item)
            q.done(item)

    threads = [start_thread(worker, f"worker-{i}") for i in range(workers)]
    for n, item in enumerate(adds):
        with lock:
            version[item] += 1
        q.add(item)
        if n % yield_every == 0:
            time.sleep(0)
    q.shut_down_with_drain(timeout=5)
    for thread in threads:
        thread.join(5.0)
    assert not any(thread.is_alive() for thread in threads)
    assert overlaps == []
    # Level-triggered: some run of every item observed the state of its last add.
    assert dict(seen) == dict(version)
    for item, count in runs.items():
        assert 1 <= count <= version[item]
    assert len(q) == 0
