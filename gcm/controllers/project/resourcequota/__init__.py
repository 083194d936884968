"""The ``project-resourcequota`` controller: every ResourceQuota in a project namespace leaves room for
the Secrets and ConfigMaps Gardener creates per Shoot (Gardener's
``pkg/controllermanager/controller/project/resourcequota``)."""

from gcm.controllers.project.resourcequota.add import (
    CONTROLLER_NAME,
    add_to_manager,
    project_namespace_predicate,
)
from gcm.controllers.project.resourcequota.reconciler import (
    DEFAULT_PER_SHOOT_RESOURCES,
    PerShootResource,
    ResourceQuotaReconciler,
)

__all__ = [
    "CONTROLLER_NAME",
    "DEFAULT_PER_SHOOT_RESOURCES",
    "PerShootResource",
    "ResourceQuotaReconciler",
    "add_to_manager",
    "project_namespace_predicate",
]
