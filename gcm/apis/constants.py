"""Gardener's group/versions, kinds, labels, annotations, finalizer, phases and event reasons.

Values as in gardener/gardener ``pkg/apis/core/v1beta1/constants/types_constants.go`` (labels,
annotations, finalizer), ``pkg/apis/core/v1beta1/types_project.go`` (phases, event reasons, member
roles) and ``pkg/component/garden/projectrbac`` (RBAC object names). Kinds are ``(apiVersion, kind)``
pairs, the arguments every client read takes.
"""

from __future__ import annotations

from typing import Final

# --- groups and versions ----------------------------------------------------------------------------

GROUP_CORE = "core.gardener.cloud"
GROUP_SECURITY = "security.gardener.cloud"
CORE_V1BETA1 = f"{GROUP_CORE}/v1beta1"
SECURITY_V1ALPHA1 = f"{GROUP_SECURITY}/v1alpha1"

# --- kinds (apiVersion, kind) -------------------------------------------------------------------------

PROJECT = (CORE_V1BETA1, "Project")
SHOOT = (CORE_V1BETA1, "Shoot")
PLANT = (CORE_V1BETA1, "Plant")
BACKUP_ENTRY = (CORE_V1BETA1, "BackupEntry")
QUOTA = (CORE_V1BETA1, "Quota")
SECRET_BINDING = (CORE_V1BETA1, "SecretBinding")
INTERNAL_SECRET = (CORE_V1BETA1, "InternalSecret")
CREDENTIALS_BINDING = (SECURITY_V1ALPHA1, "CredentialsBinding")
WORKLOAD_IDENTITY = (SECURITY_V1ALPHA1, "WorkloadIdentity")
KIND_PROJECT = PROJECT[1]
KIND_SHOOT = SHOOT[1]

# --- finalizer, labels, annotations --------------------------------------------------------------------

FINALIZER_GARDENER = "gardener"

LABEL_ROLE = "gardener.cloud/role"
LABEL_ROLE_PROJECT = "project"
LABEL_ROLE_EXTENSION_PROJECT_ROLE = "extension-project-role"
LABEL_PROJECT_NAME = "project.gardener.cloud/name"
LABEL_SECRET_BINDING_REFERENCE = "reference.gardener.cloud/secretbinding"
LABEL_CREDENTIALS_BINDING_REFERENCE = "reference.gardener.cloud/credentialsbinding"
LABEL_AGGREGATE_TO_EXTENSION_ROLE = "rbac.gardener.cloud/aggregate-to-extension-role"

ANNOTATION_NAMESPACE_PROJECT = "namespace.gardener.cloud/project"
ANNOTATION_NAMESPACE_CREATED_BY_PROJECT_CONTROLLER = "namespace.gardener.cloud/created-by-project-controller"
ANNOTATION_NAMESPACE_KEEP_AFTER_PROJECT_DELETION = "namespace.gardener.cloud/keep-after-project-deletion"
ANNOTATION_PROJECT_SKIP_STALE_CHECK = "project.gardener.cloud/skip-stale-check"
ANNOTATION_CONFIRMATION_DELETION = "confirmation.gardener.cloud/deletion"
ANNOTATION_DELETION_CONFIRMED_BY = "deletion.gardener.cloud/confirmed-by"
ANNOTATION_TIMESTAMP = "gardener.cloud/timestamp"
ANNOTATION_CONFIGMAPS_PER_SHOOT = "quota.gardener.cloud/configmaps-per-shoot"
ANNOTATION_SECRETS_PER_SHOOT = "quota.gardener.cloud/secrets-per-shoot"

# The ResourceQuota key that bounds the Shoots of a project namespace.
RESOURCE_QUOTA_SHOOTS = f"count/shoots.{GROUP_CORE}"

# --- well-known names ---------------------------------------------------------------------------------

PROJECT_NAMESPACE_PREFIX = "garden-"
RESOURCE_QUOTA_NAME = "gardener"  # the default ResourceQuota of a project namespace

CLUSTER_ROLE_PREFIX_PROJECT = "gardener.cloud:system:project"
CLUSTER_ROLE_PREFIX_PROJECT_UAM = "gardener.cloud:system:project-uam"
CLUSTER_ROLE_PROJECT_MEMBER = "gardener.cloud:system:project-member"
CLUSTER_ROLE_PROJECT_VIEWER = "gardener.cloud:system:project-viewer"
CLUSTER_ROLE_PROJECT_SERVICEACCOUNTMANAGER = "gardener.cloud:system:project-serviceaccountmanager"
CLUSTER_ROLE_PREFIX_EXTENSION_PROJECT = "gardener.cloud:extension:project"

WEBHOOK_NAMESPACE_DELETION = "validate-namespace-deletion.gardener.cloud"
WEBHOOK_KUBECONFIG_SECRETS = "validate-kubeconfig-secrets.gardener.cloud"

# --- Project member roles ---------------------------------------------------------------------------

PROJECT_MEMBER_OWNER = "owner"
PROJECT_MEMBER_ADMIN = "admin"
PROJECT_MEMBER_VIEWER = "viewer"
PROJECT_MEMBER_UAM = "uam"
PROJECT_MEMBER_SERVICEACCOUNTMANAGER = "serviceaccountmanager"
PROJECT_MEMBER_EXTENSION_PREFIX = "extension:"

# --- Project status fields (the JSON names of types_project.go's ProjectStatus) -----------------------

# Final: mypy reads them as literals, so they are keys of the typed view gcm.apis.core_v1beta1.ProjectStatus.
PROJECT_STATUS_LAST_ACTIVITY_TIMESTAMP: Final = "lastActivityTimestamp"
PROJECT_STATUS_STALE_SINCE_TIMESTAMP: Final = "staleSinceTimestamp"
PROJECT_STATUS_STALE_AUTO_DELETE_TIMESTAMP: Final = "staleAutoDeleteTimestamp"

# --- Project phases and events ------------------------------------------------------------------------

PROJECT_PENDING = "Pending"
PROJECT_READY = "Ready"
PROJECT_FAILED = "Failed"
PROJECT_TERMINATING = "Terminating"

EVENT_ACTION_RECONCILE = "Reconcile"
EVENT_ACTION_DELETE = "Delete"
PROJECT_EVENT_NAMESPACE_RECONCILE_FAILED = "NamespaceReconcileFailed"
PROJECT_EVENT_NAMESPACE_RECONCILE_SUCCESSFUL = "NamespaceReconcileSuccessful"
PROJECT_EVENT_NAMESPACE_NOT_EMPTY = "NamespaceNotEmpty"
PROJECT_EVENT_NAMESPACE_DELETION_FAILED = "NamespaceDeletionFailed"
PROJECT_EVENT_NAMESPACE_MARKED_FOR_DELETION = "NamespaceMarkedForDeletion"
# gcm's own: members use extension roles while controllers.project.extensionRoles is false.
PROJECT_EVENT_EXTENSION_ROLES_DISABLED = "ExtensionRolesDisabled"
