"""Informer machinery: object keys, the thread-safe Indexer cache and the DeltaFIFO.

- :class:`Indexer` is the cache controllers read (``get_by_key("ns/name")``, ``list()``,
  ``by_index("namespace", ns)``, ``add_indexers({...})``). It hands out the cached dicts themselves:
  deep-copy before mutating.
- :class:`DeltaFIFO` queues per-object :class:`Delta` lists between a reflector and an informer, with
  :class:`DeletedFinalStateUnknown` tombstones for deletions missed while the watch was down.
"""

from .delta_fifo import (
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
)
from .keys import (
    NAMESPACE_INDEX,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from .store import Indexer, IndexFunc, IndexNotFoundError, KeyFunc, ThreadSafeStore

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "FIFOClosedError",
    "IndexFunc",
    "IndexNotFoundError",
    "Indexer",
    "KeyFunc",
    "KeyListerGetter",
    "ThreadSafeStore",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]
