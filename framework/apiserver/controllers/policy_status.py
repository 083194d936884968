"""The ValidatingAdmissionPolicy status controller (kube-controller-manager's
``pkg/controller/validatingadmissionpolicystatus``): for each policy whose ``metadata.generation`` is
past ``status.observedGeneration``, type-check it (``admission/typechecking.py``) and apply its status
as field manager ``validatingadmissionpolicy-status`` (``observedGeneration``, and ``typeChecking``
with the ``expressionWarnings``, ``{}`` when there are none)."""

from __future__ import annotations

import orjson
import structlog

from framework.apiserver.admission import typechecking
from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.rest.api import API
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.served import Registry
from framework.apiserver.storage.store import Storage, WatchEvent

log = structlog.get_logger("framework.apiserver")

GROUP = "admissionregistration.k8s.io"
POLICIES = f"validatingadmissionpolicies.{GROUP}"
FIELD_MANAGER = "validatingadmissionpolicy-status"


class PolicyStatusController:
    """Writes ``status`` of ValidatingAdmissionPolicies (see the module docstring)."""

    def __init__(self, storage: Storage, registry: Registry, api: API) -> None:
        self.storage = storage
        self.registry = registry
        self.api = api
        self.queue = WorkQueue(FIELD_MANAGER, self.reconcile)
        storage.listeners.append(self.on_event)

    def on_event(self, key: str, ev: WatchEvent) -> None:
        if key == POLICIES and ev.type != "DELETED":
            self.queue.add(ev.obj["metadata"]["name"])

    def reconcile(self, name: str) -> None:
        policy = self.storage.get(POLICIES, ("", name))
        if policy is None:  # deleted meanwhile
            return
        generation = policy["metadata"].get("generation") or 0
        status = policy.get("status")
        if generation <= ((status.get("observedGeneration") if isinstance(status, dict) else 0) or 0):
            return
        rt = self.registry.get(GROUP, "v1", "validatingadmissionpolicies")
        assert rt is not None  # a built-in type, always served
        type_checking: dict = {}
        warnings = typechecking.check(self.registry, policy)
        if warnings:
            type_checking["expressionWarnings"] = warnings
        body = {
            "apiVersion": f"{GROUP}/v1",
            "kind": rt.kind,
            "metadata": {"name": name},
            "status": {"observedGeneration": generation, "typeChecking": type_checking},
        }
        opts = WriteOptions(field_manager=FIELD_MANAGER, force=True)
        try:
            self.api.patch(rt, None, name, "application/apply-patch+yaml", orjson.dumps(body), opts, "status")
        except StatusError as e:
            if e.code != 404:  # a policy deleted meanwhile needs no status
                raise
