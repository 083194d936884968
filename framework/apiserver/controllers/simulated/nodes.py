"""Simulated kubelets' Nodes: registration with a realistic status, Lease heartbeats in
``kube-node-lease`` and periodic status heartbeats (as the kubelet's node status and node lease
managers do; KWOK's ``node-initialize`` and ``node-heartbeat-with-lease`` stages)."""

from __future__ import annotations

import hashlib
import uuid

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import KUBELET, Context
from framework.apiserver.encoding import timefmt
from framework.apiserver.endpoints.discovery import GIT_VERSION
from framework.apiserver.registry.rest.objects import deep_copy

NODE_PREFIX = "simulated-node-"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40  # the kubelet's nodeLeaseDurationSeconds
CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi", "hugepages-2Mi": "0"}

# The kubelet's conditions of a healthy node: (type, status, reason, message).
HEALTHY = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def node_name(index: int) -> str:
    return f"{NODE_PREFIX}{index}"


def node_ip(index: int) -> str:
    return f"10.0.{index // 250}.{index % 250 + 2}"


def pod_cidr(index: int) -> str:
    return f"10.244.{index}.0/24"


def new_node(index: int) -> dict:
    """A Node as a kubelet registers it and reports its first status."""
    name = node_name(index)
    now = timefmt.now_time()
    ident = hashlib.sha256(name.encode()).hexdigest()
    return {
        "metadata": {
            "name": name,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "type": "simulated",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"podCIDR": pod_cidr(index), "podCIDRs": [pod_cidr(index)]},
        "status": {
            "capacity": dict(CAPACITY),
            "allocatable": dict(CAPACITY),
            "conditions": [
                {
                    "type": ctype,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
                for ctype, status, reason, message in HEALTHY
            ],
            "addresses": [
                {"type": "InternalIP", "address": node_ip(index)},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": ident[:32],
                "systemUUID": str(uuid.UUID(ident[:32])),
                "bootID": str(uuid.uuid4()),
                "kernelVersion": "6.1.0-simulated",
                "osImage": "Simulated node (no containers run)",
                "containerRuntimeVersion": "simulated://1.0.0",
                "kubeletVersion": GIT_VERSION,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [],
        },
    }


class NodeController:
    """Registers the simulated Nodes at start and keeps them alive: their Leases renewed every
    ``lease_renew_interval``, their conditions' heartbeats every ``node_status_interval``."""

    def __init__(self, ctx: Context, count: int) -> None:
        self.ctx = ctx
        self.count = count
        self.names = {node_name(i): i for i in range(count)}
        self.lease_queue = WorkQueue("simulated-node-lease", self.renew_lease)
        self.status_queue = WorkQueue("simulated-node-status", self.heartbeat)
        self.queues = [self.lease_queue, self.status_queue]

    def register(self) -> None:
        """Create the Nodes (and their Leases) that do not exist yet; start the heartbeats."""
        ctx = self.ctx
        for name, index in self.names.items():
            if ctx.get(ctx.nodes, "", name) is None:
                node = new_node(index)
                status = node.pop("status")
                created = ctx.create(ctx.nodes, None, node, KUBELET)
                if created is not None:
                    ctx.write_status(ctx.nodes, created, status, KUBELET)
            self.renew_lease(name)
            self.status_queue.add_later(name, ctx.policy.node_status_interval)

    def renew_lease(self, name: str) -> None:
        ctx = self.ctx
        node = ctx.get(ctx.nodes, "", name)
        if node is None:
            return  # deleted: a kubelet re-registers only when it restarts
        lease = ctx.get(ctx.leases, LEASE_NAMESPACE, name)
        now = timefmt.now_microtime()
        if lease is None:
            ctx.create(
                ctx.leases,
                LEASE_NAMESPACE,
                {
                    "metadata": {
                        "name": name,
                        "namespace": LEASE_NAMESPACE,
                        "ownerReferences": [
                            {
                                "apiVersion": ctx.nodes.api_version,
                                "kind": ctx.nodes.kind,
                                "name": name,
                                "uid": node["metadata"]["uid"],
                            }
                        ],
                    },
                    "spec": {
                        "holderIdentity": name,
                        "leaseDurationSeconds": LEASE_DURATION,
                        "renewTime": now,
                    },
                },
                KUBELET,
            )
        else:
            new = deep_copy(lease)
            new["spec"]["renewTime"] = now
            ctx.update(ctx.leases, new, KUBELET)
        self.lease_queue.add_later(name, ctx.policy.lease_renew_interval)

    def heartbeat(self, name: str) -> None:
        ctx = self.ctx
        node = ctx.get(ctx.nodes, "", name)
        if node is None:
            return
        status = deep_copy(node.get("status") or {})
        now = timefmt.now_time()
        for c in status.get("conditions") or []:
            c["lastHeartbeatTime"] = now
        ctx.write_status(ctx.nodes, node, status, KUBELET)
        self.status_queue.add_later(name, ctx.policy.node_status_interval)

    def address(self, name: str) -> str | None:
        """The InternalIP of a simulated node, None for any other node."""
        index = self.names.get(name)
        return None if index is None else node_ip(index)
