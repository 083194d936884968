"""Work queues with client-go's contracts, for controllers built on threads.

A controller's event handlers ``add`` object keys (``"namespace/name"``) to a queue; worker threads
``get`` keys, reconcile them and call ``done``. The queue guarantees that one key is never processed by
two workers at once, and that a key added again while it is being processed is processed once more
afterwards (however many times it was added). Failed keys go back with a per-key exponential backoff.

Worker loop::

    import threading

    from framework.workqueue import RateLimitingQueue

    queue = RateLimitingQueue(name="project")  # name: enables workqueue_* metrics {name="project"}

    def worker() -> None:
        while True:
            key, shutdown = queue.get()  # blocks; shutdown only once shutting down and empty
            if shutdown:
                return
            try:
                requeue_after = reconcile(key)  # your code
            except Exception:
                queue.add_rate_limited(key)  # retry: 5 ms, 10 ms, 20 ms ... 1000 s (and 10 qps overall)
            else:
                queue.forget(key)  # success: reset the key's backoff
                if requeue_after:
                    queue.add_after(key, requeue_after)  # float seconds
            finally:
                queue.done(key)  # always; re-queues the key if it was added while processing

    workers = [threading.Thread(target=worker, name=f"project-worker-{i}") for i in range(4)]
    for thread in workers:
        thread.start()
    ...
    queue.shut_down_with_drain(timeout=30)  # stop adds, let workers finish the keys they hold
    for thread in workers:
        thread.join(timeout=30)

Pieces: ``Queue`` (add/get/done, shutdown), ``DelayingQueue`` (``add_after``; duplicates keep the
earliest time), ``RateLimitingQueue`` (``add_rate_limited``, ``forget``, ``num_requeues``), and the
limiters ``ItemExponentialFailureRateLimiter``, ``BucketRateLimiter``, ``ItemFastSlowRateLimiter``,
``MaxOfRateLimiter`` and ``default_controller_rate_limiter()``. Every queue takes a
``framework.clock.Clock``; tests pass a ``FakeClock`` and ``step()`` it instead of sleeping. Always call
``shut_down()`` (or ``shut_down_with_drain()``): it also stops the delaying queue's timer thread.

Metrics use client-go's names with the label ``name`` (only for named queues; registered once on the
given ``registry``, default ``prometheus_client.REGISTRY``): ``workqueue_depth``,
``workqueue_adds_total``, ``workqueue_queue_duration_seconds``, ``workqueue_work_duration_seconds``,
``workqueue_unfinished_work_seconds``, ``workqueue_longest_running_processor_seconds``,
``workqueue_retries_total``.
"""

from framework.workqueue.delaying_queue import DelayingQueue
from framework.workqueue.metrics import QueueMetrics, WorkqueueCollector, workqueue_collector
from framework.workqueue.queue import Queue
from framework.workqueue.rate_limiter import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from framework.workqueue.rate_limiting_queue import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "QueueMetrics",
    "RateLimiter",
    "RateLimitingQueue",
    "WorkqueueCollector",
    "default_controller_rate_limiter",
    "workqueue_collector",
]
