"""framework.workqueue.DelayingQueue driven by a FakeClock: ordering, earliest-time dedup, shutdown."""

from __future__ import annotations

import threading

from framework.clock import FakeClock
from framework.workqueue import DelayingQueue


def drain(q: DelayingQueue[str]) -> list[str]:
    items = []
    while len(q):
        item, _ = q.get()
        items.append(item)
        q.done(item)
    return items


def test_non_positive_delay_adds_immediately(make_queue, clock: FakeClock) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add_after("zero", 0)
    q.add_after("negative", -1)
    assert drain(q) == ["zero", "negative"]
    assert not clock.has_waiters()


def test_items_become_available_in_ready_time_order(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add_after("c", 3)
    q.add_after("a", 1)
    q.add_after("b", 2)
    assert len(q) == 0
    assert clock.wait_for_waiters(1)
    clock.step(0.999)
    assert clock.wait_for_waiters(1)
    assert len(q) == 0
    clock.step(0.001)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["a"]
    clock.step(5)
    eventually(lambda: len(q) == 2)
    assert drain(q) == ["b", "c"]


def test_same_ready_time_keeps_insertion_order(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    for item in ["x", "y", "z"]:
        q.add_after(item, 1)
    clock.step(1)
    eventually(lambda: len(q) == 3)
    assert drain(q) == ["x", "y", "z"]


def test_duplicate_keeps_the_earliest_time(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add_after("x", 5)
    q.add_after("x", 2)  # earlier: replaces the 5 s entry
    q.add_after("x", 4)  # later: ignored
    q.add_after("sentinel", 6)
    clock.step(2)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["x"]
    # The timer thread serves entries in ready-time order, so once the sentinel (6 s) arrives every
    # earlier entry (the superseded x at 4 s and 5 s) has been looked at.
    clock.step(4)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["sentinel"]


def test_superseded_entry_does_not_fire_a_later_re_add(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add_after("x", 5)
    q.add_after("x", 2)  # supersedes the 5 s entry, which stays in the heap until its time
    clock.step(2)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["x"]
    q.add_after("x", 10)  # due at 12 s: the stale 5 s entry must not hand it out at 5 s
    q.add_after("sentinel", 4)  # due at 6 s, after the stale entry
    clock.step(4)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["sentinel"]
    clock.step(6)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["x"]


def test_delayed_item_already_queued_is_not_duplicated(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add("x")
    q.add_after("x", 1)
    q.add_after("sentinel", 1)
    clock.step(1)
    eventually(lambda: len(q) == 2)
    assert drain(q) == ["x", "sentinel"]


def test_new_earlier_item_wakes_the_timer(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add_after("late", 100)
    assert clock.wait_for_waiters(1)
    q.add_after("early", 1)
    clock.step(1)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["early"]


def test_timer_thread_is_named_started_lazily_and_stopped(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(name="lazy", clock=clock)
    names = lambda: {t.name for t in threading.enumerate()}  # noqa: E731
    assert "workqueue-delay-lazy" not in names()
    q.add_after("x", 10)
    assert "workqueue-delay-lazy" in names()
    assert clock.wait_for_waiters(1)
    q.shut_down()
    assert "workqueue-delay-lazy" not in names()
    assert not clock.has_waiters()


def test_shut_down_discards_waiting_items_and_ignores_new_ones(make_queue, clock: FakeClock) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    q.add_after("x", 1)
    q.shut_down()
    q.add_after("y", 1)
    q.add_after("z", 0)
    clock.step(10)
    assert len(q) == 0
    assert q.get() == (None, True)


def test_shut_down_with_drain_stops_the_timer(clock: FakeClock) -> None:
    q: DelayingQueue[str] = DelayingQueue(name="drained", clock=clock)
    q.add("a")
    q.get()
    q.add_after("b", 1)
    done = threading.Event()
    threading.Thread(target=lambda: (q.shut_down_with_drain(), done.set()), name="drainer").start()
    assert not done.wait(0.02)
    q.done("a")
    assert done.wait(1.0)
    assert "workqueue-delay-drained" not in {t.name for t in threading.enumerate()}


def test_many_delayed_items_arrive_in_order(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    delays = [(i * 7919) % 1000 / 10 + 0.1 for i in range(500)]
    for i, delay in enumerate(delays):
        q.add_after(f"item-{i}", delay)
    clock.step(101)
    eventually(lambda: len(q) == 500)
    expected = [f"item-{i}" for i, _ in sorted(enumerate(delays), key=lambda pair: (pair[1], pair[0]))]
    assert drain(q) == expected


def test_timer_thread_survives_a_failing_iteration(make_queue, clock: FakeClock, eventually) -> None:
    q = make_queue(DelayingQueue, clock=clock)
    real_add = q.add
    calls: list[str] = []

    def flaky_add(item: str) -> None:
        calls.append(item)
        if item == "boom":
            raise RuntimeError("injected")
        real_add(item)

    q.add = flaky_add
    q.add_after("boom", 1)
    clock.step(1)
    eventually(lambda: calls == ["boom"])
    q.add_after("after", 1)
    clock.step(1)
    eventually(lambda: len(q) == 1)
    assert drain(q) == ["after"]
