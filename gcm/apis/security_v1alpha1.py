"""Typed views of the ``security.gardener.cloud/v1alpha1`` kinds gcm ships CRDs for (Gardener's
``pkg/apis/security/v1alpha1``), from which ``framework.generate.crd`` writes ``manifests/crds``; see
``gcm.apis.core_v1beta1`` for what the schemas type."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from framework.markers import JSON, PreserveUnknownFields, PrinterColumn, resource, type_markers
from framework.types import meta_v1
from gcm.apis import constants
from gcm.apis.core_v1beta1 import AGE, CRD_LABELS, BindingProvider, ObjectReference


@type_markers(PreserveUnknownFields())
class CredentialsReference(TypedDict):
    """v1 Secret, core.gardener.cloud/v1beta1 InternalSecret or security.gardener.cloud/v1alpha1
    WorkloadIdentity."""

    apiVersion: str
    kind: str
    name: str
    namespace: NotRequired[str]


@type_markers(PreserveUnknownFields())
@resource(
    group=constants.GROUP_SECURITY,
    version="v1alpha1",
    kind=constants.CREDENTIALS_BINDING[1],
    status=False,
    labels=CRD_LABELS,
    printer_columns=(
        PrinterColumn("Provider", "string", ".provider.type"),
        PrinterColumn("Credentials Kind", "string", ".credentialsRef.kind"),
        PrinterColumn("Credentials Name", "string", ".credentialsRef.name"),
        AGE,
    ),
)
class CredentialsBinding(TypedDict):
    """Its fields are top-level (no spec); the stale-project check reads credentialsRef and quotas."""

    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    credentialsRef: NotRequired[CredentialsReference]
    quotas: NotRequired[list[ObjectReference]]
    provider: NotRequired[BindingProvider]


@type_markers(PreserveUnknownFields())
class TargetSystem(TypedDict, total=False):
    type: str
    providerConfig: JSON


@type_markers(PreserveUnknownFields())
class WorkloadIdentitySpec(TypedDict, total=False):
    audiences: list[str]
    targetSystem: TargetSystem


@type_markers(PreserveUnknownFields())
class WorkloadIdentityStatus(TypedDict, total=False):
    sub: str


@resource(
    group=constants.GROUP_SECURITY,
    version="v1alpha1",
    kind=constants.WORKLOAD_IDENTITY[1],
    labels=CRD_LABELS,
    printer_columns=(PrinterColumn("Target", "string", ".spec.targetSystem.type"), AGE),
)
class WorkloadIdentity(TypedDict):
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: meta_v1.ObjectMeta
    spec: NotRequired[WorkloadIdentitySpec]
    status: NotRequired[WorkloadIdentityStatus]
