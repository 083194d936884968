"""The Deployment controller (``pkg/controller/deployment``, simplified): one ReplicaSet per pod
template, named ``<deployment>-<pod-template-hash>`` and labelled with the hash; ``RollingUpdate``
within ``maxSurge``/``maxUnavailable`` and ``Recreate``; the revision annotations; status counts and
the ``Available``/``Progressing`` conditions as kube's controller words them. Not simulated:
``progressDeadlineSeconds`` (never ``ProgressDeadlineExceeded``), ``revisionHistoryLimit`` clean-up,
``spec.paused`` (a paused Deployment only has its status synced), hash collisions."""

from __future__ import annotations

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import (
    CONTROLLER_MANAGER,
    Context,
    controller_ref,
    owner_reference,
)
from framework.apiserver.controllers.simulated.pods import template_hash
from framework.apiserver.encoding import timefmt
from framework.apiserver.registry.intorpercent import scaled_value
from framework.apiserver.registry.rest.objects import deep_copy

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
COMPONENT = "deployment-controller"


def _revision(rs: dict) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def _replicas(rs: dict) -> int:
    return int((rs.get("spec") or {}).get("replicas") or 0)


def _status(rs: dict, key: str) -> int:
    return int((rs.get("status") or {}).get(key) or 0)


def surge_and_unavailable(d: dict) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailability down; never both zero."""
    spec = d.get("spec") or {}
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0, 0
    rolling = strategy.get("rollingUpdate") or {}
    replicas = spec.get("replicas", 1)
    surge = scaled_value(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def set_deployment_condition(status: dict, ctype: str, value: str, reason: str, message: str) -> None:
    """``SetDeploymentCondition``: the same status and reason keep the condition; a new status moves
    ``lastTransitionTime``; ``lastUpdateTime`` is when it was last written."""
    conditions = status.setdefault("conditions", [])
    at = timefmt.now_time()
    for i, c in enumerate(conditions):
        if c.get("type") == ctype:
            if c.get("status") == value and c.get("reason") == reason:
                return
            transition = c.get("lastTransitionTime") if c.get("status") == value else at
            conditions[i] = {
                "type": ctype,
                "status": value,
                "lastUpdateTime": at,
                "lastTransitionTime": transition,
                "reason": reason,
                "message": message,
            }
            return
    conditions.append(
        {
            "type": ctype,
            "status": value,
            "lastUpdateTime": at,
            "lastTransitionTime": at,
            "reason": reason,
            "message": message,
        }
    )


class DeploymentController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("simulated-deployment-controller", self.sync)
        self.queues = [self.queue]

    def sync(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        d = ctx.get(ctx.deployments, *key)
        if d is None or d["metadata"].get("deletionTimestamp"):
            return
        spec = d.get("spec") or {}
        replicas = spec.get("replicas", 1)
        rss = ctx.owned(ctx.replicasets, d)
        template = deep_copy(spec.get("template") or {})
        h = template_hash(template)
        new_rs = next((rs for rs in rss if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == h), None)
        olds = sorted(
            (rs for rs in rss if rs is not new_rs), key=lambda rs: (_revision(rs), rs["metadata"]["name"])
        )
        surge, unavailable = surge_and_unavailable(d)
        created = False
        if new_rs is None and not spec.get("paused"):
            new_rs = self._create_rs(d, template, h, olds, surge)
            created = new_rs is not None
        elif new_rs is not None and olds and _revision(new_rs) <= max(_revision(rs) for rs in olds):
            self._annotate(new_rs, max(_revision(rs) for rs in olds) + 1, replicas, surge)  # a rollback
        if new_rs is not None and not spec.get("paused"):
            if (spec.get("strategy") or {}).get("type") == "Recreate":
                self._recreate(d, new_rs, olds)
            else:
                self._rolling(d, new_rs, olds, surge, unavailable)
        self._sync_status(key, h, unavailable, created)

    def _create_rs(self, d: dict, template: dict, h: str, olds: list[dict], surge: int) -> dict | None:
        ctx = self.ctx
        meta, spec = d["metadata"], d.get("spec") or {}
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: h}
        selector = deep_copy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
        replicas = spec.get("replicas", 1)
        revision = max((_revision(rs) for rs in olds), default=0) + 1
        annotations = {
            k: v
            for k, v in (meta.get("annotations") or {}).items()
            if k not in (REVISION, "kubectl.kubernetes.io/last-applied-configuration")
        }
        annotations.update({REVISION: str(revision), DESIRED: str(replicas), MAX: str(replicas + surge)})
        body = {
            "metadata": {
                "name": f"{meta['name']}-{h}",
                "namespace": meta["namespace"],
                "labels": tmeta["labels"],
                "annotations": annotations,
                "ownerReferences": [owner_reference(ctx.deployments, d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": spec.get("minReadySeconds") or 0,
                "selector": selector,
                "template": template,
            },
        }
        rs = ctx.create(
            ctx.replicasets,
            meta["namespace"],
            body,
            CONTROLLER_MANAGER,
            (self.queue, (meta["namespace"], meta["name"])),
        )
        if rs is not None:
            d_new = deep_copy(ctx.get(ctx.deployments, meta["namespace"], meta["name"]) or d)
            d_new["metadata"].setdefault("annotations", {})[REVISION] = str(revision)
            ctx.update(ctx.deployments, d_new, CONTROLLER_MANAGER)
        return rs

    def _annotate(self, rs: dict, revision: int, replicas: int, surge: int) -> None:
        """Back to an earlier template: its ReplicaSet becomes the newest revision, as the Deployment."""
        ctx = self.ctx
        new = deep_copy(rs)
        new["metadata"].setdefault("annotations", {}).update(
            {REVISION: str(revision), DESIRED: str(replicas), MAX: str(replicas + surge)}
        )
        if ctx.update(ctx.replicasets, new, CONTROLLER_MANAGER):
            meta = rs["metadata"]
            owner = controller_ref(rs)
            d = ctx.get(ctx.deployments, meta["namespace"], owner["name"]) if owner else None
            if d is not None:
                d_new = deep_copy(d)
                d_new["metadata"].setdefault("annotations", {})[REVISION] = str(revision)
                ctx.update(ctx.deployments, d_new, CONTROLLER_MANAGER)

    def _scale(self, d: dict, rs: dict, to: int) -> None:
        ctx = self.ctx
        current = ctx.get(ctx.replicasets, rs["metadata"]["namespace"], rs["metadata"]["name"])
        if current is None or _replicas(current) == to:
            return
        before = _replicas(current)
        new = deep_copy(current)
        new["spec"]["replicas"] = to
        spec = d.get("spec") or {}
        surge, _ = surge_and_unavailable(d)
        annotations = new["metadata"].setdefault("annotations", {})
        annotations[DESIRED] = str(spec.get("replicas", 1))
        annotations[MAX] = str(spec.get("replicas", 1) + surge)
        if ctx.update(ctx.replicasets, new, CONTROLLER_MANAGER):
            direction = "up" if to > before else "down"
            ctx.event(
                d,
                ctx.deployments,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {direction} replica set {rs['metadata']['name']} from {before} to {to}",
                COMPONENT,
            )

    def _recreate(self, d: dict, new_rs: dict, olds: list[dict]) -> None:
        for rs in olds:
            self._scale(d, rs, 0)
        if any(_status(rs, "replicas") for rs in olds):
            return  # old Pods still running: the new ones wait
        self._scale(d, new_rs, (d.get("spec") or {}).get("replicas", 1))

    def _rolling(self, d: dict, new_rs: dict, olds: list[dict], surge: int, unavailable: int) -> None:
        replicas = (d.get("spec") or {}).get("replicas", 1)
        new_count = _replicas(new_rs)
        total = new_count + sum(_replicas(rs) for rs in olds)
        if not any(_replicas(rs) for rs in olds):
            self._scale(d, new_rs, replicas)  # nothing to roll: a scaling event
            return
        if new_count < replicas:
            room = min(replicas + surge - total, replicas - new_count)
            if room > 0:
                new_count += room
                total += room
                self._scale(d, new_rs, new_count)
        elif new_count > replicas:
            total -= new_count - replicas
            new_count = replicas
            self._scale(d, new_rs, replicas)
        # reconcileOldReplicaSets: old ReplicaSets shrink, unhealthy Pods first, while the minimum stays
        # available (the new ReplicaSet's unavailable Pods count against it).
        min_available = replicas - unavailable
        budget = total - min_available - max(new_count - _status(new_rs, "availableReplicas"), 0)
        if budget <= 0:
            return
        sizes = {rs["metadata"]["name"]: _replicas(rs) for rs in olds}
        for rs in olds:  # oldest revision first
            unhealthy = sizes[rs["metadata"]["name"]] - _status(rs, "availableReplicas")
            cut = min(budget, unhealthy)
            if cut > 0:
                sizes[rs["metadata"]["name"]] -= cut
                budget -= cut
        available = _status(new_rs, "availableReplicas") + sum(
            _status(rs, "availableReplicas") for rs in olds
        )
        surplus = available - min_available
        for rs in olds:
            cut = min(sizes[rs["metadata"]["name"]], max(surplus, 0))
            sizes[rs["metadata"]["name"]] -= cut
            surplus -= cut
            if sizes[rs["metadata"]["name"]] != _replicas(rs):
                self._scale(d, rs, sizes[rs["metadata"]["name"]])

    def _sync_status(self, key: tuple[str, str], h: str, unavailable: int, created: bool) -> None:
        ctx = self.ctx
        d = ctx.get(ctx.deployments, *key)
        if d is None:
            return
        spec = d.get("spec") or {}
        replicas = spec.get("replicas", 1)
        rss = ctx.owned(ctx.replicasets, d)
        new_rs = next((rs for rs in rss if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == h), None)
        status = deep_copy(d.get("status") or {})
        available = sum(_status(rs, "availableReplicas") for rs in rss)
        updated = _status(new_rs, "replicas") if new_rs is not None else 0
        counts = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": sum(_status(rs, "replicas") for rs in rss),
            "updatedReplicas": updated,
            "readyReplicas": sum(_status(rs, "readyReplicas") for rs in rss),
            "availableReplicas": available,
            "unavailableReplicas": max(sum(_replicas(rs) for rs in rss) - available, 0),
        }
        for k, v in counts.items():
            if v:
                status[k] = v
            else:
                status.pop(k, None)
        if available >= replicas - unavailable:
            set_deployment_condition(
                status,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        else:
            set_deployment_condition(
                status,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        if new_rs is not None:
            name = new_rs["metadata"]["name"]
            if updated == replicas and available >= replicas and counts["replicas"] == replicas:
                set_deployment_condition(
                    status,
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    f'ReplicaSet "{name}" has successfully progressed.',
                )
            elif created:
                set_deployment_condition(
                    status, "Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{name}"'
                )
            elif not any(c.get("type") == "Progressing" for c in status.get("conditions") or []):
                set_deployment_condition(
                    status, "Progressing", "True", "FoundNewReplicaSet", f'Found new replica set "{name}"'
                )
            else:
                set_deployment_condition(
                    status, "Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.'
                )
        ctx.write_status(ctx.deployments, d, status, CONTROLLER_MANAGER)
