"""Rate limiter sequences and RateLimitingQueue, on a FakeClock."""

from __future__ import annotations

import math

import pytest

from framework.clock import FakeClock
from framework.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)


def test_exponential_doubles_from_5ms_and_caps() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(25)]
    assert delays[:5] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    # 0.005 * 2**17 = 655.36 s, 2**18 would exceed 1000 s: capped from the 19th failure on.
    assert delays[17] == pytest.approx(655.36)
    assert delays[18:] == [1000.0] * 7
    assert limiter.num_requeues("a") == 25
    assert isinstance(limiter, RateLimiter)


def test_exponential_is_per_item_and_forget_resets() -> None:
    limiter = ItemExponentialFailureRateLimiter(base=0.001, max_delay=1.0)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.001, 0.002, 0.004])
    assert limiter.when("b") == pytest.approx(0.001)
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.num_requeues("b") == 1
    assert limiter.when("a") == pytest.approx(0.001)
    limiter.forget("never-seen")


def test_exponential_survives_huge_failure_counts() -> None:
    limiter = ItemExponentialFailureRateLimiter(base=1.0, max_delay=5.0)
    limiter._failures["x"] = 5000
    assert limiter.when("x") == 5.0
    with pytest.raises(ValueError):
        ItemExponentialFailureRateLimiter(base=-1)


def test_bucket_allows_burst_then_spaces_by_one_over_qps(clock: FakeClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    assert [limiter.when(i) for i in range(100, 105)] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])
    assert limiter.num_requeues(1) == 0
    limiter.forget(1)


def test_bucket_refills_with_time(clock: FakeClock) -> None:
    limiter = BucketRateLimiter(qps=10, burst=2, clock=clock)
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])
    clock.step(0.1)  # pays back the reservation
    assert limiter.when("x") == pytest.approx(0.1)
    clock.step(10)  # refills, but never beyond the burst
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])


def test_bucket_validation_and_unlimited() -> None:
    with pytest.raises(ValueError):
        BucketRateLimiter(qps=0)
    with pytest.raises(ValueError):
        BucketRateLimiter(burst=-1)
    unlimited = BucketRateLimiter(qps=math.inf, burst=0)
    assert [unlimited.when(i) for i in range(5)] == [0.0] * 5


def test_fast_slow() -> None:
    limiter = ItemFastSlowRateLimiter(fast_delay=0.1, slow_delay=3.0, max_fast_attempts=2)
    assert [limiter.when("a") for _ in range(4)] == [0.1, 0.1, 3.0, 3.0]
    assert limiter.num_requeues("a") == 4
    assert limiter.when("b") == 0.1
    limiter.forget("a")
    assert limiter.when("a") == 0.1


def test_max_of_takes_the_longest_and_forwards_forget(clock: FakeClock) -> None:
    exponential = ItemExponentialFailureRateLimiter(base=0.01, max_delay=100)
    fast_slow = ItemFastSlowRateLimiter(fast_delay=0.05, slow_delay=1.0, max_fast_attempts=1)
    limiter = MaxOfRateLimiter(exponential, fast_slow)
    # fast_slow: 0.05 then 1.0; exponential: 0.01 doubling, above 1.0 from the 8th call (1.28 s).
    assert [limiter.when("a") for _ in range(8)] == pytest.approx([0.05] + [1.0] * 6 + [1.28])
    assert limiter.num_requeues("a") == 8
    limiter.forget("a")
    assert exponential.num_requeues("a") == 0 and fast_slow.num_requeues("a") == 0
    with pytest.raises(ValueError):
        MaxOfRateLimiter()


def test_default_controller_rate_limiter(clock: FakeClock) -> None:
    limiter = default_controller_rate_limiter(clock=clock)
    # Per item exponential while the overall bucket still has burst left ...
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    for i in range(97):
        limiter.when(f"other-{i}")
    # ... then the bucket (10 qps) dominates for fresh items.
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.num_requeues("a") == 3


def test_rate_limiting_queue_backs_off_per_item(make_queue, clock: FakeClock, eventually) -> None:
    limiter = ItemExponentialFailureRateLimiter(base=1.0, max_delay=60)
    q = make_queue(RateLimitingQueue, limiter, clock=clock)
    q.add_rate_limited("k")  # 1 s
    assert q.num_requeues("k") == 1
    clock.step(1)
    eventually(lambda: len(q) == 1)
    item, _ = q.get()
    q.add_rate_limited(item)  # 2 s, while processing
    q.done(item)
    assert q.num_requeues("k") == 2
    clock.step(1.5)
    assert len(q) == 0
    clock.step(0.5)
    eventually(lambda: len(q) == 1)
    item, _ = q.get()
    q.forget(item)
    q.done(item)
    assert q.num_requeues("k") == 0
    q.add_rate_limited("k")
    clock.step(1)
    eventually(lambda: len(q) == 1)


def test_rate_limiting_queue_defaults_to_the_controller_limiter(make_queue, clock: FakeClock) -> None:
    q = make_queue(RateLimitingQueue, clock=clock)
    assert isinstance(q.rate_limiter, MaxOfRateLimiter)
    assert q.rate_limiter.when("x") == pytest.approx(0.005)
    q2 = make_queue(RateLimitingQueue, None, "named", clock)
    assert q2.name == "named" and q2.clock is clock


def test_worker_loop_from_the_package_docstring(make_queue) -> None:
    """Real clock, real threads: failing keys retry with backoff until they succeed, then drain."""
    import threading

    q = make_queue(RateLimitingQueue, ItemExponentialFailureRateLimiter(base=0.001, max_delay=0.01))
    lock = threading.Lock()
    failures_left = {f"ns/obj-{i}": i % 3 for i in range(30)}
    succeeded: set[str] = set()
    all_done = threading.Event()

    def reconcile(key: str) -> None:
        with lock:
            if failures_left[key]:
                failures_left[key] -= 1
                raise RuntimeError("transient")
            succeeded.add(key)
            if len(succeeded) == len(failures_left):
                all_done.set()

    def worker() -> None:
        while True:
            key, shutdown = q.get()
            if shutdown:
                return
            try:
                reconcile(key)
            except RuntimeError:
                q.add_rate_limited(key)
            else:
                q.forget(key)
            finally:
                q.done(key)

    workers = [threading.Thread(target=worker, name=f"doc-worker-{i}") for i in range(4)]
    for thread in workers:
        thread.start()
    for key in failures_left:
        q.add(key)
    assert all_done.wait(5.0)
    assert q.shut_down_with_drain(timeout=5)
    for thread in workers:
        thread.join(5.0)
    assert succeeded == set(failures_left)
    assert all(q.num_requeues(key) == 0 for key in failures_left)
