"""Table conversion (4-3): apimachinery's HumanDuration, the printer-column JSONPath subset, cells."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from framework.apiserver.endpoints.table import TableConverter, compile_json_path, human_duration
from framework.apiserver.registry import builtin_strategies

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (200, "3m20s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (5 * 3600 + 12 * 60, "5h12m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (3 * 86400 + 4 * 3600, "3d4h"),
        (10 * 86400, "10d"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration_matches_apimachinery(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_json_path_subset() -> None:
    obj = {
        "metadata": {"name": "p", "labels": {"a.b/c": "x"}},
        "spec": {"items": [{"n": 1}, {"n": 2}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "False"}]},
    }
    assert compile_json_path(".metadata.name")(obj) == ["p"]
    assert compile_json_path("{.metadata.name}")(obj) == ["p"]
    assert compile_json_path(".metadata.labels['a.b/c']")(obj) == ["x"]
    assert compile_json_path(".spec.items[1].n")(obj) == [2]
    assert compile_json_path(".spec.items[-1].n")(obj) == [2]
    assert compile_json_path(".spec.items[*].n")(obj) == [1, 2]
    assert compile_json_path('.status.conditions[?(@.type=="Ready")].status')(obj) == ["True"]
    assert compile_json_path(".spec.missing.deeper")(obj) == []
    with pytest.raises(ValueError):
        compile_json_path(".spec..items")


def test_default_columns_for_built_in_kinds() -> None:
    conv = TableConverter(now=lambda: NOW)
    cm = {"metadata": {"name": "a", "namespace": "d", "creationTimestamp": "2026-11-30T11:00:00Z"}}
    table = conv.table([cm], {"resourceVersion": "7", "continue": ""}, "Metadata")
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "7"}
    assert [(c["name"], c["type"], c["format"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", "name"),
        ("Created At", "date", ""),
    ]
    assert table["rows"] == [
        {
            "cells": ["a", "2026-11-30T11:00:00Z"],
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": cm["metadata"],
            },
        }
    ]
    assert conv.table([cm], {}, "Object")["rows"][0]["object"] is cm
    assert conv.table([cm], {}, "None", headers=False) == {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": None,
        "rows": [{"cells": ["a", "2026-11-30T11:00:00Z"], "object": None}],
    }


def test_custom_resource_printer_columns_and_cell_types() -> None:
    columns = [
        {"name": "Namespace", "type": "string", "jsonPath": ".spec.namespace"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "priority": 1},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
        {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
        {"name": "Labels", "type": "string", "jsonPath": ".metadata.labels", "description": "all labels"},
        {"name": "Since", "type": "date", "jsonPath": ".status.since"},
    ]
    conv = TableConverter(columns, now=lambda: NOW)
    created = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    obj = {
        "metadata": {"name": "p", "labels": {"a": "b"}, "creationTimestamp": created},
        "spec": {"namespace": "garden-p", "replicas": 3, "ratio": 1, "paused": False},
        "status": {"since": "not a time"},
    }
    table = conv.table([obj], {}, "Metadata")
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Namespace", "Replicas", "Ratio", "Paused", "Labels", "Since", "Age"]
    by_name = {c["name"]: c for c in table["columnDefinitions"]}
    assert by_name["Replicas"]["priority"] == 1
    assert by_name["Labels"]["description"] == "all labels"
    assert by_name["Namespace"]["description"] == (
        "Custom resource definition column (in JSONPath format): .spec.namespace"
    )
    assert table["rows"][0]["cells"] == ["p", "garden-p", 3, 1.0, False, '{"a":"b"}', "<invalid>", "5m"]
    # A missing value is an empty (null) cell; an "Age" column of the CRD's own is not doubled.
    conv = TableConverter(
        [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}], now=lambda: NOW
    )
    table = conv.table([{"metadata": {"name": "q"}}], {}, "None")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["q", None]


def printed(group: str, kind: str, obj: dict) -> dict[str, Any]:
    """Column name -> cell of one object printed with kube-apiserver's printer for the kind."""
    table = printed_table(group, kind, obj)
    return dict(zip([c["name"] for c in table["columnDefinitions"]], table["rows"][0]["cells"], strict=True))


def printed_table(group: str, kind: str, obj: dict) -> dict:
    """The Table of one object, printed with the printer the kind's strategy declares."""
    # One printer per kind, whichever served version's strategy declares it (HPA: v2 and v1).
    (printer,) = {
        id(rt.printer): rt.printer for rt in builtin_strategies() if (rt.group, rt.kind) == (group, kind)
    }.values()
    assert printer is not None, f"{group}/{kind} declares no printer"
    return TableConverter(now=lambda: NOW, printer=printer).table([obj], {}, "None")


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_event_printer_for_both_apis() -> None:
    legacy = {
        "metadata": {"name": "p1.1", "namespace": "default"},
        "involvedObject": {"kind": "Project", "name": "p1"},
        "reason": "NamespaceReconcileSuccessful",
        "message": "  Successfully reconciled  ",
        "type": "Normal",
        "source": {"component": "project-controller"},
        "firstTimestamp": ago(minutes=5),
        "lastTimestamp": ago(seconds=30),
        "count": 3,
    }
    assert printed("", "Event", legacy) == {
        "Last Seen": "30s",
        "Type": "Normal",
        "Reason": "NamespaceReconcileSuccessful",
        "Object": "project/p1",
        "Subobject": "",
        "Source": "project-controller",
        "Message": "Successfully reconciled",
        "First Seen": "5m",
        "Count": 3,
        "Name": "p1.1",
    }
    new_api = {
        "metadata": {"name": "s.2", "namespace": "garden-p1"},
        "regarding": {"kind": "Shoot", "name": "s"},
        "reason": "Reconciled",
        "note": "done",
        "type": "Warning",
        "eventTime": ago(hours=2),
        "series": {"count": 7, "lastObservedTime": ago(minutes=1)},
        "reportingController": "gardenlet",
        "reportingInstance": "gardenlet-1",
    }
    row = printed("events.k8s.io", "Event", new_api)
    assert (row["Last Seen"], row["First Seen"], row["Count"]) == ("60s", "120m", 7)
    assert (row["Object"], row["Source"], row["Message"]) == ("shoot/s", "gardenlet, gardenlet-1", "done")
    single = {**new_api, "series": None}
    assert printed("events.k8s.io", "Event", single)["Count"] == 1  # singletons have no count


def test_binding_deployment_service_quota_printers() -> None:
    rb = {
        "metadata": {"name": "admins", "creationTimestamp": ago(hours=3)},
        "roleRef": {"kind": "ClusterRole", "name": "admin"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "Group", "name": "ops"},
            {"kind": "ServiceAccount", "name": "robot", "namespace": "garden-p1"},
            {"kind": "User", "name": "bob"},
        ],
    }
    assert printed("rbac.authorization.k8s.io", "RoleBinding", rb) == {
        "Name": "admins",
        "Role": "ClusterRole/admin",
        "Age": "3h",
        "Users": "alice, bob",
        "Groups": "ops",
        "ServiceAccounts": "garden-p1/robot",
    }
    deploy = {
        "metadata": {"name": "gcm", "creationTimestamp": ago(days=3)},
        "spec": {
            "replicas": 2,
            "selector": {
                "matchLabels": {"app": "gcm"},
                "matchExpressions": [{"key": "tier", "operator": "Exists"}],
            },
            "template": {"spec": {"containers": [{"name": "gcm", "image": "gcm:dev"}]}},
        },
        "status": {"readyReplicas": 1, "updatedReplicas": 2},
    }
    row = printed("apps", "Deployment", deploy)
    assert row == {
        "Name": "gcm",
        "Ready": "1/2",
        "Up-to-date": 2,
        "Available": 0,
        "Age": "3d",
        "Containers": "gcm",
        "Images": "gcm:dev",
        "Selector": "app=gcm,tier",
    }
    svc = {
        "metadata": {"name": "webhook", "creationTimestamp": ago(seconds=5)},
        "spec": {
            "type": "ClusterIP",
            "clusterIPs": ["10.0.0.7"],
            "ports": [{"port": 443}],
            "selector": {"app": "gcm"},
        },
    }
    assert printed("", "Service", svc) == {
        "Name": "webhook",
        "Type": "ClusterIP",
        "Cluster-IP": "10.0.0.7",
        "External-IP": "<none>",
        "Port(s)": "443/TCP",
        "Age": "5s",
        "Selector": "app=gcm",
    }
    quota = {
        "metadata": {"name": "q"},
        "status": {
            "hard": {"count/shoots.core.gardener.cloud": "10", "limits.cpu": "4"},
            "used": {"limits.cpu": "1"},
        },
    }
    assert printed("", "ResourceQuota", quota) == {
        "Name": "q",
        "Age": "<unknown>",
        "Request": "count/shoots.core.gardener.cloud: 0/10",
        "Limit": "limits.cpu: 1/4",
    }


def test_pod_restarts_and_readiness_gates() -> None:
    """``printPod``: restarts say how long ago the last container terminated; gates count the true ones."""
    pod = {
        "metadata": {"name": "p", "creationTimestamp": ago(hours=1)},
        "spec": {
            "containers": [{"name": "a"}, {"name": "b"}],
            "readinessGates": [{"conditionType": "example.com/ready"}, {"conditionType": "example.com/lb"}],
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "example.com/ready", "status": "True"},
                {"type": "example.com/lb", "status": "False"},
            ],
            "containerStatuses": [
                {
                    "name": "a",
                    "ready": True,
                    "state": {"running": {"startedAt": ago(minutes=29)}},
                    "restartCount": 2,
                    "lastState": {"terminated": {"finishedAt": ago(minutes=30)}},
                },
                {
                    "name": "b",
                    "ready": False,
                    "state": {"running": {"startedAt": ago(minutes=4)}},
                    "restartCount": 1,
                    "lastState": {"terminated": {"finishedAt": ago(minutes=5)}},
                },
            ],
        },
    }
    row = printed("", "Pod", pod)
    assert (row["Ready"], row["Status"], row["Restarts"], row["Age"]) == (
        "1/2",
        "Running",
        "3 (5m ago)",
        "60m",
    )
    assert row["Readiness Gates"] == "1/2"
    never = {**pod, "status": {"containerStatuses": [{"name": "a", "restartCount": 0}]}}
    assert printed("", "Pod", never)["Restarts"] == "0"
    assert printed("", "Pod", never)["Readiness Gates"] == "0/2"


def test_column_types_and_order_as_kubectl_1_32() -> None:
    """Columns whose type or order kubectl 1.32 prints differently from older releases."""

    def columns(group: str, kind: str) -> list[tuple[str, str]]:
        table = printed_table(group, kind, {"metadata": {"name": "x"}})
        return [(c["name"], c["type"]) for c in table["columnDefinitions"]]

    assert columns("", "ResourceQuota") == [
        ("Name", "string"),
        ("Request", "string"),
        ("Limit", "string"),
        ("Age", "string"),
    ]
    assert columns("", "ConfigMap") == [("Name", "string"), ("Data", "string"), ("Age", "string")]
    assert columns("apps", "Deployment")[1:4] == [
        ("Ready", "string"),
        ("Up-to-date", "string"),
        ("Available", "string"),
    ]
    webhooks = printed_table(
        "admissionregistration.k8s.io", "MutatingWebhookConfiguration", {"webhooks": [{}]}
    )
    assert webhooks["columnDefinitions"][1]["description"] == (
        "Webhooks indicates the number of webhooks registered in this configuration"
    )
    assert webhooks["rows"][0]["cells"][1] == 1


def pod_status(**status: Any) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}, "status": status}


def test_pod_status_reasons_as_print_pod() -> None:
    """``printPod``: gated scheduling, signals and exit codes, a ready container needs to run,
    Completed with a container still running, a sidecar counts, Terminating only before the end."""

    def status_of(pod: dict) -> tuple[str, str]:
        row = printed("", "Pod", pod)
        return row["Ready"], row["Status"]

    gated = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    assert status_of(pod_status(phase="Pending", conditions=gated)) == ("0/1", "SchedulingGated")
    killed = {"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
    assert status_of(pod_status(phase="Running", containerStatuses=[killed])) == ("0/1", "Signal:9")
    failed = {"name": "a", "state": {"terminated": {"exitCode": 3}}}
    assert status_of(pod_status(phase="Failed", containerStatuses=[failed])) == ("0/1", "ExitCode:3")
    waiting = {"name": "a", "ready": True, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    assert status_of(pod_status(phase="Running", containerStatuses=[waiting])) == ("0/1", "CrashLoopBackOff")
    pod = pod_status(
        phase="Running",
        conditions=[{"type": "Ready", "status": "False"}],
        containerStatuses=[
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "b", "ready": True, "state": {"running": {}}},
        ],
    )
    pod["spec"]["containers"].append({"name": "b"})
    assert status_of(pod) == ("1/2", "NotReady")
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert status_of(pod) == ("1/2", "Running")
    sidecar = pod_status(
        phase="Running",
        initContainerStatuses=[{"name": "proxy", "ready": True, "started": True, "state": {"running": {}}}],
        containerStatuses=[{"name": "a", "ready": True, "state": {"running": {}}}],
        podIPs=[{"ip": "10.0.0.9"}, {"ip": "fd00::9"}],
    )
    sidecar["spec"]["initContainers"] = [{"name": "proxy", "restartPolicy": "Always"}]
    row = printed("", "Pod", sidecar)
    assert (row["Ready"], row["Status"], row["IP"]) == ("2/2", "Running", "10.0.0.9")
    done = pod_status(phase="Succeeded")
    done["metadata"]["deletionTimestamp"] = ago(seconds=1)
    assert status_of(done)[1] == "Succeeded"
    done["status"]["phase"] = "Running"
    assert status_of(done)[1] == "Terminating"
    done["status"]["reason"] = "NodeLost"
    assert status_of(done)[1] == "Unknown"
