"""The stale-Project controller (``project-stale``): marks unused Projects stale, announces an
auto-delete timestamp after a grace period and deletes them once it has passed.

``add_to_manager(mgr, cfg)`` registers it; ``python -m gcm stale-report`` prints what it would decide
for every Project (:mod:`gcm.cmd.stale_report`).
Gardener's ``pkg/controllermanager/controller/project/stale``.
"""

from gcm.controllers.project.stale.add import CONTROLLER_NAME, StalePredicate, add_to_manager
from gcm.controllers.project.stale.cache import cache_options
from gcm.controllers.project.stale.reconciler import Decision, StaleReconciler, StaleSettings, evaluate

__all__ = [
    "CONTROLLER_NAME",
    "Decision",
    "StalePredicate",
    "StaleReconciler",
    "StaleSettings",
    "add_to_manager",
    "cache_options",
    "evaluate",
]
