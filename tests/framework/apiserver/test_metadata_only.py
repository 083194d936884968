"""Metadata-only responses: PartialObjectMetadata(List) on get, list and watch."""

from __future__ import annotations

import json

from kubernetes import client

META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


def call(api: client.ApiClient, path: str, accept: str) -> dict:
    """A raw call through the official client (its generated methods cannot ask for metadata only)."""
    method, url, headers, body, _ = api.param_serialize(
        "GET", path, header_params={"Accept": accept}, auth_settings=["BearerToken"]
    )
    resp = api.call_api(method, url, header_params=headers, body=body)
    resp.read()
    return json.loads(resp.data)


def test_get_and_list_metadata_only(apiserver, core):
    core.create_namespaced_secret(
        "default", {"metadata": {"name": "s", "labels": {"a": "b"}}, "stringData": {"k": "v"}}
    )
    api = apiserver.api_client()
    obj = call(api, "/api/v1/namespaces/default/secrets/s", META + ",application/json")
    assert obj["kind"] == "PartialObjectMetadata" and obj["apiVersion"] == "meta.k8s.io/v1"
    assert obj["metadata"]["labels"] == {"a": "b"} and "data" not in obj
    lst = call(api, "/api/v1/namespaces/default/secrets", META_LIST + ",application/json")
    assert lst["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in lst["items"]] == ["s"]
    assert all(set(i) == {"kind", "apiVersion", "metadata"} for i in lst["items"])
    assert lst["metadata"]["resourceVersion"]


def test_watch_metadata_only(apiserver, core, raw):
    lst = core.list_namespaced_config_map("default")
    core.create_namespaced_config_map("default", {"metadata": {"name": "w"}, "data": {"big": "x" * 100}})
    r2 = raw.http.request(
        "GET",
        apiserver.url
        + f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={lst.metadata.resource_version}",
        headers={"Authorization": f"Bearer {apiserver.token}", "Accept": META},
        preload_content=False,
        timeout=5,
    )
    line = b""
    for chunk in r2.stream(256, decode_content=False):
        line += chunk
        if b"\n" in line:
            break
    r2.close()
    ev = json.loads(line.split(b"\n")[0])
    assert ev["type"] == "ADDED"
    assert ev["object"]["kind"] == "PartialObjectMetadata" and "data" not in ev["object"]
    assert ev["object"]["metadata"]["name"] == "w"
