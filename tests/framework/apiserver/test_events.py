"""Events: one store, two API versions (spec §18)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

EV = "/apis/events.k8s.io/v1/namespaces/default/events"


def core_event(name: str, **extra) -> dict:
    return {
        "metadata": {"name": name},
        "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": "default", "apiVersion": "v1"},
        "reason": "Tested",
        "message": "hello",
        "type": "Normal",
        "source": {"component": "test"},
        "firstTimestamp": "2024-05-01T10:00:00Z",
        "lastTimestamp": "2024-05-01T10:05:00+02:00",
        "count": 2,
        **extra,
    }


def test_core_event_visible_through_events_api(core, raw):
    """18-1: same name/uid/RV, fields mapped."""
    created = core.create_namespaced_event("default", core_event("e1"))
    code, ev = raw.json("GET", f"{EV}/e1")
    assert code == 200 and ev["apiVersion"] == "events.k8s.io/v1"
    assert ev["metadata"]["uid"] == created.metadata.uid
    assert ev["metadata"]["resourceVersion"] == created.metadata.resource_version
    assert ev["regarding"]["name"] == "cm" and ev["note"] == "hello"
    assert ev["deprecatedSource"] == {"component": "test"} and ev["deprecatedCount"] == 2
    assert ev["deprecatedLastTimestamp"] == "2024-05-01T08:05:00Z"  # 6-12 normalized to UTC


def test_events_api_create_visible_through_core(core, raw):
    body = {
        "metadata": {"name": "e2"},
        "eventTime": "2024-05-01T10:00:00.000000Z",
        "regarding": {
            "kind": "Shoot",
            "name": "s",
            "namespace": "default",
            "apiVersion": "core.gardener.cloud/v1beta1",
        },
        "reason": "Reconciled",
        "note": "ok",
        "type": "Normal",
        "action": "Reconcile",
        "reportingController": "gardener.cloud/test",
        "reportingInstance": "i-1",
        "series": {"count": 2, "lastObservedTime": "2024-05-01T10:01:00.500000Z"},
    }
    code, ev = raw.json("POST", EV, body)
    assert code == 201, ev
    got = core.read_namespaced_event("e2", "default")
    assert got.involved_object.kind == "Shoot" and got.message == "ok"
    assert got.reporting_component == "gardener.cloud/test"
    assert got.series.count == 2
    _, back = raw.json("GET", f"{EV}/e2")
    assert back["series"]["lastObservedTime"] == "2024-05-01T10:01:00.500000Z"
    assert back["eventTime"] == "2024-05-01T10:00:00.000000Z"


def test_microtime_needs_six_digits(raw):
    """6-12: a MicroTime without six fraction digits is a 400 decode error."""
    body = {
        "metadata": {"name": "e3"},
        "eventTime": "2024-05-01T10:00:00Z",
        "regarding": {"kind": "X", "name": "x"},
        "reason": "R",
        "note": "n",
        "type": "Normal",
        "action": "A",
        "reportingController": "a/b",
        "reportingInstance": "i",
    }
    code, st = raw.json("POST", EV, body)
    assert code == 400 and "cannot parse" in st["message"]


def test_events_api_requires_fields(raw):
    """18-2: events.k8s.io creates need eventTime; type must be Normal or Warning."""
    code, st = raw.json("POST", EV, {"metadata": {"name": "e4"}, "reason": "R", "type": "Weird"})
    assert code == 422 and st["details"]["kind"] == "Event"
    fields = {c["field"] for c in st["details"]["causes"]}
    assert "eventTime" in fields


def test_event_field_selectors(core):
    """14-2: involvedObject.* , reason, type, source."""
    core.create_namespaced_event("default", core_event("a"))
    core.create_namespaced_event("default", core_event("b", reason="Other", type="Warning"))
    pick = lambda s: [e.metadata.name for e in core.list_namespaced_event("default", field_selector=s).items]  # noqa: E731
    assert pick("reason=Other") == ["b"]
    assert pick("type=Normal") == ["a"]
    assert pick("involvedObject.kind=ConfigMap,involvedObject.name=cm") == ["a", "b"]
    assert pick("source=test") == ["a", "b"]


def test_kopf_style_event_is_accepted(raw):
    """18-5: generateName, microsecond +00:00 timestamps, no apiVersion/kind."""
    body = {
        "metadata": {"namespace": "default", "generateName": "kopf-event-"},
        "action": "Action?",
        "reason": "Logging",
        "type": "Normal",
        "message": "m",
        "reportingComponent": "kopf",
        "reportingInstance": "dev",
        "source": {"component": "kopf"},
        "firstTimestamp": "2024-05-01T10:00:00.123456+00:00",
        "lastTimestamp": "2024-05-01T10:00:00.123456+00:00",
        "eventTime": "2024-05-01T10:00:00.123456+00:00",
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "x",
            "namespace": "default",
            "uid": "u",
        },
    }
    code, ev = raw.json("POST", "/api/v1/namespaces/default/events", body)
    assert code == 201, ev
    assert ev["firstTimestamp"] == "2024-05-01T10:00:00Z"
    assert ev["eventTime"] == "2024-05-01T10:00:00.123456Z"


def test_event_put_creates_and_supports_no_gc(core, raw):
    """7-6: PUT of a missing Event creates it."""
    code, _ = raw.json("PUT", "/api/v1/namespaces/default/events/put1", core_event("put1"))
    assert code == 201
    with pytest.raises(ApiException) as e:
        core.create_namespaced_event(
            "default", core_event("bad", involvedObject={"kind": "X", "name": "x", "namespace": "other"})
        )
    assert e.value.status == 422 and "involvedObject.namespace" in json.loads(e.value.body)["message"]
    assert isinstance(core.read_namespaced_event("put1", "default"), client.CoreV1Event)
