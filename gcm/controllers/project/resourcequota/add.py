"""Wiring of the ``project-resourcequota`` controller (Gardener's
``pkg/controllermanager/controller/project/resourcequota/add.go``): every ResourceQuota, passed only
when a Project's ``spec.namespace`` is the quota's namespace (a cache index lookup), ``concurrentSyncs``
workers, 3 minutes per reconcile.
"""

from __future__ import annotations

from typing import Any

from framework.builder import Builder
from framework.client import Reader
from framework.controller import Controller
from framework.manager import Manager
from framework.meta.object import get_namespace
from framework.predicate import Funcs, Predicate
from gcm.apis.constants import PROJECT
from gcm.config import ControllerManagerConfiguration
from gcm.controllers.project.indexes import PROJECT_NAMESPACE_INDEX
from gcm.controllers.project.resourcequota.reconciler import ResourceQuotaReconciler

CONTROLLER_NAME = "project-resourcequota"
RECONCILE_TIMEOUT = 180.0


def project_namespace_predicate(client: Reader) -> Predicate:
    """Passes (every event type) only when a Project's ``spec.namespace`` is the quota's namespace."""

    def in_project_namespace(obj: Any) -> bool:
        namespace = get_namespace(obj)
        if not namespace:
            return False
        return bool(client.list(*PROJECT, field_selector={PROJECT_NAMESPACE_INDEX: namespace})["items"])

    return Funcs(
        create=in_project_namespace,
        update=lambda old, new: in_project_namespace(new),
        delete=in_project_namespace,
        generic=in_project_namespace,
    )


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> Controller | None:
    """Register ``project-resourcequota`` (with ``controllers.project``, which is always defaulted)."""
    project_cfg = cfg.controllers.project
    if project_cfg is None:
        return None
    return (
        Builder(mgr)
        .named(CONTROLLER_NAME)
        .for_("v1", "ResourceQuota", predicates=[project_namespace_predicate(mgr.client)])
        .with_options(
            max_concurrent_reconciles=project_cfg.workers,
            reconcile_timeout=RECONCILE_TIMEOUT,
        )
        .complete(ResourceQuotaReconciler(mgr.client, project_cfg))
    )
