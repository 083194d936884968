"""``Controller``: a rate-limited work queue of requests and N workers calling a reconciler."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from framework.client import APIError, Conflict, deadline
from framework.clock import Clock, RealClock
from framework.controller.metrics import controller_metrics
from framework.handler import EventHandler
from framework.predicate import Predicate
from framework.reconcile import Reconciler, Request, Result, TerminalError
from framework.workqueue import RateLimitingQueue, default_controller_rate_limiter

log = structlog.get_logger("framework.controller")


class Controller:
    """Runs ``reconciler`` for queued requests on ``max_concurrent_reconciles`` worker threads.

    - an exception requeues the request with the rate limiter's backoff (a resourceVersion
      ``Conflict`` is an ordinary retry, logged briefly without a stack trace);
    - ``TerminalError`` is logged and counted but never requeued;
    - ``Result(requeue_after=s)`` forgets the backoff and requeues after ``s`` seconds,
      ``Result(requeue=True)`` requeues with backoff;
    - ``reconcile_timeout`` is a cooperative deadline: client calls made after it raise ``Timeout``.

    A request is never reconciled by two workers at once (the work queue guarantees it).
    """

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: Any = None,
        reconcile_timeout: float | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self.reconciler = reconciler
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.reconcile_timeout = reconcile_timeout
        self.clock = clock or RealClock()
        self.queue = RateLimitingQueue(
            rate_limiter or default_controller_rate_limiter(clock=self.clock),
            name=name,
            clock=self.clock,
            registry=registry,
        )
        self.metrics = controller_metrics(registry)
        self.metrics.max_concurrent.labels(name).set(max_concurrent_reconciles)
        self.metrics.active_workers.labels(name).set(0)
        self.log = log.bind(controller=name)
        self.registrations: list[Any] = []
        self._workers: list[threading.Thread] = []
        self._started = False

    # -- wiring ------------------------------------------------------------------------------------

    def watch(self, informer: Any, handler: EventHandler, predicates: Iterable[Predicate] = ()) -> Any:
        """Feed ``informer``'s events through ``predicates`` and ``handler`` into the queue."""
        preds = tuple(predicates)
        queue = self.queue

        def on_add(obj: dict, *_: Any) -> None:
            if all(p.create(obj) for p in preds):
                handler.create(obj, queue)

        def on_update(old: dict, new: dict) -> None:
            if all(p.update(old, new) for p in preds):
                handler.update(old, new, queue)

        def on_delete(obj: Any) -> None:
            inner = getattr(obj, "obj", obj)
            if all(p.delete(inner) for p in preds):
                handler.delete(obj, queue)

        reg = informer.add_event_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)
        self.registrations.append(reg)
        return reg

    def has_synced(self) -> bool:
        return all(r.has_synced() for r in self.registrations)

    # -- running -------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        for i in range(self.max_concurrent_reconciles):
            t = threading.Thread(target=self._worker, name=f"controller-{self.name}-worker-{i}", daemon=True)
            t.start()
            self._workers.append(t)
        self.log.info("starting workers", workers=self.max_concurrent_reconciles)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop taking new work, let in-flight reconciles finish (bounded); True if all drained."""
        drained = self.queue.shut_down_with_drain(timeout)
        deadline_at = self.clock.monotonic() + max(timeout, 0.1)
        for t in self._workers:
            t.join(max(0.0, deadline_at - self.clock.monotonic()) if drained else 0.1)
        alive = [t.name for t in self._workers if t.is_alive()]
        if alive:
            self.log.warning("workers still busy at shutdown", workers=alive)
        self.log.info("stopped")
        return drained and not alive

    def _worker(self) -> None:
        while True:
            item, shutdown = self.queue.get()
            if shutdown:
                return
            try:
                self.reconcile_item(item)
            finally:
                self.queue.done(item)

    def reconcile_item(self, request: Request) -> None:
        """Reconcile one request and requeue it as its outcome says."""
        m, name = self.metrics, self.name
        rlog = self.log.bind(
            namespace=request.namespace or None, name=request.name, reconcile_id=str(uuid.uuid4())
        )
        m.active_workers.labels(name).inc()
        start = self.clock.monotonic()
        try:
            with deadline(self.reconcile_timeout, self.clock):
                result = self.reconciler.reconcile(request) or Result()
        except TerminalError as e:
            m.reconcile_total.labels(name, "error").inc()
            m.reconcile_errors.labels(name).inc()
            m.terminal_errors.labels(name).inc()
            self.queue.forget(request)
            rlog.error("terminal reconcile error, not requeueing", error=str(e))
            return
        except Conflict as e:
            m.reconcile_total.labels(name, "error").inc()
            m.reconcile_errors.labels(name).inc()
            self.queue.add_rate_limited(request)
            rlog.info("conflict, requeueing", error=e.message)
            return
        except Exception as e:
            m.reconcile_total.labels(name, "error").inc()
            m.reconcile_errors.labels(name).inc()
            if self._timed_out(start):
                m.timeouts.labels(name).inc()
            self.queue.add_rate_limited(request)
            if isinstance(e, APIError):
                # An API answer (NotFound while a cache catches up, 5xx ...): no stack trace needed.
                rlog.error("reconcile failed, requeueing", error=str(e))
            else:
                m.panics.labels(name).inc()  # a bug in the reconciler rather than an API answer
                rlog.exception("reconcile failed, requeueing", error=str(e))
            return
        finally:
            m.reconcile_time.labels(name).observe(self.clock.monotonic() - start)
            m.active_workers.labels(name).dec()
        if self._timed_out(start):
            m.timeouts.labels(name).inc()
        if result.requeue_after is not None and result.requeue_after > 0:
            self.queue.forget(request)
            self.queue.add_after(request, result.requeue_after)
            m.reconcile_total.labels(name, "requeue_after").inc()
        elif result.requeue:
            self.queue.add_rate_limited(request)
            m.reconcile_total.labels(name, "requeue").inc()
        else:
            self.queue.forget(request)
            m.reconcile_total.labels(name, "success").inc()

    def _timed_out(self, start: float) -> bool:
        """Whether the reconcile that began at ``start`` ran past the deadline."""
        t = self.reconcile_timeout
        return t is not None and self.clock.monotonic() - start >= t
