"""Informer machinery: object keys, the thread-safe Indexer cache and the DeltaFIFO.

- :class:`Indexer` is the cache controllers read (``get_by_key("ns/name")``, ``list()``,
  ``by_index("namespace", ns)``, ``add_indexers({...})``). It hands out the cached dicts themselves:
  deep-copy before mutating.
- :class:`DeltaFIFO` queues per-object :class:`Delta` lists between a reflector and an informer, with
  :class:`DeletedFinalStateUnknown` tombstones for deletions missed while the watch was down.
- :class:`Reflector` lists (pages of 500) and watches one kind into a DeltaFIFO, with client-go's
  resourceVersion, 410-relist and backoff rules plus a watch inactivity timeout.
- :class:`SharedIndexInformer` ties them together: one list+watch, one cache, many handlers, each on
  its own thread. :class:`SharedInformerFactory` shares one informer per kind + namespace + selectors.
- :mod:`framework.cache.transforms` shrinks cached objects (``drop_managed_fields``,
  ``drop_managed_fields_and_share_strings``).

Using an informer (an extension's controller)::

    from framework.cache import SharedInformerFactory, drop_managed_fields, meta_namespace_key_func
    from framework.client import Client
    from framework.workqueue import RateLimitingQueue

    client = Client.from_kubeconfig(qps=50, burst=100)
    factory = SharedInformerFactory(client, default_resync=10 * 3600)
    informer = factory.informer_for("example.com/v1", "Widget", transform=drop_managed_fields)
    informer.add_indexers({"owner": lambda o: [r["uid"] for r in o["metadata"].get("ownerReferences", [])]})
    queue = RateLimitingQueue(name="widget")

    key = meta_namespace_key_func  # "ns/name"; also accepts DeletedFinalStateUnknown tombstones

    registration = informer.add_event_handler(
        on_add=lambda obj: queue.add(key(obj)),
        on_update=lambda old, new: queue.add(key(new)),  # old is new's previous state; equal RVs = resync
        on_delete=lambda obj: queue.add(key(obj)),  # obj may be a DeletedFinalStateUnknown
    )
    factory.start()  # returns at once; informers run on their own named threads
    if not all(factory.wait_for_cache_sync(timeout=120).values()):
        raise SystemExit("caches did not sync")

    # In the worker: read from the cache, never mutate what it returns (deep-copy first).
    widget = informer.indexer.get_by_key(key_from_queue)  # None: deleted
    children = informer.indexer.by_index("owner", widget["metadata"]["uid"])
    ...
    factory.shutdown()  # on exit: stops and joins every informer thread (bounded)

Rules worth knowing:

- Handlers run on the informer's handler threads, one thread per handler, in event order. Keep them
  short (enqueue a key); a slow handler only delays itself, its buffer grows meanwhile (logged).
- ``on_delete`` gets a :class:`DeletedFinalStateUnknown` (``.key``, ``.obj`` = last known state) when
  the deletion happened while the watch was down and was noticed by a relist.
- Updates with an unchanged resourceVersion are resyncs: only handlers whose resync period is due get
  them (``add_event_handler(..., resync_period=seconds)``).
- A handler added after start first gets the whole cache as adds; ``registration.has_synced()``.
- The cache is consistent with the server as of ``informer.last_sync_resource_version``; reads never
  hit the API server. Write with the :class:`~framework.client.Client` and let the informer observe
  the result.
- Watches are re-established on their own (410 → relist, dropped stream → re-watch, dead stream →
  ``inactivity_timeout``, errors → backoff 0.8 s .. 30 s), every thread is supervised and restarted if
  it dies, and every problem is logged with structlog (logger ``framework.cache``).
"""

from .delta_fifo import (
    Delta,
    DeltaFIFO,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
)
from .informer_factory import InformerKey, SharedInformerFactory
from .keys import (
    NAMESPACE_INDEX,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from .reader import CacheReader, IndexedReader, deep_copy
from .reflector import Backoff, Reflector, WatchErrorHandler, default_watch_error_handler
from .shared_informer import ResourceEventHandlerRegistration, SharedIndexInformer
from .store import Indexer, IndexFunc, IndexNotFoundError, KeyFunc, ThreadSafeStore
from .tombstone import DeletedFinalStateUnknown
from .transforms import drop_managed_fields, drop_managed_fields_and_share_strings

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "CacheReader",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "FIFOClosedError",
    "IndexFunc",
    "IndexNotFoundError",
    "IndexedReader",
    "Indexer",
    "InformerKey",
    "KeyFunc",
    "KeyListerGetter",
    "Reflector",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "ThreadSafeStore",
    "WatchErrorHandler",
    "deep_copy",
    "default_watch_error_handler",
    "drop_managed_fields",
    "drop_managed_fields_and_share_strings",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]
