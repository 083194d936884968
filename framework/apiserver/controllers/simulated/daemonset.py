"""The DaemonSet controller (``pkg/controller/daemon``, simplified): one Pod per node the template's
node selector, required node affinity and tolerations admit, pinned by required node affinity on
``metadata.name`` and given the DaemonSet tolerations kube adds; ``RollingUpdate`` replaces old Pods
one at a time (``maxUnavailable`` 1); status counts as kube reports them. Not simulated:
ControllerRevision objects, ``maxSurge``, ``minReadySeconds`` beyond availability counting."""

from __future__ import annotations

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import CONTROLLER_MANAGER, Context, owner_reference
from framework.apiserver.controllers.simulated.pods import (
    available_in,
    is_active,
    is_ready,
    pod_from_template,
    template_hash,
)
from framework.apiserver.controllers.simulated.scheduler import matches_affinity, untolerated_taint
from framework.meta.time import now

REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
COMPONENT = "daemonset-controller"

# ``util.AddOrUpdateDaemonPodTolerations``: DaemonSet Pods stay through node trouble.
DAEMON_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)


def _with_tolerations(spec: dict) -> None:
    tolerations = spec.setdefault("tolerations", [])
    for t in DAEMON_TOLERATIONS:
        if not any(o.get("key") == t["key"] and o.get("effect") == t["effect"] for o in tolerations):
            tolerations.append(dict(t))


def _pin(spec: dict, node: str) -> None:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: required affinity to exactly this node."""
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }


class DaemonSetController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("simulated-daemonset-controller", self.sync)
        self.queues = [self.queue]

    def all(self) -> None:
        for ds in self.ctx.objects(self.ctx.daemonsets):
            self.queue.add((ds["metadata"]["namespace"], ds["metadata"]["name"]))

    def _eligible(self, ds: dict) -> list[str]:
        template = (ds.get("spec") or {}).get("template") or {}
        probe = {"metadata": {}, "spec": dict(template.get("spec") or {})}
        _with_tolerations(probe["spec"])
        return sorted(
            n["metadata"]["name"]
            for n in self.ctx.objects(self.ctx.nodes)
            if matches_affinity(probe, n) and untolerated_taint(probe, n) is None
        )

    def sync(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        ds = ctx.get(ctx.daemonsets, *key)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        spec = ds.get("spec") or {}
        revision = template_hash(spec.get("template") or {})
        nodes = self._eligible(ds)
        by_node: dict[str, list[dict]] = {}
        for pod in ctx.owned(ctx.pods, ds):
            if is_active(pod):
                by_node.setdefault(self._node_of(pod), []).append(pod)
        for node in nodes:
            pods = by_node.get(node, [])
            if not pods:
                self._create(ds, node, revision)
            for extra in pods[1:]:
                ctx.delete(ctx.pods, extra)
        for node, pods in by_node.items():
            if node not in nodes:
                for pod in pods:
                    ctx.delete(ctx.pods, pod)
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            current = [pods[0] for node, pods in by_node.items() if node in nodes and pods]
            old = [p for p in current if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision]
            if old and all(is_ready(p) for p in current) and len(current) == len(nodes):
                ctx.delete(ctx.pods, old[0])
        self._status(key, nodes, revision)

    @staticmethod
    def _node_of(pod: dict) -> str:
        spec = pod.get("spec") or {}
        if spec.get("nodeName"):
            return spec["nodeName"]
        terms = (
            ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            or {}
        ).get("nodeSelectorTerms") or []
        for term in terms:
            for f in term.get("matchFields") or []:
                if f.get("key") == "metadata.name" and f.get("values"):
                    return f["values"][0]
        return ""

    def _create(self, ds: dict, node: str, revision: str) -> None:
        ctx = self.ctx
        meta, spec = ds["metadata"], ds.get("spec") or {}
        body = pod_from_template(
            spec.get("template") or {}, owner_reference(ctx.daemonsets, ds), meta["namespace"]
        )
        body["metadata"]["generateName"] = f"{meta['name']}-"
        body["metadata"]["labels"] = {
            **(body["metadata"].get("labels") or {}),
            REVISION_LABEL: revision,
            GENERATION_LABEL: str(meta.get("generation", 1)),
        }
        _with_tolerations(body["spec"])
        _pin(body["spec"], node)
        retry = (self.queue, (meta["namespace"], meta["name"]))
        created = ctx.create(ctx.pods, meta["namespace"], body, CONTROLLER_MANAGER, retry)
        if created is not None:
            ctx.event(
                ds,
                ctx.daemonsets,
                "Normal",
                "SuccessfulCreate",
                f"Created pod: {created['metadata']['name']}",
                COMPONENT,
            )

    def _status(self, key: tuple[str, str], nodes: list[str], revision: str) -> None:
        ctx = self.ctx
        ds = ctx.get(ctx.daemonsets, *key)
        if ds is None:
            return
        spec = ds.get("spec") or {}
        by_node: dict[str, dict] = {}
        misscheduled = 0
        for pod in ctx.owned(ctx.pods, ds):
            if not is_active(pod):
                continue
            node = self._node_of(pod)
            if node in nodes:
                by_node.setdefault(node, pod)
            elif (pod.get("spec") or {}).get("nodeName"):
                misscheduled += 1
        at = now()
        waits = [available_in(p, spec.get("minReadySeconds") or 0, at) for p in by_node.values()]
        available = sum(1 for w in waits if w == 0)
        status = {
            "currentNumberScheduled": len(by_node),
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": len(nodes),
            "numberReady": sum(1 for p in by_node.values() if is_ready(p)),
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": sum(
                1
                for p in by_node.values()
                if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision
            ),
            "numberAvailable": available,
            "numberUnavailable": len(nodes) - available,
        }
        keep = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")
        status = {k: v for k, v in status.items() if v or k in keep}
        ctx.write_status(ctx.daemonsets, ds, status, CONTROLLER_MANAGER)
        pending = [w for w in waits if w]
        if pending:
            self.queue.add_later(key, min(pending) + 0.05)
