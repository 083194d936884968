"""DeleteOptions of the wrong JSON types, in the body or the query, are kube-apiserver's 400 with Go's
decoding text (``handlers/delete.go`` answers its decoder's error as a BadRequest), never a 5xx, and
nothing is deleted; the serializer reads ``apiVersion``/``kind`` first (``SimpleMetaFactory.Interpret``)."""

from __future__ import annotations

import itertools
import json

import pytest
from kubernetes import client

NS = "default"
CM = f"/api/v1/namespaces/{NS}/configmaps"
_names = itertools.count()

INTERPRET = "couldn't get version/kind; json parse error: json: cannot unmarshal "
STRUCT = "json: cannot unmarshal {} into Go struct field DeleteOptions.{} of type {}"


def make_cm(core: client.CoreV1Api) -> str:
    name = f"cm{next(_names)}"
    core.create_namespaced_config_map(NS, {"metadata": {"name": name}})
    return name


BODIES = [
    (b'{"gracePeriodSeconds":"x"}', STRUCT.format("string", "gracePeriodSeconds", "int64")),
    (b'{"gracePeriodSeconds":1.5}', STRUCT.format("number 1.5", "gracePeriodSeconds", "int64")),
    (
        b'{"gracePeriodSeconds":99999999999999999999}',
        STRUCT.format("number 99999999999999999999", "gracePeriodSeconds", "int64"),
    ),
    (b'{"gracePeriodSeconds":true}', STRUCT.format("bool", "gracePeriodSeconds", "int64")),
    (b'{"propagationPolicy":5}', STRUCT.format("number", "propagationPolicy", "v1.DeletionPropagation")),
    (b'{"orphanDependents":"yes"}', STRUCT.format("string", "orphanDependents", "bool")),
    (b'{"dryRun":"All"}', STRUCT.format("string", "dryRun", "[]string")),
    (b'{"dryRun":[5]}', STRUCT.format("number", "dryRun", "string")),
    (b'{"preconditions":[]}', STRUCT.format("array", "preconditions", "v1.Preconditions")),
    (
        b'{"preconditions":{"uid":5}}',
        "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid "
        "of type types.UID",
    ),
    (
        b'{"preconditions":{"resourceVersion":[]}}',
        "json: cannot unmarshal array into Go struct field Preconditions.preconditions.resourceVersion "
        "of type string",
    ),
    (b'{"apiVersion":5}', INTERPRET + "number into Go struct field .apiVersion of type string"),
    (b'{"kind":[]}', INTERPRET + "array into Go struct field .kind of type string"),
    (b"[]", INTERPRET + "array into Go value of type struct { APIVersion string "),
    (b'"x"', INTERPRET + "string into Go value of type struct { APIVersion string "),
]


@pytest.mark.parametrize("body, message", BODIES)
def test_wrong_types_in_the_body_are_400(raw, core, body, message):
    name = make_cm(core)
    r = raw.request("DELETE", f"{CM}/{name}", raw=body, headers={"Content-Type": "application/json"})
    code, status = r.status, json.loads(r.data)
    assert (code, status["reason"]) == (400, "BadRequest"), status
    assert status["message"].startswith(message)
    assert core.read_namespaced_config_map(name, NS).metadata.name == name  # not deleted


QUERIES = [
    ("gracePeriodSeconds=x", 'strconv.ParseInt: parsing "x": invalid syntax'),
    ("gracePeriodSeconds=1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    (
        "gracePeriodSeconds=99999999999999999999",
        'strconv.ParseInt: parsing "99999999999999999999": value out of range',
    ),
]


@pytest.mark.parametrize("query, message", QUERIES)
@pytest.mark.parametrize("collection", [False, True])
def test_wrong_types_in_the_query_are_400(raw, core, query, message, collection):
    name = make_cm(core)
    path = f"{CM}?{query}" if collection else f"{CM}/{name}?{query}"
    code, status = raw.json("DELETE", path)
    assert (code, status["reason"], status["message"]) == (400, "BadRequest", message)
    assert core.read_namespaced_config_map(name, NS).metadata.name == name


@pytest.mark.parametrize("body", [b"null", b'{"preconditions":{"uid":null}}', b"{}"])
def test_null_options_are_no_options(raw, core, body):
    name = make_cm(core)
    r = raw.request("DELETE", f"{CM}/{name}", raw=body, headers={"Content-Type": "application/json"})
    assert r.status == 200, r.data
    with pytest.raises(client.ApiException) as e:
        core.read_namespaced_config_map(name, NS)
    assert e.value.status == 404


def test_the_official_client_sends_well_typed_options(core):
    name = make_cm(core)
    core.delete_namespaced_config_map(name, NS, body=client.V1DeleteOptions(grace_period_seconds=0))
    assert name not in [c.metadata.name for c in core.list_namespaced_config_map(NS).items]
