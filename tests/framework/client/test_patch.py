"""create_merge_patch: the RFC 7386 patch between two versions of an object."""

from __future__ import annotations

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
