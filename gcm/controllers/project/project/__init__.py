"""The ``project`` controller (Gardener's ``pkg/controllermanager/controller/project/project``): the
project namespace, default ResourceQuota, member RBAC and phases of every Project."""

from gcm.controllers.project.project.add import (
    CONTROLLER_NAME,
    RoleBindingPredicate,
    add_to_manager,
    map_shoot_to_project_in_deletion,
)
from gcm.controllers.project.project.reconciler import ProjectReconciler

__all__ = [
    "CONTROLLER_NAME",
    "ProjectReconciler",
    "RoleBindingPredicate",
    "add_to_manager",
    "map_shoot_to_project_in_deletion",
]
