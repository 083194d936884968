"""The generated strategic-merge catalog (``catalog/strategic_merge.json``) and the patches it drives.

- the committed file is well-formed and covers every kind of ``catalog/resources.json``; every served
  built-in strategy carries its kind's keys, custom resources none;
- regenerating it from the kubernetes/api, apimachinery, apiextensions-apiserver and kube-aggregator
  mirrors gives the committed file (skipped without the mirrors, as in CI);
- strategic merge patches sent by the official client and kubectl merge the lists the Go structs tag,
  also for kinds served by the generic strategy (CSINode ``spec.drivers``), and replace the others.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from kubernetes import client

from framework.apiserver.catalog import builtin_resources
from framework.apiserver.catalog.strategic_merge import merge_keys

ROOT = Path(__file__).resolve().parents[3]
CATALOG = ROOT / "framework/apiserver/catalog/strategic_merge.json"
MIRRORS = Path("/work/.mirror")
METADATA = {"metadata.finalizers": ("merge", None), "metadata.ownerReferences": ("merge", "uid")}


def test_catalog_is_well_formed_and_covers_every_kind() -> None:
    catalog = json.loads(CATALOG.read_text())
    assert catalog["generator"] == "hack/gen-strategic-merge-catalog.py"
    for kind, keys in catalog["kinds"].items():
        for path, (strategy, key) in keys.items():
            assert strategy == "merge" and (key is None or isinstance(key, str)), (kind, path)
            assert path and not path.startswith(".") and ".." not in path, (kind, path)
    for r in builtin_resources():
        keys = merge_keys(r.api_version, r.kind)
        assert METADATA.items() <= keys.items(), (r.api_version, r.kind)
    with pytest.raises(KeyError):
        merge_keys("example.com/v1", "Widget")


def test_served_strategies_carry_their_kinds_keys(apiserver) -> None:
    types = {(rt.api_version, rt.kind): rt for rt in apiserver.registry.all()}
    for (api_version, kind), rt in types.items():
        if rt.persisted and not rt.is_custom:
            assert rt.smp == merge_keys(api_version, kind), (api_version, kind)
    # The Go tags decide, not whether the kind has a status: CSR conditions are +listType=map only.
    assert "status.conditions" not in types[("certificates.k8s.io/v1", "CertificateSigningRequest")].smp
    assert types[("v1", "PersistentVolumeClaim")].smp["status.conditions"] == ("merge", "type")
    assert types[("storage.k8s.io/v1", "CSINode")].smp["spec.drivers"] == ("merge", "name")


@pytest.mark.skipif(not (MIRRORS / "kubernetes+api/repo").is_dir(), reason="no kubernetes/api mirror (CI)")
def test_catalog_regenerates_to_the_committed_file() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_strategic_merge_catalog", ROOT / "hack/gen-strategic-merge-catalog.py"
    )
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen
    spec.loader.exec_module(gen)
    try:
        fresh = gen.render(gen.generate(MIRRORS))
    except FileNotFoundError as e:
        pytest.skip(f"a mirror is missing: {e}")
    assert fresh == CATALOG.read_text()


def test_generic_kind_merges_its_tagged_list(apiserver) -> None:
    """CSINode has no module of its own: ``spec.drivers`` still merges by ``name``, as upstream."""
    storage = client.StorageV1Api(apiserver.api_client())
    drivers = [{"name": "a.csi.example.com", "nodeID": "n1"}]
    storage.create_csi_node({"metadata": {"name": "n1"}, "spec": {"drivers": drivers}})
    patched = storage.patch_csi_node(
        "n1", {"spec": {"drivers": [{"name": "b.csi.example.com", "nodeID": "n1"}]}}
    )
    assert sorted(d.name for d in patched.spec.drivers) == ["a.csi.example.com", "b.csi.example.com"]
    deleted = storage.patch_csi_node(
        "n1", {"spec": {"drivers": [{"name": "a.csi.example.com", "$patch": "delete"}]}}
    )
    assert [d.name for d in deleted.spec.drivers] == ["b.csi.example.com"]


def test_status_lists_merge_as_tagged(core) -> None:
    """Pod ``status.podIPs`` merge by ``ip``; ``status.containerStatuses`` (untagged) replace."""
    core.create_namespaced_pod(
        "default", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    )
    running = {"name": "c", "image": "nginx", "imageID": "", "ready": True, "restartCount": 0}
    core.patch_namespaced_pod_status(
        "p", "default", {"status": {"podIPs": [{"ip": "10.0.0.1"}], "containerStatuses": [running]}}
    )
    other = {**running, "name": "d", "ready": False}
    pod = core.patch_namespaced_pod_status(
        "p", "default", {"status": {"podIPs": [{"ip": "fd00::1"}], "containerStatuses": [other]}}
    )
    assert sorted(i.ip for i in pod.status.pod_ips) == ["10.0.0.1", "fd00::1"]
    assert [s.name for s in pod.status.container_statuses] == ["d"]


def test_kubectl_patch_merges_a_statefulset_template(apiserver, kubectl) -> None:
    apps = client.AppsV1Api(apiserver.api_client())
    template = {
        "metadata": {"labels": {"app": "db"}},
        "spec": {
            "containers": [{"name": "db", "image": "postgres:17", "env": [{"name": "A", "value": "1"}]}]
        },
    }
    apps.create_namespaced_stateful_set(
        "default",
        {
            "metadata": {"name": "db"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}, "template": template},
        },
    )
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "db", "env": [{"name": "B", "value": "2"}]}]}}}
    }
    kubectl.ok("patch", "statefulset", "db", "-p", json.dumps(patch))
    (container,) = apps.read_namespaced_stateful_set("db", "default").spec.template.spec.containers
    assert container.image == "postgres:17"
    assert sorted(e.name for e in container.env) == ["A", "B"]
