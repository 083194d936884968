"""The manager's informer cache and the cache-backed client controllers read through."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import structlog

from framework.cache import SharedIndexInformer, SharedInformerFactory
from framework.cache.transforms import drop_managed_fields
from framework.client import NotFound
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


def deep_copy(obj: Any) -> Any:
    """A private copy of a cached object (orjson round trip: faster than ``copy.deepcopy``)."""
    return orjson.loads(orjson.dumps(obj))


DEFAULT_SYNC_PERIOD = 10 * 3600.0
"""controller-runtime's ``cache.Options.SyncPeriod`` default: every cached object is re-delivered to the
handlers as an update with an unchanged resourceVersion about every 10 hours."""


def jittered_sync_period(sync_period: float) -> float:
    """``sync_period`` times U[0.9, 1.1), per informer, so kinds do not all resync at the same instant
    (controller-runtime ``pkg/cache/internal/informers.go``)."""
    return sync_period * (0.9 + 0.2 * random.random())


class Cache:
    """One shared informer per kind (per its :class:`CacheOptions`), started on first use.

    ``sync_period`` (seconds; 0 or None: never) is the informers' resync period, jittered per informer.
    """

    def __init__(
        self,
        client: Any,
        options: Mapping[tuple[str, str], CacheOptions] | None = None,
        clock: Clock | None = None,
        sync_timeout: float = 60.0,
        sync_period: float | None = DEFAULT_SYNC_PERIOD,
    ) -> None:
        self.client = client
        self.options = dict(options or {})
        self.factory = SharedInformerFactory(client, clock=clock)
        self.sync_timeout = sync_timeout
        self.sync_period = sync_period or 0.0
        self._indexes: dict[tuple[str, str], dict[str, IndexFunc]] = {}
        self._lock = threading.Lock()
        self._started = False

    def informer(self, api_version: str, kind: str, metadata_only: bool | None = None) -> SharedIndexInformer:
        """The kind's shared informer; ``metadata_only`` overrides the kind's CacheOptions."""
        opts = self.options.get((api_version, kind), CacheOptions())
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


class CachedClient:
    """Reads from the manager's cache (deep copies), writes to the API server.

    ``get`` and ``list`` start the kind's informer on first use and wait for it to sync. Everything
    else (create, update, update_status, patch, delete, watch, mapping, ...) is the live client's.
    """

    def __init__(self, client: Any, cache: Cache) -> None:
        self._client = client
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        metadata_only: bool | None = None,
    ) -> dict:
        """A cached object (deep copy); ``metadata_only`` reads the kind's metadata-only cache
        (PartialObjectMetadata, as controller-runtime's client does for that type)."""
        indexer = self._cache.synced_informer(api_version, kind, metadata_only).indexer
        obj = indexer.get_by_key(f"{namespace}/{name}" if namespace else name)
        if obj is None:
            resource = self._client.mapping(api_version, kind).resource
            group = api_version.rpartition("/")[0]
            qualified = f"{resource}.{group}" if group else resource
            raise NotFound(
                404,
                "NotFound",
                f'{qualified} "{name}" not found',
                {"name": name, "group": group, "kind": resource},
            )
        return deep_copy(obj)

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        index: tuple[str, str] | None = None,
        metadata_only: bool | None = None,
    ) -> list[dict]:
        """Cached objects of a kind: in ``namespace``, carrying all ``labels``, in ``index`` (name, value);
        ``metadata_only`` reads the kind's metadata-only cache (PartialObjectMetadata)."""
        indexer = self._cache.synced_informer(api_version, kind, metadata_only).indexer
        if index is not None:
            objs = indexer.by_index(*index)
        elif namespace:
            objs = indexer.by_index("namespace", namespace)
        else:
            objs = indexer.list()
        out = []
        for obj in objs:
            meta = obj.get("metadata") or {}
            if namespace and meta.get("namespace") != namespace:
                continue
            if labels and any((meta.get("labels") or {}).get(k) != v for k, v in labels.items()):
                continue
            out.append(deep_copy(obj))
        return out
