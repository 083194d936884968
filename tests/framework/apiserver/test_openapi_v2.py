"""``/openapi/v2`` as a Swagger 2.0 document (3-7; kube-openapi ``pkg/handler``), and the OpenAPI
documents following CRD changes (they are cached per group-version)."""

from __future__ import annotations

import copy
import time
from typing import Any

import yaml

from framework.apiserver.registry.rest.typed import builtin_model

from .test_kubectl import WIDGET_CRD

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if "$ref" in node else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _tagged(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {
        (g["group"], g["version"], g["kind"]): schema
        for schema in doc["definitions"].values()
        for g in schema.get("x-kubernetes-group-version-kind", ())
    }


def _v2(raw) -> dict[str, Any]:
    status, doc = raw.json("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert status == 200
    return doc


def test_swagger_document_describes_every_builtin_kind(apiserver, raw):
    doc = _v2(raw)
    assert doc["swagger"] == "2.0" and doc["info"]["title"] == "Kubernetes"
    tagged = _tagged(doc)
    kinds = {(rt.group, rt.version, rt.kind) for rt in apiserver.registry.all() if builtin_model(rt)}
    assert len(kinds) >= 100
    assert kinds - set(tagged) == set()
    # Every $ref is a v2 one and resolves; no v3 allOf wrapper is left around a lone $ref.
    refs = _refs(doc)
    assert refs and all(r.startswith("#/definitions/") for r in refs)
    assert {r.removeprefix("#/definitions/") for r in refs} <= set(doc["definitions"])
    assert not [n for n in _refs(doc["definitions"]) if "components" in n]
    replicas = tagged[("apps", "v1", "Deployment")]["properties"]["spec"]
    assert "$ref" in replicas and "allOf" not in replicas
    spec = doc["definitions"][replicas["$ref"].removeprefix("#/definitions/")]
    assert spec["properties"]["replicas"]["type"] == "integer"
    assert spec["properties"]["replicas"]["description"].startswith("Number of desired pods.")
    pod = tagged[("", "v1", "Pod")]
    assert pod["description"].startswith("Pod is a collection of containers")


def test_paths_carry_the_collections_and_their_operations(raw):
    paths = _v2(raw)["paths"]
    deployments = paths["/apis/apps/v1/namespaces/{namespace}/deployments"]
    assert deployments["get"]["x-kubernetes-action"] == "list"
    assert deployments["post"]["x-kubernetes-action"] == "post"
    gvk = {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert deployments["get"]["x-kubernetes-group-version-kind"] == gvk
    patch = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert patch["responses"]["200"]["schema"]["$ref"].startswith("#/definitions/")
    assert set(paths["/api/v1/nodes/{name}"]) == {"get", "put", "patch", "delete"}  # cluster-scoped
    assert "/api/v1/namespaces/{namespace}/nodes" not in paths
    # Read-only kinds get only the verbs they have.
    assert set(paths["/api/v1/componentstatuses"]) == {"get"}


def _fields(data: bytes) -> list[tuple[int, bytes | int]]:
    """The top-level fields of a protobuf message (varint and length-delimited only, as gnostic's)."""
    out: list[tuple[int, bytes | int]] = []
    i = 0

    def varint() -> int:
        nonlocal i
        value = shift = 0
        while True:
            b = data[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value

    while i < len(data):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        elif key & 7 == 1:
            out.append((key >> 3, data[i : i + 8]))
            i += 8
        else:
            assert key & 7 == 2, f"wire type {key & 7}"
            n = varint()
            out.append((key >> 3, data[i : i + n]))
            i += n
    return out


def test_protobuf_asked_answers_the_document_as_gnostic_protobuf(raw):
    """kubectl's discovery client asks for gnostic's openapi.v2.Document; the answer's type is not the
    `@` form asked for, which Go's MIME parser rejects (3-7), and it holds the JSON document's
    definitions, each a named schema, with the group-version-kind extension kubectl looks kinds up by."""
    r = raw.request("GET", "/openapi/v2", headers={"Accept": PROTOBUF})
    assert r.status == 200, r.data[:200]
    assert r.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    top = dict(_fields(r.data))
    assert top[1] == b"2.0"  # swagger
    definitions = [dict(_fields(entry)) for _, entry in _fields(top[9])]  # Definitions → NamedSchema
    doc = _v2(raw)
    assert [d[1].decode() for d in definitions] == list(doc["definitions"])
    schemas = {d[1].decode(): d[2] for d in definitions}
    (pod,) = [n for n, s in doc["definitions"].items() if {"group": "", "version": "v1", "kind": "Pod"}
              in s.get("x-kubernetes-group-version-kind", ())]  # fmt: skip
    extensions = {  # Schema.vendor_extension (31): NamedAny{name, Any{yaml (2)}}
        e[1].decode(): yaml.safe_load(dict(_fields(e[2]))[2])
        for e in (dict(_fields(v)) for num, v in _fields(schemas[pod]) if num == 31)
    }
    assert {"group": "", "version": "v1", "kind": "Pod"} in extensions["x-kubernetes-group-version-kind"]
    # The same bytes again: the encoding is cached with the document.
    assert raw.request("GET", "/openapi/v2", headers={"Accept": PROTOBUF}).data == r.data


def test_plaintext_openapiv2_explain_of_builtin_kinds(kubectl):
    """`kubectl explain --output=plaintext-openapiv2` reads /openapi/v2 as protobuf (kube-openapi
    pkg/util/proto), which refuses the whole document over one schema it cannot walk."""
    out = kubectl.ok("explain", "--output=plaintext-openapiv2", "pod.spec.containers.ports")
    assert "KIND:     Pod" in out and "RESOURCE: ports <[]Object>" in out
    assert "containerPort\t<integer>" in out and "protocol\t<string>" in out
    out = kubectl.ok("explain", "--output=plaintext-openapiv2", "deployment.spec.replicas")
    assert "VERSION:  apps/v1" in out and "<integer>" in out
    out = kubectl.ok("explain", "--output=plaintext-openapiv2", "configmap.data")
    assert "<map[string]string>" in out
    r = kubectl.run("explain", "--output=plaintext-openapiv2", "pod.spec.nosuch")
    assert r.returncode != 0 and "nosuch" in r.stderr


def test_plaintext_openapiv2_explain_follows_a_crd(apiserver, kubectl):
    crd = copy.deepcopy(WIDGET_CRD)
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    # Objects without properties: of unknown fields, of any values, of strings.
    spec["properties"]["extra"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    spec["properties"]["anything"] = {"type": "object", "additionalProperties": True}
    spec["properties"]["labels"] = {"type": "object", "additionalProperties": {"type": "string"}}
    apiserver.install_crds([crd])
    out = kubectl.ok("explain", "--output=plaintext-openapiv2", "widget.spec")
    assert "KIND:     Widget" in out and "VERSION:  example.com/v1" in out
    assert "size\t<integer>" in out and "labels\t<map[string]string>" in out and "extra\t" in out
    # Built-in kinds still walk with the CRD's schema in the same document.
    assert "image\t<string>" in kubectl.ok("explain", "--output=plaintext-openapiv2", "pod.spec.containers")
    assert kubectl.run("delete", "crd", "widgets.example.com").returncode == 0
    _wait(
        lambda: kubectl.run("explain", "--output=plaintext-openapiv2", "widget.spec").returncode != 0,
        "explain to stop knowing the deleted CRD's kind",
    )


def _root_hashes(raw) -> dict[str, str]:
    status, root = raw.json("GET", "/openapi/v3")
    assert status == 200
    return {path: entry["serverRelativeURL"] for path, entry in root["paths"].items()}


def test_documents_follow_crd_create_update_and_delete(apiserver, raw):
    before = _root_hashes(raw)
    assert "apis/example.com/v1" not in before and "example.com.v1.Widget" not in _v2(raw)["definitions"]
    apiserver.install_crds([copy.deepcopy(WIDGET_CRD)])
    after = _root_hashes(raw)
    assert {k: v for k, v in after.items() if k != "apis/example.com/v1"} == before  # the rest is unchanged
    doc = _v2(raw)
    assert doc["definitions"]["example.com.v1.Widget"]["properties"]["spec"]["properties"]["size"] == {
        "type": "integer"
    }
    assert "get" in doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets"]

    # An update of the CRD's schema shows in both documents (and changes the v3 hash).
    status, crd = raw.json("GET", f"{CRDS}/widgets.example.com")
    assert status == 200
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    props["weight"] = {"type": "number", "description": "How heavy."}
    assert raw.json("PUT", f"{CRDS}/widgets.example.com", crd)[0] == 200
    _wait(lambda: "weight" in _widget_spec(raw), "the CRD update to show in /openapi/v2")
    assert _widget_spec(raw)["weight"] == {"type": "number", "description": "How heavy."}
    assert _root_hashes(raw)["apis/example.com/v1"] != after["apis/example.com/v1"]
    status, v3 = raw.json("GET", _root_hashes(raw)["apis/example.com/v1"])
    assert status == 200
    widget = v3["components"]["schemas"]["example.com.v1.Widget"]
    assert "weight" in widget["properties"]["spec"]["properties"]

    assert raw.request("DELETE", f"{CRDS}/widgets.example.com").status == 200
    _wait(lambda: "apis/example.com/v1" not in _root_hashes(raw), "the CRD's group to leave /openapi/v3")
    doc = _v2(raw)
    assert "example.com.v1.Widget" not in doc["definitions"]
    assert not [p for p in doc["paths"] if "/example.com/" in p]
    assert raw.json("GET", "/openapi/v3/apis/example.com/v1")[0] == 404


def _widget_spec(raw) -> dict[str, Any]:
    widget = _v2(raw)["definitions"].get("example.com.v1.Widget", {})
    spec: dict[str, Any] = widget.get("properties", {}).get("spec", {}).get("properties", {})
    return spec


def _wait(check, what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
