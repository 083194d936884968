"""The manager's informer cache: a :class:`~framework.client.interfaces.Reader` plus informers, as
controller-runtime's ``pkg/cache`` Cache is. ``mgr.client`` is the live client with this cache in front
of its reads (:meth:`Client.with_cache <framework.client.Client.with_cache>`)."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from framework.cache import SharedIndexInformer, SharedInformerFactory
from framework.cache.reader import CacheReader, IndexedReader
from framework.cache.transforms import drop_managed_fields
from framework.client import Client, NoKindMatchError
from framework.clock import Clock

log = structlog.get_logger("framework.manager")

IndexFunc = Callable[[dict], list[str]]


@dataclass(frozen=True)
class CacheOptions:
    """What the cache keeps of one kind, so no controller caches more of the cluster than it needs.

    ``transform`` defaults to dropping ``managedFields`` (never needed by controllers, ~30% of an object).
    """

    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    transform: Callable[[Any], Any] | None = drop_managed_fields
    # Cache only ``metadata`` (PartialObjectMetadata objects): e.g. Secrets, whose data a controller
    # must never hold, or kinds watched only to map events.
    metadata_only: bool = False
    # Take part in the manager's periodic resync (``sync_period``). Off for kinds whose handlers drop
    # resync updates anyway (create-only predicates): a resync queues every cached object at once.
    resync: bool = True
    # controller-runtime's ``cache.ByObject.UnsafeDisableDeepCopy``: the client's reads of this kind
    # return the cached dicts themselves instead of copies, for reconcilers that only read (a copy per
    # get is a JSON round trip). Such a caller must never mutate what it gets.
    unsafe_disable_deep_copy: bool = False


_DEFAULT_OPTIONS = CacheOptions()

DEFAULT_SYNC_PERIOD = 10 * 3600.0
"""controller-runtime's ``cache.Options.SyncPeriod`` default: every cached object is re-delivered to the
handlers as an update with an unchanged resourceVersion about every 10 hours."""


def jittered_sync_period(sync_period: float) -> float:
    """``sync_period`` times U[0.9, 1.1), per informer, so kinds do not all resync at the same instant
    (controller-runtime ``pkg/cache/internal/informers.go``)."""
    return sync_period * (0.9 + 0.2 * random.random())


class Cache(IndexedReader):
    """One shared informer per kind (per its :class:`CacheOptions`), and a
    :class:`~framework.client.interfaces.Reader` over them.

    ``get`` and ``list`` take the live client's arguments and give its results and errors: a List dict
    from ``list`` (``metadata.resourceVersion`` is the informer's last synced one), ``NotFound`` for a
    missing object, ``ValueError`` for a namespace that does not fit the kind's scope. Objects are deep
    copies unless the kind's :class:`CacheOptions` say ``unsafe_disable_deep_copy``. The first read of
    a kind without an informer starts one and waits for it to sync (as controller-runtime's informer
    cache does); an unknown kind raises ``NoKindMatchError`` without starting one. Field selectors are
    answered from the field index of that name (:meth:`add_field_index`); ``metadata.name`` and
    ``metadata.namespace`` need none. Reads may lag behind writes: a write followed at once by a read
    can see the old object, as with controller-runtime's cache.

    ``sync_period`` (seconds; 0 or None: never) is the informers' resync period, jittered per informer.
    """

    def __init__(
        self,
        client: Client,
        options: Mapping[tuple[str, str], CacheOptions] | None = None,
        clock: Clock | None = None,
        sync_timeout: float = 60.0,
        sync_period: float | None = DEFAULT_SYNC_PERIOD,
    ) -> None:
        super().__init__()
        self.client = client
        self.options = dict(options or {})
        self.factory = SharedInformerFactory(client, clock=clock)
        self.sync_timeout = sync_timeout
        self.sync_period = sync_period or 0.0
        self._indexes: dict[tuple[str, str], dict[str, IndexFunc]] = {}
        self._lock = threading.Lock()
        self._started = False

    def options_for(self, api_version: str, kind: str) -> CacheOptions:
        """The kind's :class:`CacheOptions` (the defaults when none were given)."""
        return self.options.get((api_version, kind)) or _DEFAULT_OPTIONS

    def informer(self, api_version: str, kind: str, metadata_only: bool | None = None) -> SharedIndexInformer:
        """The kind's shared informer; ``metadata_only`` overrides the kind's CacheOptions."""
        opts = self.options_for(api_version, kind)
        if metadata_only is None:
            metadata_only = opts.metadata_only
        with self._lock:
            informer = self.factory.informer_for(
                api_version,
                kind,
                namespace=opts.namespace,
                label_selector=opts.label_selector,
                field_selector=opts.field_selector,
                transform=opts.transform,
                # Read only when the informer is created: each kind gets its own jitter.
                resync_period=(
                    jittered_sync_period(self.sync_period) if self.sync_period > 0 and opts.resync else 0.0
                ),
                indexers=self._indexes.get((api_version, kind)),
                metadata_only=metadata_only,
            )
            if self._started and not informer.is_started():
                informer.start()
        return informer

    def add_field_index(self, api_version: str, kind: str, name: str, func: IndexFunc) -> None:
        """Register an index; registering the same name twice is allowed and shares the first."""
        with self._lock:
            indexes = self._indexes.setdefault((api_version, kind), {})
            if name in indexes:
                return
            indexes[name] = func
        self.informer(api_version, kind)

    def has_informer(self, api_version: str, kind: str) -> bool:
        """Whether an informer for the kind was requested (by a watch, an index or a read)."""
        return any(k.api_version == api_version and k.kind == kind for k in self.factory.informers())

    def start(self) -> None:
        with self._lock:
            self._started = True
        self.factory.start()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.factory.informers().values())

    def unsynced(self) -> dict[str, str | None]:
        """Informers not synced yet, as ``"apiVersion Kind"`` (``@namespace``, ``[metadata]``), each
        with why: the error of its last list (``None``: no list has failed, it is still listing)."""
        out: dict[str, str | None] = {}
        for key, informer in self.factory.informers().items():
            if informer.has_synced():
                continue
            name = f"{key.api_version} {key.kind}"
            name += f"@{key.namespace}" if key.namespace else ""
            name += "[metadata]" if key.metadata_only else ""
            reflector = informer.reflector
            out[name] = reflector.last_error if reflector is not None else "not started"
        return out

    def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        return all(self.factory.wait_for_cache_sync(timeout).values())

    def stop(self, timeout: float = 10.0) -> bool:
        return self.factory.shutdown(timeout)

    def synced_informer(
        self, api_version: str, kind: str, metadata_only: bool | None = None
    ) -> SharedIndexInformer:
        informer = self.informer(api_version, kind, metadata_only)
        if not informer.is_started():
            informer.start()
        if not informer.has_synced() and not informer.wait_for_cache_sync(self.sync_timeout):
            raise TimeoutError(f"cache for {api_version} {kind} did not sync within {self.sync_timeout}s")
        return informer

    def find_kind_reader(self, api_version: str, kind: str, metadata_only: bool | None) -> CacheReader:
        """The kind's reader once its informer has synced (started now if there is none);
        ``metadata_only`` reads the kind's metadata-only cache (``None``: the kind's CacheOptions)."""
        try:
            mapping = self.client.mapping(api_version, kind)  # first: an unknown kind starts no informer
        except NoKindMatchError:
            if not self.has_informer(api_version, kind):
                raise
            # A kind a controller watches whose CRD is not served yet (a read from a handler while
            # the caches start): wait for its informer, which lists once the CRD is there.
            self.synced_informer(api_version, kind, metadata_only)
            mapping = self.client.mapping(api_version, kind)
        informer = self.synced_informer(api_version, kind, metadata_only)
        return CacheReader(
            informer.indexer,
            mapping,
            api_version,
            resource_version=lambda: informer.last_sync_resource_version,
            copy=not self.options_for(api_version, kind).unsafe_disable_deep_copy,
        )
