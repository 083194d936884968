"""A minimal kube-scheduler for simulated nodes: binds each unbound Pod of ``default-scheduler`` to the
least-loaded node that passes the filters kube-scheduler's default plugins apply first (node
unschedulable, node selector and required node affinity, taints and tolerations, pod count, CPU and
memory requests); a Pod no node fits gets ``PodScheduled=False`` with reason ``Unschedulable`` and
kube-scheduler's message, and is retried when a node changes."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import SCHEDULER, Context
from framework.apiserver.controllers.simulated.pods import is_terminal, set_pod_condition
from framework.apiserver.registry.rest.objects import deep_copy, object_key
from framework.meta.quantity import parse_quantity

RETRY_INTERVAL = 5.0  # kube-scheduler's unschedulable queue flush is 30 s; node changes retry at once


def _quantity(value: object) -> Fraction:
    try:
        return parse_quantity(str(value)).value
    except ValueError:
        return Fraction(0)


def pod_requests(pod: dict) -> dict[str, Fraction]:
    """The CPU and memory a Pod requests: its containers' sum, or its largest init container's."""
    spec = pod.get("spec") or {}
    total: dict[str, Fraction] = {"cpu": Fraction(0), "memory": Fraction(0)}
    for c in spec.get("containers") or []:
        for res in total:
            requests = (c.get("resources") or {}).get("requests") or {}
            if res in requests:
                total[res] += _quantity(requests[res])
    for c in spec.get("initContainers") or []:
        requests = (c.get("resources") or {}).get("requests") or {}
        for res in total:
            if res in requests:
                total[res] = max(total[res], _quantity(requests[res]))
    return total


def _match_expression(expr: dict, value: str | None) -> bool:
    op, values = expr.get("operator"), expr.get("values") or []
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and values:
        try:
            left, right = int(value), int(values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def _term_matches(term: dict, node: dict) -> bool:
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term matches nothing
    labels = node["metadata"].get("labels") or {}
    return all(_match_expression(e, labels.get(e.get("key", ""))) for e in exprs) and all(
        _match_expression(f, node["metadata"]["name"] if f.get("key") == "metadata.name" else None)
        for f in fields
    )


def matches_affinity(pod: dict, node: dict) -> bool:
    """``nodeSelector`` and ``requiredDuringSchedulingIgnoredDuringExecution`` node affinity."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms")
    return not required or any(_term_matches(t, node) for t in required)


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def untolerated_taint(pod: dict, node: dict) -> dict | None:
    """The first NoSchedule/NoExecute taint of ``node`` the Pod does not tolerate."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return taint
    return None


class Scheduler:
    """Binds Pods to nodes (``pods/binding`` as kube-scheduler does: ``spec.nodeName`` and
    ``PodScheduled=True`` in one write, outside Pod update validation)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("simulated-scheduler", self.schedule)
        self.queues = [self.queue]
        self.unschedulable: set[tuple[str, str]] = set()

    def wants(self, pod: dict) -> bool:
        spec = pod.get("spec") or {}
        return (
            not spec.get("nodeName")
            and (spec.get("schedulerName") or "default-scheduler") == "default-scheduler"
            and not spec.get("schedulingGates")
            and not pod["metadata"].get("deletionTimestamp")
            and not is_terminal(pod)
        )

    def nodes_changed(self) -> None:
        for key in self.unschedulable:
            self.queue.add(key)

    def schedule(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        ns, name = key
        pod = ctx.get(ctx.pods, ns, name)
        if pod is None or not self.wants(pod):
            self.unschedulable.discard(key)
            return
        nodes = list(ctx.objects(ctx.nodes))
        load: Counter[str] = Counter()
        used: dict[str, dict[str, Fraction]] = {}
        for other in ctx.objects(ctx.pods):
            node_name = (other.get("spec") or {}).get("nodeName")
            if node_name and not is_terminal(other):
                load[node_name] += 1
                requests = pod_requests(other)
                acc = used.setdefault(node_name, {"cpu": Fraction(0), "memory": Fraction(0)})
                for res, amount in requests.items():
                    acc[res] += amount
        wanted = pod_requests(pod)
        reasons: Counter[str] = Counter()
        fits = []
        for node in nodes:
            reason = self._filter(pod, node, load, used, wanted)
            if reason is None:
                fits.append(node)
            else:
                reasons[reason] += 1
        if not fits:
            self._unschedulable(pod, len(nodes), reasons)
            self.unschedulable.add(key)
            self.queue.add_later(key, RETRY_INTERVAL)
            return
        best = min(fits, key=lambda n: (load[n["metadata"]["name"]], n["metadata"]["name"]))
        self.unschedulable.discard(key)
        self._bind(pod, best["metadata"]["name"])

    def _filter(
        self,
        pod: dict,
        node: dict,
        load: Counter[str],
        used: dict[str, dict[str, Fraction]],
        wanted: dict[str, Fraction],
    ) -> str | None:
        """None when ``pod`` fits ``node``, else the reason as kube-scheduler's plugins word it."""
        spec = node.get("spec") or {}
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        unschedulable_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        if spec.get("unschedulable") and not tolerates(tolerations, unschedulable_taint):
            return "node(s) were unschedulable"
        if not matches_affinity(pod, node):
            return "node(s) didn't match Pod's node affinity/selector"
        taint = untolerated_taint(pod, node)
        if taint is not None:
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"
        name = node["metadata"]["name"]
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        if "pods" in allocatable and load[name] + 1 > _quantity(allocatable["pods"]):
            return "Too many pods"
        for res in ("cpu", "memory"):
            in_use = used.get(name, {}).get(res, Fraction(0))
            if wanted[res] and res in allocatable and in_use + wanted[res] > _quantity(allocatable[res]):
                return f"Insufficient {res}"
        return None

    def _unschedulable(self, pod: dict, node_count: int, reasons: Counter[str]) -> None:
        ctx = self.ctx
        if node_count == 0:
            message = "no nodes available to schedule pods"
        else:
            parts = sorted(f"{n} {reason}" for reason, n in reasons.items())
            message = (
                f"0/{node_count} nodes are available: {', '.join(parts)}. preemption: 0/{node_count} nodes "
                f"are available: {node_count} Preemption is not helpful for scheduling."
            )
        status = deep_copy(pod.get("status") or {})
        changed = set_pod_condition(status, "PodScheduled", "False", "Unschedulable", message)
        if changed and ctx.write_status(ctx.pods, pod, status, SCHEDULER):
            ctx.event(pod, ctx.pods, "Warning", "FailedScheduling", message, "default-scheduler")

    def _bind(self, pod: dict, node: str) -> None:
        ctx = self.ctx
        meta = pod["metadata"]
        stored = ctx.storage.get(ctx.pods.storage, object_key(meta["namespace"], meta["name"]))
        assert stored is not None
        new = deep_copy(stored)
        new["spec"]["nodeName"] = node
        set_pod_condition(new.setdefault("status", {}), "PodScheduled", "True", "", "")
        new["metadata"].pop("resourceVersion", None)
        ctx.storage.update(ctx.pods.storage, object_key(meta["namespace"], meta["name"]), new)
        ctx.event(
            pod,
            ctx.pods,
            "Normal",
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}",
            "default-scheduler",
        )
