"""A JSON body that repeats a key, as kube-apiserver's strict decoder (sigs.k8s.io/json) reports it: the
last value wins, with ``Warning: 299 - "duplicate field \\"metadata.name\\""`` (fieldValidation=Warn, the
default), a 400 ``strict decoding error: duplicate field ...`` under Strict, silently under Ignore (4-5)."""

from __future__ import annotations

import json

import orjson
import pytest
from kubernetes import client

from framework.testing.apiserver import gojson

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
