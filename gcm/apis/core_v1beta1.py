"""Typed views of the ``core.gardener.cloud/v1beta1`` kinds gcm ships CRDs for (Gardener's
``pkg/apis/core/v1beta1``), from which ``framework.generate.crd`` writes ``manifests/crds``.

The CRDs are for running gcm against a plain cluster; against a real Gardener API server
(gardener-apiserver serves core.gardener.cloud) they are not applied. Each schema types every field gcm
reads or writes (the project, stale and activity controllers, member RBAC) and those the printer
columns show; everything else under ``spec``/``status`` is kept unvalidated
(``PreserveUnknownFields``): Gardener's API has far more fields than gcm needs.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from framework.markers import (
    Int64,
    Pattern,
    PreserveUnknownFields,
    PrinterColumn,
    Quantity,
    resource,
    type_markers,
)
from framework.types import meta_v1
from gcm.apis import constants

CRD_LABELS = {"app.kubernetes.io/part-of": "gardener-controller-manager"}
"""The labels of gcm's CustomResourceDefinitions."""

Unvalidated = Annotated[dict[str, Any], PreserveUnknownFields()]
"""An object whose fields gcm does not read: kept as sent."""

AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp")
"""kubectl's usual last column."""


# --- Project (cluster-scoped) -------------------------------------------------------------------------


class Subject(TypedDict):
    """An rbac.authorization.k8s.io Subject."""

    apiGroup: NotRequired[str]
    kind: str
    name: str
    namespace: NotRequired[str]


class ProjectMember(Subject):
    """A member of a project: an rbac Subject plus its project roles."""

    role: NotRequired[str]
    """owner, admin, viewer, uam, serviceaccountmanager or extension:<name>."""
    roles: NotRequired[list[str]]


class Toleration(TypedDict):
    key: str
    value: NotRequired[str]


class ProjectTolerations(TypedDict, total=False):
    defaults: list[Toleration]
    whitelist: list[Toleration]


@type_markers(PreserveUnknownFields())
class ProjectSpec(TypedDict, total=False):
    createdBy: Subject
    """The subject that created the project (an rbac.authorization.k8s.io Subject)."""
    description: str
    owner: Subject
    """Deprecated owner subject; bound to the project admin ClusterRole."""
    purpose: str
    members: list[ProjectMember]
    """Members of the project (an rbac Subject plus its project roles)."""
    namespace: Annotated[str, Pattern("^garden(-.+)?$")]
    """The project namespace; "garden" or a name starting with "garden-"."""
    tolerations: ProjectTolerations


@type_markers(PreserveUnknownFields())
class ProjectStatus(TypedDict, total=False):
    observedGeneration: Int64
    phase: str
    """Pending, Ready, Failed or Terminating."""
    staleSinceTimestamp: meta_v1.Time
    staleAutoDeleteTimestamp: meta_v1.Time
    lastActivityTimestamp: meta_v1.Time


@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.KIND_PROJECT,
    scope="Cluster",
    labels=CRD_LABELS,
    printer_columns=(
        PrinterColumn("Namespace", "string", ".spec.namespace"),
        PrinterColumn("Status", "string", ".status.phase"),
        PrinterColumn("Owner", "string", ".spec.owner.name"),
        PrinterColumn("Creator", "string", ".spec.createdBy.name"),
        AGE,
    ),
)
class Project(TypedDict):
    """Project holds certain properties about a Gardener project."""

    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    spec: NotRequired[ProjectSpec]
    """Spec defines the project properties."""
    status: NotRequired[ProjectStatus]
    """Most recently observed status of the project."""


# --- Shoot ---------------------------------------------------------------------------------------------


@type_markers(PreserveUnknownFields())
class ShootCloudProfile(TypedDict, total=False):
    kind: str
    name: str


@type_markers(PreserveUnknownFields())
class ShootProvider(TypedDict, total=False):
    type: str


@type_markers(PreserveUnknownFields())
class ShootKubernetes(TypedDict, total=False):
    version: str


@type_markers(PreserveUnknownFields())
class ShootHibernation(TypedDict, total=False):
    enabled: bool


# What gcm reads (the binding names, for the stale check) and what the printer columns show.
@type_markers(PreserveUnknownFields())
class ShootSpec(TypedDict, total=False):
    secretBindingName: str
    """Deprecated in favour of credentialsBindingName."""
    credentialsBindingName: str
    cloudProfileName: str
    cloudProfile: ShootCloudProfile
    seedName: str
    region: str
    purpose: str
    provider: ShootProvider
    kubernetes: ShootKubernetes
    hibernation: ShootHibernation


@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.KIND_SHOOT,
    categories=("all",),
    labels=CRD_LABELS,
    printer_columns=(
        PrinterColumn("CloudProfile", "string", ".spec.cloudProfileName"),
        PrinterColumn("Provider", "string", ".spec.provider.type"),
        PrinterColumn("Region", "string", ".spec.region"),
        PrinterColumn("Seed", "string", ".spec.seedName", priority=1),
        PrinterColumn("K8S Version", "string", ".spec.kubernetes.version"),
        PrinterColumn("Hibernation", "boolean", ".spec.hibernation.enabled"),
        PrinterColumn("Last Operation", "string", ".status.lastOperation.type"),
        PrinterColumn("Purpose", "string", ".spec.purpose", priority=1),
        AGE,
    ),
)
class Shoot(TypedDict):
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    spec: NotRequired[ShootSpec]
    status: NotRequired[Unvalidated]


# --- SecretBinding (its fields are top-level, no spec) --------------------------------------------------


class SecretReference(TypedDict):
    name: str
    namespace: NotRequired[str]


@type_markers(PreserveUnknownFields())
class ObjectReference(TypedDict, total=False):
    """A reference to an object of any kind (core/v1 ObjectReference's fields gcm reads)."""

    apiVersion: str
    kind: str
    name: str
    namespace: str


@type_markers(PreserveUnknownFields())
class BindingProvider(TypedDict, total=False):
    type: str


@type_markers(PreserveUnknownFields())
@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.SECRET_BINDING[1],
    short_names=("sb",),
    status=False,
    labels=CRD_LABELS,
    printer_columns=(
        PrinterColumn("Secret", "string", ".secretRef.name"),
        PrinterColumn("Provider", "string", ".provider.type"),
        AGE,
    ),
)
class SecretBinding(TypedDict):
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    secretRef: NotRequired[SecretReference]
    quotas: NotRequired[list[ObjectReference]]
    provider: NotRequired[BindingProvider]


# --- Quota ---------------------------------------------------------------------------------------------


@type_markers(PreserveUnknownFields())
class QuotaSpec(TypedDict, total=False):
    clusterLifetimeDays: int
    metrics: dict[str, Quantity]
    scope: ObjectReference


@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.QUOTA[1],
    short_names=("squota",),
    status=False,
    labels=CRD_LABELS,
    printer_columns=(
        PrinterColumn("Scope", "string", ".spec.scope.kind"),
        PrinterColumn("Lifetime", "integer", ".spec.clusterLifetimeDays"),
        AGE,
    ),
)
class Quota(TypedDict):
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    spec: NotRequired[QuotaSpec]


# --- BackupEntry, Plant, InternalSecret: gcm needs their existence, names and labels ---------------------


@type_markers(PreserveUnknownFields())
class BackupEntrySpec(TypedDict, total=False):
    bucketName: str
    seedName: str


@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.BACKUP_ENTRY[1],
    short_names=("bec",),
    categories=("all",),
    labels=CRD_LABELS,
    printer_columns=(
        PrinterColumn("Bucket", "string", ".spec.bucketName"),
        PrinterColumn("Seed", "string", ".spec.seedName"),
        PrinterColumn("Operation", "string", ".status.lastOperation.state"),
        PrinterColumn("Progress", "integer", ".status.lastOperation.progress"),
        AGE,
    ),
)
class BackupEntry(TypedDict):
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    spec: NotRequired[BackupEntrySpec]
    status: NotRequired[Unvalidated]


class LocalReference(TypedDict):
    name: str


@type_markers(PreserveUnknownFields())
class PlantSpec(TypedDict, total=False):
    secretRef: LocalReference


@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.PLANT[1],
    labels=CRD_LABELS,
    printer_columns=(PrinterColumn("Secret", "string", ".spec.secretRef.name"), AGE),
)
class Plant(TypedDict):
    """An external cluster registered in a project. Removed from Gardener in v1.54; shipped because
    gcm's stale check still counts Plants as in use (Gardener's
    pkg/controllermanager/controller/project/stale)."""

    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    spec: NotRequired[PlantSpec]
    status: NotRequired[Unvalidated]


@resource(
    group=constants.GROUP_CORE,
    version="v1beta1",
    kind=constants.INTERNAL_SECRET[1],
    status=False,
    labels=CRD_LABELS,
    printer_columns=(PrinterColumn("Type", "string", ".type"), AGE),
)
class InternalSecret(TypedDict):
    """A Secret only Gardener operators can read; gcm never reads its data."""

    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    data: NotRequired[dict[str, meta_v1.Bytes]]
    stringData: NotRequired[dict[str, str]]
    type: NotRequired[str]
    immutable: NotRequired[bool]
