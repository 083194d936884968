"""Request decoding within kube-apiserver's bounds (docs/apiserver.md, "Decoding limits").

- YAML aliases are expanded under goyaml.v2's budget: an alias bomb is refused with ``yaml: document
  contains excessive aliasing`` at once, and the server answers the next request;
- JSON and YAML nest up to Go's ``maxNestingDepth`` (10,000 levels, the object's own braces counted):
  such objects are stored, read back in every form, watched, patched, persisted, and read by the
  framework's client and informers; one level more is a 400 and nothing is stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import urllib3

from framework.apiserver import APIServer
from framework.cache import SharedInformerFactory
from framework.client import Client
from framework.testing import eventually

GROUP = "example.com"
DEEPS = f"/apis/{GROUP}/v1/namespaces/default/deeps"
CMS = "/api/v1/namespaces/default/configmaps"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
METADATA = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
MANIFESTS = Path(__file__).resolve().parents[3] / "manifests" / "crds"
# The deepest spec.x kube-apiserver takes: the object's braces and spec's make levels 1 and 2.
MAX_X = 10_000 - 2

DEEP_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"deeps.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "deeps", "kind": "Deep"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                        },
                    }
                },
            }
        ],
    },
}


def nested(levels: int, leaf: str = '"leaf"') -> str:
    """``levels`` arrays around ``leaf``, as text (building it as a value would recurse)."""
    return "[" * levels + leaf + "]" * levels


def deep_body(name: str, levels: int) -> bytes:
    return (
        f'{{"apiVersion":"{GROUP}/v1","kind":"Deep","metadata":{{"name":"{name}"}},'
        f'"spec":{{"x":{nested(levels)}}}}}'
    ).encode()


def depth(value: object) -> int:
    """How many arrays are nested in ``value`` (iteratively)."""
    n = 0
    while isinstance(value, list):
        n += 1
        value = value[0]
    return n


def bomb() -> str:
    """The alias bomb of issue 31: eight anchors of ten aliases each, 10^8 leaves in ``data``."""
    lines = ["x0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 8)]
    return "\n".join([*lines, "data: *a7", ""])


@pytest.fixture
def deeps(apiserver):
    apiserver.install_crds([DEEP_CRD])
    return apiserver


def send(raw, method, path, data: bytes | str, ctype="application/json", accept=None, timeout=30.0):
    headers = {"Content-Type": ctype}
    if accept:
        headers["Accept"] = accept
    body = data.encode() if isinstance(data, str) else data
    return raw.request(method, path, raw=body, headers=headers, timeout=timeout)


def message(r) -> str:
    status = json.loads(r.data)
    assert status["kind"] == "Status" and status["reason"] == "BadRequest", status
    return status["message"]


# --- YAML aliases -----------------------------------------------------------------------------------


def test_alias_bomb_is_refused_and_the_server_answers_the_next_request(raw):
    text = bomb()
    assert len(text) < 500
    # A client timeout bounds the test: the server that expanded this would take minutes.
    r = send(raw, "POST", CMS, text, "application/yaml", timeout=20)
    assert r.status == 400
    assert "yaml: document contains excessive aliasing" in message(r)
    assert message(r).startswith("the object provided is unrecognized (must be of type ConfigMap): ")
    after = raw.request("GET", CMS, timeout=5)
    assert after.status == 200
    assert [cm["metadata"]["name"] for cm in json.loads(after.data)["items"]] == ["kube-root-ca.crt"]


def test_alias_bomb_in_an_apply_patch_and_delete_options(raw):
    r = send(raw, "PATCH", f"{CMS}/c?fieldManager=m", bomb(), "application/apply-patch+yaml", timeout=20)
    assert r.status == 400 and message(r) == "error decoding YAML: yaml: document contains excessive aliasing"
    assert raw.request("GET", f"{CMS}/c").status == 404
    code, _ = raw.json("POST", CMS, {"metadata": {"name": "d"}})
    assert code == 201
    r = send(raw, "DELETE", f"{CMS}/d", bomb(), "application/yaml", timeout=20)
    assert r.status == 400 and "excessive aliasing" in message(r)
    assert raw.request("GET", f"{CMS}/d").status == 200  # not deleted


def test_moderate_anchors_aliases_and_merges_work(raw):
    text = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: anchors
  labels: &common {app: web, tier: front}
  annotations:
    <<: *common
    tier: back
data:
  first: &greeting hello
  second: *greeting
  when: 2024-01-01T00:00:00Z
  1: one
"""
    text += "".join(f"  copy{i}: *greeting\n" for i in range(200))
    r = send(raw, "POST", CMS, text, "application/yaml")
    assert r.status == 201, r.data
    cm = json.loads(r.data)
    assert cm["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert cm["metadata"]["annotations"] == {"app": "web", "tier": "back"}
    assert cm["data"]["second"] == cm["data"]["copy199"] == "hello"
    assert cm["data"]["when"] == "2024-01-01T00:00:00Z"  # timestamps stay text, as in sigs.k8s.io/yaml
    assert cm["data"]["1"] == "one"  # keys become strings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: &a [*a]\n", "yaml: anchor 'a' value contains itself"),
        ("a: *nowhere\n", "yaml: unknown anchor 'nowhere' referenced"),
        ("a: [b\n", "yaml: line 2:"),
    ],
)
def test_broken_yaml_is_a_400(raw, text, expected):
    r = send(raw, "POST", CMS, text, "application/yaml")
    assert r.status == 400 and expected in message(r)


# --- nesting depth ----------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [251, 1000, MAX_X])
def test_deep_custom_resource_is_stored_and_served_in_every_form(deeps, raw, levels):
    r = send(raw, "POST", DEEPS, deep_body("d", levels))
    assert r.status == 201, r.data[:300]
    assert depth(json.loads(r.data)["spec"]["x"]) == levels
    got = raw.request("GET", f"{DEEPS}/d")
    assert got.status == 200 and depth(json.loads(got.data)["spec"]["x"]) == levels
    listed = raw.request("GET", DEEPS)
    assert listed.status == 200 and depth(json.loads(listed.data)["items"][0]["spec"]["x"]) == levels
    table = raw.request("GET", DEEPS, headers={"Accept": TABLE})
    assert table.status == 200 and json.loads(table.data)["rows"][0]["cells"][0] == "d"
    full_rows = raw.request("GET", f"{DEEPS}?includeObject=Object", headers={"Accept": TABLE})
    assert depth(json.loads(full_rows.data)["rows"][0]["object"]["spec"]["x"]) == levels
    meta = raw.request("GET", f"{DEEPS}/d", headers={"Accept": METADATA})
    assert meta.status == 200 and "spec" not in json.loads(meta.data)
    as_yaml = raw.request("GET", f"{DEEPS}/d", headers={"Accept": "application/yaml"})
    assert as_yaml.status == 200 and as_yaml.data.count(b"- ") >= levels
    watch = raw.stream(f"{DEEPS}?watch=1&resourceVersion=0")
    try:
        event = json.loads(watch.readline())
    finally:
        watch.release_conn()
    assert event["type"] == "ADDED" and depth(event["object"]["spec"]["x"]) == levels


@pytest.mark.parametrize("levels", [1000, MAX_X])
def test_deep_custom_resource_takes_every_patch(deeps, raw, levels):
    assert send(raw, "POST", DEEPS, deep_body("d", levels)).status == 201
    merged = send(raw, "PATCH", f"{DEEPS}/d", '{"spec":{"y":1}}', "application/merge-patch+json")
    assert merged.status == 200, merged.data[:300]
    assert depth(json.loads(merged.data)["spec"]["x"]) == levels
    ops = f'[{{"op":"replace","path":"/spec/y","value":{nested(levels - 1)}}}]'
    patched = send(raw, "PATCH", f"{DEEPS}/d", ops, "application/json-patch+json")
    assert patched.status == 200, patched.data[:300]
    obj = json.loads(patched.data)
    assert depth(obj["spec"]["y"]) == levels - 1 and depth(obj["spec"]["x"]) == levels
    applied = send(
        raw,
        "PATCH",
        f"{DEEPS}/d?fieldManager=deep",
        deep_body("d", levels).replace(b'"x":', b'"z":'),
        "application/apply-patch+yaml",
    )
    assert applied.status == 200, applied.data[:300]
    assert depth(json.loads(applied.data)["spec"]["z"]) == levels
    # A patch that would nest one level deeper than Go decodes is refused, the object unchanged.
    too_deep = '{"spec":{"y":' + nested(MAX_X + 1, "1") + "}}"
    r = send(raw, "PATCH", f"{DEEPS}/d", too_deep, "application/merge-patch+json")
    assert r.status == 400 and message(r) == "error decoding patch: invalid character '[' exceeded max depth"


@pytest.mark.parametrize("levels", [MAX_X + 1, 1_000_000])
def test_deeper_than_go_decodes_is_a_400_and_stores_nothing(deeps, raw, levels):
    r = send(raw, "POST", DEEPS, deep_body("d", levels))
    assert r.status == 400
    assert message(r) == (
        "the object provided is unrecognized (must be of type Deep): couldn't get version/kind; "
        'json parse error: invalid character \'[\' exceeded max depth ({"apiVersion":"example.com/v1" ...)'
    )
    assert raw.request("GET", f"{DEEPS}/d").status == 404
    # The same document as YAML (JSON is YAML): goyaml.v2's limit, in its words.
    r = send(raw, "POST", DEEPS, deep_body("d", levels), "application/yaml")
    assert r.status == 400 and "yaml: exceeded max depth of 10000" in message(r)
    assert raw.request("GET", f"{DEEPS}/d").status == 404


def test_deep_yaml_body_is_accepted_up_to_the_limit(deeps, raw):
    # Block style for the envelope, flow style for the value: libyaml alone stops at 1,000 levels.
    text = f"apiVersion: {GROUP}/v1\nkind: Deep\nmetadata:\n  name: y\nspec:\n  x: {nested(MAX_X, 'leaf')}\n"
    r = send(raw, "POST", DEEPS, text, "application/yaml")
    assert r.status == 201, r.data[:300]
    assert depth(json.loads(raw.request("GET", f"{DEEPS}/y").data)["spec"]["x"]) == MAX_X


def test_deep_object_survives_a_restart_with_a_data_dir(tmp_path):
    first = APIServer(data_dir=tmp_path).start()
    try:
        first.install_crds([DEEP_CRD])
        http = urllib3.PoolManager(ca_certs=str(first.ca_path), retries=False)
        headers = {"Authorization": f"Bearer {first.token}", "Content-Type": "application/json"}
        r = http.request("POST", first.url + DEEPS, body=deep_body("p", MAX_X), headers=headers)
        assert r.status == 201
    finally:
        first.stop()
    second = APIServer(data_dir=tmp_path).start()
    try:
        http = urllib3.PoolManager(ca_certs=str(second.ca_path), retries=False)
        headers = {"Authorization": f"Bearer {second.token}"}
        got = http.request("GET", second.url + f"{DEEPS}/p", headers=headers)
        assert got.status == 200 and depth(json.loads(got.data)["spec"]["x"]) == MAX_X
    finally:
        second.stop()


def test_deep_unknown_field_of_a_project_is_pruned_not_a_500(apiserver, raw):
    apiserver.install_crds(MANIFESTS)
    projects = "/apis/core.gardener.cloud/v1beta1/projects"
    body = '{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Project","metadata":{"name":"p"},"zz":'
    body += nested(251) + "}"
    strict = send(raw, "POST", projects + "?fieldValidation=Strict", body)
    assert strict.status == 400 and message(strict) == 'strict decoding error: unknown field "zz"'
    r = send(raw, "POST", projects, body)
    assert r.status == 201, r.data[:300]
    assert "zz" not in json.loads(r.data)
    listed = raw.request("GET", projects)
    assert listed.status == 200 and [p["metadata"]["name"] for p in json.loads(listed.data)["items"]] == ["p"]


def test_deep_value_a_secret_binding_preserves_is_stored_and_listed(apiserver, raw):
    apiserver.install_crds(MANIFESTS)  # its schema keeps unknown fields at the top level
    bindings = "/apis/core.gardener.cloud/v1beta1/namespaces/default/secretbindings"
    body = '{"apiVersion":"core.gardener.cloud/v1beta1","kind":"SecretBinding","metadata":{"name":"b"},'
    body += '"provider":{"type":"local"},"secretRef":{"name":"s","namespace":"default"},"zz":'
    body += nested(251) + "}"
    r = send(raw, "POST", bindings + "?fieldValidation=Strict", body)
    assert r.status == 201, r.data[:300]
    listed = raw.request("GET", bindings)
    assert listed.status == 200 and depth(json.loads(listed.data)["items"][0]["zz"]) == 251


def test_framework_client_and_informer_read_deep_objects(deeps, raw):
    assert send(raw, "POST", DEEPS, deep_body("before", MAX_X)).status == 201
    client = Client.from_kubeconfig(deeps.kubeconfig, qps=0)
    factory = SharedInformerFactory(client)
    try:
        assert depth(client.get(f"{GROUP}/v1", "Deep", "before", "default")["spec"]["x"]) == MAX_X
        informer = factory.informer_for(f"{GROUP}/v1", "Deep", "default")
        factory.start()
        assert all(factory.wait_for_cache_sync(10).values())
        assert depth(informer.indexer.get_by_key("default/before")["spec"]["x"]) == MAX_X
        assert send(raw, "POST", DEEPS, deep_body("after", 1000)).status == 201
        eventually(lambda: informer.indexer.get_by_key("default/after") is not None)
        assert depth(informer.indexer.get_by_key("default/after")["spec"]["x"]) == 1000
        # A client write of a deep object (encoded beyond orjson's 254 levels).
        obj = client.get(f"{GROUP}/v1", "Deep", "after", "default")
        obj["spec"]["w"] = obj["spec"]["x"]
        updated = client.update(obj)
        assert depth(updated["spec"]["w"]) == 1000
    finally:
        assert factory.shutdown(5)
        client.close()
