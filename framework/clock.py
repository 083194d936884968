"""Clocks: every time-based piece of the framework takes one, so tests control time instead of sleeping.

``RealClock`` reads the system clocks. ``FakeClock`` only moves when a test calls ``step()`` or ``set()``;
timers that became due then fire in due order, and threads blocked in ``sleep()`` or in a timed
``wait()``/``wait_until()`` on that clock wake up.

Blocking on a condition with a timeout goes through the clock::

    with cond:
        while not ready():
            if not clock.wait(cond, timeout=remaining):  # False: the timeout elapsed (on this clock)
                break

Deadlines are ``monotonic()`` values; prefer ``wait_until(cond, deadline)`` over ``wait(cond, timeout)``
in loops, because an absolute deadline computed once cannot be pushed back by a concurrent ``step()``.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, runtime_checkable

import structlog

__all__ = ["Clock", "FakeClock", "RealClock", "Timer", "Waitable"]

log = structlog.get_logger(__name__)

# How often a FakeClock wait on a threading.Event re-checks the event: Events have no hook to be
# woken by the clock, so the waiting thread polls in short real-time slices.
_EVENT_POLL_SECONDS = 0.001


@runtime_checkable
class Timer(Protocol):
    """A pending call scheduled with ``Clock.after()``."""

    def cancel(self) -> bool:
        """Stop the timer; True if that prevented the call (it had neither fired nor been cancelled)."""
        ...


class Waitable(Protocol):
    """``threading.Event`` or ``threading.Condition`` (anything whose ``wait(timeout)`` returns a bool)."""

    def wait(self, timeout: float | None = None) -> bool: ...


def _is_condition(waitable: Any) -> bool:
    return hasattr(waitable, "notify_all")


class Clock(ABC):
    """Source of time: wall clock, monotonic clock, sleeping, timers and timed waits."""

    @abstractmethod
    def now(self) -> datetime:
        """Current wall-clock time, timezone-aware UTC."""

    @abstractmethod
    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards; only differences are meaningful."""

    @abstractmethod
    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds`` of this clock's time."""

    @abstractmethod
    def after(self, seconds: float, fn: Callable[[], object], *, name: str | None = None) -> Timer:
        """Call ``fn()`` once, ``seconds`` from now; ``name`` names the thread where one is used."""

    @abstractmethod
    def wait_until(self, waitable: Waitable, deadline: float | None) -> bool:
        """Wait on ``waitable`` until it is signalled or ``monotonic()`` reaches ``deadline``.

        For a ``threading.Condition`` the caller holds its lock, exactly as for ``Condition.wait``; the
        result is False when the deadline passed. For a ``threading.Event`` the result is whether the
        event is set. ``deadline=None`` waits without a timeout.
        """

    def wait(self, waitable: Waitable, timeout: float | None = None) -> bool:
        """``wait_until`` with a deadline ``timeout`` seconds from now (None: no timeout)."""
        deadline = None if timeout is None else self.monotonic() + timeout
        return self.wait_until(waitable, deadline)

    def since(self, start: float) -> float:
        """Seconds elapsed since the ``monotonic()`` value ``start``."""
        return self.monotonic() - start


class _RealTimer:
    """A timer on its own daemon thread; ``cancel()`` wakes the thread so it exits at once."""

    def __init__(self, seconds: float, fn: Callable[[], object], name: str) -> None:
        self._fn = fn
        self._seconds = seconds
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._fired = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._cancelled.wait(max(self._seconds, 0.0)):
            return
        with self._lock:
            if self._cancelled.is_set():
                return
            self._fired = True
        try:
            self._fn()
        except Exception:
            log.exception("clock timer callback failed", thread=self._thread.name)

    def cancel(self) -> bool:
        with self._lock:
            if self._fired or self._cancelled.is_set():
                return False
            self._cancelled.set()
            return True


class RealClock(Clock):
    """The system clocks (``datetime.now(UTC)``, ``time.monotonic()``, ``time.sleep()``)."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    # The builtin itself, not a method calling it: the controller machinery reads the clock several
    # times per item, and a Python frame costs more than the read.
    monotonic = staticmethod(time.monotonic)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def after(self, seconds: float, fn: Callable[[], object], *, name: str | None = None) -> Timer:
        return _RealTimer(seconds, fn, name or "clock-timer")

    def wait_until(self, waitable: Waitable, deadline: float | None) -> bool:
        if deadline is None:
            return waitable.wait()
        return waitable.wait(max(deadline - time.monotonic(), 0.0))


@dataclass(eq=False)
class _FakeWaiter:
    """Something registered on a FakeClock: a timer callback (run by the stepping thread) or a wake-up."""

    deadline: float
    fire: Callable[[], object]
    done: bool = field(default=False)


class _FakeTimer:
    def __init__(self, clock: FakeClock, waiter: _FakeWaiter) -> None:
        self._clock = clock
        self._waiter = waiter

    def cancel(self) -> bool:
        return self._clock._cancel(self._waiter)


class FakeClock(Clock):
    """A clock that moves only when told to; for tests. Thread-safe.

    ``step(seconds)`` advances both clocks and, in order of due time, runs timer callbacks (on the
    stepping thread) and wakes threads blocked in ``sleep()``/``wait()``/``wait_until()`` whose deadline
    was reached. A timer created with a delay <= 0 fires on the next ``step()``/``set()`` (even
    ``step(0)``). ``monotonic()`` starts at 0.0.
    """

    def __init__(self, start: datetime | None = None) -> None:
        if start is None:
            start = datetime(2024, 1, 1, tzinfo=UTC)
        elif start.tzinfo is None:
            raise ValueError("FakeClock start must be timezone-aware")
        self._start = start.astimezone(UTC)
        self._wall_offset = timedelta(0)  # set() moving the wall clock back leaves monotonic alone
        self._mono = 0.0
        # Guards time and the waiter heap; never held while running callbacks or taking a caller's lock.
        self._lock = threading.Condition(threading.Lock())
        self._step_lock = threading.RLock()  # one step at a time; callbacks may step again
        self._heap: list[tuple[float, int, _FakeWaiter]] = []
        self._seq = itertools.count()
        self._active = 0
        self._cancelled_in_heap = 0

    # --- reading ---------------------------------------------------------------------------------

    def now(self) -> datetime:
        with self._lock:
            return self._now_locked()

    def _now_locked(self) -> datetime:
        return self._start + timedelta(seconds=self._mono) + self._wall_offset

    def monotonic(self) -> float:
        with self._lock:
            return self._mono

    def has_waiters(self) -> bool:
        """True while a timer is pending or a thread is blocked on this clock with a deadline."""
        with self._lock:
            return self._active > 0

    def waiter_count(self) -> int:
        """Pending timers plus threads blocked on this clock with a deadline."""
        with self._lock:
            return self._active

    def wait_for_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block (real time) until at least ``count`` waiters are registered; False on timeout.

        Lets a test step only once the thread under test is parked on the clock.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._active < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(remaining)
            return True

    # --- moving time -----------------------------------------------------------------------------

    def step(self, seconds: float) -> None:
        """Advance time by ``seconds`` (>= 0), firing everything that became due, in due order."""
        if seconds < 0:
            raise ValueError("FakeClock.step needs seconds >= 0")
        with self._step_lock:
            with self._lock:
                target = self._mono + seconds
            self._advance_to(target)

    def set(self, when: datetime) -> None:
        """Set the wall clock to ``when``; moving forward steps by the difference, backward only
        moves ``now()`` (monotonic time never goes back)."""
        if when.tzinfo is None:
            raise ValueError("FakeClock.set needs a timezone-aware datetime")
        with self._step_lock:
            with self._lock:
                delta = (when - self._now_locked()).total_seconds()
                if delta < 0:
                    self._wall_offset += when - self._now_locked()
                    return
                target = self._mono + delta
            self._advance_to(target)
            with self._lock:
                # Float seconds round to microseconds; land exactly on the requested instant.
                self._wall_offset += when - self._now_locked()

    def _advance_to(self, target: float) -> None:
        while True:
            with self._lock:
                waiter = self._pop_due_locked(target)
                if waiter is None:
                    self._mono = max(self._mono, target)
                    return
                self._mono = max(self._mono, waiter.deadline)
            try:
                waiter.fire()
            except Exception:
                log.exception("fake clock timer callback failed")

    def _pop_due_locked(self, target: float) -> _FakeWaiter | None:
        while self._heap and self._heap[0][0] <= target:
            _, _, waiter = heapq.heappop(self._heap)
            if waiter.done:
                self._cancelled_in_heap -= 1
                continue
            waiter.done = True
            self._active -= 1
            return waiter
        return None

    # --- registering -----------------------------------------------------------------------------

    def _register_locked(self, deadline: float, fire: Callable[[], object]) -> _FakeWaiter:
        waiter = _FakeWaiter(deadline, fire)
        heapq.heappush(self._heap, (deadline, next(self._seq), waiter))
        self._active += 1
        self._lock.notify_all()
        return waiter

    def _cancel(self, waiter: _FakeWaiter) -> bool:
        with self._lock:
            if waiter.done:
                return False
            waiter.done = True
            self._active -= 1
            self._cancelled_in_heap += 1
            # Waits that end early leave entries behind; compact before they pile up.
            if self._cancelled_in_heap > 64 and self._cancelled_in_heap > len(self._heap) // 2:
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapq.heapify(self._heap)
                self._cancelled_in_heap = 0
            return True

    def after(self, seconds: float, fn: Callable[[], object], *, name: str | None = None) -> Timer:
        with self._lock:
            waiter = self._register_locked(self._mono + max(seconds, 0.0), fn)
        return _FakeTimer(self, waiter)

    def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        woken = threading.Event()
        with self._lock:
            self._register_locked(self._mono + seconds, woken.set)
        woken.wait()

    def wait_until(self, waitable: Waitable, deadline: float | None) -> bool:
        if _is_condition(waitable):
            return self._wait_condition(waitable, deadline)
        return self._wait_event(waitable, deadline)

    def _wait_condition(self, cond: Any, deadline: float | None) -> bool:
        if deadline is None:
            return cond.wait()

        def wake() -> None:
            with cond:
                cond.notify_all()

        # Registered while the caller holds cond: a step() that sees the waiter cannot notify before
        # cond.wait() released the lock, and a step() that ran before it moved the time checked here.
        with self._lock:
            if self._mono >= deadline:
                return False
            waiter = self._register_locked(deadline, wake)
        try:
            cond.wait()
        finally:
            self._cancel(waiter)
        return self.monotonic() < deadline

    def _wait_event(self, event: Any, deadline: float | None) -> bool:
        if deadline is None:
            return event.wait()
        if event.is_set():
            return True
        due = threading.Event()
        with self._lock:
            if self._mono >= deadline:
                return False
            waiter = self._register_locked(deadline, due.set)
        try:
            while not event.wait(_EVENT_POLL_SECONDS):
                if due.is_set():
                    return event.is_set()
            return True
        finally:
            self._cancel(waiter)
