"""The simulated cluster: its controllers, and the routing of storage writes to their queues (as the
in-process controllers of :mod:`..manager` do: listen synchronously, work later in a named task)."""

from __future__ import annotations

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.addons import install_addons
from framework.apiserver.controllers.simulated.context import Context, controller_ref
from framework.apiserver.controllers.simulated.daemonset import DaemonSetController
from framework.apiserver.controllers.simulated.deployment import DeploymentController
from framework.apiserver.controllers.simulated.job import JobController
from framework.apiserver.controllers.simulated.kubelet import Kubelet
from framework.apiserver.controllers.simulated.nodes import NodeController
from framework.apiserver.controllers.simulated.policy import SimulationPolicy
from framework.apiserver.controllers.simulated.replicaset import ReplicaSetController
from framework.apiserver.controllers.simulated.scheduler import Scheduler
from framework.apiserver.controllers.simulated.statefulset import StatefulSetController
from framework.apiserver.registry.rest.api import API
from framework.apiserver.registry.served import Registry
from framework.apiserver.registry.strategy import ResourceType
from framework.apiserver.storage.store import Storage, WatchEvent


class SimulatedCluster:
    """``nodes`` simulated nodes and the components that make workloads run on them."""

    def __init__(
        self, storage: Storage, registry: Registry, api: API, nodes: int, policy: SimulationPolicy
    ) -> None:
        self.ctx = ctx = Context(storage, registry, api, policy)
        self.nodes = NodeController(ctx, nodes)
        self.scheduler = Scheduler(ctx)
        self.kubelet = Kubelet(ctx, self.nodes)
        self.replicasets = ReplicaSetController(ctx)
        self.deployments = DeploymentController(ctx)
        self.statefulsets = StatefulSetController(ctx)
        self.daemonsets = DaemonSetController(ctx)
        self.jobs = JobController(ctx)
        self.queues: list[WorkQueue] = [
            q
            for c in (
                self.nodes,
                self.scheduler,
                self.kubelet,
                self.replicasets,
                self.deployments,
                self.statefulsets,
                self.daemonsets,
                self.jobs,
            )
            for q in c.queues
        ]
        self._owners = {
            (ctx.replicasets.api_version, ctx.replicasets.kind): self.replicasets.queue,
            (ctx.statefulsets.api_version, ctx.statefulsets.kind): self.statefulsets.queue,
            (ctx.daemonsets.api_version, ctx.daemonsets.kind): self.daemonsets.queue,
            (ctx.jobs.api_version, ctx.jobs.kind): self.jobs.queue,
            (ctx.deployments.api_version, ctx.deployments.kind): self.deployments.queue,
        }
        self._own = {
            ctx.replicasets.storage: self.replicasets.queue,
            ctx.deployments.storage: self.deployments.queue,
            ctx.statefulsets.storage: self.statefulsets.queue,
            ctx.daemonsets.storage: self.daemonsets.queue,
            ctx.jobs.storage: self.jobs.queue,
        }
        storage.listeners.append(self.on_event)
        # Pods bound to a simulated node are deleted gracefully (kube-apiserver's Pod strategy).
        api.grace_period = self.grace_period

    def start(self) -> None:
        """Register the Nodes, start every controller, and look at what the store already holds."""
        for q in self.queues:
            if q.task is None or q.task.done():
                q.start()
        self.nodes.register()
        if self.ctx.policy.system_addons:
            install_addons(self.ctx)
        ctx = self.ctx
        for rt in (ctx.pods, ctx.replicasets, ctx.deployments, ctx.statefulsets, ctx.daemonsets, ctx.jobs):
            for obj in ctx.objects(rt):
                self._route(rt.storage, obj, deleted=False)

    def stop(self) -> None:
        for q in self.queues:
            if q.task:
                q.task.cancel()
                q.task = None

    def on_event(self, key: str, ev: WatchEvent) -> None:
        self._route(key, ev.obj, ev.type == "DELETED")

    def _route(self, key: str, obj: dict, deleted: bool) -> None:
        meta = obj["metadata"]
        loc = (meta.get("namespace", ""), meta["name"])
        ref = controller_ref(obj)
        owner_queue = self._owners.get((ref.get("apiVersion", ""), ref.get("kind", ""))) if ref else None
        if key == self.ctx.pods.storage:
            if deleted:
                self.kubelet.forget(meta.get("uid", ""))
                self.scheduler.nodes_changed()  # room on a node
            else:
                if self.scheduler.wants(obj):
                    self.scheduler.queue.add(loc)
                if self.kubelet.manages(obj):
                    self.kubelet.queue.add(loc)
        elif key == self.ctx.nodes.storage:
            self.scheduler.nodes_changed()
            self.daemonsets.all()
            return
        elif key in self._own:
            self._own[key].add(loc)
        if owner_queue is not None and ref is not None:
            owner_queue.add((loc[0], ref.get("name", "")))

    def grace_period(self, rt: ResourceType, pod: dict, options: dict) -> int:
        """``CheckGracefulDelete`` of Pods: the requested or the Pod's grace period, 0 for a Pod on no
        simulated node (nothing would finish the deletion) or already finished."""
        if rt.storage != self.ctx.pods.storage or not self.kubelet.manages(pod):
            return 0
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        return 1 if grace < 0 else int(grace)

    def log(self, pod: dict, container: str | None, previous: bool = False) -> bytes:
        """``pods/log`` of a Pod (see :meth:`.kubelet.Kubelet.log`)."""
        return self.kubelet.log(pod, container, previous)
