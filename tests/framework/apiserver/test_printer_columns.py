"""kubectl's printer columns, declared on each kind's strategy (issue 18): ``kubectl get`` and
``kubectl get -o wide`` print what they print against a real cluster (kubernetes
``pkg/printers/internalversion/printers.go``), for a sample of each API group's kinds."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from kubernetes import client

from framework.apiserver.endpoints.table import TableConverter
from framework.apiserver.registry import builtin_strategies

# The kinds operators create most, by (group, kind). Role, ClusterRole and LimitRange have no printer in
# kube-apiserver either: they print the default ``NAME  CREATED AT``.
OPERATOR_KINDS = [
    ("", "Pod"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "Deployment"),
    ("", "PersistentVolumeClaim"),
    ("", "PersistentVolume"),
    ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("policy", "PodDisruptionBudget"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("", "Endpoints"),
    ("discovery.k8s.io", "EndpointSlice"),
    ("", "Node"),
    ("storage.k8s.io", "StorageClass"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("", "Namespace"),
    ("", "Service"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "ServiceAccount"),
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("", "ResourceQuota"),
    ("coordination.k8s.io", "Lease"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
]


def rows(kubectl, *args: str) -> list[list[str]]:
    return [line.split() for line in kubectl.ok("get", *args).splitlines()]


def header(kubectl, *args: str) -> list[str]:
    """The header line, with kubectl's two-word column names (``CREATED AT``) kept together."""
    return [c.strip() for c in kubectl.ok("get", *args).splitlines()[0].split("  ") if c.strip()]


@pytest.mark.parametrize(("group", "kind"), OPERATOR_KINDS)
def test_operator_kinds_declare_a_printer_whose_rows_fit_its_columns(group: str, kind: str) -> None:
    strategies = [rt for rt in builtin_strategies() if (rt.group, rt.kind) == (group, kind)]
    assert strategies, f"{group}/{kind} has no strategy"
    for rt in strategies:
        assert rt.printer is not None, f"{group}/{kind} {rt.version} declares no printer"
        columns = rt.printer[0]
        assert columns[0]["name"] == "Name" or kind == "Event"
        assert all(c["type"] in ("string", "integer", "number", "boolean", "date") for c in columns)
        # Any object, even an empty one, prints one cell per column (the server prints "wide").
        for obj in ({}, {"metadata": {"name": "x"}, "spec": {}, "status": {}}):
            table = TableConverter(printer=rt.printer, now=lambda: datetime.now(UTC)).table([obj], {}, "None")
            assert len(table["rows"][0]["cells"]) == len(columns)


def test_roles_print_the_default_columns(module_api, module_kubectl) -> None:
    rbac = client.RbacAuthorizationV1Api(module_api)
    rbac.create_namespaced_role("default", {"metadata": {"name": "reader"}, "rules": []})
    assert header(module_kubectl, "roles", "reader") == ["NAME", "CREATED AT"]
    rbac.create_namespaced_role_binding(
        "default",
        {
            "metadata": {"name": "readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [
                {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "robot", "namespace": "default"},
            ],
        },
    )
    got = rows(module_kubectl, "rolebindings", "readers")
    assert got[0] == ["NAME", "ROLE", "AGE"] and got[1][:2] == ["readers", "Role/reader"]
    got = rows(module_kubectl, "rolebindings", "readers", "-o", "wide")
    assert got[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    # kubectl prints the empty GROUPS cell as nothing: the row has one word fewer.
    assert got[1][:2] == ["readers", "Role/reader"] and got[1][3:] == ["alice", "default/robot"]


def test_core_kinds_columns(module_api, module_kubectl) -> None:
    core = client.CoreV1Api(module_api)
    core.create_namespaced_config_map("default", {"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}})
    got = rows(module_kubectl, "configmaps", "cfg")
    assert got[0] == ["NAME", "DATA", "AGE"] and got[1][:2] == ["cfg", "2"]
    core.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    got = rows(module_kubectl, "secrets", "s")
    assert got[0] == ["NAME", "TYPE", "DATA", "AGE"] and got[1][:3] == ["s", "Opaque", "1"]
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    got = rows(module_kubectl, "serviceaccounts", "robot")
    assert got[0] == ["NAME", "SECRETS", "AGE"] and got[1][:2] == ["robot", "0"]
    core.create_namespaced_resource_quota(
        "default", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "10", "limits.cpu": "4"}}}
    )
    core.patch_namespaced_resource_quota_status(
        "q", "default", {"status": {"hard": {"pods": "10", "limits.cpu": "4"}, "used": {"pods": "1"}}}
    )
    # kubectl 1.32's order: the age comes last (it came second before).
    got = rows(module_kubectl, "resourcequotas", "q")
    assert got[0] == ["NAME", "REQUEST", "LIMIT", "AGE"]
    assert got[1][:5] == ["q", "pods:", "1/10", "limits.cpu:", "0/4"]
    got = rows(module_kubectl, "namespaces", "default")
    assert got[0] == ["NAME", "STATUS", "AGE"] and got[1][:2] == ["default", "Active"]
    core.create_namespaced_service(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        },
    )
    got = rows(module_kubectl, "services", "web", "-o", "wide")
    assert got[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert got[1][:2] == ["web", "ClusterIP"] and got[1][3:5] == ["<none>", "80/TCP"]
    assert got[1][-1] == "app=web"


def test_events_print_the_same_columns_through_both_apis(module_api, module_kubectl) -> None:
    core = client.CoreV1Api(module_api)
    core.create_namespaced_event(
        "default",
        {
            "metadata": {"name": "cfg.1"},
            "involvedObject": {"kind": "ConfigMap", "name": "cfg", "namespace": "default"},
            "reason": "Synced",
            "message": "all good",
            "type": "Normal",
            "source": {"component": "tester"},
            "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:00:00Z",
            "count": 2,
        },
    )
    narrow = ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    for resource in ("events", "events.events.k8s.io"):
        got = rows(module_kubectl, resource, "--field-selector", "metadata.name=cfg.1")
        assert got[0] == narrow, resource
        assert got[1][1:] == ["Normal", "Synced", "configmap/cfg", "all", "good"], resource
        got = rows(module_kubectl, resource, "--field-selector", "metadata.name=cfg.1", "-o", "wide")
        assert got[0] == [*narrow[:5], "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST", "SEEN", "COUNT", "NAME"]
        assert got[1][-4:] == ["good", got[1][0], "2", "cfg.1"] and "tester" in got[1], resource


def test_apps_coordination_and_admission_columns(module_api, module_kubectl) -> None:
    client.AppsV1Api(module_api).create_namespaced_deployment(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        },
    )
    got = rows(module_kubectl, "deployments", "web", "-o", "wide")
    assert got[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert got[1][:4] == ["web", "0/3", "0", "0"] and got[1][5:] == ["web", "nginx:1.27", "app=web"]
    client.CoordinationV1Api(module_api).create_namespaced_lease(
        "default", {"metadata": {"name": "leader"}, "spec": {"holderIdentity": "gcm-0"}}
    )
    got = rows(module_kubectl, "leases", "leader")
    assert got[0] == ["NAME", "HOLDER", "AGE"] and got[1][:2] == ["leader", "gcm-0"]
    client.AdmissionregistrationV1Api(module_api).create_validating_webhook_configuration(
        {
            "metadata": {"name": "gcm"},
            "webhooks": [
                {
                    "name": f"{n}.example.com",
                    "clientConfig": {"url": f"https://example.com/{n}"},
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                }
                for n in ("a", "b")
            ],
        }
    )
    got = rows(module_kubectl, "validatingwebhookconfigurations", "gcm")
    assert got[0] == ["NAME", "WEBHOOKS", "AGE"] and got[1][:2] == ["gcm", "2"]


def test_node_and_service_cells_as_upstream(module_api, module_kubectl) -> None:
    """A Ready condition of status Unknown prints NotReady; a LoadBalancer Service without an address
    prints ``<pending>``, an ExternalName one its name."""
    core = client.CoreV1Api(module_api)
    core.create_node({"metadata": {"name": "flaky"}})
    heartbeat = "2026-01-01T00:00:00Z"
    condition = {"type": "Ready", "status": "Unknown", "lastHeartbeatTime": heartbeat}
    core.patch_node_status(
        "flaky", {"status": {"conditions": [{**condition, "lastTransitionTime": heartbeat}]}}
    )
    assert rows(module_kubectl, "nodes", "flaky")[1][:2] == ["flaky", "NotReady"]
    core.create_node({"metadata": {"name": "fresh"}})
    assert rows(module_kubectl, "nodes", "fresh")[1][:2] == ["fresh", "Unknown"]
    core.create_namespaced_service(
        "default", {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 443}]}}
    )
    got = rows(module_kubectl, "services", "lb")
    assert got[1][1] == "LoadBalancer" and got[1][3] == "<pending>" and got[1][4].startswith("443:")
    core.patch_namespaced_service_status(
        "lb", "default", {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}}
    )
    assert rows(module_kubectl, "services", "lb")[1][3] == "203.0.113.7"
    core.create_namespaced_service(
        "default",
        {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}},
    )
    assert rows(module_kubectl, "services", "ext")[1][:4] == ["ext", "ExternalName", "<none>", "example.com"]


def test_generic_kinds_with_kubectl_printers(module_api, module_kubectl) -> None:
    """Kinds served by the generic strategy that kube-apiserver prints with columns of their own."""
    client.NetworkingV1Api(module_api).create_ingress_class(
        {
            "metadata": {"name": "nginx"},
            "spec": {
                "controller": "k8s.io/ingress-nginx",
                "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p"},
            },
        }
    )
    got = rows(module_kubectl, "ingressclasses", "nginx")
    assert got[0] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert got[1][:3] == ["nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/p"]
    client.NodeV1Api(module_api).create_runtime_class({"metadata": {"name": "gvisor"}, "handler": "runsc"})
    got = rows(module_kubectl, "runtimeclasses", "gvisor")
    assert got[0] == ["NAME", "HANDLER", "AGE"] and got[1][:2] == ["gvisor", "runsc"]
    storage = client.StorageV1Api(module_api)
    # Unset booleans print upstream's defaults (this server does not store CSIDriver's defaults).
    modes = ["Persistent", "Ephemeral"]
    storage.create_csi_driver(
        {"metadata": {"name": "csi.example.com"}, "spec": {"volumeLifecycleModes": modes}}
    )
    got = rows(module_kubectl, "csidrivers", "csi.example.com")
    assert got[0][:7] == [
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
    ]
    assert got[1][:7] == [
        "csi.example.com",
        "true",
        "false",
        "false",
        "<unset>",
        "false",
        "Persistent,Ephemeral",
    ]
    storage.create_csi_node(
        {"metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1"}]}}
    )
    got = rows(module_kubectl, "csinodes", "n1")
    assert got[0] == ["NAME", "DRIVERS", "AGE"] and got[1][:2] == ["n1", "1"]
    # The typed client's model requires status.attached, which Go always writes.
    created = storage.create_volume_attachment(
        {
            "metadata": {"name": "va"},
            "spec": {
                "attacher": "csi.example.com",
                "nodeName": "n1",
                "source": {"persistentVolumeName": "pv1"},
            },
            "status": {"attached": True},  # dropped on create
        }
    )
    assert created.status.attached is False
    got = rows(module_kubectl, "volumeattachments", "va")
    assert got[0] == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert got[1][:5] == ["va", "csi.example.com", "pv1", "n1", "false"]
    client.CoreV1Api(module_api).create_namespaced_pod_template(
        "default",
        {
            "metadata": {"name": "tpl"},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "fe"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    )
    assert header(module_kubectl, "podtemplates", "tpl") == ["NAME", "CONTAINERS", "IMAGES", "POD LABELS"]
    assert rows(module_kubectl, "podtemplates", "tpl")[1] == ["tpl", "web", "nginx:1.27", "app=web,tier=fe"]
    apps = client.AppsV1Api(module_api)
    sts = apps.create_namespaced_stateful_set(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        },
    )
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": sts.metadata.uid}
    apps.create_namespaced_controller_revision(
        "default",
        {
            "metadata": {"name": "web-1", "ownerReferences": [{**owner, "controller": True}]},
            "revision": 1,
            "data": {"spec": {}},
        },
    )
    got = rows(module_kubectl, "controllerrevisions", "web-1")
    assert got[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert got[1][:3] == ["web-1", "statefulset.apps/web", "1"]
