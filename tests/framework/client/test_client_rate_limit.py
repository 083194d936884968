"""The client-side token bucket (unit tests on a fake clock) and the client's use of it."""

from __future__ import annotations

import threading

import pytest

from framework.client import Client, TokenBucket


def test_burst_then_one_token_per_interval(step_clock):
    tb = TokenBucket(qps=5, burst=3, clock=step_clock)
    waits = [tb.accept() for _ in range(6)]
    assert waits[:3] == [0, 0, 0]
    assert waits[3:] == pytest.approx([0.2, 0.2, 0.2])
    assert step_clock.sleeps == pytest.approx([0.2, 0.2, 0.2])


def test_refill_is_capped_at_burst(step_clock):
    tb = TokenBucket(qps=10, burst=2, clock=step_clock)
    assert tb.try_accept() and tb.try_accept() and not tb.try_accept()
    step_clock.now += 0.1
    assert tb.try_accept() and not tb.try_accept()
    step_clock.now += 100  # a long idle period refills only up to burst
    assert tb.tokens() == pytest.approx(2)
    assert [tb.reserve() for _ in range(4)] == pytest.approx([0, 0, 0.1, 0.2])


def test_disabled_when_qps_not_positive(step_clock):
    for qps in (0, -1):
        tb = TokenBucket(qps=qps, burst=1, clock=step_clock)
        assert not tb.enabled
        assert all(tb.accept() == 0 for _ in range(1000)) and tb.try_accept()
    assert step_clock.sleeps == []


def test_reservations_are_thread_safe(step_clock):
    """Concurrent reservations on a frozen clock never hand out the same slot twice."""
    tb = TokenBucket(qps=100, burst=10, clock=step_clock)
    delays: list[float] = []
    lock = threading.Lock()

    def worker():
        mine = [tb.reserve() for _ in range(50)]
        with lock:
            delays.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = [0.0] * 10 + [k / 100 for k in range(1, 400 - 10 + 1)]
    assert sorted(delays) == pytest.approx(expected)


def test_client_throttles_requests(apiserver, step_clock):
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=5, burst=2, clock=step_clock)
    for _ in range(2):  # the burst is free; discovery for the first get took one token too
        client.get("v1", "Namespace", "default")
    client.get("v1", "Namespace", "default")
    client.get("v1", "Namespace", "default")
    assert step_clock.sleeps == pytest.approx([0.2, 0.2, 0.2])


def test_client_defaults_match_client_go(apiserver):
    client = Client.from_kubeconfig(apiserver.kubeconfig)
    assert (client.rate_limiter.qps, client.rate_limiter.burst) == (5.0, 10)
