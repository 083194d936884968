"""``/openapi/v3`` through kubectl and plain HTTP: ``kubectl explain`` for built-in kinds and CRDs,
and ``kubectl apply --validate=strict|warn`` against the server's field validation (3-8, 4-5;
kubernetes/cli-runtime ``pkg/resource/query_param_verifier_v3.go``)."""

from __future__ import annotations

import copy
import os

import pytest

from framework.testing.kubectl import KUBECTL

from .test_kubectl import WIDGET_CRD, configmap, widget

pytestmark = pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")


def test_root_lists_every_served_group_version_and_documents_resolve(apiserver, raw):
    status, root = raw.json("GET", "/openapi/v3")
    assert status == 200
    assert "api/v1" in root["paths"] and "apis/apps/v1" in root["paths"]
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    status, doc = raw.json("GET", url)
    assert status == 200
    tagged = [s for s in doc["components"]["schemas"].values() if s.get("x-kubernetes-group-version-kind")]
    assert {"group": "apps", "version": "v1", "kind": "Deployment"} in [
        s["x-kubernetes-group-version-kind"][0] for s in tagged
    ]
    patch_ops = [p["patch"] for p in doc["paths"].values() if "patch" in p]
    assert all("fieldValidation" in [q["name"] for q in op["parameters"]] for op in patch_ops)
    assert raw.json("GET", "/openapi/v3/apis/nosuch.example.com/v1")[0] == 404


def test_explain_builtin_field(kubectl):
    out = kubectl.ok("explain", "pod.spec.containers")
    assert "KIND:       Pod" in out
    assert "FIELD: containers <[]Container>" in out
    assert "imagePullPolicy\t<string>" in out and "ports\t<[]ContainerPort>" in out
    # The field's description, then its type's (the client's model documentation), as kubectl prints
    # them against a real cluster; and the fields' own (the client's models document every field but
    # those whose type is another model, which explain shows as `<no description>`).
    assert "List of containers belonging to the pod." in out
    assert "A single application container that you want to run within a pod." in out
    assert "Arguments to the entrypoint." in out and "Image pull policy." in out
    out = kubectl.ok("explain", "deployment.spec.replicas")
    assert "FIELD: replicas <integer>" in out
    assert "Number of desired pods." in " ".join(out.split())
    assert "Pod is a collection of containers" in " ".join(kubectl.ok("explain", "pod").split())
    assert kubectl.run("explain", "pod.spec.nosuch").returncode != 0


def test_explain_custom_resource(apiserver, kubectl):
    apiserver.install_crds([copy.deepcopy(WIDGET_CRD)])
    out = kubectl.ok("explain", "widget.spec")
    assert "GROUP:      example.com" in out and "KIND:       Widget" in out
    assert "size\t<integer>" in out and "color\t<string>" in out


def test_apply_validate_strict_and_warn(apiserver, kubectl):
    bad = configmap("strict", {"a": "1"})
    bad["spec"] = {"x": 1}
    path = kubectl.write("bad.yaml", bad)
    r = kubectl.run("apply", "--validate=strict", "-f", path)
    assert r.returncode != 0
    assert 'unknown field "spec"' in r.stderr
    assert kubectl.run("get", "configmap", "strict").returncode != 0
    r = kubectl.run("apply", "--validate=warn", "-f", path)
    assert r.returncode == 0, r.stderr
    assert 'unknown field "spec"' in r.stderr
    apiserver.install_crds([copy.deepcopy(WIDGET_CRD)])
    w = widget("w1", {"size": 1, "bogus": True})
    r = kubectl.run("apply", "--validate=strict", "-f", kubectl.write("w.yaml", w))
    assert r.returncode != 0 and 'unknown field "spec.bogus"' in r.stderr


def test_explain_gardener_project_spec(apiserver, kubectl):
    root = os.path.dirname(os.path.abspath(__file__)) + "/../../.."
    apiserver.install_crds(os.path.join(root, "manifests/crds/core.gardener.cloud_projects.yaml"))
    out = kubectl.ok("explain", "project.spec")
    assert "GROUP:      core.gardener.cloud" in out and "KIND:       Project" in out
    assert "Spec defines the project properties." in out
    assert 'The project namespace; "garden" or a name starting with "garden-".' in out  # a CRD field's own
    assert "members\t<[]Object>" in out and "namespace\t<string>" in out
