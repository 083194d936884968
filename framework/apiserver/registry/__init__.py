"""The kinds the server knows more about than the catalog's generic strategy: one module per kind.

Each ``registry/<group>/<kind>.py`` declares ``STRATEGIES``, the :class:`~.strategy.ResourceType` of each
served version of its kind (kube-apiserver's ``pkg/registry/<group>/<kind>/strategy.go``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from framework.apiserver.registry.strategy import ResourceType


def builtin_strategies() -> list[ResourceType]:
    """Every kind with its own strategy, in registration order (the generic catalog fills in the rest)."""
    # Imported here: the generic machinery imports ``registry.strategy``, and the kind modules import it.
    from framework.apiserver.registry.admissionregistration import (
        admissionpolicy,
        mutatingwebhookconfiguration,
        validatingwebhookconfiguration,
    )
    from framework.apiserver.registry.apiextensions import customresourcedefinition
    from framework.apiserver.registry.apiregistration import apiservice
    from framework.apiserver.registry.apps import (
        controllerrevision,
        daemonset,
        deployment,
        replicaset,
        statefulset,
    )
    from framework.apiserver.registry.authentication import selfsubjectreview, tokenreview
    from framework.apiserver.registry.authorization import (
        localsubjectaccessreview,
        selfsubjectaccessreview,
        subjectaccessreview,
    )
    from framework.apiserver.registry.autoscaling import horizontalpodautoscaler
    from framework.apiserver.registry.batch import cronjob, job
    from framework.apiserver.registry.coordination import lease
    from framework.apiserver.registry.core import (
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
    from framework.apiserver.registry.discovery import endpointslice
    from framework.apiserver.registry.events import event as events_event
    from framework.apiserver.registry.networking import ingress, ingressclass, networkpolicy
    from framework.apiserver.registry.node import runtimeclass
    from framework.apiserver.registry.policy import poddisruptionbudget
    from framework.apiserver.registry.rbac import clusterrole, clusterrolebinding, role, rolebinding
    from framework.apiserver.registry.scheduling import priorityclass
    from framework.apiserver.registry.storage import csidriver, csinode, storageclass, volumeattachment

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
        *admissionpolicy.STRATEGIES,
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
