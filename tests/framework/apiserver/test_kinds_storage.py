"""Storage and resource-limit kinds with their own strategy (issue 18 item 2): v1 PersistentVolumeClaim,
PersistentVolume and LimitRange, storage.k8s.io StorageClass. Defaults, validation with Go's field
paths and messages, and kubectl's printer columns, through the official typed client and kubectl."""

from __future__ import annotations

from typing import Any

from kubernetes import client


def claim(name: str, **spec: Any) -> dict:
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {**base, **spec},
    }


def test_pvc_defaults_validation_and_printer(module_api, module_kubectl, plain, invalid):
    core = client.CoreV1Api(module_api)
    made = plain(
        core.create_namespaced_persistent_volume_claim("default", claim("data", storageClassName="fast"))
    )
    assert made["spec"]["volumeMode"] == "Filesystem" and made["status"] == {"phase": "Pending"}
    assert invalid(
        core.create_namespaced_persistent_volume_claim, "default", claim("none", accessModes=[])
    ) == (
        'PersistentVolumeClaim "none" is invalid: spec.accessModes: Required value: '
        "at least 1 access mode is required"
    )
    body = claim("nosize", resources={})
    assert "spec.resources[storage]: Required value" in invalid(
        core.create_namespaced_persistent_volume_claim, "default", body
    )
    body = claim("mode", accessModes=["ReadWriteSometimes"])
    assert (
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
    ) in invalid(core.create_namespaced_persistent_volume_claim, "default", body)
    # Only requests may change after creation.
    grown = core.patch_namespaced_persistent_volume_claim(
        "data", "default", {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    )
    assert grown.spec.resources.requests["storage"] == "2Gi"
    assert (
        "spec: Forbidden: spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims"
    ) in invalid(
        core.patch_namespaced_persistent_volume_claim,
        "data",
        "default",
        {"spec": {"storageClassName": "slow"}},
    )
    rows = [line.split() for line in module_kubectl.ok("get", "pvc", "data", "-o", "wide").splitlines()]
    header = "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE VOLUMEMODE"
    assert rows[0] == header.split()
    assert rows[1][:2] == ["data", "Pending"] and rows[1][2:4] == ["fast", "<unset>"]
    assert rows[1][-1] == "Filesystem"
    core.delete_namespaced_persistent_volume_claim("data", "default")


def test_pv_defaults_validation_and_printer(module_api, module_kubectl, plain, invalid):
    core = client.CoreV1Api(module_api)
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1"},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "hostPath": {"path": "/data"},
            "storageClassName": "manual",
        },
    }
    made = plain(core.create_persistent_volume(body))
    assert made["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert made["spec"]["volumeMode"] == "Filesystem" and made["status"] == {"phase": "Pending"}
    typeless = {
        **body,
        "metadata": {"name": "pv2"},
        "spec": {k: v for k, v in body["spec"].items() if k != "hostPath"},
    }
    assert (
        invalid(core.create_persistent_volume, typeless)
        == 'PersistentVolume "pv2" is invalid: spec: Required value: must specify a volume type'
    )
    two = {**body, "metadata": {"name": "pv3"}, "spec": {**body["spec"], "nfs": {"server": "s", "path": "/"}}}
    assert "spec.nfs: Forbidden: may not specify more than 1 volume type" in invalid(
        core.create_persistent_volume, two
    )
    nocap = {**body, "metadata": {"name": "pv4"}, "spec": {**body["spec"], "capacity": {}}}
    assert "spec.capacity: Required value" in invalid(core.create_persistent_volume, nocap)
    # Status is written through /status: a binder would set Bound.
    core.patch_persistent_volume_status("pv1", {"status": {"phase": "Available"}})
    rows = [line.split() for line in module_kubectl.ok("get", "pv", "pv1").splitlines()]
    assert rows[0][:4] == ["NAME", "CAPACITY", "ACCESS", "MODES"]
    assert rows[1][:6] == ["pv1", "5Gi", "RWO,ROX", "Retain", "Available", "manual"]
    core.delete_persistent_volume("pv1")


def test_storageclass_defaults_immutability_and_default_marker(
    module_api, module_dyn, module_kubectl, plain, invalid
):
    storage = client.StorageV1Api(module_api)
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3"},
    }
    made = plain(storage.create_storage_class(body))
    assert (made["reclaimPolicy"], made["volumeBindingMode"]) == ("Delete", "Immediate")
    assert "parameters: Forbidden: updates to parameters are forbidden." in invalid(
        storage.patch_storage_class, "fast", {"parameters": {"type": "io2"}}
    )
    missing = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "none"}}
    classes = module_dyn.resources.get(api_version="storage.k8s.io/v1", kind="StorageClass")
    assert invalid(classes.create, body=missing) == (
        'StorageClass.storage.k8s.io "none" is invalid: provisioner: Required value'
    )
    rows = [line.split() for line in module_kubectl.ok("get", "sc").splitlines()]
    assert rows[0] == [
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ]
    assert rows[1][:6] == ["fast", "(default)", "ebs.csi.aws.com", "Delete", "Immediate", "false"]
    storage.delete_storage_class("fast")


def test_limitrange_defaults_and_validation(module_api, module_kubectl, plain, invalid):
    core = client.CoreV1Api(module_api)
    body = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]},
    }
    made = plain(core.create_namespaced_limit_range("default", body))
    item = made["spec"]["limits"][0]
    assert item["default"] == {"cpu": "2"}
    assert item["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}
    bad = {
        **body,
        "metadata": {"name": "bad"},
        "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]},
    }
    assert 'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1' in invalid(
        core.create_namespaced_limit_range, "default", bad
    )
    pod = {
        **body,
        "metadata": {"name": "pod"},
        "spec": {"limits": [{"type": "Pod", "default": {"cpu": "1"}}]},
    }
    assert "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'" in invalid(
        core.create_namespaced_limit_range, "default", pod
    )
    rows = [line.split() for line in module_kubectl.ok("get", "limits").splitlines()]
    assert rows[0] == ["NAME", "CREATED", "AT"] and rows[1][0] == "limits"
    assert rows[1][1] == made["metadata"]["creationTimestamp"]
    core.delete_namespaced_limit_range("limits", "default")
