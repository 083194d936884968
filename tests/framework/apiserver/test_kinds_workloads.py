"""Workload kinds with their own strategy (issue 18 item 2): apps ReplicaSet and StatefulSet, batch
CronJob, autoscaling HorizontalPodAutoscaler (v2 and its v1 view), policy PodDisruptionBudget and
scheduling PriorityClass. Defaults as kube-apiserver's ``defaults.go``, validation errors with Go's
field paths and messages, and kubectl's printer columns, through the official typed client and kubectl.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from framework.apiserver.registry.batch.cron import CronError, parse_standard

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]},
}


# --- CronJob ---------------------------------------------------------------------------------------


def cronjob(name: str, schedule: str = "*/5 * * * *", **job: Any) -> dict:
    template = {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": template, **job}}},
    }


def test_cronjob_defaults_and_status(module_api, plain):
    batch = client.BatchV1Api(module_api)
    made = plain(batch.create_namespaced_cron_job("default", cronjob("nightly")))
    spec = made["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert (pod["dnsPolicy"], pod["terminationGracePeriodSeconds"]) == ("ClusterFirst", 30)
    assert pod["containers"][0]["imagePullPolicy"] == "Always"  # untagged image: latest
    assert made["status"] == {} and made["metadata"]["generation"] == 1
    # status is written through /status only; spec changes bump generation
    status = {"status": {"lastScheduleTime": "2026-01-01T00:00:00Z", "active": []}}
    after = plain(batch.patch_namespaced_cron_job_status("nightly", "default", status))
    assert after["status"]["lastScheduleTime"] == "2026-01-01T00:00:00Z"
    after = plain(batch.patch_namespaced_cron_job("nightly", "default", {"spec": {"suspend": True}}))
    assert after["metadata"]["generation"] == 2 and after["status"]["lastScheduleTime"]
    batch.delete_namespaced_cron_job("nightly", "default")


def test_cronjob_validation(module_api, invalid):
    batch = client.BatchV1Api(module_api)
    body = cronjob("pod-default")
    del body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"]  # defaults to Always
    assert invalid(batch.create_namespaced_cron_job, "default", body) == (
        'CronJob.batch "pod-default" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: '
        'Unsupported value: "Always": supported values: "OnFailure", "Never"'
    )
    assert invalid(batch.create_namespaced_cron_job, "default", cronjob("bad", "every minute")) == (
        'CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "every minute": '
        "expected exactly 5 fields, found 2: [every minute]"
    )
    assert "end of range (60) above maximum (59): 60" in invalid(
        batch.create_namespaced_cron_job, "default", cronjob("range", "60 * * * *")
    )
    assert (
        'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule'
        in invalid(batch.create_namespaced_cron_job, "default", cronjob("tz", "TZ=UTC 0 * * * *"))
    )
    body = cronjob("zone")
    body["spec"]["timeZone"] = "Mars/Olympus"
    assert 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' in invalid(
        batch.create_namespaced_cron_job, "default", body
    )
    body = cronjob("policy")
    body["spec"]["concurrencyPolicy"] = "Sometimes"
    assert (
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": '
        'supported values: "Allow", "Forbid", "Replace"'
        in invalid(batch.create_namespaced_cron_job, "default", body)
    )
    long_name = "c" * 53
    assert f'metadata.name: Invalid value: "{long_name}": must be no more than 52 characters' in invalid(
        batch.create_namespaced_cron_job, "default", cronjob(long_name)
    )
    # Nothing invalid was stored.
    assert batch.list_namespaced_cron_job("default").items == []


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("*/15 9-17 * * MON-FRI", None),
        ("0 0 1 JAN,jul *", None),
        ("@hourly", None),
        ("@every 1h30m", None),
        ("@every 1d", 'failed to parse duration @every 1d: time: unknown unit "d" in duration "1d"'),
        ("@every 90", 'failed to parse duration @every 90: time: missing unit in duration "90"'),
        ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ],
)
def test_cron_parser(spec, error):
    """robfig/cron's standard parser (what CronJob validation runs) and its error texts."""
    if error is None:
        parse_standard(spec)
    else:
        with pytest.raises(
            CronError, match="^" + error.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*") + "$"
        ):
            parse_standard(spec)


def test_cron_next_activation():
    from datetime import UTC, datetime

    at = datetime(2026, 3, 6, 17, 50, tzinfo=UTC)  # a Friday
    assert parse_standard("*/15 9-17 * * MON-FRI").next_after(at) == datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
    assert parse_standard("0 0 1 * *").next_after(at) == datetime(2026, 4, 1, tzinfo=UTC)
    # day of month OR day of week when both are restricted
    assert parse_standard("0 0 13 * FRI").next_after(at) == datetime(2026, 3, 13, tzinfo=UTC)
    # @every: Go durations, at least a second, whole seconds (robfig's Every)
    assert parse_standard("@every 1h30m").next_after(at) == datetime(2026, 3, 6, 19, 20, tzinfo=UTC)
    assert parse_standard("@every 2.9s").next_after(at) == datetime(2026, 3, 6, 17, 50, 2, tzinfo=UTC)
    assert parse_standard("@every 300ms").next_after(at) == datetime(2026, 3, 6, 17, 50, 1, tzinfo=UTC)


def test_cronjob_printer_columns(module_api, module_kubectl):
    batch = client.BatchV1Api(module_api)
    body = cronjob("printed", "0 3 * * *")
    body["spec"]["timeZone"] = "Europe/Berlin"
    batch.create_namespaced_cron_job("default", body)
    rows = [line.split() for line in module_kubectl.ok("get", "cj", "printed").splitlines()]
    assert rows[0] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert rows[1][:7] == ["printed", "0", "3", "*", "*", "*", "Europe/Berlin"]
    assert rows[1][7:10] == ["False", "0", "<none>"]
    wide = module_kubectl.ok("get", "cronjobs.batch", "printed", "-o", "wide").splitlines()
    assert wide[0].split()[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[-3:] == ["c", "busybox", "<none>"]
    batch.delete_namespaced_cron_job("printed", "default")


# --- ReplicaSet and StatefulSet --------------------------------------------------------------------


def replicaset(name: str, **spec: Any) -> dict:
    base = {"selector": {"matchLabels": {"app": "web"}}, "template": json.loads(json.dumps(TEMPLATE))}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {**base, **spec},
    }


def test_replicaset_defaults_validation_and_field_selector(module_api, module_kubectl, plain, invalid):
    apps = client.AppsV1Api(module_api)
    made = plain(apps.create_namespaced_replica_set("default", replicaset("web")))
    assert made["spec"]["replicas"] == 1 and made["status"] == {"replicas": 0}
    container = made["spec"]["template"]["spec"]["containers"][0]
    assert (container["imagePullPolicy"], container["ports"][0]["protocol"]) == ("IfNotPresent", "TCP")
    assert [
        r.metadata.name
        for r in apps.list_namespaced_replica_set("default", field_selector="status.replicas=0").items
    ] == ["web"]
    body = replicaset("mismatch", selector={"matchLabels": {"app": "other"}})
    assert invalid(apps.create_namespaced_replica_set, "default", body) == (
        'ReplicaSet.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"web"}: `selector` does not match template `labels`'
    )
    body = replicaset("neg", replicas=-1)
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in invalid(
        apps.create_namespaced_replica_set, "default", body
    )
    body = replicaset("never")
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert (
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
        in invalid(apps.create_namespaced_replica_set, "default", body)
    )
    current = plain(apps.read_namespaced_replica_set("web", "default"))
    current["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    current["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    assert "spec.selector: Invalid value:" in invalid(
        apps.replace_namespaced_replica_set, "web", "default", current
    )
    rows = [line.split() for line in module_kubectl.ok("get", "rs", "web", "-o", "wide").splitlines()]
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rows[1][:4] == ["web", "1", "0", "0"] and rows[1][5:] == ["web", "nginx:1.27", "app=web"]
    apps.delete_namespaced_replica_set("web", "default")


def test_statefulset_defaults_and_update_rules(module_api, module_kubectl, plain, invalid):
    apps = client.AppsV1Api(module_api)
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
            "volumeClaimTemplates": [claim],
        },
    }
    made = plain(apps.create_namespaced_stateful_set("default", body))
    spec = made["spec"]
    assert (spec["replicas"], spec["podManagementPolicy"], spec["revisionHistoryLimit"]) == (
        1,
        "OrderedReady",
        10,
    )
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    template = spec["volumeClaimTemplates"][0]
    assert (template["spec"]["volumeMode"], template["status"]) == ("Filesystem", {"phase": "Pending"})
    assert made["status"] == {"replicas": 0, "availableReplicas": 0}
    scaled = plain(apps.patch_namespaced_stateful_set("db", "default", {"spec": {"replicas": 3}}))
    assert scaled["spec"]["replicas"] == 3 and scaled["metadata"]["generation"] == 2
    message = invalid(apps.patch_namespaced_stateful_set, "db", "default", {"spec": {"serviceName": "other"}})
    assert message == (
        'StatefulSet.apps "db" is invalid: spec: Forbidden: '
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    body["metadata"]["name"] = "bad"
    body["spec"]["podManagementPolicy"] = "Random"
    assert (
        'spec.podManagementPolicy: Unsupported value: "Random": supported values: "OrderedReady", "Parallel"'
        in invalid(apps.create_namespaced_stateful_set, "default", body)
    )
    rows = [line.split() for line in module_kubectl.ok("get", "sts", "db").splitlines()]
    assert rows[0] == ["NAME", "READY", "AGE"] and rows[1][:2] == ["db", "0/3"]
    apps.delete_namespaced_stateful_set("db", "default")


# --- HorizontalPodAutoscaler -----------------------------------------------------------------------


def test_hpa_defaults_validation_and_v1_view(module_api, module_dyn, module_kubectl, plain, invalid):
    v2 = client.AutoscalingV2Api(module_api)
    v1 = client.AutoscalingV1Api(module_api)
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        },
    }
    made = plain(v2.create_namespaced_horizontal_pod_autoscaler("default", body))
    spec = made["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
        }
    ]
    assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    assert spec["behavior"]["scaleDown"]["policies"] == [
        {"type": "Percent", "value": 100, "periodSeconds": 15}
    ]
    assert spec["behavior"]["scaleUp"]["selectPolicy"] == "Max"
    # The v1 view: the CPU target as targetCPUUtilizationPercentage.
    old = plain(v1.read_namespaced_horizontal_pod_autoscaler("web", "default"))
    assert old["apiVersion"] == "autoscaling/v1"
    assert old["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 5,
        "targetCPUUtilizationPercentage": 80,
    }
    v1.patch_namespaced_horizontal_pod_autoscaler(
        "web", "default", {"spec": {"targetCPUUtilizationPercentage": 50}}
    )
    now = plain(v2.read_namespaced_horizontal_pod_autoscaler("web", "default"))
    assert now["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    bad = {**body, "metadata": {"name": "bad"}, "spec": {**body["spec"], "minReplicas": 3, "maxReplicas": 2}}
    assert "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`" in invalid(
        v2.create_namespaced_horizontal_pod_autoscaler, "default", bad
    )
    bad["spec"] = {"maxReplicas": 2, "scaleTargetRef": {"name": "x"}}
    hpas = module_dyn.resources.get(api_version="autoscaling/v2", kind="HorizontalPodAutoscaler")
    assert "spec.scaleTargetRef.kind: Required value" in invalid(hpas.create, body=bad, namespace="default")
    rows = [line.split() for line in module_kubectl.ok("get", "hpa", "web").splitlines()]
    assert rows[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows[1][:6] == ["web", "Deployment/web", "cpu:", "<unknown>/50%", "1", "5"]
    v1.delete_namespaced_horizontal_pod_autoscaler("web", "default")


# --- PodDisruptionBudget and PriorityClass ---------------------------------------------------------


def test_pdb_status_validation_and_printer(module_api, module_kubectl, plain, invalid):
    policy = client.PolicyV1Api(module_api)
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    }
    made = plain(policy.create_namespaced_pod_disruption_budget("default", body))
    assert made["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }
    both = {**body, "metadata": {"name": "both"}, "spec": {**body["spec"], "maxUnavailable": 1}}
    assert "minAvailable and maxUnavailable cannot be both set" in invalid(
        policy.create_namespaced_pod_disruption_budget, "default", both
    )
    pct = {**body, "metadata": {"name": "pct"}, "spec": {"maxUnavailable": "120%"}}
    assert 'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%' in invalid(
        policy.create_namespaced_pod_disruption_budget, "default", pct
    )
    rows = [line.split() for line in module_kubectl.ok("get", "pdb", "web").splitlines()]
    assert rows[0] == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert rows[1][:4] == ["web", "50%", "N/A", "0"]
    policy.delete_namespaced_pod_disruption_budget("web", "default")


def test_priorityclass_rules(module_api, module_kubectl, plain, invalid):
    scheduling = client.SchedulingV1Api(module_api)
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    made = plain(scheduling.create_priority_class(body))
    assert made["preemptionPolicy"] == "PreemptLowerPriority"
    assert "value: Forbidden: may not be changed in an update." in invalid(
        scheduling.patch_priority_class, "high", {"value": 2000}
    )
    huge = {**body, "metadata": {"name": "huge"}, "value": 2_000_000_000}
    assert "value: Forbidden: maximum allowed value of a user defined priority is 1000000000" in invalid(
        scheduling.create_priority_class, huge
    )
    system = {**body, "metadata": {"name": "system-mine"}}
    assert (
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
        "for system use only. "
        "error: system-mine is not a known system priority class"
    ) in invalid(scheduling.create_priority_class, system)
    rows = [line.split() for line in module_kubectl.ok("get", "pc", "high").splitlines()]
    assert rows[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert rows[1][:3] == ["high", "1000", "false"] and rows[1][-1] == "PreemptLowerPriority"
    scheduling.delete_priority_class("high")


# --- /scale ----------------------------------------------------------------------------------------


def test_scale_subresource(module_api, module_kubectl, plain, invalid):
    """10-5: /scale of the workload kinds reads and writes the replica count as an autoscaling/v1 Scale
    (read, replace, patch, kubectl scale); the object's own update runs (generation bumps), status is
    kept, and a negative count is a Scale error."""
    apps = client.AppsV1Api(module_api)
    apps.create_namespaced_replica_set("default", replicaset("scaled"))
    made = plain(apps.read_namespaced_replica_set_scale("scaled", "default"))
    assert made["apiVersion"] == "autoscaling/v1" and made["kind"] == "Scale"
    assert made["spec"] == {"replicas": 1} and made["status"] == {"replicas": 0, "selector": "app=web"}
    made["spec"]["replicas"] = 3
    after = plain(apps.replace_namespaced_replica_set_scale("scaled", "default", made))
    assert after["spec"] == {"replicas": 3}
    assert after["metadata"]["resourceVersion"] != made["metadata"]["resourceVersion"]
    rs = plain(apps.read_namespaced_replica_set("scaled", "default"))
    assert (
        rs["spec"]["replicas"] == 3 and rs["metadata"]["generation"] == 2 and rs["status"] == {"replicas": 0}
    )
    # The Scale's resourceVersion is a precondition.
    with pytest.raises(client.exceptions.ApiException) as stale:
        apps.replace_namespaced_replica_set_scale("scaled", "default", made)
    assert stale.value.status == 409
    patched = plain(apps.patch_namespaced_replica_set_scale("scaled", "default", {"spec": {"replicas": 5}}))
    assert patched["spec"] == {"replicas": 5}
    assert (
        invalid(apps.patch_namespaced_replica_set_scale, "scaled", "default", {"spec": {"replicas": -1}})
        == 'Scale.autoscaling "scaled" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0"
    )
    # kubectl scale on a Deployment; discovery lists the scale subresources.
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
    }
    apps.create_namespaced_deployment("default", deployment)
    assert "deployment.apps/web scaled" in module_kubectl.ok("scale", "deployment/web", "--replicas=4")
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 4
    resources = {r.name for r in apps.get_api_resources().resources}
    assert {"deployments/scale", "replicasets/scale", "statefulsets/scale"} <= resources
    apps.delete_namespaced_deployment("web", "default")
    apps.delete_namespaced_replica_set("scaled", "default")


def test_scale_of_a_custom_resource(module_server, module_api):
    """A CRD's scale subresource maps its specReplicasPath, statusReplicasPath and labelSelectorPath."""
    preserve = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    module_server.install_crds(
        [
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "pools.example.com"},
                "spec": {
                    "group": "example.com",
                    "scope": "Namespaced",
                    "names": {"plural": "pools", "singular": "pool", "kind": "Pool"},
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "subresources": {
                                "status": {},
                                "scale": {
                                    "specReplicasPath": ".spec.size",
                                    "statusReplicasPath": ".status.size",
                                    "labelSelectorPath": ".status.selector",
                                },
                            },
                            "schema": {
                                "openAPIV3Schema": {
                                    "type": "object",
                                    "properties": {"spec": preserve, "status": preserve},
                                }
                            },
                        }
                    ],
                },
            }
        ]
    )
    crs = client.CustomObjectsApi(module_api)
    body = {"apiVersion": "example.com/v1", "kind": "Pool", "metadata": {"name": "p"}, "spec": {"size": 2}}
    crs.create_namespaced_custom_object("example.com", "v1", "default", "pools", body)
    crs.patch_namespaced_custom_object_status(
        "example.com", "v1", "default", "pools", "p", {"status": {"size": 2, "selector": "app=pool"}}
    )
    got = crs.get_namespaced_custom_object_scale("example.com", "v1", "default", "pools", "p")
    assert got["spec"] == {"replicas": 2} and got["status"] == {"replicas": 2, "selector": "app=pool"}
    crs.patch_namespaced_custom_object_scale(
        "example.com", "v1", "default", "pools", "p", {"spec": {"replicas": 7}}
    )
    pool = crs.get_namespaced_custom_object("example.com", "v1", "default", "pools", "p")
    assert pool["spec"] == {"size": 7} and pool["status"]["size"] == 2


# --- Job, and the printers of Pod, Node, ReplicationController, DaemonSet --------------------------


def test_job_generated_selector_validation_and_printer(module_api, module_kubectl, plain, invalid):
    batch = client.BatchV1Api(module_api)
    containers = [{"name": "pi", "image": "perl:5.34"}]
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"containers": containers}}},
    }
    assert invalid(batch.create_namespaced_job, "default", body) == (
        'Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"'
    )
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    made = plain(batch.create_namespaced_job("default", body))
    uid, spec = made["metadata"]["uid"], made["spec"]
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    }
    assert spec["template"]["metadata"]["labels"] == generated == made["metadata"]["labels"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert (spec["completionMode"], spec["suspend"], spec["podReplacementPolicy"]) == (
        "NonIndexed",
        False,
        "TerminatingOrFailed",
    )
    changed = {"spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.36"}]}}}}
    assert "spec.template: Invalid value:" in invalid(batch.patch_namespaced_job, "pi", "default", changed)
    assert "field is immutable" in invalid(batch.patch_namespaced_job, "pi", "default", changed)
    listed = batch.list_namespaced_job("default", field_selector="status.successful=0").items
    assert [j.metadata.name for j in listed] == ["pi"]
    rows = [line.split() for line in module_kubectl.ok("get", "jobs", "pi").splitlines()]
    assert rows[0] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert rows[1][:3] == ["pi", "Running", "0/1"]
    done = {
        "startTime": "2026-01-01T00:00:00Z",
        "completionTime": "2026-01-01T00:00:05Z",
        "succeeded": 1,
        "conditions": [  # a finished Job reports SuccessCriteriaMet first (validated since 1.32)
            {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}
            for t in ("SuccessCriteriaMet", "Complete")
        ],
    }
    batch.patch_namespaced_job_status("pi", "default", {"status": done})
    rows = [line.split() for line in module_kubectl.ok("get", "jobs", "pi").splitlines()]
    assert rows[1][:4] == ["pi", "Complete", "1/1", "5s"]
    batch.delete_namespaced_job("pi", "default", propagation_policy="Background")


def test_pod_node_rc_daemonset_printers(module_api, module_kubectl):
    core, apps = client.CoreV1Api(module_api), client.AppsV1Api(module_api)
    core.create_namespaced_pod(
        "default", {"metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    )
    rows = [line.split() for line in module_kubectl.ok("get", "pods", "p1").splitlines()]
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and rows[1][:4] == [
        "p1",
        "0/1",
        "Pending",
        "0",
    ]
    core.create_node({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}}})
    status = {
        "conditions": [
            {"type": "Ready", "status": "True", "lastHeartbeatTime": None, "lastTransitionTime": None}
        ],
        "nodeInfo": {
            **dict.fromkeys(
                ("architecture", "bootID", "kernelVersion", "kubeProxyVersion", "machineID", "systemUUID"), ""
            ),
            "kubeletVersion": "v1.37.0",
            "containerRuntimeVersion": "containerd://2.1.0",
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 13",
        },
        "addresses": [{"type": "InternalIP", "address": "192.0.2.10"}],
    }
    status["conditions"][0].update(
        lastHeartbeatTime="2026-01-01T00:00:00Z", lastTransitionTime="2026-01-01T00:00:00Z"
    )
    core.patch_node_status("n1", {"status": status})
    rows = [line.split() for line in module_kubectl.ok("get", "nodes", "-o", "wide").splitlines()]
    assert rows[0][:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    assert rows[1][:3] == ["n1", "Ready", "control-plane"] and rows[1][4:6] == ["v1.37.0", "192.0.2.10"]
    core.create_namespaced_replication_controller(
        "default", {"metadata": {"name": "rc1"}, "spec": {"replicas": 2, "template": TEMPLATE}}
    )
    rows = [line.split() for line in module_kubectl.ok("get", "rc", "rc1").splitlines()]
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"] and rows[1][:4] == ["rc1", "2", "0", "0"]
    apps.create_namespaced_daemon_set(
        "default",
        {
            "metadata": {"name": "ds1"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
        },
    )
    rows = [line.split() for line in module_kubectl.ok("get", "ds", "ds1").splitlines()]
    assert rows[0] == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "NODE",
        "SELECTOR",
        "AGE",
    ]
    assert rows[1][:7] == ["ds1", "0", "0", "0", "0", "0", "<none>"]
    core.delete_namespaced_pod("p1", "default")
    core.delete_node("n1")


def test_pod_spec_validation_of_pods_and_templates(module_api, invalid):
    """ValidatePodSpec's common findings, for a Pod and for a Deployment's and DaemonSet's template."""
    core, apps = client.CoreV1Api(module_api), client.AppsV1Api(module_api)
    container = {
        "name": "Web",
        "image": "nginx",
        "imagePullPolicy": "Sometimes",
        "ports": [{"containerPort": 70000, "name": "http-port-number-one"}],
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
    }
    body = {"metadata": {"name": "bad"}, "spec": {"containers": [container], "restartPolicy": "Sometimes"}}
    message = invalid(core.create_namespaced_pod, "default", body)
    for expected in (
        'spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of',
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
        '"Always", "IfNotPresent", "Never"',
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
        "must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[0].name: Invalid value: "http-port-number-one": '
        "must be no more than 15 characters",
        'spec.containers[0].volumeMounts[0].name: Not found: "data"',
        'spec.containers[0].resources.requests: Invalid value: "2": '
        "must be less than or equal to cpu limit of 1",
        'spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never"',
    ):
        assert expected in message
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "web", "image": "nginx"}]},
    }
    spec = {"selector": {"matchLabels": {"app": "web"}}, "template": template}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"}, "spec": spec}
    assert invalid(apps.create_namespaced_deployment, "default", deployment) == (
        'Deployment.apps "bad" is invalid: spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"'
    )
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "bad"}, "spec": spec}
    assert 'spec.template.spec.restartPolicy: Unsupported value: "OnFailure"' in invalid(
        apps.create_namespaced_daemon_set, "default", ds
    )
    assert core.list_namespaced_pod("default", field_selector="metadata.name=bad").items == []
