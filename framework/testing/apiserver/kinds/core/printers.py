"""kubectl's printer columns of the core and apps kinds the server has served since before the kind
modules (Pod, Node, ReplicationController, DaemonSet): ``printPod``, ``printNode``,
``printReplicationController`` and ``printDaemonSet`` of ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...jsonvalues import as_dict
from .. import printing


def _pod_status(pod: dict) -> str:
    """``printPod``'s reason: the phase, the Pod's reason, an init or app container's waiting or
    terminated reason, ``Terminating`` once deleted."""
    status = as_dict(pod.get("status"))
    reason = status.get("reason") or status.get("phase") or ""
    init = [as_dict(s) for s in status.get("initContainerStatuses") or []]
    for i, s in enumerate(init):
        state = as_dict(s.get("state"))
        terminated, waiting = as_dict(state.get("terminated")), as_dict(state.get("waiting"))
        if terminated and terminated.get("exitCode") == 0:
            continue
        if terminated:
            reason = "Init:" + (terminated.get("reason") or f"ExitCode:{terminated.get('exitCode')}")
        elif waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(as_dict(pod.get('spec')).get('initContainers') or [])}"
        break
    else:
        for s in reversed([as_dict(s) for s in status.get("containerStatuses") or []]):
            state = as_dict(s.get("state"))
            waiting, terminated = as_dict(state.get("waiting")), as_dict(state.get("terminated"))
            if waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated.get("reason"):
                reason = terminated["reason"]
    if as_dict(pod.get("metadata")).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_cells(pod: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    statuses = [as_dict(s) for s in status.get("containerStatuses") or []]
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    gates = spec.get("readinessGates") or []
    return [
        printing.name(pod),
        f"{ready}/{len(spec.get('containers') or [])}",
        _pod_status(pod),
        str(restarts),
        printing.age(pod, now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


POD: printing.Printer = (
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


def _node_cells(node: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(node.get("spec")), as_dict(node.get("status"))
    conditions = {as_dict(c).get("type"): as_dict(c).get("status") for c in status.get("conditions") or []}
    ready = conditions.get("Ready")
    states = ["Ready" if ready == "True" else "NotReady" if ready == "False" else "Unknown"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    labels = as_dict(as_dict(node.get("metadata")).get("labels"))
    roles = sorted(
        {k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k}
        | ({labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set())
    )
    addresses = {as_dict(a).get("type"): as_dict(a).get("address") for a in status.get("addresses") or []}
    info = as_dict(status.get("nodeInfo"))
    return [
        printing.name(node),
        ",".join(states),
        ",".join(r for r in roles if r) or "<none>",
        printing.age(node, now),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


NODE: printing.Printer = (
    [
        printing.NAME,
        printing.col("Status", "The status of the node"),
        printing.col("Roles", "The roles of the node"),
        printing.AGE,
        printing.col("Version", "Kubelet Version reported by the node."),
        printing.col("Internal-IP", "List of internal IPs (comma separated)", priority=1),
        printing.col("External-IP", "List of external IPs (comma separated)", priority=1),
        printing.col("OS-Image", "OS Image reported by the node from /etc/os-release", priority=1),
        printing.col("Kernel-Version", "Kernel Version reported by the node from 'uname -r'", priority=1),
        printing.col("Container-Runtime", "Container Runtime Version reported by the node", priority=1),
    ],
    _node_cells,
)


def _rc_cells(rc: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(rc.get("spec")), as_dict(rc.get("status"))
    containers, images = printing.containers_and_images(spec.get("template"))
    selector = as_dict(spec.get("selector"))
    return [
        printing.name(rc),
        spec.get("replicas", 0),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        printing.age(rc, now),
        containers,
        images,
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


REPLICATION_CONTROLLER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Desired", "Number of desired pods", "integer"),
        printing.col("Current", "Number of actively running pods", "integer"),
        printing.col("Ready", "Number of ready pods", "integer"),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS,
    ],
    _rc_cells,
)


def _ds_cells(ds: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(ds.get("spec")), as_dict(ds.get("status"))
    template = as_dict(spec.get("template"))
    containers, images = printing.containers_and_images(template)
    node_selector = as_dict(as_dict(template.get("spec")).get("nodeSelector"))
    return [
        printing.name(ds),
        status.get("desiredNumberScheduled", 0),
        status.get("currentNumberScheduled", 0),
        status.get("numberReady", 0),
        status.get("updatedNumberScheduled", 0),
        status.get("numberAvailable", 0),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
        printing.age(ds, now),
        containers,
        images,
        printing.selector_text(spec.get("selector")),
    ]


DAEMON_SET: printing.Printer = (
    [
        printing.NAME,
        printing.col(
            "Desired", "The desired number of nodes that should be running the daemon pod", "integer"
        ),
        printing.col("Current", "The number of nodes running at least one daemon pod", "integer"),
        printing.col("Ready", "The number of nodes with a ready daemon pod", "integer"),
        printing.col("Up-to-date", "The number of nodes running the updated daemon pod", "integer"),
        printing.col("Available", "The number of nodes with an available daemon pod", "integer"),
        printing.col("Node Selector", "The node selector of the daemon pod template"),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS,
    ],
    _ds_cells,
)

# (group, kind) → printer, attached to the strategies of resources.py by kinds.builtin_strategies().
PRINTERS: dict[tuple[str, str], printing.Printer] = {
    ("", "Pod"): POD,
    ("", "Node"): NODE,
    ("", "ReplicationController"): REPLICATION_CONTROLLER,
    ("apps", "DaemonSet"): DAEMON_SET,
}
