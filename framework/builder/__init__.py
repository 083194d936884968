"""``Builder``: wire a reconciler to the manager like controller-runtime's ``ctrl.NewControllerManagedBy``.

::

    from framework.builder import Builder
    from framework.handler import EnqueueRequestsFromMapFunc
    from framework.predicate import GenerationChangedPredicate

    Builder(mgr).named("app") \\
        .for_("apps/v1", "Deployment", predicates=[GenerationChangedPredicate()]) \\
        .owns("v1", "ConfigMap") \\
        .watches("v1", "Secret", EnqueueRequestsFromMapFunc(secret_to_deployments)) \\
        .with_options(max_concurrent_reconciles=5) \\
        .complete(AppReconciler(mgr.client))

    # No primary kind: named() and watches() only, each handler mapping events to requests.
    Builder(mgr).named("activity") \\
        .watches("v1", "Secret", EnqueueRequestsFromMapFunc(secret_to_owner)) \\
        .complete(ActivityReconciler(mgr.client))
"""

from framework.builder.builder import Builder

__all__ = ["Builder"]
