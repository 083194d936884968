"""Unit tests for framework.apiserver.machinery.patch (spec §8)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.machinery.patch import (
    MAX_JSON_PATCH_OPERATIONS,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)
from framework.apiserver.registry import builtin_strategies

REJECTED = "the server rejected our request due to an error in our request"


def assert_status(exc: pytest.ExceptionInfo[StatusError], code: int, reason: str, message: str) -> None:
    assert (exc.value.code, exc.value.reason, exc.value.message) == (code, reason, message)


def assert_op_failed(exc: pytest.ExceptionInfo[StatusError], cause: str) -> None:
    assert_status(exc, 422, "Invalid", REJECTED)
    assert exc.value.details == {"causes": [{"reason": "UnexpectedServerResponse", "message": cause}]}


# --- JSON merge patch ---------------------------------------------------------------------------


def test_merge_patch_merges_objects_deletes_nulls_and_replaces_the_rest() -> None:
    doc = {"a": {"b": 1, "c": 2}, "l": [1, 2], "s": "x", "keep": {"k": [1]}}
    patch = {"a": {"b": None, "d": 3}, "l": [3], "s": {"n": 1}, "new": {"x": None, "y": 1}, "gone": None}
    assert merge_patch(doc, patch) == {
        "a": {"c": 2, "d": 3},
        "l": [3],
        "s": {"n": 1},
        "keep": {"k": [1]},
        "new": {"y": 1},
    }


def test_merge_patch_arrays_are_replaced_verbatim() -> None:
    assert merge_patch({"l": [{"a": 1}]}, {"l": [{"a": None}, None]}) == {"l": [{"a": None}, None]}


def test_merge_patch_object_replaces_a_scalar_and_a_non_object_document() -> None:
    assert merge_patch({"a": 1}, {"a": {"b": 2}}) == {"a": {"b": 2}}
    assert merge_patch([1, 2], {"a": 1}) == {"a": 1}


def test_merge_patch_does_not_mutate_or_alias_its_inputs() -> None:
    doc = {"a": {"b": [1]}, "c": {"d": 1}}
    patch = {"c": {"e": [2]}}
    before_doc, before_patch = copy.deepcopy(doc), copy.deepcopy(patch)
    out = merge_patch(doc, patch)
    out["a"]["b"].append(9)
    out["c"]["e"].append(9)
    assert (doc, patch) == (before_doc, before_patch)


@pytest.mark.parametrize(
    ("patch", "kind"), [([1], "array"), ("x", "string"), (3, "number"), (True, "bool"), (None, "null")]
)
def test_merge_patch_rejects_a_non_object_patch(patch: Any, kind: str) -> None:
    with pytest.raises(StatusError) as exc:
        merge_patch({"a": 1}, patch)
    assert_status(
        exc,
        400,
        "BadRequest",
        f"error decoding patch: json: cannot unmarshal {kind} into Go value of type "
        "map[string]interface {}",
    )


# --- JSON patch ---------------------------------------------------------------------------------


def test_json_patch_add() -> None:
    doc = {"a": {"l": [1, 2]}}
    ops = [
        {"op": "add", "path": "/a/b", "value": {"c": 1}},
        {"op": "add", "path": "/a/l/0", "value": 0},
        {"op": "add", "path": "/a/l/3", "value": 3},
        {"op": "add", "path": "/a/l/-", "value": 4},
        {"op": "add", "path": "/a/b", "value": "replaced"},
        {"op": "add", "path": "/n", "value": None},
    ]
    assert json_patch(doc, ops) == {"a": {"l": [0, 1, 2, 3, 4], "b": "replaced"}, "n": None}


def test_json_patch_add_at_the_root_replaces_the_document() -> None:
    assert json_patch({"a": 1}, [{"op": "add", "path": "", "value": {"b": 2}}]) == {"b": 2}


def test_json_patch_remove() -> None:
    doc = {"a": {"b": 1, "c": 2}, "l": [1, 2, 3]}
    ops = [{"op": "remove", "path": "/a/b"}, {"op": "remove", "path": "/l/1"}]
    assert json_patch(doc, ops) == {"a": {"c": 2}, "l": [1, 3]}


def test_json_patch_replace() -> None:
    doc = {"a": {"b": 1}, "l": [1, 2, 3]}
    ops = [
        {"op": "replace", "path": "/a/b", "value": [9]},
        {"op": "replace", "path": "/l/1", "value": "two"},
    ]
    assert json_patch(doc, ops) == {"a": {"b": [9]}, "l": [1, "two", 3]}
    assert json_patch(doc, [{"op": "replace", "path": "", "value": [1]}]) == [1]


def test_json_patch_move() -> None:
    doc = {"a": {"b": 1}, "l": [1, 2, 3]}
    ops = [
        {"op": "move", "from": "/a/b", "path": "/c"},
        {"op": "move", "from": "/l/0", "path": "/l/-"},
        {"op": "move", "from": "/c", "path": "/c"},
    ]
    assert json_patch(doc, ops) == {"a": {}, "l": [2, 3, 1], "c": 1}


def test_json_patch_copy_is_independent_of_its_source() -> None:
    doc = {"a": {"b": [1]}}
    out = json_patch(
        doc, [{"op": "copy", "from": "/a", "path": "/c"}, {"op": "add", "path": "/c/b/-", "value": 2}]
    )
    assert out == {"a": {"b": [1]}, "c": {"b": [1, 2]}}
    assert json_patch(doc, [{"op": "copy", "from": "", "path": "/self"}]) == {
        "a": {"b": [1]},
        "self": {"a": {"b": [1]}},
    }


def test_json_patch_test_uses_json_equality() -> None:
    doc = {"n": 1, "f": 1.5, "b": True, "o": {"x": [1, {"y": None}]}, "s": "1"}
    ops = [
        {"op": "test", "path": "/n", "value": 1.0},
        {"op": "test", "path": "/f", "value": 1.5},
        {"op": "test", "path": "/b", "value": True},
        {"op": "test", "path": "/o", "value": {"x": [1.0, {"y": None}]}},
        {"op": "test", "path": "", "value": doc},
    ]
    assert json_patch(doc, ops) == doc


@pytest.mark.parametrize(
    ("path", "value"),
    [("/b", 1), ("/n", True), ("/n", "1"), ("/s", 1), ("/o", {"x": [1]}), ("/l", [1]), ("/z", None)],
)
def test_json_patch_test_mismatch_is_422(path: str, value: Any) -> None:
    doc = {"n": 1, "b": True, "s": "1", "o": {"x": [1], "y": 2}, "l": [1, 2], "z": 0}
    with pytest.raises(StatusError) as exc:
        json_patch(doc, [{"op": "test", "path": path, "value": value}])
    assert_op_failed(exc, f"testing value {path} failed: test failed")


def test_json_patch_pointer_escapes() -> None:
    doc = {"a/b": 1, "m~n": 2, "~1": 3}
    ops = [
        {"op": "replace", "path": "/a~1b", "value": 10},
        {"op": "replace", "path": "/m~0n", "value": 20},
        {"op": "replace", "path": "/~01", "value": 30},
        {"op": "add", "path": "/x~1y~0z", "value": 4},
    ]
    assert json_patch(doc, ops) == {"a/b": 10, "m~n": 20, "~1": 30, "x/y~z": 4}


@pytest.mark.parametrize(
    ("op", "cause"),
    [
        (
            {"op": "test", "path": "/missing", "value": 1},
            "test operation does not apply: doc is missing path: /missing",
        ),
        (
            {"op": "remove", "path": "/missing"},
            "remove operation does not apply: doc is missing path: /missing",
        ),
        ({"op": "remove", "path": "/l/2"}, "remove operation does not apply: doc is missing path: /l/2"),
        ({"op": "remove", "path": ""}, "remove operation does not apply: doc is missing path: "),
        (
            {"op": "replace", "path": "/missing", "value": 1},
            "replace operation does not apply: doc is missing path: /missing",
        ),
        (
            {"op": "replace", "path": "/l/-", "value": 1},
            "replace operation does not apply: doc is missing path: /l/-",
        ),
        (
            {"op": "add", "path": "/l/3", "value": 1},
            "add operation does not apply: doc is missing path: /l/3",
        ),
        (
            {"op": "add", "path": "/l/01", "value": 1},
            "add operation does not apply: doc is missing path: /l/01",
        ),
        (
            {"op": "add", "path": "/l/-1", "value": 1},
            "add operation does not apply: doc is missing path: /l/-1",
        ),
        (
            {"op": "add", "path": "/x/y", "value": 1},
            "add operation does not apply: doc is missing path: /x/y",
        ),
        (
            {"op": "add", "path": "/s/y", "value": 1},
            "add operation does not apply: doc is missing path: /s/y",
        ),
        ({"op": "add", "path": "a", "value": 1}, "add operation does not apply: doc is missing path: a"),
        (
            {"op": "move", "from": "/missing", "path": "/a"},
            "move operation does not apply: doc is missing from path: /missing",
        ),
        (
            {"op": "move", "from": "/o", "path": "/o/child"},
            "move operation does not apply: doc is missing path: /o/child",
        ),
        (
            {"op": "copy", "from": "/missing", "path": "/a"},
            "copy operation does not apply: doc is missing from path: /missing",
        ),
        (
            {"op": "copy", "from": "/o", "path": "/q/r"},
            "copy operation does not apply: doc is missing path: /q/r",
        ),
    ],
)
def test_json_patch_failing_op_is_422(op: dict[str, Any], cause: str) -> None:
    with pytest.raises(StatusError) as exc:
        json_patch({"l": [1, 2], "s": "str", "o": {"k": 1}}, [op])
    assert_op_failed(exc, cause)


def test_json_patch_is_atomic_and_leaves_inputs_alone() -> None:
    doc = {"a": {"b": [1]}}
    ops = [{"op": "add", "path": "/a/b/-", "value": {"v": 1}}, {"op": "test", "path": "/a/x", "value": 1}]
    before_doc, before_ops = copy.deepcopy(doc), copy.deepcopy(ops)
    with pytest.raises(StatusError):
        json_patch(doc, ops)
    out = json_patch(doc, ops[:1])
    out["a"]["b"][1]["v"] = 2
    assert (doc, ops) == (before_doc, before_ops)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("[]", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        (None, "json: cannot unmarshal null into Go value of type jsonpatch.Patch"),
        ([["op"]], "json: cannot unmarshal array into Go value of type jsonpatch.Operation"),
    ],
)
def test_json_patch_malformed_document_is_400(ops: Any, message: str) -> None:
    with pytest.raises(StatusError) as exc:
        json_patch({"a": 1}, ops)
    assert_status(exc, 400, "BadRequest", message)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([{"path": "/a"}], "Unexpected kind: unknown"),
        ([{"op": 1, "path": "/a"}], "Unexpected kind: unknown"),
        ([{"op": "merge", "path": "/a"}], "Unexpected kind: merge"),
        ([{"op": "remove"}], "remove operation missing path field"),
        ([{"op": "remove", "path": 5}], "json: cannot unmarshal number into Go value of type string"),
        ([{"op": "add", "path": "/a"}], "add operation missing value field"),
        ([{"op": "replace", "path": "/a"}], "replace operation missing value field"),
        ([{"op": "test", "path": "/a"}], "test operation missing value field"),
        ([{"op": "move", "path": "/a"}], "move operation missing from field"),
        (
            [{"op": "copy", "from": None, "path": "/a"}],
            "json: cannot unmarshal null into Go value of type string",
        ),
        # Inapplicable operations are found before any operation applies.
        ([{"op": "test", "path": "/missing", "value": 1}, {"op": "bogus"}], "Unexpected kind: bogus"),
    ],
)
def test_json_patch_inapplicable_operation_is_422(ops: Any, message: str) -> None:
    """The document decodes (operations are maps in gopkg.in/evanphx/json-patch.v4); applying fails, and
    kube-apiserver's patch handler answers every Apply error with 422."""
    with pytest.raises(StatusError) as exc:
        json_patch({"a": 1}, ops)
    assert_op_failed(exc, message)


def test_json_patch_operation_limit() -> None:
    ok = [{"op": "test", "path": "/a", "value": 1}] * MAX_JSON_PATCH_OPERATIONS
    assert json_patch({"a": 1}, ok) == {"a": 1}
    with pytest.raises(StatusError) as exc:
        json_patch({"a": 1}, [*ok, {"op": "test", "path": "/a", "value": 1}])
    assert_status(
        exc,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed operations in this JSON patch exceed the limit of 10000",
    )


def test_kopf_style_resource_version_guard() -> None:
    obj = {"metadata": {"resourceVersion": "7"}, "status": {}}
    guard = {"op": "test", "path": "/metadata/resourceVersion", "value": "6"}
    with pytest.raises(StatusError) as exc:
        json_patch(obj, [guard, {"op": "replace", "path": "/status", "value": {"ok": True}}])
    assert_op_failed(exc, "testing value /metadata/resourceVersion failed: test failed")


# --- strategic merge patch ----------------------------------------------------------------------

# The strategic-merge keys the served strategies carry, by kind (their Go structs' tags; the core and
# events.k8s.io Events agree).
BUILTIN_SMP_STRATEGIES: dict[str, Any] = {rt.kind: rt.smp for rt in reversed(builtin_strategies())}
CM = BUILTIN_SMP_STRATEGIES["ConfigMap"]
WEBHOOKS = BUILTIN_SMP_STRATEGIES["ValidatingWebhookConfiguration"]


def smp(doc: dict[str, Any], patch: Any, strategies: dict[str, Any] = CM) -> dict[str, Any]:
    return strategic_merge_patch(doc, patch, strategies)


def test_builtin_strategies_cover_the_served_kinds() -> None:
    metadata = {"metadata.finalizers": ("merge", None), "metadata.ownerReferences": ("merge", "uid")}
    plain = [
        "ConfigMap",
        "Secret",
        "Event",
        "ResourceQuota",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "Lease",
        "CustomResourceDefinition",
    ]
    webhooks = {**metadata, "webhooks": ("merge", "name"), "webhooks[].matchConditions": ("merge", "name")}
    expected = {
        **dict.fromkeys(plain, metadata),
        "Namespace": {**metadata, "status.conditions": ("merge", "type")},
        "ServiceAccount": {**metadata, "secrets": ("merge", "name")},
        "ValidatingWebhookConfiguration": webhooks,
        "MutatingWebhookConfiguration": webhooks,
    }
    # The stored-only kinds carry pod-template (or port, condition, address) strategies of their own.
    stored_only = (
        "Deployment",
        "Service",
        "Pod",
        "ReplicationController",
        "DaemonSet",
        "Job",
        "APIService",
        "Node",
    )
    assert expected == {k: v for k, v in BUILTIN_SMP_STRATEGIES.items() if k in expected}
    for kind in stored_only:
        assert metadata.items() < BUILTIN_SMP_STRATEGIES[kind].items(), kind
    assert BUILTIN_SMP_STRATEGIES["Service"]["spec.ports"] == ("merge", "port")
    assert BUILTIN_SMP_STRATEGIES["Pod"]["spec.containers"] == ("merge", "name")
    assert BUILTIN_SMP_STRATEGIES["Pod"]["spec.containers[].env"] == ("merge", "name")
    for kind in ("ReplicationController", "DaemonSet", "Job"):
        assert BUILTIN_SMP_STRATEGIES[kind]["spec.template.spec.containers"] == ("merge", "name")


def test_smp_maps_merge_and_null_deletes() -> None:
    doc = {"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"k": "v"}}
    patch = {
        "metadata": {"labels": {"a": None, "c": "3"}, "annotations": {"x": "y", "z": None}},
        "data": None,
    }
    assert smp(doc, patch) == {"metadata": {"labels": {"b": "2", "c": "3"}, "annotations": {"x": "y"}}}


def test_smp_lists_without_strategy_replace() -> None:
    role = {"rules": [{"verbs": ["get"]}, {"verbs": ["list"]}], "metadata": {"name": "r"}}
    out = smp(role, {"rules": [{"verbs": ["watch"], "x": None}]}, BUILTIN_SMP_STRATEGIES["Role"])
    assert out == {"rules": [{"verbs": ["watch"]}], "metadata": {"name": "r"}}
    ns = {"spec": {"finalizers": ["kubernetes"]}}
    assert smp(ns, {"spec": {"finalizers": []}}, BUILTIN_SMP_STRATEGIES["Namespace"]) == {
        "spec": {"finalizers": []}
    }


def test_smp_primitive_merge_list_is_a_set_union_new_items_first() -> None:
    doc = {"metadata": {"finalizers": ["a", "b"]}}
    assert smp(doc, {"metadata": {"finalizers": ["b", "c", "c"]}}) == {
        "metadata": {"finalizers": ["a", "b", "c"]}
    }
    # Upstream normalizeElementOrder puts an element the server does not know ahead of server-only ones.
    assert smp(doc, {"metadata": {"finalizers": ["c"]}}) == {"metadata": {"finalizers": ["c", "a", "b"]}}
    assert smp({"metadata": {}}, {"metadata": {"finalizers": ["x", "x"]}}) == {
        "metadata": {"finalizers": ["x"]}
    }


def test_smp_delete_from_primitive_list() -> None:
    doc = {"metadata": {"finalizers": ["a", "b", "c"]}}
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zz"]}}
    assert smp(doc, patch) == {"metadata": {"finalizers": ["a", "c"]}}
    assert smp({"metadata": {}}, patch) == {"metadata": {}}


def test_smp_merge_list_by_key() -> None:
    doc = {
        "metadata": {
            "ownerReferences": [{"uid": "1", "name": "a", "controller": True}, {"uid": "2", "name": "b"}]
        }
    }
    patch = {
        "metadata": {
            "ownerReferences": [{"uid": "1", "controller": None, "name": "A"}, {"uid": "3", "name": "c"}]
        }
    }
    # Patch elements keep the patch's order; a server-only element slots in only before a patch
    # element the server already had later on (upstream mergeSortedSlice).
    assert smp(doc, patch) == {
        "metadata": {
            "ownerReferences": [
                {"uid": "1", "name": "A"},
                {"uid": "3", "name": "c"},
                {"uid": "2", "name": "b"},
            ]
        }
    }


def test_smp_delete_element_by_merge_key() -> None:
    doc = {"metadata": {"ownerReferences": [{"uid": "1"}, {"uid": "2"}, {"uid": "1"}]}}
    patch = {
        "metadata": {"ownerReferences": [{"uid": "1", "$patch": "delete"}, {"uid": "9", "$patch": "delete"}]}
    }
    assert smp(doc, patch) == {"metadata": {"ownerReferences": [{"uid": "2"}]}}


def test_smp_replace_directive_as_list_element() -> None:
    doc = {"metadata": {"finalizers": ["a"], "ownerReferences": [{"uid": "1"}, {"uid": "2"}]}}
    patch = {
        "metadata": {
            "finalizers": ["x", {"$patch": "replace"}],
            "ownerReferences": [
                {"uid": "2", "$patch": "delete"},
                {"uid": "3", "n": None},
                {"$patch": "replace"},
            ],
        }
    }
    assert smp(doc, patch) == {"metadata": {"finalizers": ["x"], "ownerReferences": [{"uid": "3"}]}}


def test_smp_replace_and_delete_directives_on_maps() -> None:
    doc = {"metadata": {"labels": {"a": "1"}, "annotations": {"b": "2"}}, "data": {"k": "v"}}
    patch = {
        "metadata": {
            "labels": {"$patch": "replace", "z": "1", "n": None},
            "annotations": {"$patch": "delete"},
        },
        "data": {"$patch": "replace"},
        "binaryData": {"$patch": "delete"},
    }
    assert smp(doc, patch) == {
        "metadata": {"labels": {"z": "1"}, "annotations": {}},
        "data": {},
        "binaryData": {},
    }
    assert smp(doc, {"$patch": "replace", "kind": "ConfigMap"}) == {"kind": "ConfigMap"}
    assert smp(doc, {"$patch": "delete"}) == {}


def test_smp_retain_keys() -> None:
    doc = {"spec": {"a": 1, "b": 2, "c": 3}}
    patch = {
        "spec": {"$retainKeys": ["a", "d", "gone"], "d": 4, "gone": None, "$deleteFromPrimitiveList/x": []}
    }
    assert smp(doc, patch) == {"spec": {"a": 1, "d": 4}}


def test_smp_set_element_order() -> None:
    doc = {"metadata": {"finalizers": ["a", "b", "c"], "ownerReferences": [{"uid": "1"}, {"uid": "2"}]}}
    patch = {
        "metadata": {
            "$setElementOrder/finalizers": ["c", "d", "a", "b"],
            "finalizers": ["d"],
            "$setElementOrder/ownerReferences": [{"uid": "2"}, {"uid": "3"}, {"uid": "1"}],
            "ownerReferences": [{"uid": "3"}],
        }
    }
    assert smp(doc, patch) == {
        "metadata": {
            "finalizers": ["c", "d", "a", "b"],
            "ownerReferences": [{"uid": "2"}, {"uid": "3"}, {"uid": "1"}],
        }
    }


def test_smp_partial_set_element_order_interleaves_server_only_elements() -> None:
    doc = {"metadata": {"finalizers": ["a", "b", "c"]}}
    patch = {"metadata": {"$setElementOrder/finalizers": ["c", "d", "a"], "finalizers": ["d"]}}
    assert smp(doc, patch) == {"metadata": {"finalizers": ["b", "c", "d", "a"]}}


def test_smp_set_element_order_is_never_stored() -> None:
    doc = {"rules": [{"verbs": ["get"]}]}
    patch = {"$setElementOrder/rules": [{"verbs": ["get"]}], "$setElementOrder/absent": ["x"]}
    assert smp(doc, patch, BUILTIN_SMP_STRATEGIES["Role"]) == doc


def test_smp_nested_merge_list_paths() -> None:
    doc = {
        "webhooks": [
            {"name": "a.x.y", "rules": [{"r": 1}], "matchConditions": [{"name": "m1", "expression": "1"}]},
            {"name": "b.x.y"},
        ]
    }
    patch = {
        "webhooks": [
            {
                "name": "a.x.y",
                "rules": [{"r": 2}],
                "matchConditions": [{"name": "m1", "$patch": "delete"}, {"name": "m2", "expression": "2"}],
            },
            {
                "name": "c.x.y",
                "matchConditions": [{"name": "m3", "$patch": "delete"}, {"name": "m4", "x": None}],
            },
        ]
    }
    assert smp(doc, patch, WEBHOOKS) == {
        "webhooks": [
            {"name": "a.x.y", "rules": [{"r": 2}], "matchConditions": [{"name": "m2", "expression": "2"}]},
            {"name": "c.x.y", "matchConditions": [{"name": "m4"}]},
            {"name": "b.x.y"},
        ]
    }


def test_smp_namespace_conditions_merge_by_type() -> None:
    doc = {"status": {"phase": "Active", "conditions": [{"type": "A", "status": "True"}, {"type": "B"}]}}
    patch = {"status": {"conditions": [{"type": "B", "status": "False"}]}}
    assert smp(doc, patch, BUILTIN_SMP_STRATEGIES["Namespace"]) == {
        "status": {
            "phase": "Active",
            "conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}],
        }
    }


def test_smp_does_not_mutate_or_alias_its_inputs() -> None:
    doc = {"metadata": {"finalizers": ["a"], "labels": {"x": "1"}}, "data": {"k": "v"}}
    patch = {"metadata": {"finalizers": ["b"], "$setElementOrder/finalizers": ["a", "b"]}, "new": {"l": [1]}}
    before_doc, before_patch = copy.deepcopy(doc), copy.deepcopy(patch)
    out = smp(doc, patch)
    out["data"]["k"] = "changed"
    out["new"]["l"].append(2)
    assert (doc, patch) == (before_doc, before_patch)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ([], "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("x", "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        ({"data": {"$patch": "merge"}}, "unknown patch type: merge in map: map[$patch:merge]"),
        (
            {"metadata": {"ownerReferences": [{"uid": "1", "$patch": "bogus"}]}},
            "unknown patch type: bogus in map: map[$patch:bogus uid:1]",
        ),
        (
            {"metadata": {"ownerReferences": [{"$patch": "delete", "name": "x"}]}},
            "map: map[$patch:delete name:x] does not contain declared merge key: uid",
        ),
        (
            {"metadata": {"ownerReferences": [{"name": "x"}]}},
            "map: map[name:x] does not contain declared merge key: uid",
        ),
        (
            {"metadata": {"finalizers": [{"$patch": "delete"}]}},
            "map: map[$patch:delete] does not contain declared merge key: ",
        ),
        (
            {"rules": [{"$patch": "delete", "name": "x"}]},
            "map: map[$patch:delete name:x] does not contain declared merge key: ",
        ),
        (
            {"metadata": {"finalizers": [{"a": "b"}]}},
            "cannot merge lists without merge key for metadata.finalizers",
        ),
        (
            {"metadata": {"finalizers": [["a"]]}},
            "cannot merge lists without merge key for metadata.finalizers",
        ),
        ({"data": {"$retainKeys": "a"}}, "invalid patch format of retainKeys"),
        ({"data": {"$retainKeys": ["a"], "b": "1"}}, "patch content doesn't match retainKeys list"),
        (
            {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
            "invalid patch format of primitive list",
        ),
        (
            {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}},
            "invalid patch format of primitive list",
        ),
        ({"metadata": {"$setElementOrder/finalizers": "a"}}, "invalid patch format of setElementOrder list"),
        ({"metadata": {"$setElementOrderX/finalizers": []}}, "invalid patch format of setElementOrder list"),
        (
            {"metadata": {"$setElementOrder/ownerReferences": [{"name": "x"}]}},
            "map: map[name:x] does not contain declared merge key: uid",
        ),
    ],
)
def test_smp_malformed_is_400(patch: Any, message: str) -> None:
    doc = {
        "metadata": {"finalizers": ["a"], "ownerReferences": [{"uid": "1"}]},
        "data": {"a": "1"},
        "rules": [],
    }
    with pytest.raises(StatusError) as exc:
        strategic_merge_patch(doc, patch, {**CM, "rules": ("replace", None)})
    assert_status(exc, 400, "BadRequest", message)


# --- properties ---------------------------------------------------------------------------------

scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
keys = st.text(min_size=1, max_size=8).filter(lambda k: not k.startswith("$"))
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)
documents = st.dictionaries(keys, json_values, max_size=5)
# Patches whose lists hold no nulls: there SMP without list strategies is JSON merge patch.
plain_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(scalars.filter(lambda v: v is not None), max_size=4)
        | st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=20,
)
plain_patches = st.dictionaries(keys, plain_values, max_size=5)


@given(documents)
def test_property_empty_merge_patch_is_identity(doc: dict[str, Any]) -> None:
    assert merge_patch(doc, {}) == doc
    assert strategic_merge_patch(doc, {}, CM) == doc


@given(documents, plain_patches)
def test_property_merge_patch_is_idempotent(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_patch(doc, patch)
    assert merge_patch(once, patch) == once


@given(documents, plain_patches)
def test_property_smp_without_list_strategies_is_merge_patch(
    doc: dict[str, Any], patch: dict[str, Any]
) -> None:
    assert strategic_merge_patch(doc, patch, {}) == merge_patch(doc, patch)


@given(documents, keys, json_values)
def test_property_json_patch_add_then_remove_restores(doc: dict[str, Any], key: str, value: Any) -> None:
    path = "/" + key.replace("~", "~0").replace("/", "~1")
    added = json_patch(doc, [{"op": "add", "path": path, "value": value}])
    assert json_patch(added, [{"op": "test", "path": path, "value": value}]) == added
    if key not in doc:
        assert json_patch(added, [{"op": "remove", "path": path}]) == doc


@given(st.lists(json_values, max_size=5), st.data())
def test_property_json_patch_list_insert_then_remove_restores(items: list[Any], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(items)))
    value = data.draw(json_values)
    doc = {"l": items}
    added = json_patch(doc, [{"op": "add", "path": f"/l/{index}", "value": value}])
    assert added["l"][index] == value
    assert json_patch(added, [{"op": "remove", "path": f"/l/{index}"}]) == doc


directive_keys = st.sampled_from(
    [
        "$patch",
        "$retainKeys",
        "$deleteFromPrimitiveList/finalizers",
        "$setElementOrder/finalizers",
        "$setElementOrder/ownerReferences",
        "finalizers",
        "ownerReferences",
        "uid",
        "labels",
    ]
)
directive_values = st.recursive(
    st.sampled_from(["replace", "delete", "merge", "a", "1", None]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(directive_keys, children, max_size=4),
    max_leaves=15,
)


def _has_directive(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("$") or _has_directive(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_directive(v) for v in value)
    return False


@given(st.dictionaries(directive_keys, directive_values, max_size=4))
def test_property_smp_never_stores_a_directive(metadata_patch: dict[str, Any]) -> None:
    doc = {
        "metadata": {
            "finalizers": ["a", "1"],
            "ownerReferences": [{"uid": "1"}, {"uid": "a"}],
            "labels": {"x": "y"},
        }
    }
    try:
        out = strategic_merge_patch(doc, {"metadata": metadata_patch}, CM)
    except StatusError as e:
        assert (e.code, e.reason) == (400, "BadRequest")
    else:
        assert not _has_directive(out)
