"""Unit tests for framework.apiserver.registry.events.conversion (spec 18-1, 14-2)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from framework.apiserver.registry.events.conversion import (
    core_to_events_v1,
    event_field_set,
    events_v1_to_core,
)

CORE = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "e1", "namespace": "ns", "uid": "u-1", "resourceVersion": "7", "labels": {"a": "b"}},
    "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "pu", "apiVersion": "v1"},
    "reason": "Started",
    "message": "hello",
    "source": {"component": "kubelet", "host": "node-1"},
    "firstTimestamp": "2024-05-01T10:00:00Z",
    "lastTimestamp": "2024-05-01T10:05:00Z",
    "count": 3,
    "type": "Normal",
    "eventTime": "2024-05-01T10:00:00.123456Z",
    "series": {"count": 2, "lastObservedTime": "2024-05-01T10:05:00.000000Z"},
    "action": "Start",
    "related": {"kind": "Node", "name": "node-1"},
    "reportingComponent": "kubelet",
    "reportingInstance": "node-1",
}

EVENTS_V1 = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": CORE["metadata"],
    "regarding": CORE["involvedObject"],
    "reason": "Started",
    "note": "hello",
    "deprecatedSource": {"component": "kubelet", "host": "node-1"},
    "deprecatedFirstTimestamp": "2024-05-01T10:00:00Z",
    "deprecatedLastTimestamp": "2024-05-01T10:05:00Z",
    "deprecatedCount": 3,
    "type": "Normal",
    "eventTime": "2024-05-01T10:00:00.123456Z",
    "series": {"count": 2, "lastObservedTime": "2024-05-01T10:05:00.000000Z"},
    "action": "Start",
    "related": {"kind": "Node", "name": "node-1"},
    "reportingController": "kubelet",
    "reportingInstance": "node-1",
}


def test_core_to_events_v1_renames_fields():
    assert core_to_events_v1(CORE) == EVENTS_V1


def test_events_v1_to_core_renames_fields():
    assert events_v1_to_core(EVENTS_V1) == CORE


def test_absent_fields_stay_absent_and_type_meta_is_set():
    assert core_to_events_v1({"metadata": {"name": "x"}, "reason": "R"}) == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "x"},
        "reason": "R",
    }
    assert events_v1_to_core({"note": "n"}) == {"apiVersion": "v1", "kind": "Event", "message": "n"}


def test_unknown_fields_are_dropped_and_input_untouched():
    src = {"apiVersion": "v1", "kind": "Event", "note": "not a core field", "metadata": {"name": "x"}}
    out = core_to_events_v1(src)
    assert out == {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "x"}}
    out["metadata"]["name"] = "changed"
    assert src["metadata"]["name"] == "x"


def test_null_values_are_carried():
    assert core_to_events_v1({"firstTimestamp": None, "eventTime": None}) == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "deprecatedFirstTimestamp": None,
        "eventTime": None,
    }


_text = st.text(max_size=8)
_ref = st.fixed_dictionaries(
    {}, optional={k: _text for k in ("kind", "namespace", "name", "uid", "apiVersion", "fieldPath")}
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_text, children, max_size=3),
    max_leaves=8,
)
_core_fields = {
    "metadata": st.dictionaries(_text, _json, max_size=3),
    "involvedObject": _ref,
    "reason": _text,
    "message": _text,
    "source": st.fixed_dictionaries({}, optional={"component": _text, "host": _text}),
    "firstTimestamp": st.none() | _text,
    "lastTimestamp": st.none() | _text,
    "count": st.integers(),
    "type": _text,
    "eventTime": st.none() | _text,
    "series": st.none() | st.fixed_dictionaries({"count": st.integers(), "lastObservedTime": _text}),
    "action": _text,
    "related": st.none() | _ref,
    "reportingComponent": _text,
    "reportingInstance": _text,
}
_core_events = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Event")}, optional=_core_fields
)


@given(_core_events)
def test_round_trip_core_events_v1_core(core):
    assert events_v1_to_core(core_to_events_v1(core)) == core


@given(_core_events)
def test_round_trip_events_v1_core_events_v1(core):
    ev = core_to_events_v1(core)
    assert core_to_events_v1(events_v1_to_core(ev)) == ev


def test_field_set_of_a_core_event():
    assert event_field_set(CORE) == {
        "involvedObject.kind": "Pod",
        "involvedObject.namespace": "ns",
        "involvedObject.name": "p",
        "involvedObject.uid": "pu",
        "involvedObject.apiVersion": "v1",
        "involvedObject.resourceVersion": "",
        "involvedObject.fieldPath": "",
        "reason": "Started",
        "reportingComponent": "kubelet",
        "source": "kubelet",
        "type": "Normal",
        "metadata.name": "e1",
        "metadata.namespace": "ns",
    }


def test_field_set_source_falls_back_to_reporting_component():
    fields = event_field_set({"metadata": {"name": "e"}, "reportingComponent": "kopf", "source": {}})
    assert fields["source"] == "kopf"
    assert fields["reportingComponent"] == "kopf"
    assert fields["involvedObject.kind"] == ""
    assert fields["metadata.namespace"] == ""
