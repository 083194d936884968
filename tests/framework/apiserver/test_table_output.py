"""Server-side printing over HTTP (4-2, 4-3): Table for list, get and watch, CRD printer columns, kubectl."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
TABLE_V1BETA1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
KUBECTL_ACCEPT = f"{TABLE_V1},{TABLE_V1BETA1},application/json"


def get(raw, path: str, accept: str = KUBECTL_ACCEPT) -> tuple[int, dict]:
    r = raw.request("GET", path, headers={"Accept": accept})
    return r.status, json.loads(r.data)


def test_list_is_a_table_with_the_kinds_columns(raw):
    """4-3: kubectl's Accept gets a Table; Namespace columns as kube-apiserver prints them."""
    code, table = get(raw, "/api/v1/namespaces")
    assert code == 200 and (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert table["metadata"]["resourceVersion"]
    cols = [(c["name"], c["type"], c["format"], c["priority"]) for c in table["columnDefinitions"]]
    assert cols == [("Name", "string", "name", 0), ("Status", "string", "", 0), ("Age", "string", "", 0)]
    rows = {row["cells"][0]: row for row in table["rows"]}
    assert set(rows) == {"default", "kube-node-lease", "kube-public", "kube-system"}
    assert rows["default"]["cells"][1] == "Active"
    obj = rows["default"]["object"]
    assert (obj["kind"], obj["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert obj["metadata"]["name"] == "default" and "spec" not in obj


def test_default_columns_include_object_and_versions(raw):
    """4-3: default Name / Created At columns, includeObject, v1beta1 Tables, a single-object get."""
    code, role = raw.json(
        "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {"metadata": {"name": "r"}}
    )
    assert code == 201
    code, table = get(raw, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles")
    assert code == 200
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    [row] = table["rows"]
    assert row["cells"] == ["r", role["metadata"]["creationTimestamp"]]

    code, table = get(
        raw, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/r?includeObject=Object"
    )
    assert code == 200 and len(table["rows"]) == 1
    assert table["rows"][0]["object"]["kind"] == "Role"
    assert table["metadata"]["resourceVersion"] == table["rows"][0]["object"]["metadata"]["resourceVersion"]
    code, table = get(raw, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles?includeObject=None")
    assert table["rows"][0]["object"] is None
    code, status = get(raw, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles?includeObject=All")
    assert code == 400 and status["reason"] == "BadRequest" and "includeObject" in status["message"]
    code, table = get(raw, "/api/v1/namespaces/default", accept=TABLE_V1BETA1)
    assert code == 200 and table["apiVersion"] == "meta.k8s.io/v1beta1"


def test_unsupported_conversions_and_writes(raw):
    """4-1, 4-2: an unknown ``as=`` alone is 406; writes answer plain JSON whatever the Accept."""
    r = raw.request(
        "GET", "/api/v1/namespaces", headers={"Accept": "application/json;as=Foo;v=v1;g=meta.k8s.io"}
    )
    status = json.loads(r.data)
    assert r.status == 406 and status["reason"] == "NotAcceptable"
    assert status["message"].startswith("only the following media types are accepted: ")
    r = raw.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        body={"metadata": {"name": "w"}},
        headers={"Accept": KUBECTL_ACCEPT},
    )
    assert r.status == 201 and json.loads(r.data)["kind"] == "ConfigMap"


def test_custom_resource_printer_columns(apiserver, raw):
    """4-3: Name, then the CRD version's additionalPrinterColumns (JSONPath per row), Age present once."""
    apiserver.install_crds(ROOT / "manifests" / "crds" / "core.gardener.cloud_projects.yaml")
    code, _ = raw.json(
        "POST",
        "/apis/core.gardener.cloud/v1beta1/projects",
        {
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Project",
            "metadata": {"name": "demo"},
            "spec": {"namespace": "garden-demo", "owner": {"kind": "User", "name": "alice"}},
        },
    )
    assert code == 201
    code, table = get(raw, "/apis/core.gardener.cloud/v1beta1/projects")
    assert code == 200
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Namespace",
        "Status",
        "Owner",
        "Creator",
        "Age",
    ]
    [row] = table["rows"]
    name, namespace, status, owner, creator, age = row["cells"]
    assert (name, namespace, status, owner, creator) == ("demo", "garden-demo", None, "alice", None)
    assert age.endswith("s")  # a human-readable age, e.g. "0s"


def test_watch_table_headers_only_on_the_first_event(apiserver, raw, core):
    """4-3: a Table watch sends one-row Tables; column definitions with the first event only."""
    lst = core.list_namespaced_config_map("default")
    core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    core.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
    r = raw.http.request(
        "GET",
        apiserver.url
        + f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={lst.metadata.resource_version}",
        headers={"Authorization": f"Bearer {apiserver.token}", "Accept": KUBECTL_ACCEPT},
        preload_content=False,
        timeout=5,
    )
    buf = b""
    try:
        for chunk in r.stream(256, decode_content=False):
            buf += chunk
            if buf.count(b"\n") >= 2:
                break
    finally:
        r.close()
    first, second = (json.loads(line) for line in buf.split(b"\n")[:2])
    assert first["type"] == second["type"] == "ADDED"
    assert first["object"]["kind"] == "Table"
    assert [c["name"] for c in first["object"]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert first["object"]["rows"][0]["cells"][:2] == ["a", 1]
    assert second["object"]["columnDefinitions"] is None
    assert second["object"]["rows"][0]["cells"][:2] == ["b", 0]


def test_kubectl_get_prints_the_printer_columns(apiserver, kubectl):
    """4-3, 23-1: ``kubectl get projects`` shows the Project CRD's columns, as against a real cluster."""
    apiserver.install_crds(ROOT / "manifests" / "crds" / "core.gardener.cloud_projects.yaml")
    kubectl.ok(
        "apply",
        "-f",
        kubectl.write(
            "p.yaml",
            {
                "apiVersion": "core.gardener.cloud/v1beta1",
                "kind": "Project",
                "metadata": {"name": "demo"},
                "spec": {"namespace": "garden-demo"},
            },
        ),
    )
    lines = [line.split() for line in kubectl.ok("get", "projects").splitlines()]
    assert lines[0] == ["NAME", "NAMESPACE", "STATUS", "OWNER", "CREATOR", "AGE"]
    assert lines[1][:2] == ["demo", "garden-demo"]
