"""The REST operations (create, get, list, update, patch, delete, deletecollection) on storage.

Transport-independent: the HTTP handlers and the in-process controllers (namespace, garbage
collector, CRD) call the same methods, so the controllers' writes go through the same rules and reach
watchers like any client's (spec 0-4).
"""

from __future__ import annotations

from framework.apiserver.registry.rest.delete import Delete
from framework.apiserver.registry.rest.patch import Patch


class API(Patch, Delete):
    """Kubernetes REST semantics over :class:`~..storage.Storage` for the types in
    :class:`~..registry.Registry`."""
