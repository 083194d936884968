"""The ``project`` controller: wiring of its reconciler (:mod:`.reconciler`).

Gardener's ``pkg/controllermanager/controller/project/project/add.go``:

- ``Project`` with a generation-changed predicate (status and metadata-only writes do not reconcile);
- owned ``Namespace``: delete events only, enqueueing the owning Project;
- owned ``RoleBinding``: resyncs and ``roleRef``/``subjects`` changes and deletes (so a hand-edited or
  deleted member RoleBinding is restored);
- ``Shoot`` deletes, metadata-only (PartialObjectMetadata), mapped to the Project being deleted once
  its namespace holds no Shoot any more (a lookup in the same metadata-only cache), as Gardener does.
  The stale and activity controllers keep their own full Shoot cache, since they read Shoot specs.

The manager's informers resync every ~10 hours (jittered, controller-runtime's default): the
RoleBinding predicate lets those same-resourceVersion updates through, so every Project with member
RoleBindings is re-reconciled about that often, as in Gardener.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import structlog

from framework.builder import Builder
from framework.client import Reader
from framework.controller import Controller
from framework.handler import EnqueueRequestsFromMapFunc
from framework.manager import Manager
from framework.meta.object import get_labels, get_namespace, get_resource_version, is_being_deleted
from framework.predicate import Funcs, GenerationChangedPredicate, Predicate
from framework.reconcile import Request
from gcm.apis.constants import KIND_SHOOT, LABEL_PROJECT_NAME, PROJECT, SHOOT
from gcm.config import ControllerManagerConfiguration
from gcm.controllers.project.project.metrics import ProjectPhaseCollector
from gcm.controllers.project.project.reconciler import ProjectReconciler

log = structlog.get_logger("gcm.controllers.project")

CONTROLLER_NAME = "project"
RECORDER_NAME = "project-controller"
RECONCILE_TIMEOUT = 180.0  # 3 minutes per reconcile


class RoleBindingPredicate(Predicate):
    """Owned RoleBindings: create no; update on resync or roleRef/subjects change; delete yes; generic no."""

    def create(self, obj: dict) -> bool:
        return False

    def update(self, old: dict, new: dict) -> bool:
        if not isinstance(old, dict) or not isinstance(new, dict):
            return False
        old_rv = get_resource_version(old) or None
        new_rv = get_resource_version(new) or None
        if old_rv == new_rv:
            return True  # a periodic informer resync
        return old.get("roleRef") != new.get("roleRef") or (old.get("subjects") or []) != (
            new.get("subjects") or []
        )

    def delete(self, obj: dict) -> bool:
        return True

    def generic(self, obj: dict) -> bool:
        return False


def delete_only() -> Predicate:
    return Funcs(
        create=lambda obj: False,
        update=lambda old, new: False,
        delete=lambda obj: True,
        generic=lambda obj: False,
    )


def map_shoot_to_project_in_deletion(client: Reader) -> Callable[[dict], Iterable[Request]]:
    """Mapper for Shoot deletes: the Project (being deleted) whose namespace just lost its last Shoot."""

    def map_fn(obj: dict) -> Iterable[Request]:
        if not isinstance(obj, dict) or obj.get("kind") != KIND_SHOOT:
            return []
        namespace = get_namespace(obj)
        if not namespace:
            return []
        try:
            if client.list(*SHOOT, namespace, metadata_only=True)["items"]:
                return []  # another Shoot still blocks the release
            ns = client.get("v1", "Namespace", namespace)
            project_name = get_labels(ns).get(LABEL_PROJECT_NAME)
            if not project_name:
                return []  # not a project namespace (Gardener would dereference nil here)
            project = client.get(*PROJECT, project_name)
        except Exception as e:
            log.info("could not map shoot to project", shoot=obj["metadata"].get("name"), error=str(e))
            return []
        if not is_being_deleted(project):
            return []
        return [Request(project_name)]

    return map_fn


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> Controller | None:
    """Register the ``project`` controller (always, ``controllers.project`` is defaulted) and the
    ``gcm_projects{phase}`` gauge on ``mgr.registry``."""
    project_cfg = cfg.controllers.project
    if project_cfg is None:
        return None
    mgr.registry.register(ProjectPhaseCollector(mgr.cache.informer(*PROJECT).indexer))
    reconciler = ProjectReconciler(
        mgr.client,
        mgr.event_recorder(RECORDER_NAME),
        project_cfg,
        api_reader=mgr.api_reader,
    )
    return (
        Builder(mgr)
        .named(CONTROLLER_NAME)
        .for_(*PROJECT, predicates=[GenerationChangedPredicate()])
        .owns("v1", "Namespace", predicates=[delete_only()])
        .owns("rbac.authorization.k8s.io/v1", "RoleBinding", predicates=[RoleBindingPredicate()])
        .watches(
            *SHOOT,
            EnqueueRequestsFromMapFunc(map_shoot_to_project_in_deletion(mgr.client)),
            predicates=[delete_only()],
            metadata_only=True,
        )
        .with_options(
            max_concurrent_reconciles=project_cfg.workers,
            reconcile_timeout=RECONCILE_TIMEOUT,
        )
        .complete(reconciler)
    )
