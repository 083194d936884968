"""The kinds the server knows more about than the catalog's generic strategy: one module per kind.

Each ``kinds/<group>/<kind>.py`` declares ``STRATEGIES``, the :class:`~.strategy.ResourceType` of each
served version of its kind (kube-apiserver's ``pkg/registry/<group>/<kind>/strategy.go``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .strategy import ResourceType


def builtin_strategies() -> list[ResourceType]:
    """Every kind with its own strategy, in registration order (the generic catalog fills in the rest)."""
    # Imported here: the generic machinery imports ``kinds.strategy``, and the kind modules import it.
    from .admissionregistration import mutatingwebhookconfiguration, validatingwebhookconfiguration
    from .apiextensions import customresourcedefinition
    from .apiregistration import apiservice
    from .apps import controllerrevision, daemonset, deployment, replicaset, statefulset
    from .authentication import selfsubjectreview, tokenreview
    from .authorization import localsubjectaccessreview, selfsubjectaccessreview, subjectaccessreview
    from .autoscaling import horizontalpodautoscaler
    from .batch import cronjob, job
    from .coordination import lease
    from .core import (
        configmap,
        endpoints,
        event,
        limitrange,
        namespace,
        node,
        persistentvolume,
        persistentvolumeclaim,
        pod,
        podtemplate,
        replicationcontroller,
        resourcequota,
        secret,
        service,
        serviceaccount,
    )
    from .discovery import endpointslice
    from .events import event as events_event
    from .networking import ingress, ingressclass, networkpolicy
    from .node import runtimeclass
    from .policy import poddisruptionbudget
    from .rbac import clusterrole, clusterrolebinding, role, rolebinding
    from .scheduling import priorityclass
    from .storage import csidriver, csinode, storageclass, volumeattachment

    return [
        *namespace.STRATEGIES,
        *configmap.STRATEGIES,
        *secret.STRATEGIES,
        *serviceaccount.STRATEGIES,
        *resourcequota.STRATEGIES,
        *service.STRATEGIES,
        *event.STRATEGIES,
        *events_event.STRATEGIES,
        *role.STRATEGIES,
        *rolebinding.STRATEGIES,
        *clusterrole.STRATEGIES,
        *clusterrolebinding.STRATEGIES,
        *lease.STRATEGIES,
        *deployment.STRATEGIES,
        *pod.STRATEGIES,
        *replicationcontroller.STRATEGIES,
        *daemonset.STRATEGIES,
        *node.STRATEGIES,
        *apiservice.STRATEGIES,
        *validatingwebhookconfiguration.STRATEGIES,
        *mutatingwebhookconfiguration.STRATEGIES,
        *customresourcedefinition.STRATEGIES,
        *subjectaccessreview.STRATEGIES,
        *selfsubjectaccessreview.STRATEGIES,
        *localsubjectaccessreview.STRATEGIES,
        *tokenreview.STRATEGIES,
        *selfsubjectreview.STRATEGIES,
        *job.STRATEGIES,
        *replicaset.STRATEGIES,
        *statefulset.STRATEGIES,
        *cronjob.STRATEGIES,
        *persistentvolumeclaim.STRATEGIES,
        *persistentvolume.STRATEGIES,
        *endpoints.STRATEGIES,
        *limitrange.STRATEGIES,
        *ingress.STRATEGIES,
        *networkpolicy.STRATEGIES,
        *poddisruptionbudget.STRATEGIES,
        *horizontalpodautoscaler.STRATEGIES,
        *endpointslice.STRATEGIES,
        *storageclass.STRATEGIES,
        *priorityclass.STRATEGIES,
        *ingressclass.STRATEGIES,
        *controllerrevision.STRATEGIES,
        *runtimeclass.STRATEGIES,
        *csinode.STRATEGIES,
        *csidriver.STRATEGIES,
        *volumeattachment.STRATEGIES,
        *podtemplate.STRATEGIES,
    ]
