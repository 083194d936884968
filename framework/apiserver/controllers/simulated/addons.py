"""The ``kube-system`` add-ons every kubeadm-made cluster (kind's included) runs, as simulated
workloads: the ``coredns`` Deployment with its ``kube-dns`` Service and the ``kube-proxy``
DaemonSet. Clients and suites that list ``kube-system`` Pods find them, Running on the simulated
nodes; nothing in them runs (no DNS, no Service proxying)."""

from __future__ import annotations

from framework.apiserver.controllers.simulated.context import CONTROLLER_MANAGER, Context
from framework.apiserver.endpoints.discovery import GIT_VERSION

NAMESPACE = "kube-system"
CONTROL_PLANE_TOLERATIONS = [
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
]


def coredns() -> dict:
    labels = {"k8s-app": "kube-dns"}
    return {
        "metadata": {"name": "coredns", "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "coredns",
                            "image": "registry.k8s.io/coredns/coredns:v1.11.3",
                            "args": ["-conf", "/etc/coredns/Corefile"],
                            "ports": [
                                {"name": "dns", "containerPort": 53, "protocol": "UDP"},
                                {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                                {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
                            ],
                        }
                    ],
                    "dnsPolicy": "Default",
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": CONTROL_PLANE_TOLERATIONS,
                },
            },
        },
    }


def kube_dns() -> dict:
    return {
        "metadata": {"name": "kube-dns", "namespace": NAMESPACE, "labels": {"k8s-app": "kube-dns"}},
        "spec": {
            "clusterIP": "10.96.0.10",  # kubeadm's: the tenth address of the Service range
            "selector": {"k8s-app": "kube-dns"},
            "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
            ],
        },
    }


def kube_proxy() -> dict:
    labels = {"k8s-app": "kube-proxy"}
    return {
        "metadata": {"name": "kube-proxy", "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "kube-proxy",
                            "image": f"registry.k8s.io/kube-proxy:{GIT_VERSION}",
                            "command": [
                                "/usr/local/bin/kube-proxy",
                                "--config=/var/lib/kube-proxy/config.conf",
                            ],
                        }
                    ],
                    "hostNetwork": True,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"operator": "Exists"}],
                },
            },
        },
    }


def install_addons(ctx: Context) -> None:
    """Create the add-ons that do not exist yet (a client may have deleted or replaced them)."""
    services = ctx.type("", "v1", "services")
    for rt, body in ((ctx.deployments, coredns()), (services, kube_dns()), (ctx.daemonsets, kube_proxy())):
        if ctx.get(rt, NAMESPACE, body["metadata"]["name"]) is None:
            ctx.create(rt, NAMESPACE, body, CONTROLLER_MANAGER)
