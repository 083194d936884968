"""Serving, discovery, negotiation, patches, fault injection, restart and the CLI (spec §1-4, §8, §10)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.testing import APIServer


def test_health_and_version(raw):
    """1-6, 3-1, 2-9."""
    for path in ("/healthz", "/livez", "/readyz"):
        r = raw.request("GET", path)
        assert (r.status, r.data, r.headers["Content-Type"].split(";")[0]) == (200, b"ok", "text/plain")
    for path in ("/version", "/version/"):
        code, v = raw.json("GET", path)
        assert code == 200 and v["minor"] == "32" and v["major"] == "1"
        assert all(
            isinstance(v[k], str)
            for k in (
                "gitVersion",
                "gitCommit",
                "gitTreeState",
                "buildDate",
                "goVersion",
                "compiler",
                "platform",
            )
        )


def test_discovery_documents(apiserver, raw):
    """3-2..3-5 and the client's strict models."""
    _, api = raw.json("GET", "/api/")
    assert api["versions"] == ["v1"] and api["serverAddressByClientCIDRs"][0]["clientCIDR"] == "0.0.0.0/0"
    _, core = raw.json("GET", "/api/v1/")
    entries = {r["name"]: r for r in core["resources"]}
    assert entries["namespaces"]["namespaced"] is False and entries["configmaps"]["shortNames"] == ["cm"]
    assert entries["namespaces/status"]["verbs"] == ["get", "patch", "update"]
    assert all("singularName" in r and "kind" in r for r in core["resources"])
    _, group = raw.json("GET", "/apis/coordination.k8s.io/")
    assert group["preferredVersion"] == {"groupVersion": "coordination.k8s.io/v1", "version": "v1"}
    assert raw.json("GET", "/apis/nope.example.com")[0] == 404
    resources = client.CoreV1Api(apiserver.api_client()).get_api_resources()
    assert any(r.name == "events" for r in resources.resources)
    assert client.VersionApi(apiserver.api_client()).get_code().minor == "32"


def test_aggregated_discovery(raw):
    """3-6: kubectl's Accept gets apidiscovery.k8s.io/v2 (v2beta1 when only that is asked for); plain
    application/json still gets the legacy documents, never a 406."""
    accept = (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
    )
    r = raw.request("GET", "/api", headers={"Accept": accept})
    assert r.status == 200
    assert r.headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    core = json.loads(r.data)
    assert core["kind"] == "APIGroupDiscoveryList" and core["apiVersion"] == "apidiscovery.k8s.io/v2"
    (v1,) = core["items"][0]["versions"]
    assert v1["version"] == "v1" and v1["freshness"] == "Current"
    by_name = {res["resource"]: res for res in v1["resources"]}
    ns = by_name["namespaces"]
    assert ns["scope"] == "Cluster" and ns["responseKind"] == {
        "group": "",
        "version": "v1",
        "kind": "Namespace",
    }
    assert {s["subresource"] for s in ns["subresources"]} == {"status", "finalize"}
    assert by_name["configmaps"]["shortNames"] == ["cm"] and by_name["configmaps"]["scope"] == "Namespaced"
    token = next(s for s in by_name["serviceaccounts"]["subresources"] if s["subresource"] == "token")
    assert token["responseKind"] == {
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
    }
    r = raw.request("GET", "/apis", headers={"Accept": accept.replace(";v=v2;", ";v=v9;")})
    groups = json.loads(r.data)
    assert groups["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert "apps" in {g["metadata"]["name"] for g in groups["items"]}
    r = raw.request("GET", "/apis", headers={"Accept": "application/json"})
    assert r.status == 200 and r.headers["Content-Type"] == "application/json"
    assert json.loads(r.data)["kind"] == "APIGroupList"


def test_health_checks_verbose(raw):
    r = raw.request("GET", "/livez?verbose")
    lines = r.data.decode().splitlines()
    assert r.status == 200 and lines[0] == "[+]ping ok" and lines[-1] == "livez check passed"
    assert "[+]etcd ok" in lines
    r = raw.request("GET", "/readyz?verbose&exclude=etcd")
    lines = r.data.decode().splitlines()
    assert (
        "[+]informer-sync ok" in lines
        and "[+]etcd excluded: ok" in lines
        and lines[-1] == "readyz check passed"
    )
    assert raw.request("GET", "/readyz/ping").data == b"ok"
    assert raw.request("GET", "/livez/nope").status == 404
    assert raw.request("GET", "/healthz").data == b"ok"


def test_openapi_v2(raw):
    """3-7."""
    r = raw.request(
        "GET", "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    )
    assert r.status == 200 and "@" not in r.headers["Content-Type"] and r.data.startswith(b"\n\x032.0")
    code, doc = raw.json("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert code == 200 and doc["swagger"] == "2.0"
    code, root = raw.json("GET", "/openapi/v3")  # 3-8: served (test_openapi_v3.py)
    assert code == 200 and "api/v1" in root["paths"]


def test_patch_types(core, raw):
    """8-1..8-6: strategic (set union, $deleteFromPrimitiveList), merge, JSON patch test op, conflicts."""
    core.create_namespaced_config_map(
        "default", {"metadata": {"name": "p", "finalizers": ["a.io/x"]}, "data": {"k": "v"}}
    )
    out = core.patch_namespaced_config_map(
        "p", "default", {"metadata": {"finalizers": ["b.io/y"]}, "data": {"k": None, "n": "1"}}
    )
    # Upstream normalizeElementOrder puts patch items before server-only ones.
    assert out.metadata.finalizers == ["b.io/y", "a.io/x"] and out.data == {"n": "1"}
    out = core.patch_namespaced_config_map(
        "p", "default", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.io/x"]}}
    )
    assert out.metadata.finalizers == ["b.io/y"]
    rv = out.metadata.resource_version
    path = "/api/v1/namespaces/default/configmaps/p"
    r = raw.request(
        "PATCH",
        path,
        raw=json.dumps([{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}]).encode(),
        headers={"Content-Type": "application/json-patch+json"},
    )
    st = json.loads(r.data)
    assert (
        r.status == 422 and st["message"] == "the server rejected our request due to an error in our request"
    )
    r = raw.request(
        "PATCH",
        path,
        raw=b'{"metadata":{"resourceVersion":"1"},"data":{"z":"1"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status == 409 and json.loads(r.data)["reason"] == "Conflict"
    r = raw.request("PATCH", path, raw=b'{"data":{"z":"1"}}', headers={"Content-Type": "text/plain"})
    assert r.status == 415
    r = raw.request("PATCH", path, raw=b"[1,2]", headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 400
    assert core.read_namespaced_config_map("p", "default").metadata.resource_version == rv  # nothing changed


def test_namespace_status_and_finalize(core, raw):
    """10-1, 10-4, 7-7: /status keeps spec; /finalize changes only spec.finalizers; main PUT keeps both."""
    ns = core.create_namespace({"metadata": {"name": "sub"}, "spec": {"finalizers": ["example.com/x"]}})
    assert ns.spec.finalizers == ["example.com/x", "kubernetes"]
    body = raw.json("GET", "/api/v1/namespaces/sub")[1]
    body["spec"]["finalizers"] = []
    body["status"]["phase"] = "Terminating"
    code, out = raw.json("PUT", "/api/v1/namespaces/sub", body)
    assert (
        code == 200
        and out["spec"]["finalizers"] == ["example.com/x", "kubernetes"]
        and out["status"]["phase"] == "Active"
    )
    code, out = raw.json(
        "PUT", "/api/v1/namespaces/sub/finalize", {**body, "spec": {"finalizers": ["kubernetes"]}}
    )
    assert code == 200 and out["spec"]["finalizers"] == ["kubernetes"] and out["status"]["phase"] == "Active"


def test_inject_failure(apiserver, core, raw):
    """Fault injection: count, namespace filter, Retry-After on 429, until cleared."""
    apiserver.inject_failure("list", "configmaps", 429, count=1, retry_after=1, namespace="default")
    code, _ = raw.json("GET", "/api/v1/namespaces/kube-system/configmaps")
    assert code == 200  # another namespace is not affected
    r = raw.request("GET", "/api/v1/namespaces/default/configmaps")
    assert r.status == 429 and r.headers["Retry-After"] == "1"
    assert json.loads(r.data)["details"]["retryAfterSeconds"] == 1
    assert raw.json("GET", "/api/v1/namespaces/default/configmaps")[0] == 200  # count exhausted
    # The official client honours Retry-After on 429 by itself.
    apiserver.inject_failure("list", "configmaps", 429, count=1, retry_after=1)
    core.list_namespaced_config_map("default")
    apiserver.inject_failure("create", "leases.coordination.k8s.io", 500, count=None)
    coord = client.CoordinationV1Api(apiserver.api_client())
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}
    for _ in range(3):
        with pytest.raises(ApiException) as e:
            coord.create_namespaced_lease("default", lease)
        assert e.value.status == 500
    apiserver.clear_failures()
    assert coord.create_namespaced_lease("default", lease).metadata.name == "l"


def test_restart_keeps_data(apiserver, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "kept"}})
    port = apiserver.port
    apiserver.restart()
    assert apiserver.port == port
    assert core.read_namespaced_config_map("kept", "default").metadata.name == "kept"


def test_plain_http_and_kubeconfig(tmp_path):
    """1-1, 1-2: plain HTTP works; the kubeconfig loads in the official client."""
    with APIServer(scheme="http", kubeconfig=tmp_path / "kc") as server:
        assert server.url.startswith("http://")
        kc = yaml.safe_load(Path(server.kubeconfig).read_text())
        assert kc["users"][0]["user"]["token"] == server.token
        api = config.new_client_from_config(config_file=server.kubeconfig)
        assert client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
    with APIServer() as server:
        api = config.new_client_from_config(config_file=server.kubeconfig)
        assert client.CoreV1Api(api).read_namespace("kube-system").metadata.name == "kube-system"


CRD_YAML = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


def test_cli_runs_until_sigterm(tmp_path):
    """The CLI installs CRDs, writes the kubeconfig only once it answers, and exits 0 on SIGTERM."""
    kc = tmp_path / "kubeconfig"
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "gadget.yaml").write_text(CRD_YAML)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "framework.apiserver",
            "--port",
            "0",
            "--kubeconfig",
            str(kc),
            "--crds",
            str(tmp_path / "crds"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while not kc.exists():
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        api = config.new_client_from_config(config_file=str(kc))
        groups = client.ApisApi(api).get_api_versions()
        assert "example.com" in [g.name for g in groups.groups]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not os.path.exists(str(kc) + ".tmp")


def test_cli_port_in_use_fails(apiserver, tmp_path):
    """A port that is taken: non-zero exit, no kubeconfig."""
    kc = tmp_path / "kc"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "framework.apiserver",
            "--port",
            str(apiserver.port),
            "--kubeconfig",
            str(kc),
        ],
        capture_output=True,
        timeout=30,
    )
    assert res.returncode != 0 and not kc.exists()
