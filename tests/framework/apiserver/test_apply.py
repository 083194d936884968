"""Server-side apply and managedFields (spec 6-9, §9): through the official client and through kubectl."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from typing import Any

import pytest
import yaml
from kubernetes import client, dynamic

from framework.apiserver import managed_fields as mf
from framework.apiserver.registry.strategy import ResourceType
from framework.testing.kubectl import Kubectl

APPLY = "application/apply-patch+yaml"
CM = "/api/v1/namespaces/default/configmaps"
GROUP = "example.com"
GADGETS = f"/apis/{GROUP}/v1/namespaces/default/gadgets"
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


class Applier:
    """PATCH requests through the official client's ``ApiClient`` (it has no typed apply helper)."""

    def __init__(self, api_client: client.ApiClient) -> None:
        self.api = api_client

    def request(
        self,
        method: str,
        path: str,
        body: Any,
        content_type: str = APPLY,
        headers: dict | None = None,
        **query: Any,
    ) -> tuple[int, dict]:
        if isinstance(body, dict | list) and content_type == APPLY:
            body = yaml.safe_dump(body)
        params = [(k, v) for k, v in query.items() if v is not None]
        _, url, hdrs, body, _ = self.api.param_serialize(
            method,
            path,
            query_params=params,
            header_params={"Content-Type": content_type, "Accept": "application/json", **(headers or {})},
            body=body,
            auth_settings=["BearerToken"],
        )
        resp = self.api.call_api(method, url, header_params=hdrs, body=body)
        resp.read()
        return resp.status, json.loads(resp.data)

    def apply(self, path: str, body: Any, manager: str | None = "mgr", **query: Any) -> tuple[int, dict]:
        return self.request("PATCH", path, body, fieldManager=manager, **query)


@pytest.fixture
def ssa(apiserver) -> Applier:
    return Applier(apiserver.api_client())


def cm(name: str, data: dict | None = None, **meta: Any) -> dict:
    body: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}
    if data is not None:
        body["data"] = data
    return body


def entries(obj: dict) -> dict[tuple[str, str], dict]:
    """managedFields by (manager, operation), each without its time (checked for shape separately)."""
    out = {}
    for e in obj["metadata"].get("managedFields") or []:
        assert set(e) <= {
            "manager",
            "operation",
            "apiVersion",
            "time",
            "fieldsType",
            "fieldsV1",
            "subresource",
        }
        assert e["fieldsType"] == "FieldsV1" and TIME.match(e["time"])
        out[(e.get("manager", ""), e["operation"])] = {k: v for k, v in e.items() if k != "time"}
    return out


def fields(obj: dict, manager: str, operation: str = "Apply") -> dict:
    return entries(obj)[(manager, operation)]["fieldsV1"]


def conflict_status(message: str, causes: list[tuple[str, str]]) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Conflict",
        "details": {
            "causes": [{"reason": "FieldManagerConflict", "message": m, "field": f} for m, f in causes]
        },
        "code": 409,
    }


# --- create / upsert (9-1, 9-2) ------------------------------------------------------------------------


def test_apply_creates_missing_object_with_apply_entry(ssa, core):
    code, obj = ssa.apply(f"{CM}/c1", cm("c1", {"a": "1"}, labels={"app": "x"}))
    assert code == 201
    assert obj["data"] == {"a": "1"} and obj["metadata"]["labels"] == {"app": "x"}
    (entry,) = obj["metadata"]["managedFields"]
    assert entry == {
        "manager": "mgr",
        "operation": "Apply",
        "apiVersion": "v1",
        "time": entry["time"],
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}},
    }
    assert TIME.match(entry["time"])
    typed = core.read_namespaced_config_map("c1", "default")
    (mfe,) = typed.metadata.managed_fields
    assert (mfe.manager, mfe.operation, mfe.api_version, mfe.fields_type) == (
        "mgr",
        "Apply",
        "v1",
        "FieldsV1",
    )
    assert mfe.fields_v1 == entry["fieldsV1"]


def test_apply_accepts_json_and_yaml_bodies(ssa):
    code, obj = ssa.apply(f"{CM}/j", json.dumps(cm("j", {"k": "v"})))
    assert code == 201 and obj["data"] == {"k": "v"}
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"
        "data:\n  when: 2024-05-01T10:00:00Z\n  n: '1'\n"  # a timestamp-looking value stays a string
    )
    code, obj = ssa.apply(f"{CM}/y", text)
    assert code == 201 and obj["data"] == {"when": "2024-05-01T10:00:00Z", "n": "1"}


def test_apply_upsert_follows_create_namespace_rules(ssa, core, raw):
    code, st = ssa.apply("/api/v1/namespaces/nowhere/configmaps/c", cm("c", {"a": "1"}))
    assert code == 404 and st["message"] == 'namespaces "nowhere" not found'
    core.create_namespace({"metadata": {"name": "dying"}})
    core.create_namespaced_config_map(
        "dying", {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    )
    core.delete_namespace("dying")
    code, st = ssa.apply("/api/v1/namespaces/dying/configmaps/new", cm("new", {"a": "1"}))
    assert code == 403
    assert st["message"] == (
        'configmaps "new" is forbidden: unable to create new content in namespace dying because it is being '
        "terminated"
    )
    # An existing object in the terminating namespace can still be applied to (it is an update).
    code, obj = ssa.apply("/api/v1/namespaces/dying/configmaps/held", cm("held", {"x": "y"}))
    assert code == 200 and obj["data"] == {"x": "y"}
    raw.json(
        "PATCH",
        "/api/v1/namespaces/dying/configmaps/held",
        raw=b'{"metadata":{"finalizers":null}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )


def test_apply_on_status_of_missing_object_is_404(ssa, gadgets):
    code, st = ssa.apply(f"{GADGETS}/none/status", gadget("none", status={"phase": "x"}))
    assert code == 404 and st["reason"] == "NotFound"


def test_apply_dry_run_persists_nothing(ssa, core):
    code, obj = ssa.apply(f"{CM}/dry", cm("dry", {"a": "1"}), dryRun="All")
    assert code == 201 and obj["metadata"]["managedFields"][0]["manager"] == "mgr"
    code, _ = ssa.request("GET", f"{CM}/dry", None, content_type="application/json")
    assert code == 404


# --- request validation (9-1) ---------------------------------------------------------------------------


def test_apply_requires_field_manager(ssa):
    code, st = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}), manager=None)
    assert code == 422 and st["reason"] == "Invalid"
    assert st["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    assert st["details"]["kind"] == "PatchOptions" and st["details"]["group"] == "meta.k8s.io"


def test_force_is_only_for_apply(ssa, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    code, st = ssa.request(
        "PATCH", f"{CM}/c", {"data": {"a": "1"}}, "application/merge-patch+json", force="true"
    )
    assert code == 422
    assert st["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    )
    code, _ = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}), force="true")
    assert code == 200


def test_apply_rejects_managed_fields_in_body(ssa):
    body = cm("c", {"a": "1"}, managedFields=[{"manager": "x", "operation": "Apply"}])
    code, st = ssa.apply(f"{CM}/c", body)
    assert code == 400 and st["reason"] == "BadRequest"
    assert st["message"] == "metadata.managedFields must be nil"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"kind": "ConfigMap", "metadata": {"name": "c"}},
            "Incorrect version specified in apply patch. Specified patch version: , expected: v1",
        ),
        (
            {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            "Incorrect version specified in apply patch. Specified patch version: apps/v1, expected: v1",
        ),
        (
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}},
            "does not match the expected kind",
        ),
        ({"apiVersion": "v1", "metadata": {"name": "c"}}, "Object 'Kind' is missing"),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}},
            "the name of the object () does not match the name on the URL (c)",
        ),
        ("- a\n- b\n", "cannot unmarshal array into Go value of type map[string]interface {}"),
        ("a: [b\n", "error decoding YAML"),
    ],
)
def test_apply_body_must_be_a_named_object_of_the_kind(ssa, body, message):
    code, st = ssa.apply(f"{CM}/c", body)
    assert code == 400 and st["reason"] == "BadRequest"
    assert message in st["message"]


# --- conflicts and force (9-3 b) -----------------------------------------------------------------------


def test_conflict_with_apply_manager_exact_status(ssa):
    ssa.apply(f"{CM}/c", cm("c", {"key": "1"}), manager="first")
    code, st = ssa.apply(f"{CM}/c", cm("c", {"key": "2"}), manager="second")
    assert code == 409
    assert st == conflict_status(
        'Apply failed with 1 conflict: conflict with "first": .data.key',
        [('conflict with "first"', ".data.key")],
    )


def test_conflict_with_update_manager_names_its_version(ssa, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}, "data": {"key": "1"}})
    obj = core.read_namespaced_config_map("c", "default")
    (entry,) = obj.metadata.managed_fields
    assert (entry.manager, entry.operation) == ("OpenAPI-Generator", "Update")
    code, st = ssa.apply(f"{CM}/c", cm("c", {"key": "2"}), manager="applier")
    assert code == 409
    assert st == conflict_status(
        'Apply failed with 1 conflict: conflict with "OpenAPI-Generator" using v1: .data.key',
        [('conflict with "OpenAPI-Generator" using v1', ".data.key")],
    )


def test_several_conflicts_are_listed_per_manager(ssa, raw):
    ssa.apply(f"{CM}/c", cm("c", {"x": "1", "y": "1"}, labels={"l": "1"}), manager="alpha")
    code, _ = raw.json(
        "PATCH",
        f"{CM}/c?fieldManager=beta",
        raw=b'{"data":{"z":"1"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200
    code, st = ssa.apply(
        f"{CM}/c", cm("c", {"x": "2", "y": "2", "z": "2"}, labels={"l": "2"}), manager="gamma"
    )
    assert code == 409 and st["reason"] == "Conflict"
    assert st["message"] == (
        'Apply failed with 4 conflicts: conflicts with "alpha":\n- .data.x\n- .data.y\n- .metadata.labels.l\n'
        'conflicts with "beta" using v1:\n- .data.z'
    )
    assert st["details"] == {
        "causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "alpha"', "field": ".data.x"},
            {"reason": "FieldManagerConflict", "message": 'conflict with "alpha"', "field": ".data.y"},
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "alpha"',
                "field": ".metadata.labels.l",
            },
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "beta" using v1',
                "field": ".data.z",
            },
        ]
    }


def test_same_value_is_shared_not_a_conflict(ssa):
    ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "1"}), manager="one")
    code, obj = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}), manager="two")
    assert code == 200
    assert fields(obj, "one") == {"f:data": {"f:a": {}, "f:b": {}}}
    assert fields(obj, "two") == {"f:data": {"f:a": {}}}


def test_force_moves_ownership(ssa):
    ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "1"}), manager="one")
    code, obj = ssa.apply(f"{CM}/c", cm("c", {"a": "2"}), manager="two", force="true")
    assert code == 200 and obj["data"] == {"a": "2", "b": "1"}
    assert fields(obj, "one") == {"f:data": {"f:b": {}}}
    assert fields(obj, "two") == {"f:data": {"f:a": {}}}
    # "one" now conflicts with "two" when it re-applies its old value.
    code, st = ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "1"}), manager="one", force="false")
    assert code == 409 and st["message"] == 'Apply failed with 1 conflict: conflict with "two": .data.a'


def test_force_takes_every_field_of_a_manager_away(ssa):
    ssa.apply(f"{CM}/c", cm("c", {"a": "1"}), manager="one")
    code, obj = ssa.apply(f"{CM}/c", cm("c", {"a": "2"}), manager="two", force="true")
    assert code == 200
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["two"]


# --- removal and no-op (9-3 c, d) ----------------------------------------------------------------------


def test_fields_dropped_from_the_config_are_removed(ssa):
    ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "2"}, labels={"app": "x", "tier": "t"}))
    code, obj = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}, labels={"app": "x"}))
    assert code == 200
    assert obj["data"] == {"a": "1"} and obj["metadata"]["labels"] == {"app": "x"}
    assert fields(obj, "mgr") == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
    code, obj = ssa.apply(f"{CM}/c", cm("c"))
    assert code == 200
    assert "data" not in obj and "labels" not in obj["metadata"] and "managedFields" not in obj["metadata"]


def test_dropped_field_owned_by_another_manager_stays(ssa, raw):
    ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "1"}), manager="one")
    ssa.apply(f"{CM}/c", cm("c", {"b": "1"}), manager="two")
    code, obj = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}), manager="one")
    assert code == 200 and obj["data"] == {"a": "1", "b": "1"}
    assert fields(obj, "one") == {"f:data": {"f:a": {}}}
    assert fields(obj, "two") == {"f:data": {"f:b": {}}}
    # A field another manager wrote with an update is kept too, and never removed by the applier.
    raw.json(
        "PATCH",
        f"{CM}/c?fieldManager=editor",
        raw=b'{"data":{"e":"1"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    code, obj = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}), manager="one")
    assert obj["data"] == {"a": "1", "b": "1", "e": "1"}


def test_identical_apply_is_a_noop(ssa, apiserver):
    code, first = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}, labels={"app": "x"}))
    rv = apiserver.resource_version
    time.sleep(1.1)  # a time bump would be visible
    code, again = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}, labels={"app": "x"}))
    assert code == 200 and again == first
    assert apiserver.resource_version == rv


def test_apply_changing_a_value_keeps_one_entry_and_bumps_rv(ssa):
    _, first = ssa.apply(f"{CM}/c", cm("c", {"a": "1"}))
    code, second = ssa.apply(f"{CM}/c", cm("c", {"a": "2"}))
    assert code == 200 and second["data"] == {"a": "2"}
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    assert list(entries(second)) == [("mgr", "Apply")]


def test_finalizers_are_a_set(ssa):
    code, obj = ssa.apply(f"{CM}/c", cm("c", finalizers=["example.com/a", "example.com/b"]))
    assert code == 201
    assert fields(obj, "mgr") == {
        "f:metadata": {"f:finalizers": {'v:"example.com/a"': {}, 'v:"example.com/b"': {}}}
    }
    ssa.apply(f"{CM}/c", cm("c", finalizers=["example.com/c"]), manager="other")
    _, obj = ssa.apply(f"{CM}/c", cm("c", finalizers=["example.com/a"]))
    assert obj["metadata"]["finalizers"] == ["example.com/a", "example.com/c"]
    ssa.apply(f"{CM}/c", cm("c"))
    _, obj = ssa.apply(f"{CM}/c", cm("c"), manager="other")
    assert "finalizers" not in obj["metadata"]


# --- managedFields of ordinary writes (6-9, 9-3) ---------------------------------------------------------


def test_create_update_patch_record_update_entries(core, raw):
    core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c", "labels": {"app": "x"}}, "data": {"a": "1"}}
    )
    obj = raw.json("GET", f"{CM}/c")[1]
    assert entries(obj) == {
        ("OpenAPI-Generator", "Update"): {
            "manager": "OpenAPI-Generator",
            "operation": "Update",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:data": {".": {}, "f:a": {}},
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            },
        }
    }
    # An update by another manager takes the fields it changed; the creator keeps the rest.
    obj["data"] = {"a": "2", "b": "1"}
    code, obj = raw.json("PUT", f"{CM}/c?fieldManager=editor", obj)
    assert code == 200
    assert fields(obj, "OpenAPI-Generator", "Update") == {
        "f:data": {},  # still owns the map itself, no longer its keys
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    }
    assert fields(obj, "editor", "Update") == {"f:data": {"f:a": {}, "f:b": {}}}
    # Removing a field takes it out of every set.
    code, obj = raw.json(
        "PATCH",
        f"{CM}/c?fieldManager=editor",
        raw=b'{"data":{"b":null}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert fields(obj, "editor", "Update") == {"f:data": {"f:a": {}}}


def test_noop_writes_record_nothing(core, raw, apiserver):
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    before = raw.json("GET", f"{CM}/c")[1]
    rv = apiserver.resource_version
    code, after = raw.json("PUT", f"{CM}/c?fieldManager=someone", before)
    assert code == 200 and after == before
    code, after = raw.json(
        "PATCH",
        f"{CM}/c?fieldManager=someone",
        raw=b'{"data":{"a":"1"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200 and after == before and apiserver.resource_version == rv


def test_manager_defaults_to_the_user_agent_program(raw):
    code, obj = raw.json(
        "POST",
        CM,
        cm("ua", {"a": "1"}),
        headers={"User-Agent": "kubectl-client-side-apply/v1.32.4 (linux/amd64) kubernetes/6b8d0a9"},
    )
    assert code == 201
    assert list(entries(obj)) == [("kubectl-client-side-apply", "Update")]
    code, obj = raw.json(
        "PATCH",
        f"{CM}/ua",
        raw=b'{"data":{"b":"1"}}',
        headers={"Content-Type": "application/merge-patch+json", "User-Agent": "kopf/1.45.0"},
    )
    # Entries sort by operation, time (seconds), then manager.
    assert set(entries(obj)) == {("kubectl-client-side-apply", "Update"), ("kopf", "Update")}


def test_sent_managed_fields_replace_the_stored_ones(raw, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    obj = raw.json("GET", f"{CM}/c")[1]
    custom = [
        {
            "manager": "restored",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": "2024-05-01T10:00:00.123+02:00",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]
    obj["metadata"]["managedFields"] = custom
    code, obj = raw.json("PUT", f"{CM}/c", obj)
    assert code == 200
    assert obj["metadata"]["managedFields"] == [{**custom[0], "time": "2024-05-01T08:00:00Z"}]
    # An empty list keeps the stored value; [{}] clears it.
    obj["metadata"]["managedFields"] = []
    code, obj = raw.json("PUT", f"{CM}/c", obj)
    assert obj["metadata"]["managedFields"][0]["manager"] == "restored"
    obj["metadata"]["managedFields"] = [{}]
    code, obj = raw.json("PUT", f"{CM}/c", obj)
    assert code == 200 and "managedFields" not in obj["metadata"]
    # Undecodable entries are ignored in favour of the stored value.
    core.patch_namespaced_config_map("c", "default", {"data": {"b": "1"}})
    obj = raw.json("GET", f"{CM}/c")[1]
    stored = obj["metadata"]["managedFields"]
    obj["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus", "apiVersion": "v1"}]
    code, obj = raw.json("PUT", f"{CM}/c", obj)
    assert code == 200 and obj["metadata"]["managedFields"] == stored


def test_update_entries_are_capped_at_ten(raw, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    for i in range(12):
        code, obj = raw.json(
            "PATCH",
            f"{CM}/c?fieldManager=m{i:02}",
            raw=json.dumps({"data": {f"k{i}": "v"}}).encode(),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert code == 200
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == 10 and "ancient-changes" in managers and "m11" in managers
    ancient = fields(obj, "ancient-changes", "Update")
    assert ancient == {"f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}}


def test_update_after_apply_then_apply_conflicts_using_version(ssa, core):
    ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "1"}), manager="app")
    core.patch_namespaced_config_map("c", "default", {"data": {"a": "changed"}})
    obj = ssa.request("GET", f"{CM}/c", None, content_type="application/json")[1]
    assert fields(obj, "app") == {"f:data": {"f:b": {}}}
    assert fields(obj, "OpenAPI-Generator", "Update") == {"f:data": {"f:a": {}}}
    code, st = ssa.apply(f"{CM}/c", cm("c", {"a": "1", "b": "1"}), manager="app")
    assert code == 409
    assert (
        st["message"] == 'Apply failed with 1 conflict: conflict with "OpenAPI-Generator" using v1: .data.a'
    )


def test_dynamic_client_server_side_apply(apiserver):
    dyn = dynamic.DynamicClient(apiserver.api_client())
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    obj = dyn.server_side_apply(cms, cm("d", {"a": "1"}), namespace="default", field_manager="dyn")
    assert obj.data.a == "1"
    with pytest.raises(client.ApiException) as e:
        dyn.server_side_apply(cms, cm("d", {"a": "2"}), namespace="default", field_manager="other")
    assert e.value.status == 409
    obj = dyn.server_side_apply(
        cms, cm("d", {"a": "2"}), namespace="default", field_manager="other", force_conflicts=True
    )
    assert obj.data.a == "2"


# --- custom resources: list types, status subresource (§16, 10-1) -----------------------------------------


GADGET_CRD: dict = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"gadgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "kind": "Gadget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name", "protocol"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "protocol": {"type": "string", "default": "TCP"},
                                                "port": {"type": "integer"},
                                            },
                                        },
                                    },
                                    "tags": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"},
                                    },
                                    "args": {"type": "array", "items": {"type": "string"}},
                                    "selector": {
                                        "type": "object",
                                        "x-kubernetes-map-type": "atomic",
                                        "additionalProperties": {"type": "string"},
                                    },
                                    "size": {"type": "integer"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"phase": {"type": "string"}, "ready": {"type": "boolean"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def gadget(name: str, spec: dict | None = None, status: dict | None = None) -> dict:
    body: dict = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": name}}
    if spec is not None:
        body["spec"] = spec
    if status is not None:
        body["status"] = status
    return body


@pytest.fixture
def gadgets(apiserver) -> None:
    apiserver.install_crds([json.loads(json.dumps(GADGET_CRD))])


def test_cr_map_list_merges_by_keys(ssa, gadgets):
    code, obj = ssa.apply(
        f"{GADGETS}/g", gadget("g", {"ports": [{"name": "http", "port": 80}]}), manager="one"
    )
    assert code == 201
    assert obj["spec"]["ports"] == [{"name": "http", "port": 80, "protocol": "TCP"}]
    assert fields(obj, "one") == {
        "f:spec": {"f:ports": {'k:{"name":"http","protocol":"TCP"}': {".": {}, "f:name": {}, "f:port": {}}}}
    }
    code, obj = ssa.apply(
        f"{GADGETS}/g",
        gadget("g", {"ports": [{"name": "dns", "protocol": "UDP", "port": 53}]}),
        manager="two",
    )
    assert code == 200
    assert obj["spec"]["ports"] == [
        {"name": "http", "port": 80, "protocol": "TCP"},
        {"name": "dns", "protocol": "UDP", "port": 53},
    ]
    code, st = ssa.apply(
        f"{GADGETS}/g", gadget("g", {"ports": [{"name": "http", "port": 8080}]}), manager="two"
    )
    assert code == 409
    assert st["message"] == (
        'Apply failed with 1 conflict: conflict with "one": .spec.ports[name="http",protocol="TCP"].port'
    )
    assert st["details"]["causes"][0]["field"] == '.spec.ports[name="http",protocol="TCP"].port'
    # "one" drops its item: only its item goes, "two"'s stays.
    code, obj = ssa.apply(f"{GADGETS}/g", gadget("g", {"size": 1}), manager="one")
    assert obj["spec"]["ports"] == [{"name": "dns", "protocol": "UDP", "port": 53}]
    assert obj["metadata"]["generation"] == 3


def test_cr_map_list_item_without_its_key_fails_like_upstream(ssa, gadgets):
    code, st = ssa.apply(f"{GADGETS}/g", gadget("g", {"ports": [{"port": 80}]}))
    assert code == 500 and "reason" not in st
    assert st["message"] == (
        "failed to create typed patch object (default/g; example.com/v1, Kind=Gadget): .spec.ports: "
        'element 0: associative list with keys has an element that omits key field "name" '
        "(and doesn't have default value)"
    )


def test_cr_set_atomic_list_and_atomic_map(ssa, gadgets):
    spec = {"tags": ["a", "b"], "args": ["x", "y"], "selector": {"k": "v"}}
    code, obj = ssa.apply(f"{GADGETS}/g", gadget("g", spec), manager="one")
    assert fields(obj, "one") == {
        "f:spec": {"f:args": {}, "f:selector": {}, "f:tags": {'v:"a"': {}, 'v:"b"': {}}}
    }
    code, obj = ssa.apply(
        f"{GADGETS}/g",
        gadget("g", {"tags": ["c"], "args": ["x", "y"], "selector": {"k": "v"}}),
        manager="two",
    )
    assert code == 200 and obj["spec"]["tags"] == ["a", "b", "c"]
    code, st = ssa.apply(f"{GADGETS}/g", gadget("g", {"args": ["z"]}), manager="two")
    assert code == 409 and st["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "one"', "field": ".spec.args"}
    ]
    code, obj = ssa.apply(
        f"{GADGETS}/g", gadget("g", {"selector": {"other": "1"}}), manager="two", force="true"
    )
    assert obj["spec"]["selector"] == {"other": "1"}  # atomic: replaced, not merged


def test_status_subresource_apply_records_subresource(ssa, gadgets, apiserver):
    ssa.apply(f"{GADGETS}/g", gadget("g", {"size": 1}, status={"phase": "ignored"}), manager="user")
    code, obj = ssa.apply(f"{GADGETS}/g", gadget("g", {"size": 1}), manager="user")
    assert "status" not in obj
    assert fields(obj, "user") == {"f:spec": {"f:size": {}}}
    code, obj = ssa.apply(
        f"{GADGETS}/g/status", gadget("g", {"size": 99}, status={"phase": "Ready"}), manager="ctrl"
    )
    assert code == 200
    assert obj["status"] == {"phase": "Ready"} and obj["spec"] == {"size": 1}
    assert obj["metadata"]["generation"] == 1
    e = entries(obj)[("ctrl", "Apply")]
    assert e["subresource"] == "status" and e["fieldsV1"] == {"f:status": {"f:phase": {}}}
    # Another status applier conflicts, naming the subresource.
    code, st = ssa.apply(f"{GADGETS}/g/status", gadget("g", status={"phase": "Failed"}), manager="ctrl2")
    assert code == 409
    assert st["message"] == (
        'Apply failed with 1 conflict: conflict with "ctrl" with subresource "status": .status.phase'
    )
    # A status update records subresource status, operation Update.
    obj["status"]["ready"] = True
    code, obj = ssa.request("PUT", f"{GADGETS}/g/status", obj, "application/json", fieldManager="writer")
    assert code == 200
    e = entries(obj)[("writer", "Update")]
    assert e["subresource"] == "status" and e["fieldsV1"] == {"f:status": {"f:ready": {}}}


def test_cr_apply_upsert_blocked_while_crd_terminating(ssa, gadgets, raw):
    held = gadget("held", {"size": 1})
    held["metadata"]["finalizers"] = ["example.com/hold"]
    assert ssa.apply(f"{GADGETS}/held", held)[0] == 201
    raw.json("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{GROUP}")
    code, st = ssa.apply(f"{GADGETS}/new", gadget("new", {"size": 1}))
    assert code == 403
    assert "create not allowed while custom resource definition is terminating" in st["message"]
    ssa.apply(f"{GADGETS}/held", gadget("held", {"size": 1}))  # drops the finalizer it applied


# --- the module's own pieces ------------------------------------------------------------------------


def test_paths_and_fields_v1_round_trip():
    path = (("f", "spec"), ("f", "containers"), ("k", '{"name":"c"}'), ("f", "image"))
    assert mf.path_string(path) == '.spec.containers[name="c"].image'
    assert (
        mf.path_string((("f", "metadata"), ("f", "finalizers"), ("v", '"x"'))) == '.metadata.finalizers[="x"]'
    )
    tree = {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}}}},
    }
    paths = mf.from_fields_v1(tree)
    assert (("f", "spec"), ("f", "containers"), ("k", '{"name":"c"}')) in paths
    assert mf.to_fields_v1(paths) == tree


def test_merge_keeps_live_only_items_in_place():
    sa = ResourceType("", "v1", "serviceaccounts", "ServiceAccount", True, "serviceaccount")
    schema = mf.builtin_schema(dataclasses.replace(sa, smp={"secrets": ("merge", "name")}))
    live = {"secrets": [{"name": "a"}, {"name": "b", "x": 1}, {"name": "c"}]}
    config = {"secrets": [{"name": "c", "y": 1}, {"name": "b", "x": 2}]}
    assert mf.merge(live, config, schema)["secrets"] == [
        {"name": "a"},
        {"name": "c", "y": 1},
        {"name": "b", "x": 2},
    ]


# --- kubectl (9-4) --------------------------------------------------------------------------------------


def managed(kubectl: Kubectl, *args: str) -> dict:
    """``kubectl get ... -o json --show-managed-fields``."""
    return kubectl.json("get", *args, "--show-managed-fields")


def test_kubectl_server_side_apply_conflict_and_force(kubectl):
    f = kubectl.write("cm.yaml", cm("k", {"a": "1", "b": "2"}, labels={"app": "x"}))
    assert "configmap/k serverside-applied" in kubectl.ok("apply", "--server-side", "-f", f)
    obj = managed(kubectl, "configmap", "k")
    assert entries(obj) == {
        ("kubectl", "Apply"): {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:app": {}}}},
        }
    }
    f = kubectl.write("cm.yaml", cm("k", {"a": "changed"}, labels={"app": "x"}))
    kubectl.ok("apply", "--server-side", "-f", f)
    obj = managed(kubectl, "configmap", "k")
    assert obj["data"] == {"a": "changed"}
    f = kubectl.write("other.yaml", cm("k", {"a": "mine"}))
    r = kubectl.run("apply", "--server-side", "--field-manager", "other", "-f", f)
    assert r.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.a' in r.stderr
    assert "--force-conflicts" in r.stderr
    kubectl.ok("apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", f)
    obj = managed(kubectl, "configmap", "k")
    assert obj["data"] == {"a": "mine"}
    assert fields(obj, "other") == {"f:data": {"f:a": {}}}
    assert fields(obj, "kubectl") == {"f:metadata": {"f:labels": {"f:app": {}}}}


def test_kubectl_client_side_to_server_side_migration(kubectl):
    f = kubectl.write("cm.yaml", cm("m", {"a": "1", "b": "1"}))
    kubectl.ok("apply", "-f", f)
    obj = managed(kubectl, "configmap", "m")
    assert list(entries(obj)) == [("kubectl-client-side-apply", "Update")]
    f = kubectl.write("cm.yaml", cm("m", {"a": "2"}))
    assert "serverside-applied" in kubectl.ok("apply", "--server-side", "-f", f)
    obj = managed(kubectl, "configmap", "m")
    assert obj["data"] == {"a": "2"}  # b was kubectl's through the last-applied configuration
    assert ("kubectl", "Apply") in entries(obj)
    assert fields(obj, "kubectl") == {"f:data": {"f:a": {}}}
    last = json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["data"] == {"a": "2"}
    # Further server-side applies go on without conflicts; an identical one changes nothing.
    kubectl.ok("apply", "--server-side", "-f", f)
    assert (
        managed(kubectl, "configmap", "m")["metadata"]["resourceVersion"]
        == obj["metadata"]["resourceVersion"]
    )


def test_kubectl_server_side_apply_custom_resource(kubectl, gadgets):
    f = kubectl.write("g.yaml", gadget("kg", {"ports": [{"name": "http", "port": 80}], "tags": ["a"]}))
    kubectl.ok("apply", "--server-side", "-f", f)
    f2 = kubectl.write("g2.yaml", gadget("kg", {"ports": [{"name": "grpc", "port": 90}]}))
    kubectl.ok("apply", "--server-side", "--field-manager", "second", "-f", f2)
    obj = managed(kubectl, "gadgets.example.com", "kg")
    assert [p["name"] for p in obj["spec"]["ports"]] == ["http", "grpc"]
    r = kubectl.run(
        "apply",
        "--server-side",
        "--field-manager",
        "second",
        "-f",
        kubectl.write("g3.yaml", gadget("kg", {"ports": [{"name": "http", "port": 81}]})),
    )
    assert r.returncode != 0
    assert 'conflict with "kubectl": .spec.ports[name="http",protocol="TCP"].port' in r.stderr
