"""The REST layer's state (storage, registry, built-in admission hooks) and its codec between a
resource type's version and the stored form."""

from __future__ import annotations

from collections.abc import Callable

from framework.apiserver.crd import conversion_scope
from framework.apiserver.crd.conversion import uses_webhook
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
        # Graceful deletion (the strategy's ``CheckGracefulDelete``): the seconds a DELETE of this
        # stored object with these DeleteOptions waits for; 0 deletes at once. Only simulated nodes set
        # it (their kubelets finish the deletions); without them every object goes at once.
        self.grace_period: Callable[[ResourceType, dict, dict], int] | None = None

    # -- codec -------------------------------------------------------------------------------------

    def external(self, rt: ResourceType, stored: dict) -> dict:
        """The stored object as this resource type's version shows it."""
        if rt.from_storage:
            return rt.from_storage(stored)
        if rt.is_custom and stored.get("apiVersion") != rt.api_version:
            scope = conversion_scope.active(rt.crd)
            if scope is not None:  # a request to a webhook-converted CRD
                return scope.to_version(stored, rt.api_version)
            return {**stored, "apiVersion": rt.api_version}
        return stored

    def _to_stored(self, rt: ResourceType, obj: dict) -> dict:
        if rt.to_storage:
            return rt.to_storage(obj)
        if rt.is_custom:
            assert rt.crd is not None
            target = f"{rt.group}/{storage_version(rt.crd)}"
            scope = conversion_scope.active(rt.crd)
            if scope is not None:
                return scope.to_storage(obj, target)
            if uses_webhook(rt.crd):
                # An in-process write (the garbage collector's) cannot call the webhook: the object
                # stays in the version it is written through, never relabelled unconverted.
                obj["apiVersion"] = rt.api_version
                return obj
            obj["apiVersion"] = target
        return obj
