"""Wiring of the ``project-activity`` controller (as Gardener's
pkg/controllermanager/controller/project/activity/add.go).

No primary watch: Shoots, BackupEntries, Quotas, Secrets and InternalSecrets in a project namespace
are mapped to their Project through the Project ``spec.namespace`` index. Event filters (all must pass):

- every kind: :class:`RelevantCreatesAndUpdates` (creates of objects at most 1 h old, updates that
  changed the resourceVersion, every delete and generic event);
- Shoots, BackupEntries: ``GenerationChangedPredicate`` (status-only writes are no activity);
- Quotas, Secrets, InternalSecrets: :class:`HasBindingReferenceLabel`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import Any

import structlog

from framework.builder import Builder
from framework.client import Reader
from framework.clock import Clock
from framework.controller import Controller
from framework.handler import EnqueueRequestsFromMapFunc
from framework.manager import Manager
from framework.meta.object import get_metadata
from framework.meta.time import parse_time_or_none
from framework.predicate import GenerationChangedPredicate, Predicate
from framework.reconcile import Request
from gcm.apis.constants import (
    BACKUP_ENTRY,
    INTERNAL_SECRET,
    LABEL_CREDENTIALS_BINDING_REFERENCE,
    LABEL_SECRET_BINDING_REFERENCE,
    PROJECT,
    QUOTA,
    SHOOT,
)
from gcm.config import ControllerManagerConfiguration
from gcm.controllers.project.activity.reconciler import ActivityReconciler
from gcm.controllers.project.indexes import PROJECT_NAMESPACE_INDEX

log = structlog.get_logger("gcm.controllers.project.activity")

CONTROLLER_NAME = "project-activity"
RECONCILE_TIMEOUT = 180.0  # 3 minutes, as Gardener
RELEVANT_CREATE_AGE = timedelta(hours=1)
BINDING_REFERENCE_LABELS = (LABEL_SECRET_BINDING_REFERENCE, LABEL_CREDENTIALS_BINDING_REFERENCE)
SECRET = ("v1", "Secret")


def _meta(obj: Any) -> Mapping[str, Any]:
    return get_metadata(obj)


class RelevantCreatesAndUpdates(Predicate):
    """Create: only objects created at most 1 h ago (``now - creationTimestamp <= 1h``), which ignores
    the informer's start-up flood for old objects. Update: only a changed resourceVersion (no resyncs).
    Delete, generic: always."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def create(self, obj: dict) -> bool:
        created = parse_time_or_none(_meta(obj).get("creationTimestamp"))
        return created is not None and self.clock.now() - created <= RELEVANT_CREATE_AGE

    def update(self, old: dict, new: dict) -> bool:
        return _meta(old).get("resourceVersion") != _meta(new).get("resourceVersion")


def has_binding_reference_label(obj: Any) -> bool:
    labels = _meta(obj).get("labels") or {}
    return any(key in labels for key in BINDING_REFERENCE_LABELS)


class HasBindingReferenceLabel(Predicate):
    """The label key ``reference.gardener.cloud/secretbinding`` or ``.../credentialsbinding`` (any
    value). Update: on the old or the new object (removing the label counts). Generic: always."""

    def create(self, obj: dict) -> bool:
        return has_binding_reference_label(obj)

    def update(self, old: dict, new: dict) -> bool:
        return has_binding_reference_label(old) or has_binding_reference_label(new)

    def delete(self, obj: dict) -> bool:
        return has_binding_reference_label(obj)


def project_for_namespace(client: Reader) -> Callable[[dict], Iterable[Request]]:
    """Map an object to the Project whose ``spec.namespace`` is the object's namespace (none: nothing)."""

    def map_object(obj: dict) -> Iterable[Request]:
        namespace = _meta(obj).get("namespace")
        if not namespace:
            return []
        try:
            projects = client.list(*PROJECT, field_selector={PROJECT_NAMESPACE_INDEX: namespace})["items"]
        except Exception as e:
            log.error("could not map object to its project", namespace=namespace, error=str(e))
            return []
        if not projects:
            return []
        return [Request(min(_meta(p).get("name", "") for p in projects))]

    return map_object


def add_to_manager(
    mgr: Manager, cfg: ControllerManagerConfiguration, *, clock: Clock | None = None
) -> Controller | None:
    """Register ``project-activity`` (with ``controllers.project``); ``clock`` (default: the
    manager's) is the reconciler's now."""
    project_cfg = cfg.controllers.project
    if project_cfg is None:
        return None
    clock = clock or mgr.clock
    handler = EnqueueRequestsFromMapFunc(project_for_namespace(mgr.client))
    relevant = RelevantCreatesAndUpdates(clock)
    builder = Builder(mgr).named(CONTROLLER_NAME)
    for kind, second in (
        (SHOOT, GenerationChangedPredicate()),
        (BACKUP_ENTRY, GenerationChangedPredicate()),
        (QUOTA, HasBindingReferenceLabel()),
        (SECRET, HasBindingReferenceLabel()),
        (INTERNAL_SECRET, HasBindingReferenceLabel()),
    ):
        builder.watches(*kind, handler, predicates=[relevant, second])
    return builder.with_options(
        max_concurrent_reconciles=project_cfg.workers, reconcile_timeout=RECONCILE_TIMEOUT
    ).complete(ActivityReconciler(mgr.client, clock))
