"""The stale-Project reconciler (Gardener's ``pkg/controllermanager/controller/project/stale/reconciler.go``).

:func:`evaluate` is the one place that decides what a stale check does with a Project: young, recently
active, in use (and by what), excluded, stale since when, auto-deletion due when. The reconciler
applies its :class:`Decision`; ``python -m gcm stale-report`` prints it without applying anything.

Time comes from an injected clock. One day is exactly 24 hours, all comparisons are in UTC and strict
as Gardener's: a Project created exactly ``minimumLifetimeDays`` ago is no longer young, an
auto-delete timestamp equal to now is due. Timestamps are written with second precision (as
Kubernetes serializes ``metav1.Time``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import structlog
from prometheus_client import Counter

from framework.client import Client, NotFound, Reader, with_optimistic_lock
from framework.client.interfaces import FieldSelectorArg, LabelSelectorArg
from framework.clock import Clock
from framework.markers.rbac import rbac
from framework.meta.object import (
    get_annotations,
    get_labels,
    get_metadata,
    get_name,
    get_namespace,
)
from framework.meta.strconv import is_true
from framework.meta.time import format_rfc3339_nano, format_time, parse_time_or_none, rfc3339_copy
from framework.reconcile import Request, Result
from gcm.apis.constants import ANNOTATION_CONFIRMATION_DELETION as ANNOTATION_CONFIRM_DELETION
from gcm.apis.constants import ANNOTATION_PROJECT_SKIP_STALE_CHECK as ANNOTATION_SKIP_STALE_CHECK
from gcm.apis.constants import ANNOTATION_TIMESTAMP, GROUP_CORE, LABEL_ROLE
from gcm.apis.constants import PROJECT_STATUS_LAST_ACTIVITY_TIMESTAMP as LAST_ACTIVITY
from gcm.apis.constants import PROJECT_STATUS_STALE_AUTO_DELETE_TIMESTAMP as AUTO_DELETE
from gcm.apis.constants import PROJECT_STATUS_STALE_SINCE_TIMESTAMP as STALE_SINCE
from gcm.apis.core_v1beta1 import Project
from gcm.controllers.project.stale.cache import (
    BACKUP_ENTRY,
    CREDENTIALS_BINDING,
    INDEX_CREDENTIALS_BINDING_QUOTA,
    INDEX_CREDENTIALS_BINDING_REF,
    INDEX_SECRET_BINDING_QUOTA,
    INDEX_SECRET_BINDING_SECRET_REF,
    INDEX_SHOOT_CREDENTIALS_BINDING,
    INDEX_SHOOT_SECRET_BINDING,
    INTERNAL_SECRET,
    LABEL_CREDENTIALS_BINDING_REF,
    LABEL_SECRET_BINDING_REF,
    NAMESPACE,
    PLANT,
    PROJECT,
    QUOTA,
    SECRET,
    SECRET_BINDING,
    SHOOT,
    WORKLOAD_IDENTITY,
    credentials_ref_key,
    ref_key,
)

log = structlog.get_logger("gcm.controllers.project.stale")

DAY = timedelta(hours=24)

# Gardener's own control-plane secrets never keep a Project alive.
CONTROL_PLANE_SECRET_ROLES = frozenset({"kubeconfig", "ssh-keypair", "monitoring"})

# Decision states (the STATE column of the stale report).
DELETING = "deleting"
NO_NAMESPACE = "no-namespace"
EXCLUDED = "excluded"
YOUNG = "young"
ACTIVE = "active"
IN_USE = "in-use"
STALE = "stale"
AUTO_DELETE_SCHEDULED = "auto-delete-scheduled"
AUTO_DELETE_DUE = "auto-delete-due"


# -- settings and decisions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class StaleSettings:
    """``controllers.project``'s day settings (defaults as Gardener's)."""

    minimum_lifetime_days: int = 30
    stale_grace_period_days: int = 14
    stale_expiration_time_days: int = 90
    stale_sync_period: float = 12 * 3600.0

    @classmethod
    def from_config(cls, cfg: Any) -> StaleSettings:
        p = cfg.controllers.project
        return cls(
            minimum_lifetime_days=int(p.minimum_lifetime_days),
            stale_grace_period_days=int(p.stale_grace_period_days),
            stale_expiration_time_days=int(p.stale_expiration_time_days),
            stale_sync_period=float(p.stale_sync_period),
        )


@dataclass(frozen=True)
class Decision:
    """What a stale check does with one Project.

    ``stale_since``/``auto_delete_at`` are the status values after the check. ``owns_status`` is False
    when the check leaves the Project alone (being deleted, no namespace): the values are then the
    current ones. ``delete``: the auto-delete timestamp has passed; the Project is deleted.
    """

    state: str
    reason: str
    stale_since: datetime | None
    auto_delete_at: datetime | None
    owns_status: bool = True
    delete: bool = False


def _items(
    reader: Reader,
    kind: tuple[str, str],
    namespace: str | None = None,
    *,
    label_selector: LabelSelectorArg = None,
    field_selector: FieldSelectorArg = None,
) -> list[dict]:
    return reader.list(*kind, namespace, label_selector=label_selector, field_selector=field_selector)[
        "items"
    ]


def _name(obj: dict) -> str:
    return get_name(obj)


def _namespace(obj: dict) -> str:
    return get_namespace(obj)


def _sorted(objs: list[dict]) -> list[dict]:
    return sorted(objs, key=lambda o: (_namespace(o), _name(o)))


def _shoot_using(reader: Reader, bindings: list[dict], shoot_index: str) -> tuple[dict, dict] | None:
    """The first binding of ``bindings`` a Shoot in the binding's namespace uses, with that Shoot."""
    for binding in _sorted(bindings):
        shoots = _items(
            reader, SHOOT, field_selector={shoot_index: ref_key(_namespace(binding), _name(binding))}
        )
        if shoots:
            return binding, _sorted(shoots)[0]
    return None


def _used(what: str, hit: tuple[dict, dict], binding_kind: str) -> str:
    binding, shoot = hit
    return (
        f"{what} via {binding_kind} {_namespace(binding)}/{_name(binding)} "
        f"used by Shoot {_namespace(shoot)}/{_name(shoot)}"
    )


def _credentials(reader: Reader, ns: str, api_version: str, kind: str, objs: list[dict]) -> str | None:
    for obj in _sorted(objs):
        key = credentials_ref_key(api_version, kind, ns, _name(obj))
        bindings = _items(reader, CREDENTIALS_BINDING, field_selector={INDEX_CREDENTIALS_BINDING_REF: key})
        hit = _shoot_using(reader, bindings, INDEX_SHOOT_CREDENTIALS_BINDING)
        if hit:
            return _used(f"{kind} {ns}/{_name(obj)}", hit, CREDENTIALS_BINDING[1])
    return None


def _not_control_plane(secrets: list[dict]) -> list[dict]:
    return [s for s in secrets if get_labels(s).get(LABEL_ROLE) not in CONTROL_PLANE_SECRET_ROLES]


def find_usage(reader: Reader, ns: str, *, plants: bool = True) -> str | None:
    """The first in-use check, in Gardener's order (Plants, ours, right after Shoots), that finds a use of
    namespace ``ns``; None if none."""
    shoots = _items(reader, SHOOT, ns)
    if shoots:
        return f"Shoot {ns}/{_name(_sorted(shoots)[0])}"
    if plants:
        found = _items(reader, PLANT, ns)
        if found:
            return f"Plant {ns}/{_name(_sorted(found)[0])}"
    entries = _items(reader, BACKUP_ENTRY, ns)
    if entries:
        return f"BackupEntry {ns}/{_name(_sorted(entries)[0])}"

    # Secrets referenced by a SecretBinding, then by a CredentialsBinding, used by a Shoot.
    secrets = _not_control_plane(
        _items(reader, SECRET, ns, label_selector={LABEL_SECRET_BINDING_REF: "true"})
    )
    for secret in _sorted(secrets):
        key = ref_key(ns, _name(secret))
        bindings = _items(reader, SECRET_BINDING, field_selector={INDEX_SECRET_BINDING_SECRET_REF: key})
        hit = _shoot_using(reader, bindings, INDEX_SHOOT_SECRET_BINDING)
        if hit:
            return _used(f"Secret {key}", hit, SECRET_BINDING[1])
    secrets = _not_control_plane(
        _items(reader, SECRET, ns, label_selector={LABEL_CREDENTIALS_BINDING_REF: "true"})
    )
    usage = _credentials(reader, ns, "v1", "Secret", secrets)
    if usage:
        return usage

    internal = _items(reader, INTERNAL_SECRET, ns, label_selector={LABEL_CREDENTIALS_BINDING_REF: "true"})
    usage = _credentials(reader, ns, *INTERNAL_SECRET, internal)
    if usage:
        return usage

    identities = _items(reader, WORKLOAD_IDENTITY, ns, label_selector={LABEL_CREDENTIALS_BINDING_REF: "true"})
    usage = _credentials(reader, ns, *WORKLOAD_IDENTITY, identities)
    if usage:
        return usage

    # Quotas referenced by any quotas[] entry of a SecretBinding, else a CredentialsBinding, in use.
    quotas = _sorted(_items(reader, QUOTA, ns))
    for binding_type, index, shoot_index in (
        (SECRET_BINDING, INDEX_SECRET_BINDING_QUOTA, INDEX_SHOOT_SECRET_BINDING),
        (CREDENTIALS_BINDING, INDEX_CREDENTIALS_BINDING_QUOTA, INDEX_SHOOT_CREDENTIALS_BINDING),
    ):
        for quota in quotas:
            key = ref_key(ns, _name(quota))
            hit = _shoot_using(reader, _items(reader, binding_type, field_selector={index: key}), shoot_index)
            if hit:
                return _used(f"Quota {key}", hit, binding_type[1])
    return None


def evaluate(
    project: dict, reader: Reader, settings: StaleSettings, now: datetime, *, plants: bool = True
) -> Decision:
    """The stale check of ``project`` at ``now``, in the steps of Gardener's stale reconciler. Raises what
    reads raise (a missing namespace is ``NotFound``)."""
    now = now.astimezone(UTC)
    typed = cast(Project, project)
    meta = get_metadata(project)
    status = typed.get("status") or {}
    since = parse_time_or_none(status.get(STALE_SINCE))
    auto = parse_time_or_none(status.get(AUTO_DELETE))

    if meta.get("deletionTimestamp"):
        return Decision(DELETING, "the Project is being deleted", since, auto, owns_status=False)
    ns = (typed.get("spec") or {}).get("namespace")
    if not ns:
        return Decision(NO_NAMESPACE, "spec.namespace is not set", since, auto, owns_status=False)

    def not_stale(state: str, reason: str) -> Decision:
        return Decision(state, reason, None, None)

    namespace = reader.get(*NAMESPACE, ns)
    annotations = get_annotations(namespace)
    if is_true(annotations.get(ANNOTATION_SKIP_STALE_CHECK)):
        return not_stale(EXCLUDED, f"namespace {ns} has {ANNOTATION_SKIP_STALE_CHECK}=true")

    minimum = settings.minimum_lifetime_days * DAY
    created = parse_time_or_none(meta.get("creationTimestamp"))
    if created is None or created + minimum > now:
        until = f", young until {format_time(created + minimum)}" if created else ""
        return not_stale(YOUNG, f"created {format_time(created) if created else 'just now'}{until}")
    last = parse_time_or_none(status.get(LAST_ACTIVITY))
    if last is not None and last + minimum > now:
        return not_stale(
            ACTIVE, f"last activity {format_time(last)}, active until {format_time(last + minimum)}"
        )
    usage = find_usage(reader, ns, plants=plants)
    if usage:
        return not_stale(IN_USE, f"in use by {usage}")

    new_since = since or rfc3339_copy(now)
    grace_end = new_since + settings.stale_grace_period_days * DAY
    if grace_end > now:
        return Decision(
            STALE,
            f"unused since {format_time(new_since)}; "
            f"auto-delete time is assigned from {format_time(grace_end)}",
            new_since,
            None,
        )
    candidate = new_since + settings.stale_expiration_time_days * DAY
    new_auto = candidate if auto is None or candidate > auto else auto  # never moved earlier
    if now < new_auto:
        return Decision(
            AUTO_DELETE_SCHEDULED,
            f"unused since {format_time(new_since)}; deleted at or after {format_time(new_auto)}",
            new_since,
            new_auto,
        )
    return Decision(
        AUTO_DELETE_DUE,
        f"unused since {format_time(new_since)}; auto-delete time {format_time(new_auto)} has passed",
        new_since,
        new_auto,
        delete=True,
    )


def status_changes(project: dict, decision: Decision) -> dict[str, str | None]:
    """The status fields (merge-patch values) that ``decision`` changes; empty when nothing changes."""
    if not decision.owns_status:
        return {}
    status = cast(Project, project).get("status") or {}
    changes: dict[str, str | None] = {}
    for field, target in ((STALE_SINCE, decision.stale_since), (AUTO_DELETE, decision.auto_delete_at)):
        current = status.get(field)
        if target is None:
            if current is not None:
                changes[field] = None
        elif parse_time_or_none(current) != target:
            changes[field] = format_time(target)
    return changes


# -- the reconciler ------------------------------------------------------------------------------------


# Projects: read live before the deletion (get), the confirmation annotation (patch), the stale
# auto-deletion (delete); stale timestamps (status patch). The namespace is read live (get).
@rbac(groups=GROUP_CORE, resources="projects", verbs=["get", "patch", "delete"])
@rbac(groups=GROUP_CORE, resources="projects/status", verbs="patch")
@rbac(groups="", resources="namespaces", verbs="get")
class StaleReconciler:
    """Marks unused Projects stale, assigns the auto-delete timestamp, deletes them when it passed.

    ``client`` is the manager's cache-backed client (reads from the cache, writes to the API server);
    ``api_reader`` reads live: a Project due for deletion is read again live, and re-evaluated with its
    namespace read live too (``client.reading_live``), before the confirmation annotation and the
    DELETE, so a cache that lags behind a fresh activity or a skip annotation cannot delete it.
    ``auto_deleted`` (``gcm_projects_auto_deleted_total``, when given) counts the Projects it deleted.
    """

    def __init__(
        self,
        client: Client,
        settings: StaleSettings,
        clock: Clock,
        *,
        api_reader: Reader | None = None,
        plants: bool | Callable[[], bool] = True,
        auto_deleted: Counter | None = None,
    ) -> None:
        self.client = client
        self.auto_deleted = auto_deleted
        self.api_reader: Reader = api_reader if api_reader is not None else client
        self.settings = settings
        self.clock = clock
        # A callable is asked at each check (discovery needs the API server, which may come up later).
        self._plants = plants

    @property
    def plants(self) -> bool:
        """Whether the in-use checks include Plants (served by the API server)."""
        return self._plants() if callable(self._plants) else self._plants

    def reconcile(self, request: Request) -> Result | None:
        try:
            project = self.client.get(*PROJECT, request.name)
        except NotFound:
            return None
        now = self.clock.now()
        try:
            decision = evaluate(project, self.client, self.settings, now, plants=self.plants)
        except NotFound as e:
            ns = (cast(Project, project).get("spec") or {}).get("namespace")
            if e.details.get("kind") != "namespaces" or e.details.get("name") != ns:
                raise
            # The Project controller has not created it yet (or the cache is a write behind): not an
            # error. Its create event (the namespace watch) triggers the check; the requeue is a net.
            log.debug("project namespace not there yet, waiting for it", project=request.name, namespace=ns)
            return Result(requeue_after=self.settings.stale_sync_period)
        self._patch_status(project, decision)
        if decision.delete:
            self._auto_delete(request.name, now)
        return Result(requeue_after=self.settings.stale_sync_period)

    def _patch_status(self, project: dict, decision: Decision) -> None:
        """Write ``decision``'s status changes, locked to the ``project`` they were computed from.

        The lock (its resourceVersion in the patch) turns a check on a cache that has not seen a newer
        write yet (our own last status patch, a fresh activity) into a ``Conflict``, which the
        controller requeues, instead of a write from outdated status (e.g. staleSinceTimestamp set a
        second time). The watch event of the newer write triggers the next check anyway.
        """
        changes = status_changes(project, decision)
        if not changes:
            return
        name = _name(project)
        self.client.patch(
            *PROJECT, name, with_optimistic_lock({"status": changes}, project), subresource="status"
        )
        if (
            decision.stale_since is not None
            and (cast(Project, project).get("status") or {}).get(STALE_SINCE) is None
        ):
            log.info("project is stale", project=name, reason=decision.reason)
        elif decision.stale_since is None:
            log.info("project is no longer stale", project=name, state=decision.state, reason=decision.reason)
        else:
            log.info("project stale timestamps updated", project=name, **changes)

    def _auto_delete(self, name: str, now: datetime) -> None:
        try:
            live = self.api_reader.get(*PROJECT, name)
        except NotFound:
            return
        # The cache for everything but the Project's namespace, which is read live too.
        decision = evaluate(live, self.client.reading_live(NAMESPACE), self.settings, now, plants=self.plants)
        if not decision.delete:
            self._patch_status(live, decision)
            log.info("auto-deletion cancelled by a live re-check", project=name, state=decision.state)
            return
        log.info("deleting stale project", project=name, reason=decision.reason)
        body = {
            "metadata": {
                "annotations": {
                    ANNOTATION_CONFIRM_DELETION: "true",
                    ANNOTATION_TIMESTAMP: format_rfc3339_nano(now),
                }
            }
        }
        # Locked to the live object the decision was taken on: a Project that changed since (new
        # activity, an annotation, a deletion) is refused with Conflict and checked again on requeue.
        try:
            self.client.patch(*PROJECT, name, with_optimistic_lock(body, live))
        except NotFound:
            return
        try:
            self.client.delete(*PROJECT, name, preconditions={"uid": live["metadata"]["uid"]})
        except NotFound:
            return  # gone meanwhile: not deleted by us
        if self.auto_deleted is not None:
            self.auto_deleted.inc()
