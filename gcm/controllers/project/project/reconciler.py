"""The Project reconciler (Gardener's ``pkg/controllermanager/controller/project/project/reconciler.go``):
finalizer, ``Pending``, the project namespace (create, or adopt only a namespace that already carries
the project labels), the default ResourceQuota, member RBAC (:mod:`gcm.controllers.project.rbac`),
``Ready`` / ``Failed`` with ``observedGeneration``, and the finalizer-driven deletion that releases
the namespace.

Security rules (hard rules, checked on the freshest data before every namespace write):

- a namespace is adopted only if it *already* carries both project labels with this Project's name
  and no other Project's UID annotation; a failed adoption leaves it untouched;
- on deletion a namespace without the project labels, or whose project UID annotation names another
  Project, is never modified or deleted (the UID check is stricter than Gardener); the namespace
  DELETE carries a UID precondition, so it cannot hit a namespace re-created under the same name.

Reads go through ``client`` (the manager's cache). Because the cache may lag behind this reconciler's
own writes, the namespace, the quota and the RBAC objects are written through ``controllerutil``'s
``create_or_update`` / ``create_or_patch`` with ``live_reader=api_reader``: the cache decides whether a
write is needed, the mutate function (:func:`adopt_namespace`, :func:`merge_quota`, which hold the
rules) runs again on the live object, and the write is based on it. The deletion flow reads the
namespace live. Every write returns the new Project, which the next write of the same pass uses
(``resourceVersion``, ``generation``). Every failing step takes one path
(:meth:`ProjectReconciler._failing`): a Warning event, phase ``Failed``, and the error raised again
for a retry with backoff.

Projects stay the dicts the client returns; their fields are read through the typed view
:class:`gcm.apis.core_v1beta1.Project` (``cast``, no runtime cost), so mypy checks those reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import structlog

from framework.client import NotFound, Reader, ReaderWriter
from framework.controllerutil import (
    add_finalizer,
    contains_finalizer,
    create_or_patch,
    create_or_update,
    merge_owner_references,
    new_controller_ref,
    remove_finalizer,
)
from framework.markers.rbac import rbac
from framework.meta.object import (
    ensure_metadata,
    get_annotations,
    get_finalizers,
    get_labels,
    get_metadata,
    get_namespace,
    get_owner_references,
)
from framework.meta.strconv import is_true
from framework.reconcile import Request, Result
from framework.record import NORMAL, WARNING, EventRecorder
from gcm.apis.constants import (
    ANNOTATION_NAMESPACE_CREATED_BY_PROJECT_CONTROLLER as ANNOTATION_CREATED_BY_CONTROLLER,
)
from gcm.apis.constants import (
    ANNOTATION_NAMESPACE_KEEP_AFTER_PROJECT_DELETION as ANNOTATION_KEEP_AFTER_DELETION,
)
from gcm.apis.constants import ANNOTATION_NAMESPACE_PROJECT as ANNOTATION_PROJECT_UID
from gcm.apis.constants import EVENT_ACTION_DELETE as ACTION_DELETE
from gcm.apis.constants import EVENT_ACTION_RECONCILE as ACTION_RECONCILE
from gcm.apis.constants import FINALIZER_GARDENER as FINALIZER
from gcm.apis.constants import (
    GROUP_CORE,
    LABEL_PROJECT_NAME,
    LABEL_ROLE,
    PROJECT,
    SHOOT,
)
from gcm.apis.constants import LABEL_ROLE_PROJECT as ROLE_PROJECT
from gcm.apis.constants import PROJECT_EVENT_EXTENSION_ROLES_DISABLED as REASON_EXTENSION_ROLES_DISABLED
from gcm.apis.constants import PROJECT_EVENT_NAMESPACE_DELETION_FAILED as REASON_DELETION_FAILED
from gcm.apis.constants import PROJECT_EVENT_NAMESPACE_MARKED_FOR_DELETION as REASON_MARKED_FOR_DELETION
from gcm.apis.constants import PROJECT_EVENT_NAMESPACE_NOT_EMPTY as REASON_NOT_EMPTY
from gcm.apis.constants import PROJECT_EVENT_NAMESPACE_RECONCILE_FAILED as REASON_RECONCILE_FAILED
from gcm.apis.constants import (
    PROJECT_EVENT_NAMESPACE_RECONCILE_SUCCESSFUL as REASON_RECONCILE_SUCCESSFUL,
)
from gcm.apis.constants import PROJECT_FAILED as PHASE_FAILED
from gcm.apis.constants import PROJECT_NAMESPACE_PREFIX as NAMESPACE_PREFIX
from gcm.apis.constants import PROJECT_PENDING as PHASE_PENDING
from gcm.apis.constants import PROJECT_READY as PHASE_READY
from gcm.apis.constants import PROJECT_TERMINATING as PHASE_TERMINATING
from gcm.apis.constants import RESOURCE_QUOTA_NAME as QUOTA_NAME
from gcm.apis.core_v1beta1 import Project
from gcm.config import ProjectControllerConfiguration
from gcm.controllers.errors import error_text
from gcm.controllers.project.rbac import ProjectRBAC, extension_role_names

log = structlog.get_logger("gcm.controllers.project")

PROJECT_API_VERSION, KIND = PROJECT
SHOOT_API_VERSION = SHOOT[0]

NAMESPACE_DELETION_REQUEUE = 60.0  # seconds; the owned-Namespace delete event normally comes first
NAMESPACE_DELETION_GRACE_PERIOD = 60


class NamespaceError(Exception):
    """The namespace cannot be used by this Project (adoption refused)."""


def generated_namespace_name(project: dict) -> str:
    """``garden-<name>-<first 5 hex of sha256(uid)>``: deterministic, so retries never orphan one."""
    meta = cast(Project, project)["metadata"]
    digest = hashlib.sha256(meta["uid"].encode()).hexdigest()
    return f"{NAMESPACE_PREFIX}{meta['name']}-{digest[:5]}"


def project_labels(project: dict) -> dict[str, str]:
    return {LABEL_ROLE: ROLE_PROJECT, LABEL_PROJECT_NAME: cast(Project, project)["metadata"]["name"]}


def has_project_labels(namespace: dict, project: dict) -> bool:
    labels = get_labels(namespace)
    return all(labels.get(k) == v for k, v in project_labels(project).items())


def go_map_literal(m: dict[str, str]) -> str:
    """Go's ``%#v`` of a ``map[string]string`` (keys sorted), as Gardener's error messages print it."""
    items = ", ".join(f'"{k}":"{v}"' for k, v in sorted(m.items()))
    return "map[string]string{" + items + "}"


def adopt_namespace(project: dict, namespace: dict) -> None:
    """Merge this Project's labels, annotations and owner reference into ``namespace``.

    Raises :class:`NamespaceError`, leaving ``namespace`` unchanged, when the security rule forbids
    using it: it must already carry both project labels and no other Project's UID annotation.
    """
    labels = project_labels(project)
    if not has_project_labels(namespace, project):
        raise NamespaceError(
            f"namespace cannot be used as it needs the project labels {go_map_literal(labels)}"
        )
    uid = cast(Project, project)["metadata"]["uid"]
    annotations = get_annotations(namespace)
    if ANNOTATION_PROJECT_UID in annotations and annotations[ANNOTATION_PROJECT_UID] != uid:
        raise NamespaceError("namespace is already in-use by another project")
    merge_owner_references(namespace, [controller_reference(project)])
    meta = ensure_metadata(namespace)
    meta["labels"] = {**get_labels(namespace), **labels}
    merged = {**annotations, ANNOTATION_PROJECT_UID: uid}
    if ANNOTATION_CREATED_BY_CONTROLLER not in annotations:
        merged[ANNOTATION_KEEP_AFTER_DELETION] = "true"
    meta["annotations"] = merged


def controller_reference(project: dict, block_owner_deletion: bool = True) -> dict:
    """The Project's controller reference (``metav1.NewControllerRef(project, core/v1beta1 Project)``)."""
    return new_controller_ref(project, PROJECT, block_owner_deletion=block_owner_deletion)


# --- default ResourceQuota --------------------------------------------------------------------------


def select_quota(quotas: list[Any], labels: dict[str, str] | None) -> Any:
    """The first quota configuration whose ``project_selector`` matches; ``None`` when none does.

    A selector that is unset (``None``) matches nothing; an invalid one raises ``ValueError``.
    """
    for quota in quotas or ():
        selector = quota.project_selector
        if selector is None:
            continue
        if selector.as_selector().matches(labels or {}):
            return quota
    return None


def desired_quota(project: dict, namespace: str, quota_config: dict, live: dict | None) -> dict:
    """The ResourceQuota ``gardener`` as it should be, merged into ``live``."""
    cfg_meta = get_metadata(quota_config)
    cfg_hard = {k: str(v) for k, v in (((quota_config or {}).get("spec") or {}).get("hard") or {}).items()}
    live = live or {}
    live_meta = get_metadata(live)
    owned = {"metadata": {"ownerReferences": list(live_meta.get("ownerReferences") or [])}}
    merge_owner_references(owned, [controller_reference(project, block_owner_deletion=True)])
    live_hard = (live.get("spec") or {}).get("hard") or {}
    hard = {k: live_hard.get(k, v) for k, v in cfg_hard.items()}
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": QUOTA_NAME,
            "namespace": namespace,
            "labels": {**(live_meta.get("labels") or {}), **(cfg_meta.get("labels") or {})},
            "annotations": {**(live_meta.get("annotations") or {}), **(cfg_meta.get("annotations") or {})},
            "ownerReferences": get_owner_references(owned),
        },
        "spec": {"hard": hard},
    }


def merge_quota(project: dict, quota_config: dict, quota: dict) -> None:
    """Change ``quota`` in place into :func:`desired_quota`; only the fields it owns (labels,
    annotations, owner references, ``spec.hard``), and only where they differ (an empty map is not
    written over a missing one)."""
    want = desired_quota(project, get_namespace(quota), quota_config, quota)
    meta, want_meta = ensure_metadata(quota), want["metadata"]
    for key in ("labels", "annotations", "ownerReferences"):
        if (meta.get(key) or type(want_meta[key])()) != want_meta[key]:
            meta[key] = want_meta[key]
    spec = quota.setdefault("spec", {})
    if (spec.get("hard") or {}) != want["spec"]["hard"]:
        spec["hard"] = want["spec"]["hard"]


# --- the reconciler ----------------------------------------------------------------------------------


# Projects: read live before a write (get); spec.namespace (update); the finalizer (merge patch with
# optimistic lock); phase and observedGeneration (status patch). The namespace's owner reference to its
# Project has blockOwnerDeletion, which OwnerReferencesPermissionEnforcement authorizes as `update` on
# the owner's finalizers subresource.
@rbac(groups=GROUP_CORE, resources="projects", verbs=["get", "update", "patch"])
@rbac(groups=GROUP_CORE, resources="projects/status", verbs="patch")
@rbac(groups=GROUP_CORE, resources="projects/finalizers", verbs="update")
# The project namespace: read live before a write, created, adopted and released, deleted with it.
@rbac(groups="", resources="namespaces", verbs=["get", "create", "update", "delete"])
# The default quota of controllers.project.quotas: read live, created or patched.
@rbac(groups="", resources="resourcequotas", verbs=["get", "create", "patch"])
class ProjectReconciler:
    """Reconciles one Project per request (key: the Project name).

    Args:
        client: reads (the manager's cache) and writes.
        recorder: an ``EventRecorder`` reporting as ``project-controller``.
        config: ``controllers.project`` (:class:`gcm.config.ProjectControllerConfiguration`).
        api_reader: live reads (defaults to ``client``).
    """

    def __init__(
        self,
        client: ReaderWriter,
        recorder: EventRecorder,
        config: ProjectControllerConfiguration,
        *,
        api_reader: Reader | None = None,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.config = config
        self.api_reader = api_reader or client

    # -- entry point ------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        try:
            project = self.client.get(PROJECT_API_VERSION, KIND, request.name)
        except NotFound:
            return None
        if project["metadata"].get("deletionTimestamp"):
            return self.delete(project)
        return self.reconcile_project(project)

    # -- not being deleted ------------------------------------------------------------------------------

    def reconcile_project(self, project: dict) -> Result | None:
        project = self._ensure_finalizer(project)
        if not (cast(Project, project).get("status") or {}).get("phase"):
            project = self._set_phase(project, PHASE_PENDING)

        with self._failing(project):
            namespace = self.ensure_namespace(project)
        ns_name = namespace["metadata"]["name"]
        self._event(
            project,
            NORMAL,
            REASON_RECONCILE_SUCCESSFUL,
            ACTION_RECONCILE,
            f'Successfully reconciled namespace "{ns_name}" for project',
        )

        if not (cast(Project, project).get("spec") or {}).get("namespace"):
            project.setdefault("spec", {})["namespace"] = ns_name
            with self._failing(project):
                project = self.client.update(project)

        with self._failing(project, "Error while setting up ResourceQuota: "):
            self.reconcile_quota(project, ns_name)

        spec_namespace = (cast(Project, project).get("spec") or {}).get("namespace") or ""
        with self._failing(
            project,
            f'Error while preparing for reconciling RBAC resources for namespace "{spec_namespace}": ',
        ):
            rbac = ProjectRBAC(
                self.client, project, self.api_reader, extension_roles=self._extension_roles_enabled()
            )
        with self._failing(project, f'Error while reconciling RBAC resources for namespace "{ns_name}": '):
            rbac.deploy()
        with self._failing(project, "Error while deleting stale RBAC rules for extension roles: "):
            rbac.delete_stale_extension_roles()
        if not rbac.extension_roles and (ignored := sorted(extension_role_names(project))):
            self._event(
                project,
                WARNING,
                REASON_EXTENSION_ROLES_DISABLED,
                ACTION_RECONCILE,
                "Extension roles are disabled in gcm (controllers.project.extensionRoles), members' "
                f"roles {', '.join('extension:' + r for r in ignored)} grant nothing",
            )

        with self._failing(project, "Error while trying to mark project as ready: ", phase=None):
            self._set_phase(project, PHASE_READY)
        return None

    # -- namespace ----------------------------------------------------------------------------------------

    def ensure_namespace(self, project: dict) -> dict:
        """Create the project namespace, or adopt an existing one that carries the project labels.

        The adoption rules run on the cached namespace and, before any write, again on the live one.
        """
        name = (cast(Project, project).get("spec") or {}).get("namespace") or generated_namespace_name(
            project
        )
        namespace, _ = create_or_update(
            self.client,
            self._new_namespace(project, name),
            lambda ns: adopt_namespace(project, ns),
            live_reader=self.api_reader,
        )
        return namespace

    def _new_namespace(self, project: dict, name: str) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": name,
                "labels": project_labels(project),
                "annotations": {
                    ANNOTATION_PROJECT_UID: project["metadata"]["uid"],
                    ANNOTATION_CREATED_BY_CONTROLLER: "true",
                },
                "ownerReferences": [controller_reference(project)],
            },
        }

    # -- default ResourceQuota ----------------------------------------------------------------------------

    def reconcile_quota(self, project: dict, namespace: str) -> None:
        quota = select_quota(self.config.quotas, cast(Project, project)["metadata"].get("labels"))
        if quota is None:
            return
        create_or_patch(
            self.client,
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": QUOTA_NAME, "namespace": namespace},
            },
            lambda live: merge_quota(project, quota.config, live),
            live_reader=self.api_reader,
        )

    # -- deletion ---------------------------------------------------------------------------------------

    def delete(self, project: dict) -> Result | None:
        if not contains_finalizer(project, FINALIZER):
            return None
        ns_name = (cast(Project, project).get("spec") or {}).get("namespace")
        if not ns_name:
            self._remove_finalizer(project)
            return None
        # The metadata-only Shoot cache, the one the Shoot-delete watch reads (Gardener's
        # IsNamespaceInUse): when a delete re-enqueues the Project, this cache has seen it already.
        if self.client.list(SHOOT_API_VERSION, SHOOT[1], ns_name, metadata_only=True)["items"]:
            self._event(
                project,
                WARNING,
                REASON_NOT_EMPTY,
                ACTION_DELETE,
                f'Cannot release namespace "{ns_name}" because it still contains Shoots',
            )
            self._set_phase(project, PHASE_TERMINATING)
            return None  # the Shoot-delete watch re-enqueues the Project when the last one is gone
        with self._failing(
            project,
            f'Failed to release project namespace "{ns_name}": ',
            reason=REASON_DELETION_FAILED,
            action=ACTION_DELETE,
        ):
            released = self.release_namespace(project, ns_name)
        if not released:
            self._event(
                project,
                NORMAL,
                REASON_MARKED_FOR_DELETION,
                ACTION_DELETE,
                f'Successfully marked project namespace "{ns_name}" for deletion',
            )
            self._set_phase(project, PHASE_TERMINATING)
            return Result(requeue_after=NAMESPACE_DELETION_REQUEUE)
        self._remove_finalizer(project)
        return None

    def release_namespace(self, project: dict, name: str) -> bool:
        """Keep, leave alone or delete the namespace; True once it no longer holds the Project up."""
        namespace = self._get(self.api_reader, "v1", "Namespace", name)
        if namespace is None:
            return True
        meta = namespace["metadata"]
        if meta.get("deletionTimestamp"):
            return False
        if not has_project_labels(namespace, project):
            # Anti-theft rule: a namespace without the project labels is not ours to touch.
            return True
        annotations = meta.get("annotations") or {}
        owner_uid = annotations.get(ANNOTATION_PROJECT_UID)
        p_meta = cast(Project, project)["metadata"]
        if owner_uid and owner_uid != p_meta["uid"]:
            # Stricter than Gardener: labelled for this name but in use by another Project (same name,
            # other UID; adoption was refused) - not ours either.
            return True
        if is_true(annotations.get(ANNOTATION_KEEP_AFTER_DELETION)):
            drop_annotations = (
                ANNOTATION_PROJECT_UID,
                ANNOTATION_KEEP_AFTER_DELETION,
                ANNOTATION_CREATED_BY_CONTROLLER,
            )
            released = {
                **namespace,
                "metadata": {
                    **meta,
                    "annotations": {k: v for k, v in annotations.items() if k not in drop_annotations},
                    "labels": {
                        k: v
                        for k, v in (meta.get("labels") or {}).items()
                        if k not in (LABEL_PROJECT_NAME, LABEL_ROLE)
                    },
                    "ownerReferences": [
                        o
                        for o in meta.get("ownerReferences") or []
                        if not (
                            o.get("apiVersion") == PROJECT_API_VERSION
                            and o.get("kind") == KIND
                            and o.get("name") == p_meta["name"]
                            and o.get("uid") == p_meta["uid"]
                        )
                    ],
                },
            }
            self.client.update(released)
            return True
        try:
            self.client.delete(
                "v1",
                "Namespace",
                name,
                propagation_policy="Foreground",
                grace_period_seconds=NAMESPACE_DELETION_GRACE_PERIOD,
                preconditions={"uid": meta["uid"]},
            )
        except NotFound:
            pass
        return False

    # -- helpers --------------------------------------------------------------------------------------

    @staticmethod
    def _get(
        reader: Reader, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict | None:
        try:
            return reader.get(api_version, kind, name, namespace)
        except NotFound:
            return None

    def _ensure_finalizer(self, project: dict) -> dict:
        desired = {"metadata": {"finalizers": get_finalizers(project)}}
        if not add_finalizer(desired, FINALIZER):
            return project
        return self._patch_finalizers(project, get_finalizers(desired))

    def _remove_finalizer(self, project: dict) -> dict:
        desired = {"metadata": {"finalizers": get_finalizers(project)}}
        if not remove_finalizer(desired, FINALIZER):
            return project
        return self._patch_finalizers(project, get_finalizers(desired))

    def _patch_finalizers(self, project: dict, finalizers: list[str]) -> dict:
        # Optimistic lock: the list is replaced wholesale, so another writer's finalizer must not be lost.
        meta = project["metadata"]
        return self.client.patch(
            PROJECT_API_VERSION,
            KIND,
            meta["name"],
            {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}},
        )

    def _set_phase(self, project: dict, phase: str) -> dict:
        """Patch ``status.phase`` and ``status.observedGeneration`` (skipped when both are current)."""
        typed = cast(Project, project)
        status = typed.get("status") or {}
        generation = typed["metadata"].get("generation")
        if status.get("phase") == phase and status.get("observedGeneration") == generation:
            return project
        return self.client.patch(
            PROJECT_API_VERSION,
            KIND,
            typed["metadata"]["name"],
            {"status": {"phase": phase, "observedGeneration": generation}},
            subresource="status",
        )

    def _try_phase(self, project: dict, phase: str) -> None:
        try:
            self._set_phase(project, phase)
        except Exception as e:  # only logged: the original error is what the reconcile returns
            log.error(
                "could not update project phase",
                project=project["metadata"]["name"],
                phase=phase,
                error=str(e),
            )

    @contextmanager
    def _failing(
        self,
        project: dict,
        note_prefix: str = "",
        *,
        reason: str = REASON_RECONCILE_FAILED,
        action: str = ACTION_RECONCILE,
        phase: str | None = PHASE_FAILED,
    ) -> Iterator[None]:
        """The failure path, written once: an error in the block becomes a Warning event (note: the
        prefix and the error's text) and phase ``Failed`` (``phase=None``: the event only), and is
        raised again, so the request is retried with backoff."""
        try:
            yield
        except Exception as e:
            self._event(project, WARNING, reason, action, f"{note_prefix}{error_text(e)}")
            if phase is not None:
                self._try_phase(project, phase)
            raise

    def _extension_roles_enabled(self) -> bool:
        return getattr(self.config, "extension_roles", None) is True  # unset: off, as defaulting sets it

    def _event(self, project: dict, type_: str, reason: str, action: str, note: str) -> None:
        self.recorder.eventf(project, type_, reason, action, note)
