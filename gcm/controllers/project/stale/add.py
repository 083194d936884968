"""Wiring of the ``project-stale`` controller (as Gardener's
pkg/controllermanager/controller/project/stale/add.go) and its gauges.

- watches Projects through :class:`StalePredicate`, and Namespaces being created (a check that found no
  namespace yet is not an error: it waits for the namespace's create event);
- ``concurrentSyncs`` workers, a per-reconcile timeout of ``staleSyncPeriod`` (as Gardener);
- caches (started with the manager, so controllers start on synced caches) for every kind an in-use
  check reads (Plants only when served, which is asked at the first check: discovery needs a reachable
  API server), looked up through the binding and Shoot indexes of
  :mod:`gcm.controllers.project.stale.cache` (added where the Manager is built,
  :mod:`gcm.controllers.indexes`);
- the gauges ``gcm_projects_stale`` and ``gcm_projects_auto_delete_scheduled`` on ``mgr.registry``,
  counted from the cached Projects at scrape time, and the counter ``gcm_projects_auto_deleted_total``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog
from prometheus_client import Counter, Gauge

from framework.builder import Builder
from framework.client import NoKindMatchError, Reader
from framework.clock import Clock
from framework.controller import Controller, Request
from framework.handler import EnqueueRequestsFromMapFunc
from framework.manager import Manager
from framework.markers.rbac import rbac
from framework.meta.object import get_metadata, get_name
from framework.meta.schema import from_api_version_and_kind, parse_group_version
from framework.meta.time import parse_time_or_none
from framework.predicate import Funcs, Predicate
from gcm.apis.constants import GROUP_CORE
from gcm.apis.constants import PROJECT_STATUS_LAST_ACTIVITY_TIMESTAMP as LAST_ACTIVITY
from gcm.apis.constants import PROJECT_STATUS_STALE_AUTO_DELETE_TIMESTAMP as AUTO_DELETE
from gcm.apis.constants import PROJECT_STATUS_STALE_SINCE_TIMESTAMP as STALE_SINCE
from gcm.config import ControllerManagerConfiguration
from gcm.controllers.project.indexes import PROJECT_NAMESPACE_INDEX
from gcm.controllers.project.stale.cache import (
    BACKUP_ENTRY,
    CREDENTIALS_BINDING,
    INTERNAL_SECRET,
    NAMESPACE,
    PLANT,
    PROJECT,
    QUOTA,
    SECRET,
    SECRET_BINDING,
    SHOOT,
    WORKLOAD_IDENTITY,
    secret_metadata_only,
)
from gcm.controllers.project.stale.reconciler import StaleReconciler, StaleSettings

log = structlog.get_logger("gcm.controllers.project.stale")

PROJECT_GROUP = parse_group_version(PROJECT[0]).group

CONTROLLER_NAME = "project-stale"
READ_KINDS = (
    NAMESPACE,
    SHOOT,
    BACKUP_ENTRY,
    SECRET,
    SECRET_BINDING,
    CREDENTIALS_BINDING,
    INTERNAL_SECRET,
    WORKLOAD_IDENTITY,
    QUOTA,
)


def _is_project(obj: Any) -> bool:
    if not isinstance(obj, dict) or obj.get("kind") != PROJECT[1]:
        return False
    api_version = obj.get("apiVersion")
    return api_version is None or from_api_version_and_kind(api_version, "").group == PROJECT_GROUP


def _last_activity(project: dict) -> Any:
    raw = (project.get("status") or {}).get(LAST_ACTIVITY)
    parsed = parse_time_or_none(raw)
    return parsed if parsed is not None else raw


class StalePredicate(Predicate):
    """Create: yes. Update: both Projects, and ``lastActivityTimestamp`` unchanged or the new object's
    ``generation != status.observedGeneration``. Delete, generic: no."""

    def create(self, obj: dict) -> bool:
        return True

    def update(self, old: dict, new: dict) -> bool:
        if not _is_project(old) or not _is_project(new):
            return False
        if _last_activity(old) == _last_activity(new):
            return True
        meta, status = get_metadata(new), new.get("status") or {}
        return meta.get("generation") != status.get("observedGeneration")

    def delete(self, obj: dict) -> bool:
        return False

    def generic(self, obj: dict) -> bool:
        return False


def plants_served(mgr: Manager) -> bool:
    """Whether the API server serves ``Plant`` (removed from Gardener in v1.54; gcm ships a CRD)."""
    try:
        mgr.api_reader.mapping(*PLANT)
    except NoKindMatchError:
        log.warning("Plants are not served: the stale check skips them", api_version=PLANT[0])
        return False
    return True


# The Plant informer starts at the first stale check (when discovery says Plants are served), after
# the setup the generator records, so its list and watch are declared here.
@rbac(groups=GROUP_CORE, resources="plants", verbs=["list", "watch"])
class PlantsServed:
    """:func:`plants_served`, asked at the first stale check rather than while the manager is built:
    discovery needs the API server, which may come up after gcm. A discovery error is raised (the
    check is retried); the answer, once known, is kept. When served, the Plant cache starts then."""

    def __init__(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._served: bool | None = None

    def __call__(self) -> bool:
        if self._served is None:
            served = plants_served(self._mgr)
            if served:
                self._mgr.cache.informer(*PLANT)  # started now, as the cache has started
            self._served = served
        return self._served


def project_for_namespace(client: Reader) -> Callable[[dict], list[Request]]:
    """Map a Namespace to the Projects whose ``spec.namespace`` it is."""

    def map_namespace(obj: dict) -> list[Request]:
        name = get_name(obj)
        if not name:
            return []
        projects = client.list(*PROJECT, field_selector={PROJECT_NAMESPACE_INDEX: name})["items"]
        return [Request(get_name(p)) for p in projects]

    return map_namespace


# Only a namespace's creation matters: a stale check that found no namespace waits for it.
NAMESPACE_CREATED = Funcs(
    create=lambda obj: True,
    update=lambda old, new: False,
    delete=lambda obj: False,
    generic=lambda obj: False,
)


def warn_unless_secrets_metadata_only(mgr: Manager) -> None:
    """Secrets must be cached without data: the Manager needs :func:`cache_options` (``build_manager``)."""
    options = getattr(mgr.cache, "options", {}).get(SECRET)
    if options is None or options.transform is not secret_metadata_only:
        log.warning(
            "Secrets are cached with their data: construct the Manager with "
            "gcm.controllers.project.stale.cache_options()"
        )


def register_metrics(mgr: Manager) -> Counter:
    """``gcm_projects_stale`` and ``gcm_projects_auto_delete_scheduled``, counted on scrape, and the
    counter ``gcm_projects_auto_deleted_total`` (returned) of the Projects the controller deleted."""
    informer = mgr.cache.informer(*PROJECT)

    def count(field: str) -> int:
        return sum(1 for p in informer.indexer.list() if (p.get("status") or {}).get(field))

    Gauge(
        "gcm_projects_stale",
        "Projects marked stale (status.staleSinceTimestamp set).",
        registry=mgr.registry,
    ).set_function(lambda: count(STALE_SINCE))
    Gauge(
        "gcm_projects_auto_delete_scheduled",
        "Stale Projects with an auto-delete timestamp (status.staleAutoDeleteTimestamp set).",
        registry=mgr.registry,
    ).set_function(lambda: count(AUTO_DELETE))
    return Counter(
        "gcm_projects_auto_deleted",
        "Stale Projects the project-stale controller deleted because their auto-delete timestamp passed.",
        registry=mgr.registry,
    )


def add_to_manager(
    mgr: Manager, cfg: ControllerManagerConfiguration, *, clock: Clock | None = None
) -> Controller | None:
    """Register ``project-stale`` (with ``controllers.project``); ``clock`` (default: the manager's, or
    a chaos run's offset clock with ``GCM_CLOCK_OFFSET_FILE`` set, which :mod:`gcm.cmd` passes in) is
    what the reconciler calls now."""
    project_cfg = cfg.controllers.project
    if project_cfg is None:
        return None
    settings = StaleSettings.from_config(cfg)
    warn_unless_secrets_metadata_only(mgr)
    for api_version, kind in READ_KINDS:
        mgr.cache.informer(api_version, kind)  # started and synced with the manager's cache
    auto_deleted = register_metrics(mgr)
    clock = clock or mgr.clock
    reconciler = StaleReconciler(
        mgr.client,
        settings,
        clock,
        api_reader=mgr.api_reader,
        plants=PlantsServed(mgr),
        auto_deleted=auto_deleted,
    )
    return (
        Builder(mgr)
        .named(CONTROLLER_NAME)
        .for_(*PROJECT, predicates=[StalePredicate()])
        .watches(
            *NAMESPACE,
            EnqueueRequestsFromMapFunc(project_for_namespace(mgr.client)),
            predicates=[NAMESPACE_CREATED],
        )
        .with_options(
            max_concurrent_reconciles=project_cfg.workers,
            reconcile_timeout=settings.stale_sync_period,
        )
        .complete(reconciler)
    )
