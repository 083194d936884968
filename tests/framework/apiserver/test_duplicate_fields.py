"""A JSON body that repeats a key, as kube-apiserver's strict decoder (sigs.k8s.io/json) reports it: the
last value wins, with ``Warning: 299 - "duplicate field \\"metadata.name\\""`` (fieldValidation=Warn, the
default), a 400 ``strict decoding error: duplicate field ...`` under Strict (for a patch the patch
handler's 422), silently under Ignore (4-5)."""

from __future__ import annotations

import json

import orjson
import pytest
from kubernetes import client

from framework.apiserver.encoding import gojson

CM = "/api/v1/namespaces/default/configmaps"


def _body(name: str, extra: str = "") -> bytes:
    # Two "a" keys in data, and (for some tests) something else repeated: JSON text, not a dict.
    return (
        f'{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"{extra}}},'
        '"data":{"a":"1","a":"2"}}'
    ).encode()


def test_paths_as_go_names_them():
    assert gojson.duplicate_fields(b'{"a":1,"b":{"c":{"d":1},"c":{"d":2}},"a":2,"a":3}') == ["a", "b.c"]
    assert gojson.duplicate_fields(b'{"a":{"x":1},"b":[1,{"y":1,"y":1}]}') == ["b[1].y"]
    assert gojson.duplicate_fields(b"[1]") == [] and gojson.duplicate_fields(b'{"a":1}') == []


def test_create_warns_and_keeps_the_last_value(raw):
    r = raw.request(
        "POST", CM, raw=_body("dup-warn", ',"name":"dup-warn"'), headers={"Content-Type": "application/json"}
    )
    assert r.status == 201, r.data
    warning = r.headers.get("Warning", "")
    assert 'duplicate field \\"metadata.name\\"' in warning and 'duplicate field \\"data.a\\"' in warning
    assert json.loads(r.data)["data"] == {"a": "2"}


@pytest.mark.parametrize("validation, code", [("Strict", 400), ("Ignore", 201)])
def test_strict_refuses_and_ignore_is_silent(raw, validation, code):
    name = f"dup-{validation.lower()}"
    r = raw.request(
        "POST",
        f"{CM}?fieldValidation={validation}",
        raw=_body(name),
        headers={"Content-Type": "application/json"},
    )
    assert r.status == code, r.data
    if code == 400:
        status = json.loads(r.data)
        assert status["reason"] == "BadRequest"
        assert status["message"] == 'strict decoding error: duplicate field "data.a"'
        assert raw.request("GET", f"{CM}/{name}").status == 404  # nothing stored
    else:
        assert "Warning" not in r.headers and json.loads(r.data)["data"] == {"a": "2"}


def test_update_through_the_official_client(apiserver, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "dup-upd"}, "data": {"a": "0"}})
    api: client.ApiClient = core.api_client
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    headers["Authorization"] = f"Bearer {apiserver.token}"  # call_api leaves auth to its callers
    url = f"{apiserver.url}{CM}/dup-upd"
    # The client's own connection pool (TLS, CA): call_api would JSON-encode a str body once more.
    pool = api.rest_client.pool_manager
    r = pool.request("PUT", url, headers=headers, body=_body("dup-upd"))
    assert r.status == 200, r.data
    assert 'duplicate field \\"data.a\\"' in r.headers.get("Warning", "")
    assert core.read_namespaced_config_map("dup-upd", "default").data == {"a": "2"}
    body = _body("dup-upd").replace(b'"2"', b'"3"')
    r = pool.request("PUT", url + "?fieldValidation=Strict", headers=headers, body=body)
    assert r.status == 400 and 'strict decoding error: duplicate field \\"data.a\\"' in r.data.decode()
    assert core.read_namespaced_config_map("dup-upd", "default").data == {"a": "2"}  # unchanged


@pytest.mark.parametrize(
    "text, expected",
    [
        (b'{"a":1,"a":2}', ["a"]),
        (b'{"image":"nginx:1.27","t":"2024-01-01T00:00:00Z"}', []),  # colons in strings, no repeat
        (b'{"s":"\\"a\\":","s":1}', ["s"]),  # an escaped quote and colon inside a value
        (b'{"a" : 1, "b":[{"k":"v:w","k":"x"}]}', ["b[0].k"]),
        (b'{"a":{"b":1},"c":[1,{"d":{}}]}', []),
    ],
)
def test_the_quick_check_agrees_with_the_full_scan(text: bytes, expected: list[str]) -> None:
    """Given the parsed body, a body that repeats no key skips the slow parse; one that does is still
    reported exactly as the full scan reports it."""
    assert gojson.duplicate_fields(text, orjson.loads(text)) == expected
    assert gojson.duplicate_fields(text) == expected


def _patch(raw, name: str, body: bytes, ctype: str, validation: str | None = None):
    query = f"?fieldValidation={validation}" if validation else ""
    return raw.request("PATCH", f"{CM}/{name}{query}", raw=body, headers={"Content-Type": ctype})


@pytest.mark.parametrize("ctype", ["application/merge-patch+json", "application/strategic-merge-patch+json"])
def test_a_patch_that_repeats_a_key_warns_and_strict_refuses(raw, core, ctype):
    """k8s.io/apiserver handlers/patch.go decodes merge and strategic patches strictly under Warn and
    Strict: their own repeated keys are reported as a create's are."""
    name = "dup-" + ctype.split("/")[1].split("-")[0]
    core.create_namespaced_config_map("default", {"metadata": {"name": name}, "data": {"a": "0"}})
    r = _patch(raw, name, b'{"data":{"a":"1","a":"2"}}', ctype)
    assert r.status == 200, r.data
    assert 'duplicate field \\"data.a\\"' in r.headers.get("Warning", "")
    assert core.read_namespaced_config_map(name, "default").data == {"a": "2"}  # the last value won
    r = _patch(raw, name, b'{"data":{"a":"3","a":"4"}}', ctype, "Strict")
    assert r.status == 422, r.data  # the patch handler's Invalid on "patch", quoting the result
    assert json.loads(r.data)["message"].endswith('": strict decoding error: duplicate field "data.a"')
    assert core.read_namespaced_config_map(name, "default").data == {"a": "2"}  # unchanged
    r = _patch(raw, name, b'{"data":{"a":"5","a":"6"}}', ctype, "Ignore")
    assert r.status == 200 and "Warning" not in r.headers
    assert core.read_namespaced_config_map(name, "default").data == {"a": "6"}


def test_a_json_patch_names_its_operations_repeated_keys(raw, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "dup-jp"}, "data": {"a": "0"}})
    body = b'[{"op":"replace","path":"/data/a","value":"1","value":"2"}]'
    r = _patch(raw, "dup-jp", body, "application/json-patch+json")
    assert r.status == 200, r.data
    assert 'json patch duplicate field \\"[0].value\\"' in r.headers.get("Warning", "")
    assert core.read_namespaced_config_map("dup-jp", "default").data == {"a": "2"}


def test_a_patch_of_a_missing_object_is_not_found_before_its_keys_are_checked(raw):
    r = _patch(raw, "dup-none", b'{"data":{"a":"1","a":"2"}}', "application/merge-patch+json", "Strict")
    assert r.status == 404, r.data


YAML_CM = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: NAME
data:
  a: "1"
  a: "2"
  b: x
  b: y
"""
YAML_LINES = ['line 7: key "a" already set in map', 'line 9: key "b" already set in map']


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_a_yaml_body_that_repeats_keys_gets_goyamls_lines(raw, core, method):
    """sigs.k8s.io/yaml's strict conversion: one ``yaml: unmarshal errors:`` error naming each repeated
    key's line, one warning per line under Warn (the handlers' parseYAMLWarnings)."""
    name = f"yaml-{method.lower()}"
    path = CM if method == "POST" else f"{CM}/{name}"
    if method == "PUT":
        core.create_namespaced_config_map("default", {"metadata": {"name": name}})
    body = YAML_CM.replace(b"NAME", name.encode())
    headers = {"Content-Type": "application/yaml"}
    r = raw.request(method, path + "?fieldValidation=Strict", raw=body, headers=headers)
    assert r.status == 400, r.data
    assert json.loads(r.data)["message"] == (
        "strict decoding error: yaml: unmarshal errors:\n  " + "\n  ".join(YAML_LINES)
    )
    r = raw.request(method, path, raw=body, headers=headers)
    assert r.status in (200, 201), r.data
    warnings = [w.split('"', 1)[1].rsplit('"', 1)[0] for w in r.headers["Warning"].split(", 299")]
    assert [w.replace('\\"', '"') for w in warnings] == YAML_LINES
    assert json.loads(r.data)["data"] == {"a": "2", "b": "y"}  # the last value wins
    r = raw.request("PUT", f"{CM}/{name}?fieldValidation=Ignore", raw=body, headers=headers)
    assert r.status == 200 and "Warning" not in r.headers


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_strict_names_repeated_and_unknown_fields_together(raw, core, method):
    """One strict decoding error for a built-in kind, as kube-apiserver's decoder reports both."""
    name = f"both-{method.lower()}"
    if method == "PUT":
        core.create_namespaced_config_map("default", {"metadata": {"name": name}})
    body = _body(name).replace(b'"data"', b'"bogus":1,"data"')
    path = (CM if method == "POST" else f"{CM}/{name}") + "?fieldValidation=Strict"
    r = raw.request(method, path, raw=body, headers={"Content-Type": "application/json"})
    assert r.status == 400, r.data
    assert json.loads(r.data)["message"] == (
        'strict decoding error: duplicate field "data.a", unknown field "bogus"'
    )
