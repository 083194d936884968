"""``Builder``: wire a reconciler to the manager like controller-runtime's ``ctrl.NewControllerManagedBy``.

::

    from framework.builder import Builder
    from framework.handler import EnqueueRequestsFromMapFunc
    from framework.predicate import GenerationChangedPredicate

    Builder(mgr).named("project") \\
        .for_("core.gardener.cloud/v1beta1", "Project", predicates=[GenerationChangedPredicate()]) \\
        .owns("v1", "Namespace") \\
        .watches("core.gardener.cloud/v1beta1", "Shoot", EnqueueRequestsFromMapFunc(shoot_to_project)) \\
        .with_options(max_concurrent_reconciles=5) \\
        .complete(ProjectReconciler(mgr.client))
"""

from framework.builder.builder import Builder

__all__ = ["Builder"]
