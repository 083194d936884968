"""The ReplicaSet controller (``pkg/controller/replicaset``, simplified): keeps ``spec.replicas``
active Pods made from the template, deleting the least useful extras first, and reports
``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas`` and
``observedGeneration``. It does not adopt orphaned Pods that match its selector."""

from __future__ import annotations

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import CONTROLLER_MANAGER, Context, owner_reference
from framework.apiserver.controllers.simulated.pods import (
    available_in,
    is_active,
    is_ready,
    pod_from_template,
)
from framework.meta.time import now


def deletion_order(pods: list[dict]) -> list[dict]:
    """``controller.ActivePods`` order: unscheduled, pending, not ready, then the newest go first."""
    newest_first = sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""), reverse=True)

    def rank(pod: dict) -> tuple[bool, int, bool]:
        phase = (pod.get("status") or {}).get("phase") or ""
        phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(phase, 0)
        return bool((pod.get("spec") or {}).get("nodeName")), phase_rank, is_ready(pod)

    return sorted(newest_first, key=rank)  # stable: the newest first among equals


class ReplicaSetController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("simulated-replicaset-controller", self.sync)
        self.queues = [self.queue]

    def sync(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        rs = ctx.get(ctx.replicasets, *key)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return
        spec = rs.get("spec") or {}
        wanted = spec.get("replicas", 1)
        pods = [p for p in ctx.owned(ctx.pods, rs) if is_active(p)]
        diff = wanted - len(pods)
        if diff > 0:
            ref = owner_reference(ctx.replicasets, rs)
            for _ in range(diff):
                body = pod_from_template(spec.get("template") or {}, ref, key[0])
                body["metadata"]["generateName"] = f"{key[1]}-"
                created = ctx.create(ctx.pods, key[0], body, CONTROLLER_MANAGER, (self.queue, key))
                if created is None:
                    break
                ctx.event(
                    rs,
                    ctx.replicasets,
                    "Normal",
                    "SuccessfulCreate",
                    f"Created pod: {created['metadata']['name']}",
                    "replicaset-controller",
                )
        elif diff < 0:
            for pod in deletion_order(pods)[:-diff]:
                if ctx.delete(ctx.pods, pod):
                    ctx.event(
                        rs,
                        ctx.replicasets,
                        "Normal",
                        "SuccessfulDelete",
                        f"Deleted pod: {pod['metadata']['name']}",
                        "replicaset-controller",
                    )
        self._status(key, rs)

    def _status(self, key: tuple[str, str], rs: dict) -> None:
        ctx = self.ctx
        rs = ctx.get(ctx.replicasets, *key) or rs
        spec = rs.get("spec") or {}
        pods = [p for p in ctx.owned(ctx.pods, rs) if is_active(p)]
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        at = now()
        min_ready = spec.get("minReadySeconds") or 0
        waits = [available_in(p, min_ready, at) for p in pods]
        status = {
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(
                1
                for p in pods
                if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in template_labels.items())
            ),
            "readyReplicas": sum(1 for p in pods if is_ready(p)),
            "availableReplicas": sum(1 for w in waits if w == 0),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = {k: v for k, v in status.items() if v or k == "replicas"}  # omitempty
        if (rs.get("status") or {}).get("conditions"):
            status["conditions"] = rs["status"]["conditions"]
        ctx.write_status(ctx.replicasets, rs, status, CONTROLLER_MANAGER)
        pending = [w for w in waits if w]
        if pending:
            self.queue.add_later(key, min(pending) + 0.05)
