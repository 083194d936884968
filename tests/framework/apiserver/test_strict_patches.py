"""Strict field validation of JSON, merge and strategic merge patches as k8s.io/apiserver's patch
handler does it (``handlers/patch.go``, 4-5): what the patch repeats (``duplicate field``, a JSON patch
operation's ``json patch unknown field``/``json patch duplicate field``) and the unknown fields of its
result are one ``strict decoding error``, under Strict a ``422 Invalid`` on the field ``patch`` quoting
the patched object, under Warn (the default) one warning each in that order, under Ignore nothing.
The bodies and expected texts are those of kube-apiserver's ``field_validation_test.go``."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.apiserver import APIServer

from .test_crd import widget, widget_crd

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
MERGE = "application/merge-patch+json"
SMP = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"

MERGE_BODY = (
    '{"spec":{"unknown1":"val1","unknownDupe":"valDupe","unknownDupe":"valDupe2","paused":true,'
    '"paused":false,"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:latest",'
    '"unknownNested":"val1","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}'
)
MERGE_ERRORS = [
    'duplicate field "spec.unknownDupe"',
    'duplicate field "spec.paused"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
]
JSON_PATCH_BODY = (
    '[{"op":"add","path":"/spec/unknown1","value":"val1","foo":"bar"},'
    '{"op":"add","path":"/spec/unknown2","path":"/spec/unknown3","value":"val1"},'
    '{"op":"add","path":"/spec/unknownDupe","value":"valDupe"},'
    '{"op":"add","path":"/spec/unknownDupe","value":"valDupe2"},'
    '{"op":"add","path":"/spec/paused","value":true},'
    '{"op":"add","path":"/spec/paused","value":false},'
    '{"op":"add","path":"/spec/template/spec/containers/0/unknownNested","value":"val1"},'
    '{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Always"},'
    '{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Never"}]'
)
JSON_PATCH_ERRORS = [
    'json patch unknown field "[0].foo"',
    'json patch duplicate field "[1].path"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknown3"',
    'unknown field "spec.unknownDupe"',
]
DUPLICATES_ONLY = (
    '{"spec":{"paused":true,"paused":false,"template":{"spec":{"containers":[{"name":"nginx",'
    '"image":"nginx:latest","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}'
)
DUPLICATES_ONLY_ERRORS = [
    'duplicate field "spec.paused"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
]
CASES = [
    (MERGE, MERGE_BODY, MERGE_ERRORS),
    (SMP, MERGE_BODY, MERGE_ERRORS),
    (JSON_PATCH, JSON_PATCH_BODY, JSON_PATCH_ERRORS),
    (MERGE, DUPLICATES_ONLY, DUPLICATES_ONLY_ERRORS),
    (SMP, DUPLICATES_ONLY, DUPLICATES_ONLY_ERRORS),
]


@pytest.fixture(scope="module")
def server() -> Iterator[APIServer]:
    with APIServer() as s:
        yield s


@pytest.fixture(scope="module")
def http(server: APIServer) -> urllib3.PoolManager:
    return urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)


def send(server: APIServer, http: urllib3.PoolManager, method: str, path: str, body: str, ctype: str):
    headers = {"Authorization": f"Bearer {server.token}", "Content-Type": ctype}
    return http.request(method, server.url + path, body=body.encode(), headers=headers)


_names = itertools.count()


def deployment(server: APIServer, http: urllib3.PoolManager) -> str:
    name = f"d{next(_names)}"
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "nginx"}},
        "spec": {
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always"}]
                },
            },
        },
    }
    r = send(server, http, "POST", DEPLOYMENTS, json.dumps(body), "application/json")
    assert r.status == 201, r.data
    return f"{DEPLOYMENTS}/{name}"


def warnings(response) -> list[str]:
    """The texts of ``Warning: 299 - "..."`` headers, in order."""
    texts = []
    for header in response.headers.getlist("Warning"):
        for part in header.split('299 - "')[1:]:
            texts.append(part.rsplit('"', 1)[0].replace('\\"', '"'))
    return texts


@pytest.mark.parametrize("ctype, body, expected", CASES)
def test_strict_is_one_422_quoting_the_patched_object(server, http, ctype, body, expected):
    path = deployment(server, http)
    before = json.loads(send(server, http, "GET", path, "", "application/json").data)
    r = send(server, http, "PATCH", path + "?fieldValidation=Strict", body, ctype)
    assert r.status == 422, r.data
    status = json.loads(r.data)
    text = "strict decoding error: " + ", ".join(expected)
    assert status["reason"] == "Invalid" and status["message"].startswith(
        ' "" is invalid: patch: Invalid value: "{'
    )
    assert status["message"].endswith('": ' + text)
    [cause] = status["details"]["causes"]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    quoted = json.loads(cause["message"].removeprefix("Invalid value: ").rsplit(": strict decoding", 1)[0])
    assert json.loads(quoted)["metadata"]["name"] == before["metadata"]["name"]
    after = json.loads(send(server, http, "GET", path, "", "application/json").data)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]  # nothing stored


@pytest.mark.parametrize("validation", ["Warn", ""])
@pytest.mark.parametrize("ctype, body, expected", CASES)
def test_warn_is_one_warning_each_in_order(server, http, ctype, body, expected, validation):
    path = deployment(server, http)
    query = f"?fieldValidation={validation}" if validation else ""
    r = send(server, http, "PATCH", path + query, body, ctype)
    assert r.status == 200, r.data
    assert warnings(r) == expected
    assert "unknown1" not in json.loads(r.data)["spec"]


@pytest.mark.parametrize("ctype, body, expected", CASES)
def test_ignore_is_silent(server, http, ctype, body, expected):
    path = deployment(server, http)
    r = send(server, http, "PATCH", path + "?fieldValidation=Ignore", body, ctype)
    assert r.status == 200 and "Warning" not in r.headers
    assert json.loads(r.data)["spec"]["paused"] is False


def test_the_official_client_gets_the_422(server):
    core = client.CoreV1Api(server.api_client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map(
            "cm", "default", {"data": {"a": "2"}, "bogus": 1}, field_validation="Strict"
        )
    status = json.loads(e.value.body)
    assert (e.value.status, status["reason"]) == (422, "Invalid")
    assert status["message"].endswith('": strict decoding error: unknown field "bogus"')
    assert core.read_namespaced_config_map("cm", "default").data == {"a": "1"}
    patched = core.patch_namespaced_config_map("cm", "default", {"data": {"a": "3"}, "bogus": 1})
    assert patched.data == {"a": "3"}  # Warn by default: dropped, and served


def test_a_custom_resource_patch_is_refused_with_its_schemas_unknown_fields(server, http):
    server.install_crds([widget_crd()])
    base = "/apis/example.com/v1/namespaces/default/widgets"
    body = json.dumps(widget("w", size=1))
    assert send(server, http, "POST", base, body, "application/json").status == 201
    patch = '{"metadata":{"bogus":1},"spec":{"size":2,"size":3,"extra":true}}'
    r = send(server, http, "PATCH", f"{base}/w?fieldValidation=Strict", patch, MERGE)
    assert r.status == 422, r.data
    assert json.loads(r.data)["message"].endswith(
        '": strict decoding error: duplicate field "spec.size", unknown field "metadata.bogus", '
        'unknown field "spec.extra"'
    )
    r = send(server, http, "PATCH", f"{base}/w", patch, MERGE)
    assert r.status == 200 and json.loads(r.data)["spec"] == {"size": 3, "color": "red"}
    assert warnings(r) == [
        'duplicate field "spec.size"',
        'unknown field "metadata.bogus"',
        'unknown field "spec.extra"',
    ]


APPLY_BODY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
spec:
  paused: false
  paused: true
  selector: {matchLabels: {app: nginx}}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        imagePullPolicy: Never
        imagePullPolicy: Always
"""
APPLY_DUPLICATES = [
    'line 7: key "paused" already set in map',
    'line 17: key "imagePullPolicy" already set in map',
]


def _apply(server, http, name: str, body: str, validation: str):
    query = f"?fieldManager=mgr&fieldValidation={validation}"
    path = f"{DEPLOYMENTS}/{name}{query}"
    return send(server, http, "PATCH", path, body.replace("NAME", name), "application/apply-patch+yaml")


def test_apply_of_repeated_yaml_keys_under_strict_is_goyamls_400(server, http):
    r = _apply(server, http, "apply-strict", APPLY_BODY, "Strict")
    assert r.status == 400, r.data
    status = json.loads(r.data)
    assert status["reason"] == "BadRequest"
    assert status["message"] == (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  "
        + "\n  ".join(APPLY_DUPLICATES)
    )
    assert send(server, http, "GET", f"{DEPLOYMENTS}/apply-strict", "", "application/json").status == 404


@pytest.mark.parametrize("validation", ["Warn", ""])
def test_apply_of_repeated_yaml_keys_warns_and_the_last_value_wins(server, http, validation):
    name = f"apply-warn{validation.lower()}"
    r = _apply(server, http, name, APPLY_BODY, validation)
    assert r.status == 201, r.data
    assert warnings(r) == APPLY_DUPLICATES
    assert json.loads(r.data)["spec"]["paused"] is True
    r = _apply(server, http, name, APPLY_BODY, validation)  # on the existing object: the same
    assert r.status == 200 and warnings(r) == APPLY_DUPLICATES


APPLY_TYPE = "application/apply-patch+yaml"


def test_apply_of_repeated_keys_in_json_names_their_lines(server, http):
    body = '{"apiVersion": "v1", "kind": "ConfigMap",\n "metadata": {"name": "cm-apply"},\n'
    body += ' "data": {"a": "1", "a": "2"}}'
    path = "/api/v1/namespaces/default/configmaps/cm-apply?fieldManager=mgr"
    r = send(server, http, "PATCH", path, body, APPLY_TYPE)
    assert r.status == 201 and warnings(r) == ['line 3: key "a" already set in map']
    assert json.loads(r.data)["data"] == {"a": "2"}
    r = send(server, http, "PATCH", path + "&fieldValidation=Ignore", body, APPLY_TYPE)
    assert r.status == 200 and "Warning" not in r.headers


def test_apply_conflicts_come_before_repeated_keys(server, http):
    """The apply runs first: its conflict is the answer, not the strict decoding error."""
    assert _apply(server, http, "apply-conflict", APPLY_BODY, "Warn").status == 201
    body = APPLY_BODY.replace("image: nginx:latest", "image: nginx:other").replace("NAME", "apply-conflict")
    query = "?fieldManager=other&fieldValidation=Strict"
    r = send(server, http, "PATCH", f"{DEPLOYMENTS}/apply-conflict{query}", body, APPLY_TYPE)
    assert r.status == 409, r.data
