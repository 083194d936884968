"""Reflector: keeps a store (a :class:`~framework.cache.DeltaFIFO`) in step with the API server.

A port of client-go's ``tools/cache/reflector.go`` on threads. Each *pass* lists the collection and
hands it to ``store.replace(items, rv)``, then watches from the list's resourceVersion and feeds every
event to ``store.add/update/delete``. Passes repeat forever under a sliding exponential backoff::

    fifo = DeltaFIFO(known_objects=indexer)
    reflector = Reflector(client, "v1", "ConfigMap", fifo, namespace="default")
    reflector.start()  # named daemon thread; or reflector.run(stop_event) on your own thread
    ...
    reflector.stop()

Contracts (client-go semantics; all waiting goes through the ``clock``):

- **List.** Pages of ``page_size`` (500) with ``limit``/``continue``. The relist resourceVersion is
  ``"0"`` before the first sync, the last synced RV afterwards, and ``""`` (a quorum read) once that RV
  was found unavailable. As in client-go, a relist at a concrete RV is not paged unless the first
  ``"0"`` list came back paged (the server ignores the watch cache for limits). An expired ``continue``
  falls back to one full list at the same RV; a list that fails with 410 Gone/Expired or "too large
  resource version" marks the RV unavailable and is retried at once with ``""``. The whole list and
  the ``replace`` run with the cyclic GC paused (:func:`framework.client.gc_paused`); after a big list
  the new objects are moved straight to the oldest GC generation (see ``_promote_young_objects``).
- **Watch.** From the list RV, always with ``allowWatchBookmarks=true`` and ``timeoutSeconds`` uniform in
  ``[min_watch_timeout, 2 * min_watch_timeout)`` (at least 5 minutes) so reconnects spread out.
- **RV bookkeeping.** ADDED/MODIFIED/DELETED/BOOKMARK advance :attr:`last_sync_resource_version`,
  except that a watch started at ``""``/``"0"`` delivers synthetic ADDEDs out of RV order, so the RV is
  held until its first non-ADDED event.
- **Watch outcomes.** A clean close (server timeout, dropped watches) re-watches from the last RV; a
  watch that closed within 1 s without events ends the pass (relist). A 410 (``ERROR`` event) ends the
  pass and relists at the last RV. 429 and connection failures when opening (or 429 inside) a watch
  back off and re-watch. Any other error ends the pass (backoff, relist). Objects of the wrong kind are
  logged and skipped; a store that rejects an object (e.g. a raising transform) is logged, the object
  skipped.
- **Dead streams.** urllib3 speaks HTTP/1.1 and has no HTTP/2 ping, so a silently dead connection
  would block a read forever. ``inactivity_timeout`` (default 120 s: twice the API server's 60 s
  bookmark period) bounds every read of the watch socket; when it passes without a byte the watch is
  closed, logged and re-opened from the last RV. It is measured by the socket, in real time.
- **Backoff.** Between passes and before re-watching after 429/connection errors: 0.8 s doubling to
  30 s, each delay stretched by ``jitter`` (``delay * (1 + jitter * U[0,1))``, client-go's
  ``wait.Jitter``), reset to 0.8 s when no backoff was needed for 2 minutes, and whenever a watch is
  opened: the server answers again, so the relist after a 410 on that watch (routine after an API
  server restart) comes after 0.8 s, not after the next step of the outage's grown backoff (up to 60
  s of a stale cache; client-go would wait it, sharing one backoff between watch retries and relists).
- **Resync.** With ``resync_period > 0`` a thread calls ``store.resync()`` every period when
  ``should_resync()`` (default: always) says so.

Errors are logged with structlog (logger ``framework.cache``) through ``watch_error_handler``; nothing is
swallowed silently. :meth:`run` returns only once stopped; an unexpected exception (a bug, not an API
or network error) propagates so that a supervisor can log it and restart the loop, which
:meth:`start` does.
"""

from __future__ import annotations

import gc
import random
import threading
from collections.abc import Callable
from typing import Any, Protocol

import structlog
import urllib3

from framework.client import (
    APIError,
    Gone,
    NetworkError,
    NoKindMatchError,
    Timeout,
    TooManyRequests,
    gc_paused,
)
from framework.clock import Clock, RealClock
from framework.meta.object import get_metadata, get_resource_version

__all__ = [
    "DEFAULT_INACTIVITY_TIMEOUT",
    "DEFAULT_PAGE_SIZE",
    "Backoff",
    "Reflector",
    "ReflectorStore",
    "WatchErrorHandler",
    "default_watch_error_handler",
    "run_supervised",
]

log = structlog.get_logger("framework.cache")

DEFAULT_PAGE_SIZE = 500
"""client-go's pager page size."""
DEFAULT_INACTIVITY_TIMEOUT = 120.0
"""Seconds without a byte on a watch before it is considered dead (2x the 60 s bookmark period)."""
MIN_WATCH_TIMEOUT = 300.0
"""client-go never asks for watches shorter than 5 minutes."""
_VERY_SHORT_WATCH = 1.0
_PROMOTE_AFTER_ITEMS = 10_000
_LOUD_BACKOFF_S = 5.0  # relist waits at least this long are logged at info
_STOP_POLL = 0.2

WatchErrorHandler = Callable[["Reflector", BaseException], None]
"""Called with every error that ends a list or a watch (the default logs it)."""

# Errors of a list/watch pass that are part of normal operation: answered by backoff and relist. A kind
# discovery does not know (yet) is one: a CRD installed after the controller started is picked up once
# it is served, as controller-runtime's Kind source keeps retrying.
_EXPECTED_ERRORS = (APIError, urllib3.exceptions.HTTPError, OSError, NoKindMatchError)


class ReflectorStore(Protocol):
    """What a reflector feeds: :class:`~framework.cache.DeltaFIFO` (or any store with these methods)."""

    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def replace(self, objs: list[Any], resource_version: str) -> None: ...

    def resync(self) -> None: ...


class _StoreError(Exception):
    """``store.replace`` failed: the pass ends and the list is retried after a backoff."""


class _VeryShortWatch(Exception):
    """A watch closed within a second without any event: relist rather than spin on re-watching."""


# Everything that ends a pass and is answered by backoff and relist (anything else is a bug).
_HANDLED_ERRORS = (*_EXPECTED_ERRORS, _StoreError, _VeryShortWatch)


def default_watch_error_handler(reflector: Reflector, err: BaseException) -> None:
    """Log an error that ended a list or watch: 410s at info level (routine), the rest as warnings."""
    if isinstance(err, Gone):
        log.info("watch closed: resourceVersion too old, relisting", reflector=reflector.name, error=str(err))
    elif isinstance(err, _StoreError):
        log.error("store rejected the list, will relist", reflector=reflector.name, error=str(err))
    else:
        log.warning(
            "list/watch failed",
            reflector=reflector.name,
            error=str(err),
            error_type=type(err).__name__,
        )


class Backoff:
    """client-go's reflector backoff: ``initial`` doubling (``factor``) up to ``cap`` with jitter.

    :meth:`next` returns ``base * (1 + jitter * U[0,1))`` and doubles ``base`` (capped). If more than
    ``reset_after`` seconds (on ``clock``) passed since the previous :meth:`next`, ``base`` starts over at
    ``initial`` first: a reflector that ran healthily for 2 minutes backs off briefly again.
    """

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if initial <= 0 or cap < initial or factor < 1 or jitter < 0:
            raise ValueError("backoff needs 0 < initial <= cap, factor >= 1 and jitter >= 0")
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self.reset_after = reset_after
        self._clock = clock or RealClock()
        self._rng = rng or random.Random()
        self._base = initial
        self._last: float | None = None
        self._lock = threading.Lock()

    def next(self) -> float:
        """The next delay in seconds (advances the sequence)."""
        with self._lock:
            now = self._clock.monotonic()
            if self._last is None or now - self._last > self.reset_after:
                self._base = self.initial
            self._last = now
            delay = self._base
            self._base = min(self._base * self.factor, self.cap)
        if self.jitter > 0:
            delay += self._rng.random() * self.jitter * delay
        return delay

    def reset(self) -> None:
        """Start over at ``initial``."""
        with self._lock:
            self._base = self.initial
            self._last = None


def run_supervised(
    name: str,
    target: Callable[[], Any],
    stopped: Callable[[], bool],
    *,
    wake: threading.Event | None = None,
    first_delay: float = 1.0,
    max_delay: float = 30.0,
) -> None:
    """Run ``target()`` until ``stopped()``; if it raises or returns early, log that and run it again.

    Used as the body of every framework thread so a dying watcher or worker is restarted and logged,
    never silently lost. Restarts wait ``first_delay`` doubling to ``max_delay`` seconds (real time;
    ``wake``, when set, cuts the wait short).
    """
    delay = first_delay
    while not stopped():
        try:
            target()
        except Exception:
            if stopped():
                log.debug("thread raised while stopping", thread=name, exc_info=True)
                return
            log.exception("thread died unexpectedly; restarting it", thread=name, restart_in=delay)
        else:
            if stopped():
                return
            log.error("thread returned unexpectedly; restarting it", thread=name, restart_in=delay)
        if wake is not None:
            if wake.wait(delay):
                return
        else:
            threading.Event().wait(delay)
        delay = min(delay * 2, max_delay)


class Reflector:
    """Lists and watches one kind into ``store``; see the module docstring for the exact contract.

    Args:
        client: a :class:`framework.client.Client`.
        api_version, kind: what to reflect (``"v1"``, ``"ConfigMap"``; ``"apps/v1"``, ``"Deployment"``).
        store: the :class:`~framework.cache.DeltaFIFO` (or anything with add/update/delete/replace/resync).
        namespace: one namespace, or ``None`` for all (or a cluster-scoped kind).
        label_selector, field_selector: server-side filters for both list and watch.
        page_size: list page size; 0 disables paging.
        clock: time source for backoff, resync and watch-duration checks.
        name: used in logs and thread names (default ``"<apiVersion>/<kind>[@namespace]"``).
        min_watch_timeout: watches ask for ``timeoutSeconds`` in ``[min, 2*min)``; raised to 300 s.
        inactivity_timeout: seconds of silence after which a watch is deemed dead (``None``: never).
        resync_period: seconds between ``store.resync()`` calls (0: never).
        should_resync: consulted before each resync; the shared informer passes its processor's.
        watch_error_handler: receives every error ending a list or watch (default: logs it).
        backoff: the :class:`Backoff` to use (default: client-go's, on ``clock``).
        list_timeout: per-page connect and read timeout in seconds (default: the client's).
    """

    def __init__(
        self,
        client: Any,
        api_version: str,
        kind: str,
        store: ReflectorStore,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        clock: Clock | None = None,
        name: str | None = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        *,
        inactivity_timeout: float | None = DEFAULT_INACTIVITY_TIMEOUT,
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        backoff: Backoff | None = None,
        list_timeout: float | None = None,
        rng: random.Random | None = None,
        metadata_only: bool = False,
        page_transform: Callable[[Any], Any] | None = None,
    ) -> None:
        if page_size < 0:
            raise ValueError("page_size must be >= 0")
        if inactivity_timeout is not None and inactivity_timeout <= 0:
            raise ValueError("inactivity_timeout must be positive or None")
        self.client = client
        self.api_version = api_version
        self.kind = kind
        self.store = store
        self.namespace = namespace or None
        self.label_selector = label_selector or None
        self.field_selector = field_selector or None
        self.page_size = page_size
        self.clock: Clock = clock or RealClock()
        self.name = name or (f"{api_version}/{kind}" + (f"@{namespace}" if namespace else ""))
        self.min_watch_timeout = max(float(min_watch_timeout), MIN_WATCH_TIMEOUT)
        self.inactivity_timeout = inactivity_timeout
        self.resync_period = float(resync_period or 0.0)
        self.should_resync = should_resync
        self.watch_error_handler: WatchErrorHandler = watch_error_handler or default_watch_error_handler
        self._rng = rng or random.Random()
        self.backoff = backoff or Backoff(clock=self.clock, rng=self._rng)
        self.list_timeout = list_timeout
        # Only ``metadata`` of each object (PartialObjectMetadata): for caches that need no more.
        self.metadata_only = metadata_only
        # Applied to each listed page as it arrives, so a big initial list never holds every full
        # object at once (peak memory is one raw page plus the transformed objects).
        self.page_transform = page_transform

        self._lock = threading.Lock()
        # Wakes clock waits (backoff, resync) on stop; a Condition so a FakeClock can wake it too.
        self._cond = threading.Condition(self._lock)
        self._stop_event = threading.Event()
        self._watch: Any = None
        self._last_sync_rv = ""
        self._rv_unavailable = False
        self._paginated_result = False
        self._running = 0
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._bridged: set[int] = set()
        self._last_error: str | None = None
        # Counters for tests and debugging.
        self.list_count = 0
        self.watch_count = 0
        self.relist_count = 0

    # -- state -----------------------------------------------------------------------------------------

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion of the last list, event or bookmark applied to the store (``""`` before)."""
        with self._lock:
            return self._last_sync_rv

    @property
    def last_error(self) -> str | None:
        """Why the last list failed (None once a list succeeded): for readiness checks and logs."""
        with self._lock:
            return self._last_error

    def _set_last_sync_rv(self, rv: str) -> None:
        with self._lock:
            self._last_sync_rv = rv

    def relist_resource_version(self) -> str:
        """The RV the next list asks for: ``""`` if the last one is unavailable, ``"0"`` if never synced."""
        with self._lock:
            if self._rv_unavailable:
                return ""
            return self._last_sync_rv or "0"

    @property
    def stopped(self) -> bool:
        return self._stop_event.is_set()

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> threading.Thread:
        """Run the reflector on a named, supervised daemon thread; returns the thread."""
        with self._lock:
            if self._thread is not None:
                return self._thread
            self._thread = threading.Thread(
                target=run_supervised,
                args=(f"reflector {self.name}", self.run, self._stop_event.is_set),
                kwargs={"wake": self._stop_event},
                name=f"reflector[{self.name}]",
                daemon=True,
            )
        self._thread.start()
        return self._thread

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Stop: wake every wait, close the open watch, join the :meth:`start` thread (bounded).

        Returns False if that thread was still alive after ``timeout`` seconds (a list in flight).
        """
        self._signal_stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _signal_stop(self) -> None:
        with self._cond:
            self._stop_event.set()
            watch = self._watch
            self._cond.notify_all()
        if watch is not None:
            watch.close()

    def run(self, stop_event: threading.Event | None = None) -> None:
        """List and watch until stopped (``stop_event`` set, or :meth:`stop`); blocks the caller.

        API and network errors are handled here (logged, backoff, relist). Anything else propagates:
        run it under :func:`run_supervised` (as :meth:`start` does) to have it logged and restarted.
        """
        if stop_event is not None and stop_event is not self._stop_event:
            self._bridge(stop_event)
        with self._lock:
            self._running += 1
            self._generation += 1
            generation = self._generation
        resync = None
        if self.resync_period > 0:
            resync = threading.Thread(
                target=self._resync_loop,
                args=(generation,),
                name=f"reflector[{self.name}]-resync",
                daemon=True,
            )
            resync.start()
        try:
            while not self.stopped:
                try:
                    self._list_and_watch()
                except _HANDLED_ERRORS as err:
                    if self.stopped:
                        break
                    with self._lock:
                        self._last_error = str(err) or type(err).__name__
                    self.watch_error_handler(self, err)
                if self.stopped:
                    break
                delay = self.backoff.next()
                # A long wait leaves the cache stale for that long: say so where operators look.
                (log.info if delay >= _LOUD_BACKOFF_S else log.debug)(
                    "reflector backing off before relisting", reflector=self.name, seconds=round(delay, 3)
                )
                if self._sleep(delay):
                    break
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()
            if resync is not None:
                resync.join(1.0)

    def _bridge(self, stop_event: threading.Event) -> None:
        """Translate an external stop event into :meth:`_signal_stop` (closes a blocked watch read)."""
        with self._lock:
            if id(stop_event) in self._bridged:
                return
            self._bridged.add(id(stop_event))

        def wait() -> None:
            while not stop_event.wait(_STOP_POLL):
                if self.stopped:
                    return
            self._signal_stop()

        threading.Thread(target=wait, name=f"reflector[{self.name}]-stop", daemon=True).start()

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` on the clock; True if stopped meanwhile."""
        with self._cond:
            deadline = self.clock.monotonic() + seconds
            while not self._stop_event.is_set():
                if not self.clock.wait_until(self._cond, deadline) and self.clock.monotonic() >= deadline:
                    break
            return self._stop_event.is_set()

    # -- resync ----------------------------------------------------------------------------------------

    def _resync_loop(self, generation: int) -> None:
        """Resync every ``resync_period`` while the :meth:`run` call that started it is running."""
        period = self.resync_period

        def over() -> bool:
            return self._stop_event.is_set() or self._running <= 0 or self._generation != generation

        while True:
            with self._cond:
                deadline = self.clock.monotonic() + period
                while not over():
                    if self.clock.monotonic() >= deadline:
                        break
                    self.clock.wait_until(self._cond, deadline)
                if over():
                    return
            try:
                if self.should_resync is None or self.should_resync():
                    log.debug("resyncing store", reflector=self.name)
                    self.store.resync()
            except Exception:
                log.exception("resync failed", reflector=self.name)

    # -- one pass: list, then watch --------------------------------------------------------------------

    def _list_and_watch(self) -> None:
        self._list()
        self._watch_loop()

    def _list(self) -> None:
        rv = self.relist_resource_version()
        with gc_paused():
            try:
                items, list_rv, paginated = self._list_pages(rv)
            except APIError as err:
                if not (isinstance(err, Gone) or _is_too_large_rv(err)) or rv == "":
                    raise
                log.info(
                    "list resourceVersion unavailable; relisting from the latest state",
                    reflector=self.name,
                    resource_version=rv,
                    error=str(err),
                )
                with self._lock:
                    self._rv_unavailable = True
                rv = ""
                items, list_rv, paginated = self._list_pages(rv)
            if self.stopped:
                return
            with self._lock:
                if rv == "0" and paginated:
                    self._paginated_result = True
                self._rv_unavailable = False
                # Before the store has the list, not after: its consumer may report the informer synced
                # (and a cached List answer with this resourceVersion) as soon as it pops the items.
                previous_rv, self._last_sync_rv = self._last_sync_rv, list_rv
            try:
                self.store.replace(items, list_rv)
            except Exception as err:
                with self._lock:
                    self._last_sync_rv = previous_rv
                log.exception("store.replace failed", reflector=self.name, items=len(items))
                raise _StoreError(f"unable to sync list result: {err}") from err
            if len(items) >= _PROMOTE_AFTER_ITEMS:
                _promote_young_objects()
        with self._lock:
            self._last_error = None
        log.debug("listed", reflector=self.name, items=len(items), resource_version=list_rv)

    def _page_limit(self, rv: str) -> int:
        if self.page_size == 0:
            return 0
        with self._lock:
            paginated = self._paginated_result
        if not paginated and rv not in ("", "0"):
            # As client-go: a relist at a concrete RV is served unpaged (from the watch cache),
            # unless the server showed it pages such lists.
            return 0
        return self.page_size

    def _list_pages(self, rv: str) -> tuple[list[Any], str, bool]:
        """client-go's pager: all pages at ``rv``; an expired continue falls back to one full list."""
        limit = self._page_limit(rv)
        self.list_count += 1
        if self._last_sync_rv:
            self.relist_count += 1
        page = self._list_call(rv, limit or None, None)
        items: list[Any] = self._page_items(page)
        meta = get_metadata(page)
        list_rv = meta.get("resourceVersion") or ""
        cont = meta.get("continue")
        paginated = bool(cont)
        while cont:
            if self.stopped:
                return items, list_rv, paginated
            try:
                page = self._list_call(None, limit, cont)
            except Gone:
                log.info("continue token expired; falling back to a full list", reflector=self.name)
                page = self._list_call(rv, None, None)
                items = self._page_items(page)
                list_rv = get_resource_version(page)
                break
            items.extend(self._page_items(page))
            cont = get_metadata(page).get("continue")
        return items, list_rv, paginated

    def _page_items(self, page: dict[str, Any]) -> list[Any]:
        items = page.get("items") or []
        if self.metadata_only:
            for item in items:
                self._fix_metadata_kind(item)
        if self.page_transform is None:
            return items
        out = [self.page_transform(item) for item in items]
        items.clear()  # drop the raw objects now, not when the whole list is done
        return out

    def _fix_metadata_kind(self, obj: Any) -> None:
        """A PartialObjectMetadata from the server becomes a metadata-only object of the watched kind
        (controller-runtime's GVK fixup for metadata informers), so handlers and mappers see a
        ``Deployment`` whose body is just ``metadata``."""
        if type(obj) is dict and obj.get("kind") == "PartialObjectMetadata":
            obj["apiVersion"] = self.api_version
            obj["kind"] = self.kind

    def _list_call(self, rv: str | None, limit: int | None, cont: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"metadata_only": True} if self.metadata_only else {}
        if self.list_timeout is not None:
            kwargs["timeout"] = self.list_timeout
        return self.client.list(
            self.api_version,
            self.kind,
            namespace=self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            limit=limit,
            continue_=cont,
            resource_version=rv or None,
            **kwargs,
        )

    def _watch_loop(self) -> None:
        while not self.stopped:
            with self._lock:
                rv = "" if self._rv_unavailable else self._last_sync_rv
            timeout_seconds = int(self.min_watch_timeout * (self._rng.random() + 1.0))
            try:
                self.watch_count += 1
                watch = self.client.watch(
                    self.api_version,
                    self.kind,
                    namespace=self.namespace,
                    resource_version=rv or None,
                    label_selector=self.label_selector,
                    field_selector=self.field_selector,
                    timeout_seconds=timeout_seconds,
                    allow_watch_bookmarks=True,
                    read_timeout=self.inactivity_timeout,
                    **({"metadata_only": True} if self.metadata_only else {}),
                )
            except (TooManyRequests, NetworkError) as err:
                if self.stopped:
                    return
                delay = self.backoff.next()
                log.info(
                    "watch could not be opened; backing off",
                    reflector=self.name,
                    error=str(err),
                    seconds=round(delay, 3),
                )
                if self._sleep(delay):
                    return
                continue
            # The server answered: the outage the backoff grew on is over. Without this, a 410 on this
            # watch (a restarted server keeps no history) waits the next step of that outage's backoff
            # before relisting -- up to a minute of a stale cache (client-go shares the backoff alike).
            self.backoff.reset()
            with self._lock:
                self._watch = watch
                stopping = self._stop_event.is_set()
            if stopping:
                watch.close()
                return
            try:
                self._handle_watch(watch, rv)
            except Timeout as err:
                if err.status != 0:
                    raise
                if self.stopped:
                    return
                log.warning(
                    "watch stream inactive; closing it and re-watching",
                    reflector=self.name,
                    inactivity_timeout=self.inactivity_timeout,
                    resource_version=self.last_sync_resource_version,
                )
                continue
            except TooManyRequests as err:
                if self.stopped:
                    return
                delay = self.backoff.next()
                log.info("watch returned 429; backing off", reflector=self.name, error=str(err))
                if self._sleep(delay):
                    return
                continue
            finally:
                watch.close()
                with self._lock:
                    self._watch = None

    def _handle_watch(self, watch: Any, start_rv: str) -> None:
        start = self.clock.monotonic()
        store = self.store
        kind = self.kind
        count = 0
        # Synthetic ADDEDs of a watch from ""/"0" come in no RV order: hold the RV until they end.
        holding = start_rv in ("", "0")
        for etype, obj in watch:
            if self._stop_event.is_set():
                return
            meta = obj.get("metadata") if type(obj) is dict else None
            if meta is None:
                log.error("watch event without metadata; skipped", reflector=self.name, type=etype)
                continue
            if etype == "BOOKMARK":
                rv = meta.get("resourceVersion")
                if rv:
                    self._set_last_sync_rv(rv)
                continue
            if self.metadata_only:
                self._fix_metadata_kind(obj)
            obj_kind = obj.get("kind")
            if obj_kind is not None and obj_kind != kind:
                log.error(
                    "watch event of an unexpected kind; skipped",
                    reflector=self.name,
                    expected=kind,
                    got=obj_kind,
                )
                continue
            try:
                if etype == "ADDED":
                    store.add(obj)
                elif etype == "MODIFIED":
                    store.update(obj)
                elif etype == "DELETED":
                    store.delete(obj)
                else:
                    log.error("unknown watch event type; skipped", reflector=self.name, type=etype)
                    continue
            except Exception:
                log.exception(
                    "store rejected a watch event; object skipped",
                    reflector=self.name,
                    type=etype,
                    name=meta.get("name"),
                    namespace=meta.get("namespace"),
                )
            count += 1
            if holding and etype == "ADDED":
                continue
            holding = False
            rv = meta.get("resourceVersion")
            if rv:
                self._set_last_sync_rv(rv)
        if self._stop_event.is_set():
            return
        if count == 0 and self.clock.monotonic() - start < _VERY_SHORT_WATCH:
            raise _VeryShortWatch(
                f"very short watch: {self.name}: unexpected watch close - watch lasted less than a second "
                "and no items received"
            )
        log.debug("watch closed; re-watching", reflector=self.name, events=count)


def _promote_young_objects() -> None:
    """Move every GC-tracked object into the oldest generation, in O(1): ``gc.freeze(); gc.unfreeze()``.

    A big list leaves millions of young objects (decoded while the GC was paused) that will live as
    long as the cache. Left young, the first collection after the GC is re-enabled walks all of them
    (~0.3 s per 100k ConfigMaps), the next one again, and then a full collection follows. Promoted at
    once they are only walked by full collections, at the pace of the rest of the long-lived heap.
    Skipped when the application froze objects itself (``gc.unfreeze`` would thaw them too).
    """
    if gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()


def _is_too_large_rv(err: APIError) -> bool:
    if not isinstance(err, Timeout) or err.status == 0:
        return False
    if any(c.get("reason") == "ResourceVersionTooLarge" for c in err.causes if isinstance(c, dict)):
        return True
    return "too large resource version" in (err.message or "").lower()
