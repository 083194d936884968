"""framework.meta.object: accessors that never fail on a missing or null metadata."""

from __future__ import annotations

import pytest

from framework import meta
from framework.meta.schema import GroupVersionKind

OBJ = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "prod",
        "uid": "u1",
        "resourceVersion": "7",
        "generation": 3,
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "finalizers": ["f"],
        "ownerReferences": [{"uid": "o1"}, {"uid": "o2", "controller": True}],
        "creationTimestamp": "2024-01-01T00:00:00Z",
    },
}


def test_getters():
    assert meta.get_name(OBJ) == "web" and meta.get_namespace(OBJ) == "prod" and meta.get_uid(OBJ) == "u1"
    assert meta.get_resource_version(OBJ) == "7" and meta.get_generation(OBJ) == 3
    assert meta.get_labels(OBJ) == {"app": "web"} and meta.get_annotations(OBJ) == {"a": "b"}
    assert meta.get_finalizers(OBJ) == ["f"] and len(meta.get_owner_references(OBJ)) == 2
    assert meta.get_controller_of(OBJ) == {"uid": "o2", "controller": True}
    assert meta.object_key(OBJ) == "prod/web" and meta.get_gvk(OBJ) == GroupVersionKind(
        "apps", "v1", "Deployment"
    )
    assert meta.get_creation_timestamp(OBJ) == "2024-01-01T00:00:00Z" and not meta.is_being_deleted(OBJ)


@pytest.mark.parametrize("obj", [None, {}, {"metadata": None}, {"metadata": {"labels": None}}, "x"])
def test_missing_metadata_gives_empty_values(obj):
    assert meta.get_name(obj) == "" and meta.get_labels(obj) == {} and meta.get_owner_references(obj) == []
    assert (
        meta.get_generation(obj) == 0 and meta.get_controller_of(obj) is None and meta.object_key(obj) == ""
    )


def test_returned_maps_are_copies():
    labels = meta.get_labels(OBJ)
    labels["x"] = "y"
    assert "x" not in OBJ["metadata"]["labels"]


def test_setters_create_metadata_and_report_change():
    obj: dict = {"metadata": None}
    assert meta.set_label(obj, "a", "1") and obj == {"metadata": {"labels": {"a": "1"}}}
    assert not meta.set_label(obj, "a", "1")
    assert meta.set_annotation(obj, "n", "v") and obj["metadata"]["annotations"] == {"n": "v"}
    assert meta.ensure_metadata(obj) is obj["metadata"]
