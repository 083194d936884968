"""The Project-activity controller (``project-activity``): sets a Project's
``status.lastActivityTimestamp`` when Shoots, BackupEntries, binding-referenced Secrets, Quotas or
InternalSecrets in its namespace are created, changed or deleted, so the stale check also sees
objects that lived shorter than ``staleSyncPeriod``.
Gardener's ``pkg/controllermanager/controller/project/activity``."""

from gcm.controllers.project.activity.add import (
    CONTROLLER_NAME,
    HasBindingReferenceLabel,
    RelevantCreatesAndUpdates,
    add_to_manager,
    project_for_namespace,
)
from gcm.controllers.project.activity.reconciler import ActivityReconciler

__all__ = [
    "CONTROLLER_NAME",
    "ActivityReconciler",
    "HasBindingReferenceLabel",
    "RelevantCreatesAndUpdates",
    "add_to_manager",
    "project_for_namespace",
]
