"""core/v1 Node: stored only (no kubelet reports); ``spec.unschedulable`` field selector
(``pkg/registry/core/node/strategy.go``). A create keeps the status it is given (the strategy lets
kubelets register with theirs); the served object has the Go struct's zero values: ``spec: {}`` and a
status with ``daemonEndpoints.kubeletEndpoint.Port`` and every ``nodeInfo`` string present."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.strategy import ResourceType

# NodeSystemInfo's fields, none ``omitempty``: a Node always shows them, empty when unreported.
NODE_INFO_KEYS = (
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
)


def normalize(obj: dict, old: dict | None) -> None:
    """The zero values the Go structs serialise (``NodeSpec``, ``NodeDaemonEndpoints``,
    ``NodeSystemInfo`` are structs, not pointers) and ``SetDefaults_NodeStatus``: allocatable
    defaults to the capacity."""
    if not isinstance(obj.get("spec"), dict):
        obj["spec"] = {}
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    endpoints = status.get("daemonEndpoints")
    if not isinstance(endpoints, dict):
        endpoints = status["daemonEndpoints"] = {}
    kubelet = endpoints.get("kubeletEndpoint")
    if not isinstance(kubelet, dict):
        kubelet = endpoints["kubeletEndpoint"] = {}
    kubelet.setdefault("Port", 0)
    info = status.get("nodeInfo")
    if not isinstance(info, dict):
        info = status["nodeInfo"] = {}
    for key in NODE_INFO_KEYS:
        if info.get(key) is None:
            info[key] = ""
    if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])


def fields(obj: dict) -> dict[str, str]:
    return {"spec.unschedulable": "true" if (obj.get("spec") or {}).get("unschedulable") else "false"}


def _node_cells(node: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(node.get("spec")), as_dict(node.get("status"))
    conditions = {as_dict(c).get("type"): as_dict(c).get("status") for c in status.get("conditions") or []}
    ready = conditions.get("Ready")
    # printNode: NotReady whenever the Ready condition is not True (Unknown too), Unknown without one.
    states = ["Unknown" if ready is None else "Ready" if ready == "True" else "NotReady"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    labels = as_dict(as_dict(node.get("metadata")).get("labels"))
    roles = sorted(
        {k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k}
        | ({labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set())
    )
    addresses: dict[str, str] = {}  # the first address of each type, as getNodeInternalIP takes it
    for a in status.get("addresses") or []:
        addresses.setdefault(as_dict(a).get("type") or "", as_dict(a).get("address") or "")
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


PRINTER: printing.Printer = (
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


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "nodes",
        "Node",
        False,
        "node",
        short_names=("no",),
        subresources=("status",),
        normalize=normalize,
        fields=fields,
        field_names=("spec.unschedulable",),
        own_field_labels=True,
        printer=PRINTER,
        time_fields=(
            "status.conditions[].lastTransitionTime",
            "status.conditions[].lastHeartbeatTime",
        ),
    ),
]
