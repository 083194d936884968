"""``Controller``: a rate-limited work queue of requests and N supervised workers calling a reconciler."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from framework.client import APIError, Conflict, deadline
from framework.clock import Clock, RealClock, Timer
from framework.controller.metrics import controller_collector
from framework.handler import EventHandler
from framework.predicate import Predicate
from framework.reconcile import Reconciler, Request, Result, TerminalError
from framework.reconcile.reconcile import as_reconciler, close_if_coroutine
from framework.workqueue import RateLimitingQueue, default_controller_rate_limiter

log = structlog.get_logger("framework.controller")

_SUCCESS = Result()
_EVENT_METHODS = ("create", "update", "delete", "generic")  # of handlers and predicates alike
# A worker that exits is restarted after this delay, doubled per exit in a row (capped); a worker
# that then keeps running for _RESTART_RESET seconds starts the doubling afresh.
_RESTART_BASE, _RESTART_CAP, _RESTART_RESET = 0.1, 30.0, 60.0


def new_reconcile_id() -> str:
    """A random UUID-formatted id per reconcile (controller-runtime's ``reconcileID``).

    Not ``uuid.uuid4()``: that reads ``os.urandom`` and costs more than the rest of the controller's
    bookkeeping per reconcile; an id only needs to tell log lines of different reconciles apart.
    """
    h = "%032x" % random.getrandbits(128)  # noqa: UP031 -- the fastest of the spellings
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:]}"


def _has_event_methods(obj: Any) -> bool:
    return all(callable(getattr(obj, m, None)) for m in _EVENT_METHODS)


def check_event_handler(handler: Any) -> None:
    """``TypeError`` unless ``handler`` has an event handler's methods (create/update/delete/generic)."""
    if isinstance(handler, EventHandler) or _has_event_methods(handler):
        return
    hint = " (wrap a map function in EnqueueRequestsFromMapFunc(fn))" if callable(handler) else ""
    raise TypeError(f"an event handler must be an EventHandler, got {type(handler).__name__}{hint}")


def check_predicate(predicate: Any) -> None:
    """``TypeError`` unless ``predicate`` has a predicate's methods (create/update/delete/generic)."""
    if isinstance(predicate, Predicate) or _has_event_methods(predicate):
        return
    hint = " (wrap functions in predicate.Funcs(create=..., update=...))" if callable(predicate) else ""
    raise TypeError(f"a predicate must be a Predicate, got {type(predicate).__name__}{hint}")


class Controller:
    """Runs ``reconciler`` for queued requests on ``max_concurrent_reconciles`` worker threads.

    Every outcome of a reconcile is handled, none ends a worker:

    - ``None`` or ``Result()`` forgets the request's backoff;
    - ``Result(requeue_after=s)`` (seconds or a timedelta) forgets the backoff and requeues after ``s``,
      ``Result(requeue=True)`` requeues with backoff;
    - an exception (any, ``SystemExit`` included) requeues with the rate limiter's backoff; a
      resourceVersion ``Conflict`` is an ordinary retry (counted as ``requeue``, not as an error), logged
      briefly without a stack trace;
    - ``TerminalError`` is logged and counted but never requeued;
    - any other return value (``30``, a dict, a coroutine ...) is a bug: logged as an error naming the
      controller and the type (once per type; later ones at debug level), counted as a reconcile error
      and panic, and requeued with backoff;
    - ``reconcile_timeout`` is a cooperative deadline: client calls made after it raise ``Timeout``;
      a reconcile that ran past it is counted in ``controller_runtime_reconcile_timeouts_total``,
      whatever it returned.

    A worker thread that exits anyway (a failing custom rate limiter, say) is restarted after a short
    backoff and counted in ``controller_worker_restarts_total``; :meth:`readiness` reports a started
    controller without a live worker (the manager's ``/readyz`` fails meanwhile). An event handler or
    predicate that raises, or a map function returning something other than Requests, is logged the
    same way and counted in ``controller_event_handler_errors_total``; the event is dropped.

    While a reconcile runs, its structlog context (``controller``, ``namespace``, ``name``,
    ``reconcile_id``) is bound in ``structlog.contextvars``, so the reconciler's own log lines carry it
    (controller-runtime's ``log.FromContext(ctx)``) when the processors include ``merge_contextvars``
    (structlog's default configuration does).

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
        skip_name_validation: bool = False,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"a controller name must be a non-empty string, got {name!r}")
        if (
            not isinstance(max_concurrent_reconciles, int)
            or isinstance(max_concurrent_reconciles, bool)
            or max_concurrent_reconciles < 1
        ):
            raise ValueError(
                f"max_concurrent_reconciles must be an int of at least 1, got {max_concurrent_reconciles!r}"
            )
        if reconcile_timeout is not None and (
            isinstance(reconcile_timeout, bool)
            or not isinstance(reconcile_timeout, int | float)
            or reconcile_timeout <= 0
        ):
            raise ValueError(f"reconcile_timeout must be positive seconds or None, got {reconcile_timeout!r}")
        self.name = name
        self.reconciler = as_reconciler(reconciler)
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.reconcile_timeout = reconcile_timeout
        self.skip_name_validation = skip_name_validation
        self.clock = clock or RealClock()
        self.queue: RateLimitingQueue[Request] = RateLimitingQueue(
            rate_limiter or default_controller_rate_limiter(clock=self.clock),
            name=name,
            clock=self.clock,
            registry=registry,
        )
        self._stats = controller_collector(registry).stats_for(name)
        self._stats.set_max_concurrent(max_concurrent_reconciles)
        self.log = log.bind(controller=name)
        self.registrations: list[Any] = []
        self._lock = threading.Lock()
        self._workers: dict[int, threading.Thread] = {}
        self._restart_timers: dict[int, Timer] = {}
        self._exits_in_a_row = 0
        self._last_exit = 0.0
        self._reported: set[tuple[str, ...]] = set()
        self._started = False
        self._stopping = False

    # -- wiring ------------------------------------------------------------------------------------

    def watch(
        self,
        informer: Any,
        handler: EventHandler,
        predicates: Iterable[Predicate] = (),
        *,
        inline: bool = False,
    ) -> Any:
        """Feed ``informer``'s events through ``predicates`` and ``handler`` into the queue.

        ``inline=True`` runs predicates and handler on the informer's thread instead of a handler
        thread of their own (``SharedIndexInformer.add_event_handler(inline=True)``): one hand-off less
        per event, for cheap predicates and handlers on a busy kind.
        """
        check_event_handler(handler)
        preds = tuple(predicates)
        for p in preds:
            check_predicate(p)
        queue = self.queue
        failed = self._handler_failed

        def on_add(obj: dict, *_: Any) -> None:
            try:
                if all(p.create(obj) for p in preds):
                    handler.create(obj, queue)
            except Exception as e:
                failed("create", handler, e)

        def on_update(old: dict, new: dict) -> None:
            try:
                if all(p.update(old, new) for p in preds):
                    handler.update(old, new, queue)
            except Exception as e:
                failed("update", handler, e)

        def on_delete(obj: Any) -> None:
            try:
                inner = getattr(obj, "obj", obj)
                if all(p.delete(inner) for p in preds):
                    handler.delete(obj, queue)
            except Exception as e:
                failed("delete", handler, e)

        reg = informer.add_event_handler(
            on_add=on_add, on_update=on_update, on_delete=on_delete, inline=inline
        )
        self.registrations.append(reg)
        return reg

    def has_synced(self) -> bool:
        return all(r.has_synced() for r in self.registrations)

    # -- running -----------------------------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            for i in range(self.max_concurrent_reconciles):
                self._spawn_locked(i)
        self.log.info("starting workers", workers=self.max_concurrent_reconciles)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop taking new work, let in-flight reconciles finish (bounded); True if all drained."""
        with self._lock:
            self._stopping = True
            timers = list(self._restart_timers.values())
            self._restart_timers.clear()
        for timer in timers:
            timer.cancel()
        drained = self.queue.shut_down_with_drain(timeout)
        deadline_at = self.clock.monotonic() + max(timeout, 0.1)
        with self._lock:
            workers = list(self._workers.values())
        for t in workers:
            t.join(max(0.0, deadline_at - self.clock.monotonic()) if drained else 0.1)
        alive = [t.name for t in workers if t.is_alive()]
        if alive:
            self.log.warning("workers still busy at shutdown", workers=alive)
        self.log.info("stopped")
        return drained and not alive

    def live_workers(self) -> int:
        """How many worker threads are alive."""
        with self._lock:
            return sum(t.is_alive() for t in self._workers.values())

    def readiness(self) -> str | None:
        """None while the controller can reconcile (or is not started / stopping), else why not."""
        with self._lock:
            if not self._started or self._stopping:
                return None
            if any(t.is_alive() for t in self._workers.values()):
                return None
        return f"controller {self.name} has no live worker"

    def _spawn_locked(self, i: int) -> None:
        t = threading.Thread(
            target=self._run_worker, args=(i,), name=f"controller-{self.name}-worker-{i}", daemon=True
        )
        self._workers[i] = t
        t.start()

    def _run_worker(self, i: int) -> None:
        try:
            self._worker()
        except BaseException:
            # Reconcile outcomes are all handled in reconcile_item: this is the machinery failing.
            self.log.exception("worker failed", worker=i)
        finally:
            self._worker_exited(i)

    def _worker_exited(self, i: int) -> None:
        with self._lock:
            if self._stopping or self.queue.shutting_down():
                return
            now = self.clock.monotonic()
            if now - self._last_exit >= _RESTART_RESET:
                self._exits_in_a_row = 0
            self._last_exit = now
            delay = min(_RESTART_BASE * 2**self._exits_in_a_row, _RESTART_CAP)
            self._exits_in_a_row += 1
            self._restart_timers[i] = self.clock.after(
                delay, lambda: self._restart(i), name=f"controller-{self.name}-restart-{i}"
            )
        self._stats.worker_restarted()
        self.log.error("worker exited; restarting it", worker=i, restart_in_seconds=delay)

    def _restart(self, i: int) -> None:
        with self._lock:
            self._restart_timers.pop(i, None)
            if self._stopping or self.queue.shutting_down():
                return
            self._spawn_locked(i)

    def _worker(self) -> None:
        queue = self.queue
        while True:
            item, shutdown = queue.get()
            if shutdown or item is None:  # None only comes with shutdown
                return
            try:
                self.reconcile_item(item)
            except BaseException:
                # Only the machinery (a custom rate limiter, say) gets here; keep the request.
                queue.add_after(item, _RESTART_BASE)
                raise
            finally:
                queue.done(item)

    def reconcile_item(self, request: Request) -> None:
        """Reconcile one request and requeue it as its outcome says."""
        stats = self._stats
        if not isinstance(request, Request):
            # Only a custom event handler can queue something else; no reconciler could use it.
            stats.dropped()
            self.queue.forget(request)
            self._report(
                ("item", type(request).__qualname__),
                "queued item is not a Request; dropped (event handlers must queue Request(name, namespace))",
                type=type(request).__qualname__,
                item=repr(request)[:200],
            )
            return
        rid = new_reconcile_id()
        namespace = request.namespace or None
        tokens = structlog.contextvars.bind_contextvars(
            controller=self.name, namespace=namespace, name=request.name, reconcile_id=rid
        )
        # The outcome, counted once when the reconcile is over (one lock for all its metrics).
        outcome: str | None = None
        error = terminal = panic = False
        stats.started()
        start = self.clock.monotonic()
        try:
            try:
                with deadline(self.reconcile_timeout, self.clock):
                    result = self.reconciler.reconcile(request)
            except TerminalError as e:
                outcome, error, terminal = "error", True, True
                self.queue.forget(request)
                self.log.error(
                    "terminal reconcile error, not requeueing",
                    namespace=namespace,
                    name=request.name,
                    reconcile_id=rid,
                    error=str(e),
                )
                return
            except Conflict as e:
                # A write raced another (or the cache was a write behind): an expected state, retried
                # with backoff, not a reconcile error an on-call engineer should be paged for.
                outcome = "requeue"
                self.queue.add_rate_limited(request)
                self.log.info(
                    "conflict, requeueing",
                    namespace=namespace,
                    name=request.name,
                    reconcile_id=rid,
                    error=e.message,
                )
                return
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise  # only ever the main thread's (a test calling reconcile_item directly)
                outcome, error = "error", True
                panic = not isinstance(e, APIError)  # a bug in the reconciler rather than an API answer
                self.queue.add_rate_limited(request)
                fields = {"namespace": namespace, "name": request.name, "reconcile_id": rid, "error": str(e)}
                if panic:
                    self.log.exception("reconcile failed, requeueing", **fields)
                else:
                    # An API answer (NotFound while a cache catches up, 5xx ...): no stack trace needed.
                    self.log.error("reconcile failed, requeueing", **fields)
                return
            if result is None:
                result = _SUCCESS
            elif not isinstance(result, Result):
                outcome, error, panic = "error", True, True
                self._wrong_result(request, result, rid)
                return
            if result.requeue_after is not None and result.requeue_after > 0:
                outcome = "requeue_after"
                self.queue.forget(request)
                self.queue.add_after(request, result.requeue_after)
            elif result.requeue:
                outcome = "requeue"
                self.queue.add_rate_limited(request)
            else:
                outcome = "success"
                self.queue.forget(request)
        finally:
            elapsed = self.clock.monotonic() - start
            limit = self.reconcile_timeout
            timed_out = limit is not None and elapsed >= limit
            stats.finished(outcome, elapsed, error=error, terminal=terminal, panic=panic, timeout=timed_out)
            structlog.contextvars.reset_contextvars(**tokens)

    def _wrong_result(self, request: Request, result: object, rid: str) -> None:
        self.queue.add_rate_limited(request)
        kind = type(result).__qualname__
        close_if_coroutine(result)
        self._report(
            ("result", kind),
            f"reconciler returned {kind}, expected Result or None; requeueing with backoff",
            type=kind,
            namespace=request.namespace or None,
            name=request.name,
            reconcile_id=rid,
            hint="return Result(requeue_after=seconds) to requeue after a delay",
        )

    def _handler_failed(self, event: str, handler: Any, error: Exception) -> None:
        self._stats.handler_failed(event)
        handler_name, error_type = type(handler).__qualname__, type(error).__qualname__
        fields: dict[str, Any] = {"notification": event, "handler": handler_name, "type": error_type}
        if not isinstance(error, TypeError):  # a TypeError names a wrong return type: message enough
            fields["exc_info"] = error
        self._report(
            ("handler", event, handler_name, error_type),
            "event handler failed; event dropped",
            error=str(error),
            **fields,
        )

    def _report(self, key: tuple[str, ...], message: str, **fields: Any) -> None:
        """Log a programming error once per ``key`` at error level, later repeats at debug level."""
        with self._lock:
            first = key not in self._reported
            self._reported.add(key)
        if first:
            self.log.error(message, **fields)
        else:
            fields.pop("exc_info", None)
            self.log.debug(message, **fields)
