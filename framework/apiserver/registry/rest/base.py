"""The REST layer's state (storage, registry, built-in admission hooks) and its codec between a
resource type's version and the stored form."""

from __future__ import annotations

from collections.abc import Callable

from framework.apiserver.crd.definition import storage_version
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.served import Registry
from framework.apiserver.registry.strategy import ResourceType
from framework.apiserver.storage.store import Storage


class RESTBase:
    """Storage and registry of the REST operations, and the conversion to and from storage."""

    def __init__(self, storage: Storage, registry: Registry) -> None:
        self.storage = storage
        self.registry = registry
        # Built-in mutating admission, before validation and the mutating webhooks: (type, new, old
        # or None, options); may change ``new`` or raise.
        self.admit_mutate: Callable[[ResourceType, dict, dict | None, WriteOptions], None] | None = None
        # Built-in admission run after validation, before persistence: (type, new, old or None, options).
        self.admit: Callable[[ResourceType, dict, dict | None, WriteOptions], None] | None = None
        # Built-in admission of a DELETE (type, stored object), before anything changes; may raise.
        self.admit_delete: Callable[[ResourceType, dict], None] | None = None

    # -- codec -------------------------------------------------------------------------------------

    def external(self, rt: ResourceType, stored: dict) -> dict:
        """The stored object as this resource type's version shows it."""
        if rt.from_storage:
            return rt.from_storage(stored)
        if rt.is_custom and stored.get("apiVersion") != rt.api_version:
            return {**stored, "apiVersion": rt.api_version}
        return stored

    def _to_stored(self, rt: ResourceType, obj: dict) -> dict:
        if rt.to_storage:
            return rt.to_storage(obj)
        if rt.is_custom:
            assert rt.crd is not None
            obj["apiVersion"] = f"{rt.group}/{storage_version(rt.crd)}"
        return obj
