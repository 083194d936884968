"""The ``project-resourcequota`` reconciler.

Gardener's ``pkg/controllermanager/controller/project/resourcequota``: every ResourceQuota in a project
namespace must leave room for the Secrets and ConfigMaps Gardener itself creates per Shoot. For each
per-shoot descriptor (annotation → quota key → expected count) the quota key is raised to
``expected * max shoots`` and the annotation records the count that was accounted for; a later change
of the expected count adds only the difference.

Only quotas in a namespace some Project's ``spec.namespace`` names pass the predicate (a cache index
lookup). Unlike Gardener, the reconcile then changes a quota only when its namespace carries the labels
of the Project naming it: a namespace gcm refused to adopt is not gcm's to touch. It finishes with one
merge patch, sent only when something changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from framework.client import NotFound, ReaderWriter
from framework.markers.rbac import rbac
from framework.meta.object import get_labels, get_metadata
from framework.meta.quantity import Quantity, quantity_from_json
from framework.meta.strconv import atoi
from framework.reconcile import Request, Result
from gcm.apis.constants import (
    ANNOTATION_CONFIGMAPS_PER_SHOOT,
    ANNOTATION_SECRETS_PER_SHOOT,
    LABEL_PROJECT_NAME,
    LABEL_ROLE,
    LABEL_ROLE_PROJECT,
    PROJECT,
    SHOOT,
)
from gcm.apis.constants import RESOURCE_QUOTA_SHOOTS as SHOOTS_QUOTA_KEY


@dataclass(frozen=True)
class PerShootResource:
    """A resource Gardener creates ``count`` times per Shoot, accounted in ``annotation``."""

    annotation: str
    quota_key: str
    count: int


DEFAULT_PER_SHOOT_RESOURCES = (
    # ca-cluster, ca-kubelet
    PerShootResource(ANNOTATION_CONFIGMAPS_PER_SHOOT, "count/configmaps", 2),
    # ca-cluster, ssh-keypair, ssh-keypair.old, monitoring
    PerShootResource(ANNOTATION_SECRETS_PER_SHOOT, "count/secrets", 4),
)

_ZERO = Quantity(Fraction(0))


# The per-Shoot limits (patch).
@rbac(groups="", resources="resourcequotas", verbs="patch")
class ResourceQuotaReconciler:
    """Raises per-shoot ConfigMap and Secret limits of quotas in project namespaces."""

    def __init__(
        self,
        client: ReaderWriter,
        config: Any = None,
        per_shoot_resources: tuple[PerShootResource, ...] = DEFAULT_PER_SHOOT_RESOURCES,
    ) -> None:
        self.client = client
        self.config = config
        self.per_shoot_resources = tuple(per_shoot_resources)

    def reconcile(self, request: Request) -> Result | None:
        try:
            quota = self.client.get("v1", "ResourceQuota", request.name, request.namespace)
        except NotFound:
            return None
        if not self.owns_namespace(request.namespace):
            return None
        patch = self.compute_patch(quota)
        if patch:
            self.client.patch("v1", "ResourceQuota", request.name, patch, request.namespace)
        return None

    def owns_namespace(self, namespace: str) -> bool:
        """Whether ``namespace`` is a project namespace gcm manages: labelled for the Project that names it.

        A Project may name a namespace gcm refused to adopt (it lacks the project labels; the Project is
        Failed): its quotas are not gcm's to change, although Gardener's controller would raise them.
        """
        try:
            labels = get_labels(self.client.get("v1", "Namespace", namespace))
        except NotFound:
            return False
        name = labels.get(LABEL_PROJECT_NAME)
        if labels.get(LABEL_ROLE) != LABEL_ROLE_PROJECT or not name:
            return False
        try:
            project = self.client.get(*PROJECT, name)
        except NotFound:
            return False
        return (project.get("spec") or {}).get("namespace") == namespace

    def compute_patch(self, quota: dict) -> dict:
        """The merge patch for ``quota`` (empty when nothing changes); ``ValueError`` on a bad annotation."""
        meta = get_metadata(quota)
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        if meta.get("deletionTimestamp") or not hard:
            return {}
        annotations = meta.get("annotations") or {}
        if SHOOTS_QUOTA_KEY in hard:
            max_shoots = quantity_from_json(hard[SHOOTS_QUOTA_KEY])
        else:
            shoots = self.client.list(*SHOOT, meta["namespace"])["items"]
            max_shoots = Quantity(Fraction(len(shoots)))

        new_hard: dict[str, str] = {}
        new_annotations: dict[str, str] = {}
        for res in self.per_shoot_resources:
            expected = res.count
            if res.annotation not in annotations:
                if res.quota_key not in hard:
                    continue
                required = max_shoots * expected
                if quantity_from_json(hard[res.quota_key]) < required:
                    new_hard[res.quota_key] = str(required)
                new_annotations[res.annotation] = str(expected)
                continue
            annotated = atoi(annotations[res.annotation])
            if annotated == expected:
                continue
            diff = max(expected - annotated, 0)
            if diff > 0:
                current = quantity_from_json(hard[res.quota_key]) if res.quota_key in hard else _ZERO
                new_hard[res.quota_key] = str(current + max_shoots * diff)
            new_annotations[res.annotation] = str(expected)

        patch: dict[str, Any] = {}
        if new_annotations:
            patch["metadata"] = {"annotations": new_annotations}
        if new_hard:
            patch["spec"] = {"hard": new_hard}
        return patch
