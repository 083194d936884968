"""SharedInformerFactory: one shared informer per (apiVersion, kind, namespace, selectors), started together.

Several controllers watching the same resource should share one list+watch and one cache. Ask the
factory instead of building informers yourself::

    factory = SharedInformerFactory(client, default_resync=0)
    pods = factory.informer_for("v1", "Pod", transform=drop_managed_fields)
    same = factory.informer_for("v1", "Pod")  # the same object
    pods.add_event_handler(on_add=..., on_update=..., on_delete=...)
    factory.start()  # starts every informer not started yet; call again after adding more
    synced = factory.wait_for_cache_sync(timeout=60)  # {InformerKey: bool}
    if not all(synced.values()):
        raise RuntimeError(f"caches not synced: {[k for k, ok in synced.items() if not ok]}")
    ...
    factory.shutdown()  # stops all informers; later start() calls do nothing

The first request for a key decides the informer's transform, indexers and resync period; a later
request with a different transform is logged and gets the existing informer (as client-go's factory,
which fixes these per factory).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import structlog

from framework.clock import Clock

from .delta_fifo import TransformFunc
from .shared_informer import SharedIndexInformer
from .store import IndexFunc

__all__ = ["InformerKey", "SharedInformerFactory"]

log = structlog.get_logger("framework.cache")


class InformerKey(NamedTuple):
    """What makes two informers the same: kind, namespace and selectors."""

    api_version: str
    kind: str
    namespace: str | None
    label_selector: str | None
    field_selector: str | None
    metadata_only: bool = False


class SharedInformerFactory:
    """Hands out shared informers and starts/stops them together.

    Args:
        client: the :class:`framework.client.Client` every informer uses.
        default_resync: resync period (seconds) of informers created here unless overridden.
        namespace: namespace for informers that ask for none (``None``: all namespaces).
        clock: clock for every informer (tests pass a ``FakeClock``).
        informer_options: extra keyword arguments for every :class:`SharedIndexInformer` (e.g.
            ``{"inactivity_timeout": 90, "page_size": 1000}``).
    """

    def __init__(
        self,
        client: Any,
        default_resync: float = 0,
        namespace: str | None = None,
        clock: Clock | None = None,
        *,
        informer_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.default_resync = default_resync
        self.namespace = namespace or None
        self.clock = clock
        self.informer_options = dict(informer_options or {})
        self._lock = threading.Lock()
        self._informers: dict[InformerKey, SharedIndexInformer] = {}
        self._transforms: dict[InformerKey, TransformFunc | None] = {}
        self._started: set[InformerKey] = set()
        self._shutting_down = False

    def informer_for(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: TransformFunc | None = None,
        *,
        resync_period: float | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        metadata_only: bool = False,
    ) -> SharedIndexInformer:
        """The shared informer for this kind, namespace and selectors (created on first request).

        ``namespace=None`` means the factory's namespace. ``indexers`` given to an existing informer
        are added to it (names it already has are skipped).
        """
        ns = namespace or self.namespace
        key = InformerKey(
            api_version, kind, ns or None, label_selector or None, field_selector or None, metadata_only
        )
        with self._lock:
            informer = self._informers.get(key)
            if informer is None:
                informer = SharedIndexInformer(
                    self.client,
                    api_version,
                    kind,
                    namespace=key.namespace,
                    label_selector=key.label_selector,
                    field_selector=key.field_selector,
                    resync_period=self.default_resync if resync_period is None else resync_period,
                    transform=transform,
                    indexers=indexers,
                    clock=self.clock,
                    metadata_only=metadata_only,
                    **self.informer_options,
                )
                self._informers[key] = informer
                self._transforms[key] = transform
                return informer
            known = self._transforms.get(key)
        if transform is not None and transform is not known:
            log.warning(
                "informer already exists with another transform; the existing one is kept",
                api_version=api_version,
                kind=kind,
                namespace=key.namespace,
            )
        if indexers:
            existing = informer.indexer.get_indexers()
            new = {name: fn for name, fn in indexers.items() if name not in existing}
            if new:
                informer.add_indexers(new)
        return informer

    def informers(self) -> dict[InformerKey, SharedIndexInformer]:
        """Every informer requested so far."""
        with self._lock:
            return dict(self._informers)

    def start(self) -> None:
        """Start every informer not started yet (each runs its own threads); no-op after shutdown."""
        with self._lock:
            if self._shutting_down:
                log.warning("factory is shut down; not starting informers")
                return
            todo = [(k, inf) for k, inf in self._informers.items() if k not in self._started]
            self._started.update(k for k, _ in todo)
        for _, informer in todo:
            informer.start()

    def wait_for_cache_sync(self, timeout: float | None = None) -> dict[InformerKey, bool]:
        """Wait until every started informer synced; ``{key: synced}`` (real-time ``timeout``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            started = [(k, self._informers[k]) for k in self._started]
        result: dict[InformerKey, bool] = {}
        for key, informer in started:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            result[key] = informer.wait_for_cache_sync(remaining)
        return result

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Stop every informer and join their threads (within ``timeout`` seconds in total)."""
        with self._lock:
            self._shutting_down = True
            informers = list(self._informers.values())
        for informer in informers:
            informer.signal_stop()
        deadline = time.monotonic() + timeout
        ok = True
        for informer in informers:
            ok = informer.join(max(deadline - time.monotonic(), 0.0)) and ok
        return ok

    def __enter__(self) -> SharedInformerFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
