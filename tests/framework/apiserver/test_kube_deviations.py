"""Behaviour other client libraries' e2e suites expect of kube-apiserver 1.32 (issue 34's deviations):
resourceVersion on create, the Pod admission defaults, Pod update validation, Node zero values and
Job status transitions, through the official client and kubectl."""

from __future__ import annotations

import json
import re

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def _status(e: ApiException) -> dict:
    return json.loads(e.body)


def _pod(name: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}], **spec}}


# --- resourceVersion on create -------------------------------------------------------------------


@pytest.mark.parametrize("rv", ["v1", "0", "-3", "18446744073709551616"])
def test_create_clears_a_resource_version_that_is_not_a_positive_number(core, rv) -> None:
    """The store refuses only an RV that parses as a non-zero uint64; any other value is cleared."""
    cm = core.create_namespaced_config_map("default", {"metadata": {"name": "x", "resourceVersion": rv}})
    assert cm.metadata.resource_version not in (rv, None, "")
    assert core.read_namespaced_config_map("x", "default").metadata.resource_version == (
        cm.metadata.resource_version
    )


def test_create_with_a_numeric_resource_version_is_the_store_error(core) -> None:
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("default", {"metadata": {"name": "x", "resourceVersion": "12"}})
    assert e.value.status == 500
    body = _status(e.value)
    assert body["message"] == "resourceVersion should not be set on objects to be created"
    assert "reason" not in body
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("x", "default")
    assert e.value.status == 404


# --- Pod admission defaults ----------------------------------------------------------------------


def test_pod_gets_service_account_priority_and_tolerations(core) -> None:
    pod = core.create_namespaced_pod(
        "default",
        _pod("p", initContainers=[{"name": "init", "image": "busybox:1"}]),
    )
    spec = pod.spec
    assert spec.service_account_name == "default" and spec.service_account == "default"
    assert spec.priority == 0 and spec.preemption_policy == "PreemptLowerPriority"
    assert spec.priority_class_name is None
    assert [(t.key, t.operator, t.effect, t.toleration_seconds) for t in spec.tolerations] == [
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 300),
    ]
    [volume] = spec.volumes
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume.name)
    projected = client.ApiClient().sanitize_for_serialization(volume.projected)
    assert projected == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }
    for c in [*spec.containers, *spec.init_containers]:
        [mount] = c.volume_mounts
        assert (mount.name, mount.mount_path, mount.read_only) == (volume.name, TOKEN_PATH, True)


def test_existing_tolerations_and_own_token_mount_are_respected(core) -> None:
    """A wildcard toleration covers both taints; a container mounting the token path keeps its mount."""
    own = {"name": "mine", "emptyDir": {}}
    pod = core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "p"},
            "spec": {
                "tolerations": [{"operator": "Exists"}],
                "volumes": [own],
                "containers": [
                    {
                        "name": "a",
                        "image": "x:1",
                        "volumeMounts": [{"name": "mine", "mountPath": TOKEN_PATH}],
                    },
                    {"name": "b", "image": "x:1"},
                ],
            },
        },
    )
    assert [t.operator for t in pod.spec.tolerations] == ["Exists"]
    assert [m.name for m in pod.spec.containers[0].volume_mounts] == ["mine"]
    assert pod.spec.containers[1].volume_mounts[0].name.startswith("kube-api-access-")
    assert len(pod.spec.volumes) == 2


def test_automount_off_on_pod_or_service_account(core) -> None:
    core.create_namespaced_service_account(
        "default",
        {
            "metadata": {"name": "quiet"},
            "automountServiceAccountToken": False,
            "imagePullSecrets": [{"name": "reg"}],
        },
    )
    pod = core.create_namespaced_pod("default", _pod("a", serviceAccountName="quiet"))
    assert pod.spec.volumes is None and pod.spec.containers[0].volume_mounts is None
    assert [s.name for s in pod.spec.image_pull_secrets] == ["reg"]
    pod = core.create_namespaced_pod(
        "default", _pod("b", serviceAccountName="quiet", automountServiceAccountToken=True)
    )
    assert pod.spec.volumes[0].name.startswith("kube-api-access-")
    pod = core.create_namespaced_pod("default", _pod("c", automountServiceAccountToken=False))
    assert pod.spec.volumes is None


def test_pod_naming_a_missing_service_account_is_forbidden(core) -> None:
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("default", _pod("p", serviceAccountName="ghost"))
    assert e.value.status == 403
    body = _status(e.value)
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'pods "p" is forbidden: error looking up service account default/ghost: '
        'serviceaccount "ghost" not found'
    )
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod(
            "default", {**_pod("", serviceAccountName="ghost"), "metadata": {"generateName": "p-"}}
        )
    assert _status(e.value)["message"].startswith("pods is forbidden: error looking up service account")


def test_priority_from_priority_classes(apiserver, core) -> None:
    sched = client.SchedulingV1Api(apiserver.api_client())
    sched.create_priority_class({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"})
    pod = core.create_namespaced_pod("default", _pod("a", priorityClassName="high"))
    assert (pod.spec.priority, pod.spec.preemption_policy) == (1000, "Never")
    pod = core.create_namespaced_pod("default", _pod("b", priorityClassName="system-node-critical"))
    assert (pod.spec.priority, pod.spec.preemption_policy) == (2000001000, "PreemptLowerPriority")
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("default", _pod("c", priorityClassName="nope"))
    assert e.value.status == 403
    assert _status(e.value)["message"] == 'pods "c" is forbidden: no PriorityClass with name nope was found'
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("default", _pod("d", priorityClassName="high", priority=7))
    assert _status(e.value)["message"] == (
        'pods "d" is forbidden: the integer value of priority (7) must not be provided in pod spec; '
        "priority admission controller computed 1000 from the given PriorityClass name"
    )
    sched.create_priority_class({"metadata": {"name": "base"}, "value": 10, "globalDefault": True})
    pod = core.create_namespaced_pod("default", _pod("e"))
    assert (pod.spec.priority_class_name, pod.spec.priority) == ("base", 10)
    assert pod.spec.preemption_policy == "PreemptLowerPriority"


# --- Pod updates ---------------------------------------------------------------------------------


def test_pod_update_may_change_only_the_updatable_fields(core) -> None:
    core.create_namespaced_pod("default", _pod("p", activeDeadlineSeconds=100))
    pod = core.patch_namespaced_pod(
        "p",
        "default",
        {"spec": {"containers": [{"name": "c", "image": "nginx:2"}], "activeDeadlineSeconds": 50}},
    )
    assert pod.spec.containers[0].image == "nginx:2" and pod.spec.active_deadline_seconds == 50
    pod = core.patch_namespaced_pod(
        "p",
        "default",
        {"spec": {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}},
    )
    # The list is replaced; DefaultTolerationSeconds adds the two defaults back, as on update in kube.
    assert [t.key for t in pod.spec.tolerations] == [
        "k",
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    for patch, field_path in (
        ({"spec": {"hostname": "h"}}, "Hostname"),
        ({"spec": {"restartPolicy": "Never"}}, "RestartPolicy"),
    ):
        with pytest.raises(ApiException) as e:
            core.patch_namespaced_pod("p", "default", patch)
        assert e.value.status == 422
        body = _status(e.value)
        assert body["reason"] == "Invalid"
        assert body["message"].startswith(
            'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
            "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
            "`spec.tolerations` (only additions to existing "
            "tolerations),`spec.terminationGracePeriodSeconds` "
            "(allow it to be set to 1 if it was previously negative)\n  core.PodSpec{\n"
        )
        assert f"\n- \t{field_path}: " in body["message"] and f"\n+ \t{field_path}: " in body["message"]
        assert body["details"]["causes"][0]["field"] == "spec"


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"spec": {"activeDeadlineSeconds": 200}},
            "spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value",
        ),
        (
            {"spec": {"activeDeadlineSeconds": None}},
            "spec.activeDeadlineSeconds: Invalid value: null: must not update from a "
            "positive integer to nil value",
        ),
        (
            {"spec": {"containers": [{"name": "c", "image": "nginx:1"}, {"name": "d", "image": "x"}]}},
            "spec.containers: Forbidden: pod updates may not add or remove containers",
        ),
        (
            {"spec": {"schedulingGates": [{"name": "g"}, {"name": "new"}]}},
            "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found "
            "new scheduling gate 'new'",
        ),
        (
            {"spec": {"tolerations": [{"key": "k", "operator": "Equal", "value": "v2"}]}},
            "spec.tolerations: Forbidden: existing toleration can not be modified except its "
            "tolerationSeconds",
        ),
    ],
)
def test_pod_update_rules(core, patch, message) -> None:
    core.create_namespaced_pod(
        "default",
        _pod(
            "p",
            activeDeadlineSeconds=100,
            schedulingGates=[{"name": "g"}],
            tolerations=[{"key": "k", "operator": "Equal", "value": "v"}],
        ),
    )
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_pod("p", "default", patch)
    assert e.value.status == 422
    assert _status(e.value)["message"] == f'Pod "p" is invalid: {message}'


def test_gated_pod_may_drop_gates_and_add_node_selector(core) -> None:
    core.create_namespaced_pod("default", _pod("p", schedulingGates=[{"name": "g"}], nodeSelector={"a": "1"}))
    pod = core.patch_namespaced_pod("p", "default", {"spec": {"nodeSelector": {"b": "2"}}})
    assert pod.spec.node_selector == {"a": "1", "b": "2"}
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_pod("p", "default", {"spec": {"nodeSelector": {"a": "9"}}})
    assert "only additions to spec.nodeSelector are allowed" in _status(e.value)["message"]
    pod = core.patch_namespaced_pod("p", "default", {"spec": {"schedulingGates": None}})
    assert pod.spec.scheduling_gates is None


def test_kubectl_apply_of_a_changed_pod_is_refused(kubectl, tmp_path) -> None:
    manifest = tmp_path / "pod.json"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", **_pod("web")}))
    kubectl.ok("apply", "-f", str(manifest))
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", **_pod("web", hostname="other")}))
    result = kubectl.run("apply", "-f", str(manifest))
    assert result.returncode != 0
    assert (
        'The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than'
        in result.stderr
    )


# --- Nodes ---------------------------------------------------------------------------------------


def test_node_without_spec_has_go_zero_values(raw) -> None:
    code, node = raw.json("POST", "/api/v1/nodes", {"metadata": {"name": "n1"}})
    assert code == 201
    assert node["spec"] == {}
    assert node["status"] == {
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
        "nodeInfo": {
            k: ""
            for k in (
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
        },
    }


def test_node_create_keeps_status_and_defaults_allocatable(raw, core) -> None:
    """Nodes may be created with a status (kubelets register that way)."""
    code, _ = raw.json(
        "POST",
        "/api/v1/nodes",
        {
            "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "2"}, "nodeInfo": {"kubeletVersion": "v1.32.0"}},
        },
    )
    assert code == 201
    node = core.read_node("n")
    assert node.status.capacity == {"cpu": "2"} and node.status.allocatable == {"cpu": "2"}
    assert node.status.node_info.kubelet_version == "v1.32.0" and node.status.node_info.machine_id == ""
    node = core.patch_node("n", {"spec": {"unschedulable": True}, "status": {"capacity": {"cpu": "9"}}})
    assert node.spec.unschedulable is True and node.status.capacity == {"cpu": "2"}


# --- Job status ----------------------------------------------------------------------------------

JOB = {
    "metadata": {"name": "j"},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x:1"}]}}},
}
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


def _cond(kind: str) -> dict:
    return {"type": kind, "status": "True", "lastTransitionTime": T1, "lastProbeTime": T1}


@pytest.mark.parametrize(
    ("status", "messages"),
    [
        (
            {"conditions": [_cond("Complete")]},
            [
                "status.completionTime: Required value: completionTime is required for Complete jobs",
                "status.conditions: Invalid value: cannot set Complete=True condition without the "
                "SuccessCriteriaMet=true condition",
                "status.startTime: Required value: startTime is required for finished job",
            ],
        ),
        (
            {"startTime": T0, "conditions": [_cond("Failed")]},
            [
                "status.conditions: Invalid value: cannot set Failed=True condition without the "
                "FailureTarget=true condition"
            ],
        ),
        (
            {
                "startTime": T1,
                "completionTime": T0,
                "conditions": [_cond("SuccessCriteriaMet"), _cond("Complete")],
            },
            [
                "status.completionTime: Invalid value: 2026-01-01 00:00:00 +0000 UTC: "
                "completionTime cannot be set before startTime"
            ],
        ),
        (
            {"startTime": T0, "completionTime": T1},
            [
                "status.completionTime: Invalid value: 2026-01-01 00:01:00 +0000 UTC: cannot set "
                "completionTime "
                "when there is no Complete=True condition"
            ],
        ),
        (
            {"active": 1, "ready": 2},
            ["status.ready: Invalid value: 2: cannot set more ready pods than active"],
        ),
    ],
)
def test_job_status_transitions_are_validated(apiserver, status, messages) -> None:
    batch = client.BatchV1Api(apiserver.api_client())
    batch.create_namespaced_job("default", JOB)
    with pytest.raises(ApiException) as e:
        batch.patch_namespaced_job_status("j", "default", {"status": status})
    assert e.value.status == 422
    body = _status(e.value)
    text = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    assert body["message"] == f'Job.batch "j" is invalid: {text}'


def test_job_completes_as_the_job_controller_reports_it(apiserver) -> None:
    batch = client.BatchV1Api(apiserver.api_client())
    batch.create_namespaced_job("default", JOB)
    batch.patch_namespaced_job_status("j", "default", {"status": {"startTime": T0, "active": 1}})
    done = {
        "startTime": T0,
        "active": 0,
        "succeeded": 1,
        "completionTime": T1,
        "conditions": [_cond("SuccessCriteriaMet"), _cond("Complete")],
    }
    job = batch.patch_namespaced_job_status("j", "default", {"status": done})
    assert [c.type for c in job.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    with pytest.raises(ApiException) as e:
        batch.patch_namespaced_job_status("j", "default", {"status": {"succeeded": 0}})
    assert (
        "status.succeeded: Invalid value: 0: cannot decrease the succeeded counter"
        in _status(e.value)["message"]
    )
    # A spec write leaves the status alone and is not held to the status rules.
    job = batch.patch_namespaced_job("j", "default", {"metadata": {"labels": {"x": "y"}}})
    assert job.metadata.labels["x"] == "y"
