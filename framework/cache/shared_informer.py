"""SharedIndexInformer: one list+watch of a kind, one cache, any number of event handlers.

A port of client-go's ``tools/cache/shared_informer.go`` on threads::

    informer = SharedIndexInformer(client, "v1", "ConfigMap", namespace="default",
                                   transform=drop_managed_fields)
    reg = informer.add_event_handler(
        on_add=lambda obj: queue.add(key(obj)),
        on_update=lambda old, new: queue.add(key(new)),
        on_delete=lambda obj: queue.add(key(obj)),  # obj may be a DeletedFinalStateUnknown
    )
    informer.start()
    if not informer.wait_for_cache_sync(timeout=60):
        raise RuntimeError("cache did not sync")
    cm = informer.indexer.get_by_key("default/settings")  # shared: deep-copy before mutating
    ...
    informer.stop()

Threads (all named, daemon, supervised: one that dies is logged and restarted):

- ``informer[<gvk>]-reflector`` — the :class:`~framework.cache.reflector.Reflector` listing and watching
  into a :class:`~framework.cache.DeltaFIFO` (plus ``...-resync`` when resyncing);
- ``informer[<gvk>]-controller`` — pops the FIFO, updates :attr:`SharedIndexInformer.indexer` and fans the
  notifications out to the handlers;
- ``informer[<gvk>]-handler-<n>`` — one per handler: calls it in order from its own unbounded buffer, so
  a slow handler delays only itself.

Delivery rules (client-go):

- Added/Updated/Replaced/Sync deltas become ``on_update(old, new)`` when the key is cached, else
  ``on_add(obj)``; Deleted deltas become ``on_delete(obj)``, where ``obj`` is the final state or, for a
  deletion noticed only by a relist, a :class:`~framework.cache.DeletedFinalStateUnknown` (``.key``,
  ``.obj`` = last known state).
- An update whose old and new resourceVersion are equal is a *resync*: it goes only to the handlers
  whose own resync period is due (so a relist after a 410 does not re-deliver unchanged objects to
  everyone).
- A handler added after :meth:`~SharedIndexInformer.start` first receives the whole cache as
  ``on_add`` calls (``is_in_initial_list=True``); its registration's ``has_synced()`` turns true once
  those are handled.
- ``on_add`` may take a second parameter (or a keyword ``is_in_initial_list``) to learn whether the
  object came from the initial list.
- A handler that raises is logged (with the traceback) and keeps receiving later notifications.

Resync: the informer's ``resync_period`` is every handler's default; a handler may ask for its own
(minimum 1 s). Before start, a shorter handler period lowers the informer's check period (a
check period of 0 — resync disabled — counts as infinitely long here, unlike client-go, which
then disables per-handler resync); after start, shorter periods are raised to the check period.
"""

from __future__ import annotations

import inspect
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from framework.clock import Clock, RealClock

from .delta_fifo import DeltaFIFO, DeltaType, FIFOClosedError, TransformFunc
from .reflector import (
    DEFAULT_INACTIVITY_TIMEOUT,
    DEFAULT_PAGE_SIZE,
    MIN_WATCH_TIMEOUT,
    Backoff,
    Reflector,
    WatchErrorHandler,
    run_supervised,
)
from .store import Indexer, IndexFunc

__all__ = ["MINIMUM_RESYNC_PERIOD", "ResourceEventHandlerRegistration", "SharedIndexInformer"]

log = structlog.get_logger("framework.cache")

MINIMUM_RESYNC_PERIOD = 1.0
"""Handler resync periods below this are raised to it (client-go's ``minimumResyncPeriod``)."""

_ADD, _UPDATE, _DELETE = 0, 1, 2
_BUFFER_WARN = 100_000  # pending notifications of one handler; warned again at every doubling


def _wants_initial_flag(fn: Callable[..., Any]) -> bool:
    """Whether ``on_add`` takes ``(obj, is_in_initial_list)``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.name == "is_in_initial_list" for p in params):
        return True
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is inspect.Parameter.empty
    ]
    return len(positional) >= 2


def _resource_version(obj: Any) -> Any:
    try:
        return obj["metadata"].get("resourceVersion")
    except (KeyError, TypeError, AttributeError):
        return None


def _determine_resync_period(desired: float, check: float) -> float:
    if desired <= 0:
        return 0.0
    if check <= 0:
        return 0.0
    return max(desired, check)


class _Listener:
    """One handler: an unbounded in-order buffer drained by the handler's own thread."""

    def __init__(
        self,
        name: str,
        on_add: Callable[..., Any] | None,
        on_update: Callable[[Any, Any], Any] | None,
        on_delete: Callable[[Any], Any] | None,
        requested_resync: float,
        resync_period: float,
        now: float,
        upstream_synced: Callable[[], bool],
    ) -> None:
        self.name = name
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self._add_flag = on_add is not None and _wants_initial_flag(on_add)
        self.requested_resync = requested_resync
        self.resync_period = resync_period
        self.next_resync = now + resync_period
        self._upstream_synced = upstream_synced
        self._cond = threading.Condition(threading.Lock())
        self._buffer: deque[tuple[int, Any, Any, bool]] = deque()
        self._batch_left = 0  # taken from the buffer by the handler thread, not yet delivered
        self._initial_pending = 0
        self._stopped = False
        self._warn_at = _BUFFER_WARN
        self._thread: threading.Thread | None = None
        self.delivered = 0
        self.errors = 0

    # -- producer side (the informer's controller thread) ------------------------------------------

    def add(self, op: int, a: Any, b: Any = None, initial: bool = False) -> None:
        with self._cond:
            if self._stopped:
                return
            self._buffer.append((op, a, b, initial))
            if initial:
                self._initial_pending += 1
            n = len(self._buffer)
            if n == 1:
                self._cond.notify()
            elif n >= self._warn_at:
                self._warn_at *= 2
                log.warning("slow event handler: notifications are piling up", handler=self.name, pending=n)

    def pending(self) -> int:
        with self._cond:
            return len(self._buffer) + self._batch_left

    def has_synced(self) -> bool:
        with self._cond:
            pending = self._initial_pending
        return pending <= 0 and self._upstream_synced()

    # -- resync bookkeeping (under the processor's lock) -------------------------------------------

    def should_resync(self, now: float) -> bool:
        return self.resync_period > 0 and now >= self.next_resync

    def determine_next_resync(self, now: float) -> None:
        self.next_resync = now + self.resync_period

    # -- consumer side (the handler's thread) ------------------------------------------------------

    def start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stopped:
                return
            self._thread = threading.Thread(
                target=run_supervised,
                args=(self.name, self._run, self._is_stopped),
                name=self.name,
                daemon=True,
            )
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._buffer.clear()
            self._initial_pending = 0
            self._cond.notify_all()

    def join(self, timeout: float | None) -> bool:
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def _is_stopped(self) -> bool:
        with self._cond:
            return self._stopped

    def _run(self) -> None:
        cond = self._cond
        while True:
            with cond:
                while not self._buffer and not self._stopped:
                    cond.wait()
                if self._stopped:
                    return
                # Take everything queued so far in one go: one lock round trip per batch, not per event.
                batch = self._buffer
                self._buffer = deque()
                self._batch_left = len(batch)
            initial_done = 0
            try:
                for op, a, b, initial in batch:
                    if self._stopped:
                        return
                    self._deliver(op, a, b, initial)
                    self._batch_left -= 1
                    if initial:
                        initial_done += 1
            finally:
                with cond:
                    self._batch_left = 0
                    self._initial_pending -= initial_done

    def _deliver(self, op: int, a: Any, b: Any, initial: bool) -> None:
        """Call the handler; what it raises is logged and counted, and delivery goes on."""
        try:
            self._dispatch(op, a, b, initial)
        except Exception:
            self.errors += 1
            log.exception(
                "event handler raised", handler=self.name, notification=("add", "update", "delete")[op]
            )
        self.delivered += 1

    def _dispatch(self, op: int, a: Any, b: Any, initial: bool) -> None:
        if op == _UPDATE:
            if self.on_update is not None:
                self.on_update(a, b)
        elif op == _ADD:
            if self.on_add is not None:
                if self._add_flag:
                    self.on_add(a, initial)
                else:
                    self.on_add(a)
        elif self.on_delete is not None:
            self.on_delete(a)


class _InlineListener(_Listener):
    """A handler called on the thread that delivers the notification (the informer's controller
    thread, or the caller of ``add_event_handler`` for the initial adds): no buffer, no thread."""

    def add(self, op: int, a: Any, b: Any = None, initial: bool = False) -> None:
        if not self._stopped:
            self._deliver(op, a, b, initial)

    def pending(self) -> int:
        return 0

    def has_synced(self) -> bool:
        return self._upstream_synced()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self._stopped = True

    def join(self, timeout: float | None) -> bool:
        return True


class ResourceEventHandlerRegistration:
    """Returned by :meth:`SharedIndexInformer.add_event_handler`; pass it to ``remove_event_handler``."""

    def __init__(self, informer: SharedIndexInformer, listener: _Listener) -> None:
        self._informer = informer
        self._listener = listener

    @property
    def name(self) -> str:
        """The name of the handler's thread."""
        return self._listener.name

    @property
    def resync_period(self) -> float:
        """The effective resync period of this handler (0: never)."""
        return self._listener.resync_period

    def has_synced(self) -> bool:
        """True once the informer synced and this handler has processed its initial-list adds."""
        return self._listener.has_synced()

    def pending(self) -> int:
        """Notifications buffered for this handler and not yet delivered."""
        return self._listener.pending()

    def __repr__(self) -> str:
        return f"<ResourceEventHandlerRegistration {self.name}>"


class _Processor:
    """The set of listeners and which of them are due for a resync."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._listeners: dict[_Listener, bool] = {}  # listener -> due for resync
        self._started = False

    def add(self, listener: _Listener) -> None:
        with self._lock:
            self._listeners[listener] = False
            started = self._started
        if started:
            listener.start()

    def remove(self, listener: _Listener) -> bool:
        with self._lock:
            found = self._listeners.pop(listener, None) is not None
        listener.stop()
        return found

    def listeners(self) -> list[_Listener]:
        with self._lock:
            return list(self._listeners)

    def distribute(self, op: int, a: Any, b: Any, initial: bool, sync: bool) -> None:
        with self._lock:
            if sync:
                for listener, due in self._listeners.items():
                    if due:
                        listener.add(op, a, b, initial)
            else:
                for listener in self._listeners:
                    listener.add(op, a, b, initial)

    def should_resync(self) -> bool:
        now = self._clock.monotonic()
        needed = False
        with self._lock:
            for listener in self._listeners:
                due = listener.should_resync(now)
                self._listeners[listener] = due
                if due:
                    needed = True
                    listener.determine_next_resync(now)
        return needed

    def resync_check_period_changed(self, check: float) -> None:
        now = self._clock.monotonic()
        with self._lock:
            for listener in self._listeners:
                listener.resync_period = _determine_resync_period(listener.requested_resync, check)
                listener.determine_next_resync(now)

    def start(self) -> None:
        with self._lock:
            self._started = True
            listeners = list(self._listeners)
        for listener in listeners:
            listener.start()

    def stop(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener.stop()


class _InformerFIFO(DeltaFIFO):
    """The informer's DeltaFIFO: reports when a ``replace`` alone made it synced (an empty first list)."""

    def __init__(self, on_synced: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_synced = on_synced

    def replace(self, objs: Any, resource_version: str = "") -> None:
        super().replace(objs, resource_version)
        if self.has_synced():
            self._on_synced()


class SharedIndexInformer:
    """A cached, shared list+watch of one kind (optionally one namespace / selector); see the module doc.

    Args:
        client: a :class:`framework.client.Client` (its qps/burst throttle applies to lists and watches).
        api_version, kind: what to watch, e.g. ``"v1"``, ``"ConfigMap"``.
        namespace: one namespace, or ``None`` for all namespaces (or a cluster-scoped kind).
        label_selector, field_selector: server-side filters.
        resync_period: default handler resync period in seconds (0: no resync).
        transform: applied to every listed or watched object before it is cached or delivered, e.g.
            :func:`framework.cache.transforms.drop_managed_fields`; may mutate and return its argument.
        indexers: extra index functions (``{"by_owner": func}``); ``"namespace"`` is built in.
        clock: for resync periods and the reflector's backoff (tests pass a ``FakeClock``).
        page_size, inactivity_timeout, min_watch_timeout, backoff_initial, backoff_cap: reflector tuning
            (see :class:`~framework.cache.reflector.Reflector`).
        name: used in logs and thread names (default ``"<apiVersion>/<kind>[@namespace]"``).
    """

    def __init__(
        self,
        client: Any,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resync_period: float = 0,
        transform: TransformFunc | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        clock: Clock | None = None,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        inactivity_timeout: float | None = DEFAULT_INACTIVITY_TIMEOUT,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        backoff_initial: float = 0.8,
        backoff_cap: float = 30.0,
        name: str | None = None,
        metadata_only: bool = False,
    ) -> None:
        self.client = client
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace or None
        self.label_selector = label_selector or None
        self.field_selector = field_selector or None
        self.name = name or (f"{api_version}/{kind}" + (f"@{namespace}" if namespace else ""))
        self._clock: Clock = clock or RealClock()
        self._indexer = Indexer(indexers=indexers)
        self._transform = transform
        self._default_resync = max(float(resync_period or 0), 0.0)
        self._resync_check_period = self._default_resync
        self._page_size = page_size
        self._inactivity_timeout = inactivity_timeout
        self._min_watch_timeout = min_watch_timeout
        self._backoff_initial = backoff_initial
        self._backoff_cap = backoff_cap
        self._watch_error_handler: WatchErrorHandler | None = None
        self.metadata_only = metadata_only

        self._lock = threading.RLock()  # lifecycle and handler registration
        # Held while a popped batch of deltas is applied and distributed, and while a late handler
        # is added and replayed the cache: the handler sees the cache exactly once, nothing twice.
        self._block_deltas = threading.RLock()
        self._processor = _Processor(self._clock)
        self._handler_seq = itertools.count()
        self._fifo: DeltaFIFO | None = None
        self._reflector: Reflector | None = None
        self._controller_thread: threading.Thread | None = None
        self._started = False
        self._stop_event = threading.Event()
        # Notified when the FIFO reports synced or the informer stops; wait_for_cache_sync sleeps on it.
        self._sync_cond = threading.Condition(threading.Lock())
        self._synced = False

    # -- configuration -----------------------------------------------------------------------------

    @property
    def indexer(self) -> Indexer:
        """The cache: ``get_by_key``, ``list``, ``by_index``... Objects are shared: never mutate them."""
        return self._indexer

    def get_store(self) -> Indexer:
        """The cache (client-go spelling)."""
        return self._indexer

    def get_indexer(self) -> Indexer:
        """The cache (client-go spelling)."""
        return self._indexer

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def resync_period(self) -> float:
        """The default resync period of its handlers, in seconds (0: no resync)."""
        return self._default_resync

    @property
    def reflector(self) -> Reflector | None:
        """The running reflector (``None`` before :meth:`start`)."""
        return self._reflector

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Set the transform; only before :meth:`start`."""
        with self._lock:
            if self._started:
                raise RuntimeError("the transform cannot be changed after the informer started")
            self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler) -> None:
        """Receive every error that ends a list or a watch (default: logged); only before :meth:`start`."""
        with self._lock:
            if self._started:
                raise RuntimeError("the watch error handler cannot be changed after the informer started")
            self._watch_error_handler = handler

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions, back-filled from the cache; allowed while running.

        Raises:
            ValueError: a name is already registered.
        """
        with self._block_deltas:
            self._indexer.add_indexers(indexers)

    # -- handlers ----------------------------------------------------------------------------------

    def add_event_handler(
        self,
        on_add: Callable[..., Any] | None = None,
        on_update: Callable[[Any, Any], Any] | None = None,
        on_delete: Callable[[Any], Any] | None = None,
        resync_period: float | None = None,
        *,
        inline: bool = False,
    ) -> ResourceEventHandlerRegistration:
        """Register a handler; each gets its own thread and in-order buffer.

        ``resync_period`` (seconds) defaults to the informer's. After :meth:`start`, the handler first
        receives the current cache as ``on_add`` calls.

        ``inline=True``: no thread and no buffer; the handler is called on the informer's controller
        thread as each delta is processed (the initial adds of a late registration on the caller's
        thread). For a handler that only enqueues, e.g. a controller's: it saves a thread hand-off per
        event. It holds up the informer and every other handler while it runs, so it must be quick and
        must not call back into the informer; what it raises is logged and counted, as for any handler.

        Raises:
            RuntimeError: the informer was stopped.
        """
        with self._lock:
            if self._stop_event.is_set():
                raise RuntimeError(f"informer {self.name} has stopped; handler not added")
            period = self._default_resync if resync_period is None else max(float(resync_period), 0.0)
            if 0 < period < MINIMUM_RESYNC_PERIOD:
                log.warning(
                    "resync period too small; raised to the minimum",
                    informer=self.name,
                    requested=period,
                    minimum=MINIMUM_RESYNC_PERIOD,
                )
                period = MINIMUM_RESYNC_PERIOD
            check = self._resync_check_period
            if period > 0 and (check <= 0 or period < check):
                if self._started:
                    if check <= 0:
                        log.warning(
                            "informer started without resync; the handler's resync period is ignored",
                            informer=self.name,
                            requested=period,
                        )
                    else:
                        log.warning(
                            "resync period is smaller than the started informer's check period; raised",
                            informer=self.name,
                            requested=period,
                            check_period=check,
                        )
                else:
                    self._resync_check_period = period
                    self._processor.resync_check_period_changed(period)
            name = f"informer[{self.name}]-handler-{next(self._handler_seq)}"
            listener = (_InlineListener if inline else _Listener)(
                name,
                on_add,
                on_update,
                on_delete,
                period,
                _determine_resync_period(period, self._resync_check_period),
                self._clock.monotonic(),
                self.has_synced,
            )
            if not self._started:
                self._processor.add(listener)
                return ResourceEventHandlerRegistration(self, listener)
            with self._block_deltas:
                self._processor.add(listener)
                for obj in self._indexer.list():
                    listener.add(_ADD, obj, None, True)
            return ResourceEventHandlerRegistration(self, listener)

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> bool:
        """Stop delivering to a handler (pending notifications are dropped); False if unknown."""
        with self._block_deltas:
            return self._processor.remove(registration._listener)

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start listing, watching and delivering on the informer's own threads; returns at once.

        A second call does nothing; a stopped informer never starts again (logged).
        """
        with self._lock:
            if self._stop_event.is_set():
                log.warning("informer already stopped; not starting it again", informer=self.name)
                return
            if self._started:
                return
            fifo = _InformerFIFO(
                self._notify_synced,
                known_objects=self._indexer,
                emit_delta_type_replaced=True,
                transform=self._transform,
                transform_replaced=False,  # the reflector transforms listed pages as they arrive
            )
            reflector = Reflector(
                self.client,
                self.api_version,
                self.kind,
                fifo,
                namespace=self.namespace,
                label_selector=self.label_selector,
                field_selector=self.field_selector,
                page_size=self._page_size,
                clock=self._clock,
                name=self.name,
                min_watch_timeout=self._min_watch_timeout,
                inactivity_timeout=self._inactivity_timeout,
                resync_period=self._resync_check_period,
                should_resync=self._processor.should_resync,
                watch_error_handler=self._watch_error_handler,
                backoff=Backoff(self._backoff_initial, self._backoff_cap, clock=self._clock),
                metadata_only=self.metadata_only,
                page_transform=self._transform,
            )
            self._fifo = fifo
            self._reflector = reflector
            self._started = True
            self._processor.start()
            self._controller_thread = threading.Thread(
                target=run_supervised,
                args=(f"informer[{self.name}]-controller", self._process_loop, self._stop_event.is_set),
                kwargs={"wake": self._stop_event},
                name=f"informer[{self.name}]-controller",
                daemon=True,
            )
            self._controller_thread.start()
            # The reflector thread itself is supervised: a crash is logged and the loop restarted.
            reflector._thread = threading.Thread(
                target=run_supervised,
                args=(f"informer[{self.name}]-reflector", reflector.run, self._stop_event.is_set),
                kwargs={"wake": self._stop_event},
                name=f"informer[{self.name}]-reflector",
                daemon=True,
            )
            reflector._thread.start()
        log.debug("informer started", informer=self.name)

    def run(self, stop_event: threading.Event) -> None:
        """:meth:`start`, block until ``stop_event`` is set, then :meth:`stop`."""
        self.start()
        stop_event.wait()
        self.stop()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop every thread and join them within ``timeout`` seconds in total.

        Returns False if some thread was still running then (a handler stuck in user code, or a list
        in flight); those are daemon threads and exit when they return. Calling it again re-joins.
        """
        self.signal_stop()
        return self.join(timeout)

    def signal_stop(self) -> None:
        """Ask every thread to stop without waiting (see :meth:`join`)."""
        with self._lock:
            if self._stop_event.is_set():
                return
            self._stop_event.set()
            reflector, fifo = self._reflector, self._fifo
        if reflector is not None:
            reflector._signal_stop()
        if fifo is not None:
            fifo.close()
        self._processor.stop()
        with self._sync_cond:
            self._sync_cond.notify_all()

    def join(self, timeout: float | None = 5.0) -> bool:
        """Wait (at most ``timeout`` seconds in total) for the threads of a stopped informer to exit."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def remaining() -> float | None:
            return None if deadline is None else max(deadline - time.monotonic(), 0.0)

        reflector = self._reflector
        threads = [t for t in (reflector._thread if reflector else None, self._controller_thread) if t]
        ok = True
        for thread in threads:
            if thread is threading.current_thread():
                continue
            thread.join(remaining())
            ok = ok and not thread.is_alive()
        for listener in self._processor.listeners():
            ok = listener.join(remaining()) and ok
        if not ok:
            log.warning("informer threads still running after stop", informer=self.name, timeout=timeout)
        return ok

    def is_started(self) -> bool:
        return self._started

    def is_stopped(self) -> bool:
        return self._stop_event.is_set()

    # -- sync state --------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once the first list has been fully delivered to the cache (and handlers' buffers)."""
        fifo = self._fifo
        return fifo is not None and fifo.has_synced()

    def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced` (True) or ``timeout`` real seconds passed / stopped (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            # has_synced() takes the FIFO lock, under which the controller notifies _sync_cond: never
            # call it while holding _sync_cond.
            if self._synced or self.has_synced():
                return True
            if self._stop_event.is_set():
                return False
            wait = 0.1  # a safety net: the controller thread notifies as soon as the FIFO synced
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                wait = min(wait, remaining)
            with self._sync_cond:
                if not self._synced and not self._stop_event.is_set():
                    self._sync_cond.wait(wait)

    def _notify_synced(self) -> None:
        with self._sync_cond:
            self._synced = True
            self._sync_cond.notify_all()

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion the cache reflects (``""`` before the first list)."""
        reflector = self._reflector
        return reflector.last_sync_resource_version if reflector is not None else ""

    # -- delta processing (controller thread) ------------------------------------------------------

    def _process_loop(self) -> None:
        fifo = self._fifo
        assert fifo is not None
        handle = self._handle_deltas
        while not self._stop_event.is_set():
            try:
                fifo.pop(handle)
            except FIFOClosedError:
                return
            except Exception:
                log.exception("processing deltas failed", informer=self.name)

    def _handle_deltas(self, deltas: list[Any], is_in_initial_list: bool) -> None:
        indexer = self._indexer
        store = indexer._store  # the Indexer's ThreadSafeStore: key computed once per delta
        key_func = indexer.key_func
        distribute = self._processor.distribute
        with self._block_deltas:
            for delta in deltas:
                obj = delta.object
                key = key_func(obj)
                if delta.type is DeltaType.Deleted:
                    store.delete(key)
                    distribute(_DELETE, obj, None, False, False)
                    continue
                old = store.get(key)
                store.update(key, obj)
                if old is not None:
                    # Equal resourceVersions: a resync (Sync, or Replaced by a relist): only due handlers.
                    sync = _resource_version(old) == _resource_version(obj)
                    distribute(_UPDATE, old, obj, False, sync)
                else:
                    distribute(_ADD, obj, None, is_in_initial_list, False)
        # Runs under the FIFO's lock, after pop() counted this item: the last initial one syncs it.
        if (
            is_in_initial_list
            and not self._synced
            and self._fifo is not None
            and self._fifo._has_synced_locked()
        ):
            self._notify_synced()

    def __repr__(self) -> str:
        state = "stopped" if self.is_stopped() else "started" if self._started else "new"
        return f"<SharedIndexInformer {self.name} {state}>"
