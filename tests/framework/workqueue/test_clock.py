"""framework.clock: RealClock basics and FakeClock's step/set/timer/sleep/wait contracts."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from framework.clock import Clock, FakeClock, RealClock, Timer


def start_thread(target, name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread


# --- RealClock ---------------------------------------------------------------------------------


def test_real_clock_reads_system_time() -> None:
    clock = RealClock()
    now = clock.now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
    assert abs((datetime.now(UTC) - now).total_seconds()) < 1
    first = clock.monotonic()
    assert clock.monotonic() >= first
    assert isinstance(clock, Clock)


def test_real_clock_timer_fires_and_cancel_prevents() -> None:
    clock = RealClock()
    fired = threading.Event()
    timer = clock.after(0.0, fired.set, name="test-timer")
    assert isinstance(timer, Timer)
    assert fired.wait(1.0)
    assert timer.cancel() is False

    never = threading.Event()
    timer = clock.after(10.0, never.set)
    assert timer.cancel() is True
    assert timer.cancel() is False
    assert not never.wait(0.01)


def test_real_clock_waits_time_out_and_wake() -> None:
    clock = RealClock()
    event = threading.Event()
    assert clock.wait(event, 0.005) is False
    event.set()
    assert clock.wait(event, 1.0) is True
    cond = threading.Condition()
    with cond:
        assert clock.wait(cond, 0.005) is False
        assert clock.wait_until(cond, clock.monotonic() - 1) is False
    clock.sleep(0.001)
    clock.sleep(-1)


# --- FakeClock: time -----------------------------------------------------------------------------


def test_fake_clock_starts_where_told_and_steps() -> None:
    start = datetime(2030, 5, 1, 12, tzinfo=UTC)
    clock = FakeClock(start=start)
    assert clock.now() == start
    assert clock.monotonic() == 0.0
    clock.step(1.5)
    assert clock.now() == start + timedelta(seconds=1.5)
    assert clock.monotonic() == 1.5
    assert clock.since(0.5) == 1.0
    with pytest.raises(ValueError):
        clock.step(-1)
    with pytest.raises(ValueError):
        FakeClock(start=datetime(2030, 1, 1))


def test_fake_clock_set_forward_fires_and_backward_keeps_monotonic() -> None:
    clock = FakeClock()
    fired: list[float] = []
    clock.after(10, lambda: fired.append(clock.monotonic()))
    target = clock.now() + timedelta(seconds=30)
    clock.set(target)
    assert clock.now() == target
    assert clock.monotonic() == 30
    assert fired == [10]

    earlier = target - timedelta(hours=1)
    clock.set(earlier)
    assert clock.now() == earlier
    assert clock.monotonic() == 30


# --- FakeClock: timers --------------------------------------------------------------------------


def test_fake_timers_fire_in_due_order_at_their_due_time() -> None:
    clock = FakeClock()
    fired: list[tuple[str, float]] = []
    for name, delay in [("c", 3), ("a", 1), ("b", 2), ("a2", 1), ("late", 10)]:
        clock.after(delay, lambda name=name: fired.append((name, clock.monotonic())))
    assert clock.has_waiters() and clock.waiter_count() == 5
    clock.step(0.5)
    assert fired == []
    clock.step(2.5)
    assert fired == [("a", 1), ("a2", 1), ("b", 2), ("c", 3)]
    assert clock.monotonic() == 3
    assert clock.waiter_count() == 1
    clock.step(7)
    assert fired[-1] == ("late", 10)
    assert not clock.has_waiters()


def test_fake_timer_cancel_and_zero_delay() -> None:
    clock = FakeClock()
    fired: list[str] = []
    timer = clock.after(1, lambda: fired.append("cancelled"))
    assert timer.cancel() is True
    assert timer.cancel() is False
    assert not clock.has_waiters()
    now = clock.after(0, lambda: fired.append("now"))
    clock.step(0)
    assert fired == ["now"]
    assert now.cancel() is False


def test_timer_scheduled_by_a_callback_fires_within_the_same_step() -> None:
    clock = FakeClock()
    fired: list[float] = []

    def first() -> None:
        fired.append(clock.monotonic())
        clock.after(1, lambda: fired.append(clock.monotonic()))

    clock.after(1, first)
    clock.step(5)
    assert fired == [1, 2]


def test_failing_callback_does_not_stop_the_step() -> None:
    clock = FakeClock()
    fired: list[int] = []

    def boom() -> None:
        raise RuntimeError("boom")

    clock.after(1, boom)
    clock.after(2, lambda: fired.append(2))
    clock.step(2)
    assert fired == [2]


# --- FakeClock: blocking -------------------------------------------------------------------------


def test_sleep_wakes_exactly_when_its_time_is_reached() -> None:
    clock = FakeClock()
    woke = threading.Event()
    thread = start_thread(lambda: (clock.sleep(5), woke.set()), "sleeper")
    assert clock.wait_for_waiters(1)
    clock.step(4.999)
    assert not woke.wait(0.01)
    clock.step(0.001)
    assert woke.wait(1.0)
    thread.join(1.0)
    clock.sleep(0)  # no-op, returns at once


def test_condition_wait_times_out_on_step_and_returns_true_when_notified() -> None:
    clock = FakeClock()
    cond = threading.Condition()
    results: list[bool] = []

    def waiter() -> None:
        with cond:
            results.append(clock.wait(cond, 2.0))

    thread = start_thread(waiter, "cond-waiter")
    assert clock.wait_for_waiters(1)
    clock.step(2)
    thread.join(1.0)
    assert results == [False]

    thread = start_thread(waiter, "cond-waiter")
    assert clock.wait_for_waiters(1)
    with cond:
        cond.notify_all()
    thread.join(1.0)
    assert results == [False, True]
    assert not clock.has_waiters()


def test_condition_wait_until_past_deadline_returns_at_once() -> None:
    clock = FakeClock()
    clock.step(10)
    cond = threading.Condition()
    with cond:
        assert clock.wait_until(cond, 5.0) is False
        assert clock.wait_until(cond, 10.0) is False


def test_event_wait_on_fake_clock() -> None:
    clock = FakeClock()
    event = threading.Event()
    results: list[bool] = []
    thread = start_thread(lambda: results.append(clock.wait(event, 3)), "event-waiter")
    assert clock.wait_for_waiters(1)
    clock.step(3)
    thread.join(1.0)
    assert results == [False]

    thread = start_thread(lambda: results.append(clock.wait(event, 3)), "event-waiter")
    assert clock.wait_for_waiters(1)
    event.set()
    thread.join(1.0)
    assert results == [False, True]
    assert clock.wait(event, 0) is True


def test_wait_for_waiters_times_out() -> None:
    assert FakeClock().wait_for_waiters(1, timeout=0.01) is False


def test_fake_clock_is_thread_safe_under_concurrent_timers_and_steps() -> None:
    clock = FakeClock()
    fired = []
    lock = threading.Lock()

    def schedule(offset: int) -> None:
        for i in range(200):
            clock.after((i % 7) + offset * 0.001, lambda: (lock.acquire(), fired.append(1), lock.release()))

    threads = [start_thread(lambda o=o: schedule(o), f"scheduler-{o}") for o in range(4)]
    stepper = start_thread(lambda: [clock.step(0.01) for _ in range(100)], "stepper")
    for thread in [*threads, stepper]:
        thread.join(5.0)
    clock.step(10)
    assert len(fired) == 800
    assert not clock.has_waiters()
