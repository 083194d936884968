"""Workqueue Prometheus metrics: client-go names, label ``name``, values read from the registry."""

from __future__ import annotations

import gc
import uuid

import pytest
from prometheus_client import REGISTRY, CollectorRegistry

from framework.clock import FakeClock
from framework.workqueue import DelayingQueue, Queue, RateLimitingQueue, workqueue_collector


def sample(registry: CollectorRegistry, metric: str, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(metric, {"name": name, **labels})


def test_adds_depth_and_durations(clock: FakeClock, registry: CollectorRegistry) -> None:
    q: Queue[str] = Queue("m", clock, registry)
    q.add("a")
    q.add("b")
    q.add("a")  # already waiting: not an add
    assert sample(registry, "workqueue_adds_total", "m") == 2
    assert sample(registry, "workqueue_depth", "m") == 2

    clock.step(2)
    q.get()  # a waited 2 s
    assert sample(registry, "workqueue_depth", "m") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_count", "m") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_sum", "m") == pytest.approx(2)
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", "m", le="1.0") == 0
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", "m", le="10.0") == 1

    clock.step(3)
    q.get()  # b waited 5 s
    assert sample(registry, "workqueue_queue_duration_seconds_sum", "m") == pytest.approx(7)
    clock.step(1)
    # a has run 4 s, b 1 s.
    assert sample(registry, "workqueue_unfinished_work_seconds", "m") == pytest.approx(5)
    assert sample(registry, "workqueue_longest_running_processor_seconds", "m") == pytest.approx(4)

    q.done("a")
    assert sample(registry, "workqueue_work_duration_seconds_count", "m") == 1
    assert sample(registry, "workqueue_work_duration_seconds_sum", "m") == pytest.approx(4)
    assert sample(registry, "workqueue_unfinished_work_seconds", "m") == pytest.approx(1)
    q.done("b")
    assert sample(registry, "workqueue_unfinished_work_seconds", "m") == 0
    assert sample(registry, "workqueue_longest_running_processor_seconds", "m") == 0
    assert sample(registry, "workqueue_depth", "m") == 0


def test_add_while_processing_counts_in_depth_until_rerun(clock: FakeClock, registry) -> None:
    q: Queue[str] = Queue("rerun", clock, registry)
    q.add("a")
    q.get()
    q.add("a")
    q.add("a")
    assert sample(registry, "workqueue_adds_total", "rerun") == 2
    assert sample(registry, "workqueue_depth", "rerun") == 1
    assert len(q) == 0
    q.done("a")
    q.get()
    assert sample(registry, "workqueue_depth", "rerun") == 0


def test_retries_count_every_add_after(make_queue, clock: FakeClock, registry) -> None:
    q = make_queue(RateLimitingQueue, None, "retry", clock, registry)
    q.add_rate_limited("a")
    q.add_after("b", 0)
    q.add_after("c", 5)
    assert sample(registry, "workqueue_retries_total", "retry") == 3
    q.shut_down()
    q.add_after("d", 1)  # ignored after shutdown, not counted
    assert sample(registry, "workqueue_retries_total", "retry") == 3


def test_unnamed_queue_records_nothing(make_queue, clock: FakeClock, registry) -> None:
    q = make_queue(DelayingQueue, None, clock, registry)
    q.add("a")
    q.add_after("b", 1)
    q.get()
    q.done("a")
    assert list(registry.collect()) == []


def test_many_queues_share_one_registration(make_queue, clock: FakeClock, registry) -> None:
    for i in range(200):
        make_queue(RateLimitingQueue, None, f"q{i % 3}", clock, registry).add(i)
    assert sample(registry, "workqueue_adds_total", "q0") == 67
    assert sample(registry, "workqueue_depth", "q2") == 66
    assert workqueue_collector(registry) is workqueue_collector(registry)
    names = {metric.name for metric in registry.collect()}
    assert names == {
        "workqueue_depth",
        "workqueue_adds",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries",
    }


def test_default_registry_is_used_and_repeated_creation_is_safe(make_queue) -> None:
    name = f"default-{uuid.uuid4().hex[:8]}"
    for _ in range(5):
        make_queue(Queue, name).add("x")
    assert REGISTRY.get_sample_value("workqueue_adds_total", {"name": name}) == 5


def test_registries_are_independent(clock: FakeClock) -> None:
    first, second = CollectorRegistry(), CollectorRegistry()
    Queue("same", clock, first).add("a")
    assert sample(first, "workqueue_adds_total", "same") == 1
    assert sample(second, "workqueue_adds_total", "same") is None


def test_discarded_queue_reads_zero_in_progress(clock: FakeClock, registry) -> None:
    q: Queue[str] = Queue("gone", clock, registry)
    q.add("a")
    q.get()
    clock.step(3)
    assert sample(registry, "workqueue_unfinished_work_seconds", "gone") == 3
    del q
    gc.collect()
    assert sample(registry, "workqueue_unfinished_work_seconds", "gone") == 0


def test_bucket_bounds_are_inclusive(clock: FakeClock, registry) -> None:
    q: Queue[str] = Queue("le", clock, registry)
    q.add("a")
    clock.step(1.0)
    q.get()
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", "le", le="0.1") == 0
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", "le", le="1.0") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_bucket", "le", le="+Inf") == 1


def test_scraping_while_workers_run_is_consistent(registry) -> None:
    import threading

    q: Queue[int] = Queue("busy", registry=registry)
    stop = threading.Event()

    def work() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            q.done(item)

    workers = [threading.Thread(target=work, name=f"busy-worker-{i}") for i in range(3)]
    for thread in workers:
        thread.start()

    def scrape() -> None:
        while not stop.is_set():
            list(registry.collect())

    scraper = threading.Thread(target=scrape, name="scraper")
    scraper.start()
    for i in range(3000):
        q.add(i % 50)
    q.shut_down_with_drain(timeout=5)
    for thread in workers:
        thread.join(5.0)
    stop.set()
    scraper.join(5.0)
    adds = sample(registry, "workqueue_adds_total", "busy")
    assert sample(registry, "workqueue_depth", "busy") == 0
    assert sample(registry, "workqueue_queue_duration_seconds_count", "busy") == adds
    assert sample(registry, "workqueue_work_duration_seconds_count", "busy") == adds
