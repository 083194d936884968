"""What every simulated controller shares: the REST layer it writes through, the resource types it
writes, the stage policy, and small helpers (owned objects, status writes, Events)."""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Iterator
from typing import Any

import structlog

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.policy import SimulationPolicy
from framework.apiserver.encoding import timefmt
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.rest.api import API
from framework.apiserver.registry.rest.objects import deep_copy, object_key
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.served import Registry
from framework.apiserver.registry.strategy import ResourceType
from framework.apiserver.storage.store import Storage

log = structlog.get_logger("framework.apiserver.simulated")

# Field managers of the simulated components, as the real ones name themselves.
KUBELET = "kubelet"
SCHEDULER = "kube-scheduler"
CONTROLLER_MANAGER = "kube-controller-manager"
RETRY_DELAY = 1.0  # seconds before a controller syncs again after a refused create


class Context:
    """The simulated components' view of the server."""

    def __init__(self, storage: Storage, registry: Registry, api: API, policy: SimulationPolicy) -> None:
        self.storage = storage
        self.registry = registry
        self.api = api
        self.policy = policy
        self.pods = self.type("", "v1", "pods")
        self.nodes = self.type("", "v1", "nodes")
        self.events = self.type("", "v1", "events")
        self.leases = self.type("coordination.k8s.io", "v1", "leases")
        self.replicasets = self.type("apps", "v1", "replicasets")
        self.deployments = self.type("apps", "v1", "deployments")
        self.statefulsets = self.type("apps", "v1", "statefulsets")
        self.daemonsets = self.type("apps", "v1", "daemonsets")
        self.jobs = self.type("batch", "v1", "jobs")

    def type(self, group: str, version: str, resource: str) -> ResourceType:
        rt = self.registry.get(group, version, resource)
        assert rt is not None, f"{resource}.{group} is always served"
        return rt

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, rt: ResourceType, ns: str, name: str) -> dict | None:
        stored = self.storage.get(rt.storage, object_key(ns, name))
        return None if stored is None else self.api.external(rt, stored)

    def objects(self, rt: ResourceType, ns: str | None = None) -> Iterator[dict]:
        """The objects of a type (in one namespace if given), as stored: read, never change them."""
        for (ons, _), obj in list(self.storage.table(rt.storage).objects.items()):
            if ns is None or ons == ns:
                yield obj

    def owned(self, rt: ResourceType, owner: dict) -> list[dict]:
        """The objects of ``rt`` in the owner's namespace whose controller reference is ``owner``."""
        uid = owner["metadata"]["uid"]
        return [
            o
            for o in self.objects(rt, owner["metadata"].get("namespace", ""))
            if (ref := controller_ref(o)) is not None and ref.get("uid") == uid
        ]

    # -- writes --------------------------------------------------------------------------------------

    def create(
        self,
        rt: ResourceType,
        ns: str | None,
        body: dict,
        manager: str,
        retry: tuple[WorkQueue, Hashable] | None = None,
    ) -> dict | None:
        """Create ``body``; None when the server refuses it (logged: a namespace being deleted, a
        quota, an admission plugin, a ServiceAccount not made yet). ``retry``: the queue and key to
        sync again a second later, as a controller's rate-limited requeue."""
        try:
            return self.api.create(rt, ns, body, WriteOptions(field_manager=manager)).body
        except StatusError as e:
            log.info("simulated create refused", resource=rt.resource, namespace=ns, reason=e.message)
            if retry is not None and e.code != 409:
                retry[0].add_later(retry[1], RETRY_DELAY)
            return None

    def update(self, rt: ResourceType, obj: dict, manager: str, subresource: str | None = None) -> bool:
        """Write ``obj`` (an updated copy of a stored object); False when it changed or went meanwhile."""
        meta = obj["metadata"]
        try:
            self.api.update(
                rt,
                meta.get("namespace") or None,
                meta["name"],
                obj,
                WriteOptions(field_manager=manager),
                subresource,
            )
        except StatusError as e:
            if e.code in (404, 409):
                return False
            log.info("simulated update refused", resource=rt.resource, name=meta["name"], reason=e.message)
            return False
        return True

    def write_status(self, rt: ResourceType, obj: dict, status: dict, manager: str) -> bool:
        """Write ``status`` through ``/status`` when it differs from ``obj``'s."""
        if obj.get("status") == status:
            return True
        new = deep_copy(obj)
        new["status"] = status
        return self.update(rt, new, manager, "status")

    def delete(self, rt: ResourceType, obj: dict, grace: int | None = None) -> bool:
        meta = obj["metadata"]
        options: dict[str, Any] = {"preconditions": {"uid": meta["uid"]}, "propagationPolicy": "Background"}
        if grace is not None:
            options["gracePeriodSeconds"] = grace
        try:
            self.api.delete(rt, meta.get("namespace") or None, meta["name"], options)
        except StatusError as e:
            if e.code not in (404, 409):
                log.info(
                    "simulated delete refused", resource=rt.resource, name=meta["name"], reason=e.message
                )
            return False
        return True

    def event(
        self, obj: dict, rt: ResourceType, event_type: str, reason: str, message: str, component: str
    ) -> None:
        """Record a core/v1 Event about ``obj`` from ``component`` (``kubectl describe`` shows it)."""
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        now = timefmt.now_time()
        involved = {
            "apiVersion": rt.api_version,
            "kind": rt.kind,
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        if meta.get("namespace"):
            involved["namespace"] = meta["namespace"]
        body = {
            "metadata": {"name": f"{meta['name']}.{secrets.token_hex(8)}", "namespace": ns},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": event_type,
            "source": {"component": component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": component,
            "reportingInstance": "",
        }
        self.create(self.events, ns, body, component)


def controller_ref(obj: dict) -> dict | None:
    """The owner reference with ``controller: true``, if any."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def owner_reference(rt: ResourceType, owner: dict) -> dict:
    """The controller reference a workload controller puts on what it creates."""
    return {
        "apiVersion": rt.api_version,
        "kind": rt.kind,
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
