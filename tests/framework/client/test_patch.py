"""create_merge_patch: the RFC 7386 patch between two versions of an object; with_optimistic_lock: the
patch locked to the resourceVersion it was computed from, also against the API server."""

from __future__ import annotations

import copy

import pytest

from framework.client import Client, Conflict, with_optimistic_lock
from framework.client.patch import create_merge_patch


def test_merge_patch_carries_only_the_differences():
    old = {"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}, "list": [1, 2]}
    new = {"metadata": {"name": "a", "labels": {"x": "1", "z": "3"}}, "list": [1, 2, 3], "spec": {"n": 1}}
    assert create_merge_patch(old, new) == {
        "metadata": {"labels": {"y": None, "z": "3"}},
        "data": None,
        "list": [1, 2, 3],
        "spec": {"n": 1},
    }


def test_merge_patch_of_equal_objects_is_empty():
    obj = {"a": {"b": [{"c": 1}]}, "n": 1}
    assert create_merge_patch(obj, {"a": {"b": [{"c": 1}]}, "n": 1}) == {}


def test_merge_patch_replaces_a_value_that_changes_type():
    assert create_merge_patch({"a": 1}, {"a": 1.0}) == {"a": 1.0}
    assert create_merge_patch({"a": {"b": 1}}, {"a": "text"}) == {"a": "text"}
    assert create_merge_patch({"a": True}, {"a": 1}) == {"a": 1}


def test_optimistic_lock_adds_the_objects_resource_version():
    obj = {"metadata": {"name": "a", "resourceVersion": "42"}, "status": {"phase": "Old"}}
    patch = {"metadata": {"labels": {"x": "1"}}, "status": {"phase": "New"}}
    before_obj, before_patch = copy.deepcopy(obj), copy.deepcopy(patch)
    assert with_optimistic_lock(patch, obj) == {
        "metadata": {"labels": {"x": "1"}, "resourceVersion": "42"},
        "status": {"phase": "New"},
    }
    assert with_optimistic_lock({"status": {"phase": "New"}}, obj) == {
        "status": {"phase": "New"},
        "metadata": {"resourceVersion": "42"},
    }
    assert (obj, patch) == (before_obj, before_patch)  # neither input is mutated


def test_optimistic_lock_without_a_resource_version_leaves_the_patch_as_it_is():
    patch = {"status": {"phase": "New"}}
    for obj in ({"metadata": {"name": "a"}}, {"metadata": {"name": "a", "resourceVersion": ""}}, {}):
        locked = with_optimistic_lock(patch, obj)
        assert locked == {"status": {"phase": "New"}} and locked is not patch


def test_a_locked_status_patch_with_an_outdated_resource_version_conflicts(
    apiserver, client: Client, widget_crd_manifest
):
    """As kube-apiserver: a merge patch's metadata.resourceVersion is the update's precondition, on
    the /status subresource too (409 on mismatch, nothing written)."""
    apiserver.install_crds([widget_crd_manifest])
    read = client.create(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"size": 1},
        }
    )

    def locked_status(phase: str, to: dict) -> dict:
        body = with_optimistic_lock({"status": {"phase": phase}}, to)
        return client.patch("example.com/v1", "Widget", "w", body, "default", subresource="status")

    newer = client.patch(
        "example.com/v1", "Widget", "w", {"status": {"phase": "Newer"}}, "default", subresource="status"
    )
    with pytest.raises(Conflict):
        locked_status("Outdated", read)
    assert client.get("example.com/v1", "Widget", "w", "default") == newer
    done = locked_status("Done", newer)
    assert done["status"] == {"phase": "Done"}
    assert int(done["metadata"]["resourceVersion"]) > int(newer["metadata"]["resourceVersion"])
