"""The manager's informer cache and the cache-backed client controllers read through."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from framework.cache import SharedIndexInformer, SharedInformerFactory
from framework.cache.reader import CacheReader
from framework.cache.transforms import drop_managed_fields
from framework.client import Client, NoKindMatchError, PatchType, RESTMapping
from framework.client.interfaces import FieldSelectorArg, LabelSelectorArg
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


class Cache:
    """One shared informer per kind (per its :class:`CacheOptions`), started on first use.

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


class CachedClient:
    """``mgr.client``: a :class:`~framework.client.interfaces.Reader` answering from the manager's cache
    (deep copies) and a :class:`~framework.client.interfaces.Writer` writing to the API server.

    ``get`` and ``list`` take the live client's arguments and give its results and errors: a List
    dict from ``list`` (``metadata.resourceVersion`` is the informer's last synced one), ``NotFound``
    for a missing object, ``ValueError`` for a namespace that does not fit the kind's scope. The
    first read of a kind starts its informer and waits for it to sync. Field selectors are answered
    from the field index of that name (:meth:`Cache.add_field_index`); ``metadata.name`` and
    ``metadata.namespace`` need none. Reads may lag behind writes: a write followed at once by a read
    can see the old object, as with controller-runtime's cache.
    """

    def __init__(self, client: Client, cache: Cache) -> None:
        self._client = client
        self._cache = cache
        self._readers: dict[tuple[str, str, bool | None], CacheReader] = {}

    @property
    def api_reader(self) -> Client:
        """The live client behind the writes (``mgr.api_reader``)."""
        return self._client

    def mapping(self, api_version: str, kind: str) -> RESTMapping:
        """The kind's REST mapping (cached discovery; ``NoKindMatchError`` if the server lacks it)."""
        return self._client.mapping(api_version, kind)

    # -- Reader ----------------------------------------------------------------------------------

    def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        metadata_only: bool | None = None,
    ) -> dict[str, Any]:
        """A cached object (a deep copy unless the kind's :class:`CacheOptions` say
        ``unsafe_disable_deep_copy``); ``metadata_only`` reads the kind's metadata-only cache
        (PartialObjectMetadata, as controller-runtime's client does for that type; ``None``: the
        kind's :class:`CacheOptions`)."""
        reader = self._reader(api_version, kind, metadata_only)
        return reader.get(name, reader.mapping.scoped_namespace(namespace, collection=False))

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        metadata_only: bool | None = None,
    ) -> dict[str, Any]:
        """Cached objects of a kind as a List dict (deep copies unless ``unsafe_disable_deep_copy``, in
        ``namespace`` if given).

        ``field_selector`` may only hold exact matches (``=``/``==``): the cache answers each from the
        field index of that name, so ``mgr.add_field_index(av, kind, "spec.owner", f)`` first; other
        fields raise ``ValueError``. ``metadata_only`` reads the kind's metadata-only cache.
        """
        reader = self._reader(api_version, kind, metadata_only)
        ns = reader.mapping.scoped_namespace(namespace, collection=True)
        return reader.list(ns, label_selector, field_selector)

    def _reader(self, api_version: str, kind: str, metadata_only: bool | None) -> CacheReader:
        """The kind's reader, made once its informer has synced (later reads: one dict lookup)."""
        key = (api_version, kind, metadata_only)
        reader = self._readers.get(key)
        if reader is not None:
            return reader
        try:
            mapping = self.mapping(api_version, kind)  # first: an unknown kind never starts an informer
        except NoKindMatchError:
            if not self._cache.has_informer(api_version, kind):
                raise
            # A kind a controller watches whose CRD is not served yet (a read from a handler while
            # the caches start): wait for its informer, which lists once the CRD is there.
            self._cache.synced_informer(api_version, kind, metadata_only)
            mapping = self.mapping(api_version, kind)
        informer = self._cache.synced_informer(api_version, kind, metadata_only)
        reader = self._readers[key] = CacheReader(
            informer.indexer,
            mapping,
            api_version,
            resource_version=lambda: informer.last_sync_resource_version,
            copy=not self._cache.options_for(api_version, kind).unsafe_disable_deep_copy,
        )
        return reader

    # -- Writer: straight to the API server --------------------------------------------------------

    def create(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """:meth:`Client.create <framework.client.Client.create>`."""
        return self._client.create(obj, dry_run=dry_run, field_manager=field_manager)

    def update(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """:meth:`Client.update <framework.client.Client.update>`."""
        return self._client.update(obj, dry_run=dry_run, field_manager=field_manager)

    def update_status(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """:meth:`Client.update_status <framework.client.Client.update_status>`."""
        return self._client.update_status(obj, dry_run=dry_run, field_manager=field_manager)

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """:meth:`Client.patch <framework.client.Client.patch>`."""
        return self._client.patch(
            api_version,
            kind,
            name,
            patch,
            namespace,
            patch_type=patch_type,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
        )

    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_owner: str,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """:meth:`Client.apply <framework.client.Client.apply>` (server-side apply)."""
        return self._client.apply(
            obj, field_owner=field_owner, force=force, subresource=subresource, dry_run=dry_run
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """:meth:`Client.delete <framework.client.Client.delete>`."""
        return self._client.delete(
            api_version,
            kind,
            name,
            namespace,
            propagation_policy=propagation_policy,
            preconditions=preconditions,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )

    def delete_collection(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """:meth:`Client.delete_collection <framework.client.Client.delete_collection>`."""
        return self._client.delete_collection(
            api_version,
            kind,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
