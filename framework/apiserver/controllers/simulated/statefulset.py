"""The StatefulSet controller (``pkg/controller/statefulset``, simplified): Pods ``<name>-<ordinal>``
with the StatefulSet's labels (``controller-revision-hash``, ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index``), hostname and subdomain; ``OrderedReady`` creates one at a time in
order and removes from the highest ordinal, ``Parallel`` all at once; ``RollingUpdate`` (with
``partition``) replaces Pods of an old revision from the highest ordinal, one at a time. Status as kube
reports it, revisions included. Not simulated: ControllerRevision objects, PersistentVolumeClaims of
``volumeClaimTemplates``, ``minReadySeconds`` beyond availability counting, ``maxUnavailable``."""

from __future__ import annotations

import re

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import CONTROLLER_MANAGER, Context, owner_reference
from framework.apiserver.controllers.simulated.pods import (
    available_in,
    is_active,
    is_ready,
    is_terminal,
    pod_from_template,
    template_hash,
)
from framework.meta.time import now

REVISION_LABEL = "controller-revision-hash"
COMPONENT = "statefulset-controller"


class StatefulSetController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("simulated-statefulset-controller", self.sync)
        self.queues = [self.queue]

    def _pods(self, sts: dict) -> dict[int, dict]:
        pattern = re.compile(re.escape(sts["metadata"]["name"]) + r"-(\d+)")
        pods: dict[int, dict] = {}
        for pod in self.ctx.owned(self.ctx.pods, sts):
            m = pattern.fullmatch(pod["metadata"]["name"])
            if m:
                pods[int(m.group(1))] = pod
        return pods

    def sync(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        sts = ctx.get(ctx.statefulsets, *key)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return
        spec = sts.get("spec") or {}
        replicas = spec.get("replicas", 1)
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        revision = f"{key[1]}-{template_hash(spec.get('template') or {})}"
        self._reconcile(sts, replicas, ordered, revision)
        self._status(key, revision)

    def _reconcile(self, sts: dict, replicas: int, ordered: bool, revision: str) -> None:
        ctx = self.ctx
        spec = sts.get("spec") or {}
        pods = self._pods(sts)
        healthy = True
        for i in range(replicas):
            pod = pods.get(i)
            if pod is not None and is_terminal(pod):
                ctx.delete(ctx.pods, pod)  # a failed or finished Pod is replaced
                pod = None
                if ordered:
                    return
            if pod is None:
                self._create(sts, i, revision)
                if ordered:
                    return
                healthy = False
                continue
            if not is_active(pod) or not is_ready(pod):
                healthy = False
                if ordered:
                    return
        extra = sorted((i for i in pods if i >= replicas), reverse=True)
        for i in extra:
            if is_active(pods[i]):
                self._delete(sts, pods[i])
            if ordered:
                break
        if extra:
            return
        strategy = spec.get("updateStrategy") or {}
        if healthy and strategy.get("type", "RollingUpdate") == "RollingUpdate":
            partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
            for i in range(replicas - 1, partition - 1, -1):
                labels = pods[i]["metadata"].get("labels") or {}
                if labels.get(REVISION_LABEL) != revision:
                    self._delete(sts, pods[i])  # recreated at the new revision on the next sync
                    break

    def _create(self, sts: dict, ordinal: int, revision: str) -> None:
        ctx = self.ctx
        meta, spec = sts["metadata"], sts.get("spec") or {}
        name = f"{meta['name']}-{ordinal}"
        body = pod_from_template(
            spec.get("template") or {}, owner_reference(ctx.statefulsets, sts), meta["namespace"]
        )
        body["metadata"]["name"] = name
        body["metadata"]["labels"] = {
            **(body["metadata"].get("labels") or {}),
            REVISION_LABEL: revision,
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        }
        body["spec"]["hostname"] = name
        if spec.get("serviceName"):
            body["spec"]["subdomain"] = spec["serviceName"]
        retry = (self.queue, (meta["namespace"], meta["name"]))
        if ctx.create(ctx.pods, meta["namespace"], body, CONTROLLER_MANAGER, retry) is not None:
            ctx.event(
                sts,
                ctx.statefulsets,
                "Normal",
                "SuccessfulCreate",
                f"create Pod {name} in StatefulSet {meta['name']} successful",
                COMPONENT,
            )

    def _delete(self, sts: dict, pod: dict) -> None:
        ctx = self.ctx
        if pod["metadata"].get("deletionTimestamp"):
            return
        if ctx.delete(ctx.pods, pod):
            ctx.event(
                sts,
                ctx.statefulsets,
                "Normal",
                "SuccessfulDelete",
                f"delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
                COMPONENT,
            )

    def _status(self, key: tuple[str, str], revision: str) -> None:
        ctx = self.ctx
        sts = ctx.get(ctx.statefulsets, *key)
        if sts is None:
            return
        spec = sts.get("spec") or {}
        pods = list(self._pods(sts).values())
        old = sts.get("status") or {}
        at = now()
        waits = [available_in(p, spec.get("minReadySeconds") or 0, at) for p in pods if is_active(p)]
        updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision)
        current_revision = old.get("currentRevision") or revision
        complete = updated == len(pods) == spec.get("replicas", 1)
        if complete:
            current_revision = revision
        current = sum(
            1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == current_revision
        )
        status = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": sum(1 for p in pods if is_active(p) and is_ready(p)),
            "currentReplicas": current,
            "updatedReplicas": updated,
            "availableReplicas": sum(1 for w in waits if w == 0),
            "currentRevision": current_revision,
            "updateRevision": revision,
            "collisionCount": 0,
        }
        status = {
            k: v for k, v in status.items() if v or k in ("replicas", "availableReplicas", "collisionCount")
        }
        ctx.write_status(ctx.statefulsets, sts, status, CONTROLLER_MANAGER)
        pending = [w for w in waits if w]
        if pending:
            self.queue.add_later(key, min(pending) + 0.05)
