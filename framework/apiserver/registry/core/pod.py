"""core/v1 Pod: stored only (no kubelet runs it, it stays Pending); ``SetDefaults_Pod`` and the
container rules (``pkg/registry/core/pod/strategy.go``, ``pkg/apis/core/validation``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.pod_update import validate_pod_update
from framework.apiserver.registry.core.podspec import default_pod_spec
from framework.apiserver.registry.core.podspec_validation import validate_pod_spec
from framework.apiserver.registry.strategy import ResourceType


def normalize(obj: dict, old: dict | None) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_pod_spec(spec)
        if spec.get("enableServiceLinks") is None:
            spec["enableServiceLinks"] = True  # SetDefaults_Pod: Pods only, not templates
        # v1's deprecated alias: read when serviceAccountName is empty, always written back as it.
        if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
            spec["serviceAccountName"] = spec["serviceAccount"]
        if spec.get("serviceAccountName"):
            spec["serviceAccount"] = spec["serviceAccountName"]
        else:
            spec.pop("serviceAccount", None)
    if old is None:
        containers = (spec or {}).get("containers") or [] if isinstance(spec, dict) else []
        has_resources = any((c.get("resources") or {}) for c in containers if isinstance(c, dict))
        obj["status"] = {"phase": "Pending", "qosClass": "Burstable" if has_resources else "BestEffort"}


def fields(obj: dict) -> dict[str, str]:
    spec = as_dict(obj.get("spec"))
    status = as_dict(obj.get("status"))
    return {
        "spec.nodeName": spec.get("nodeName") or "",
        "spec.restartPolicy": spec.get("restartPolicy") or "",
        "spec.schedulerName": spec.get("schedulerName") or "",
        "spec.serviceAccountName": spec.get("serviceAccountName") or "",
        "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
        "status.phase": status.get("phase") or "",
        "status.podIP": status.get("podIP") or "",
        "status.nominatedNodeName": status.get("nominatedNodeName") or "",
    }


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    errs = validate_pod_spec(obj.get("spec"), "spec")
    if old is not None:
        errs += validate_pod_update(obj, old)
    return errs


def _terminated_reason(terminated: dict, prefix: str = "") -> str:
    """A terminated container's reason, or ``Signal:N`` / ``ExitCode:N`` without one."""
    if terminated.get("reason"):
        return prefix + str(terminated["reason"])
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def _pod_state(pod: dict) -> tuple[int, str]:
    """``printPod``'s ready containers and reason: the phase or the Pod's reason, ``SchedulingGated``,
    an init container's state while initialising, else the app containers' waiting or terminated
    reasons (``Completed`` with one still running reads ``Running`` or ``NotReady``), ``Terminating``
    once deleted (``Unknown`` when the node was lost)."""
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    conditions = [as_dict(c) for c in status.get("conditions") or []]
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated" for c in conditions):
        reason = "SchedulingGated"
    sidecars = {
        as_dict(c).get("name")
        for c in spec.get("initContainers") or []
        if as_dict(c).get("restartPolicy") == "Always"
    }
    ready = 0
    initializing = False
    for i, s in enumerate(as_dict(s) for s in status.get("initContainerStatuses") or []):
        state = as_dict(s.get("state"))
        terminated, waiting = as_dict(state.get("terminated")), as_dict(state.get("waiting"))
        if terminated and terminated.get("exitCode", 0) == 0:
            continue
        if s.get("name") in sidecars and s.get("started") is True:
            ready += 1 if s.get("ready") else 0
            continue
        if terminated:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True" for c in conditions)
    if not initializing or initialized:
        running = False
        for s in reversed([as_dict(s) for s in status.get("containerStatuses") or []]):
            state = as_dict(s.get("state"))
            waiting, terminated = as_dict(state.get("waiting")), as_dict(state.get("terminated"))
            if waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated:
                reason = _terminated_reason(terminated)
            elif s.get("ready") and "running" in state:
                running = True
                ready += 1
        if reason == "Completed" and running:
            pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            reason = "Running" if pod_ready else "NotReady"
    if as_dict(pod.get("metadata")).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    return ready, reason


def _restarts(statuses: list[dict], now: datetime) -> str:
    """``printPod``'s restarts: the count, and how long ago the last container terminated when it did."""
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    finished = [as_dict(as_dict(s.get("lastState")).get("terminated")).get("finishedAt") for s in statuses]
    last = max((f for f in finished if isinstance(f, str) and f), default="", key=_when)
    if restarts and last:
        return f"{restarts} ({printing.since(last, now)} ago)"
    return str(restarts)


def _when(timestamp: str) -> datetime:
    return printing.parse_printed_time(timestamp) or datetime.min.replace(tzinfo=UTC)


def _pod_cells(pod: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    sidecars = [c for c in spec.get("initContainers") or [] if as_dict(c).get("restartPolicy") == "Always"]
    ready, reason = _pod_state(pod)
    statuses = [as_dict(s) for s in status.get("containerStatuses") or []]
    gates = [as_dict(g).get("conditionType") for g in spec.get("readinessGates") or []]
    conditions = [as_dict(c) for c in status.get("conditions") or []]
    true = {c.get("type") for c in conditions if c.get("status") == "True"}
    pod_ips = [as_dict(ip).get("ip") for ip in status.get("podIPs") or []]
    return [
        printing.name(pod),
        f"{ready}/{len(spec.get('containers') or []) + len(sidecars)}",
        reason,
        _restarts(statuses, now),
        printing.age(pod, now),
        (pod_ips[0] if pod_ips else None) or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"{sum(1 for g in gates if g in true)}/{len(gates)}" if gates else "<none>",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        printing.col("Status", "The aggregate status of the containers in this pod."),
        printing.col("Restarts", "The number of times the containers in this pod have been restarted."),
        printing.AGE,
        printing.col("IP", "IP address allocated to the pod.", priority=1),
        printing.col("Node", "Name of the node the pod is assigned to.", priority=1),
        printing.col("Nominated Node", "Name of the node the pod is nominated to.", priority=1),
        printing.col("Readiness Gates", "The readiness gates of the pod.", priority=1),
    ],
    _pod_cells,
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        "pod",
        short_names=("po",),
        categories=("all",),
        subresources=("status",),
        returns_deleted_object=True,
        normalize=normalize,
        validate=validate,
        fields=fields,
        field_names=tuple(fields({})),
        own_field_labels=True,
        printer=PRINTER,
        time_fields=("status.conditions[].lastTransitionTime", "status.startTime"),
    ),
]
