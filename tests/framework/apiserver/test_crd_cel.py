"""CEL validation rules of CRDs (x-kubernetes-validations; docs/apiserver.md "CEL"), through the
official client and kubectl: kube-apiserver's messages, field paths, reasons and transition rules."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

GROUP = "batch.tutorial.kubebuilder.io"


def cronjob_crd(extra_spec_rules: list | None = None) -> dict:
    """The kubebuilder tutorial's CronJob with the kinds of rules its markers generate."""
    spec_schema = {
        "type": "object",
        "required": ["schedule"],
        "properties": {
            "schedule": {"type": "string", "maxLength": 64},
            "startingDeadlineSeconds": {"type": "integer", "format": "int64", "minimum": 0},
            "concurrencyPolicy": {"type": "string", "enum": ["Allow", "Forbid", "Replace"]},
            "suspend": {"type": "boolean"},
            "successfulJobsHistoryLimit": {"type": "integer", "format": "int32", "minimum": 0},
            "failedJobsHistoryLimit": {"type": "integer", "format": "int32", "minimum": 0},
            "minReplicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"},
            "jobTemplateName": {
                "type": "string",
                "maxLength": 63,
                "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "jobTemplateName is immutable"}
                ],
            },
            "ports": {
                "type": "array",
                "maxItems": 16,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name", "port"],
                    "properties": {
                        "name": {"type": "string", "maxLength": 15},
                        "port": {"type": "integer"},
                        "protocol": {"type": "string", "maxLength": 8},
                    },
                    "x-kubernetes-validations": [
                        {"rule": "self.port > 0 && self.port < 65536", "message": "port out of range"},
                        {
                            "rule": "!has(oldSelf.protocol) || self.protocol == oldSelf.protocol",
                            "message": "protocol is immutable",
                        },
                    ],
                },
                "x-kubernetes-validations": [
                    {
                        "rule": "self.all(p, p.name.matches('^[a-z]+$'))",
                        "message": "port names are lower case",
                    }
                ],
            },
            "labels": {
                "type": "object",
                "maxProperties": 8,
                "additionalProperties": {"type": "string", "maxLength": 63},
                "x-kubernetes-validations": [
                    {
                        "rule": "self.all(k, k.size() <= 16)",
                        "messageExpression": "'label key too long: ' + self.filter(k, k.size() > 16)[0]",
                    }
                ],
            },
            "memory": {
                "x-kubernetes-int-or-string": True,
                "x-kubernetes-validations": [
                    {
                        "rule": "isQuantity(string(self)) && "
                        "quantity(string(self)).isLessThan(quantity('1Gi'))",
                        "message": "memory must be below 1Gi",
                    }
                ],
            },
        },
        "x-kubernetes-validations": [
            {
                "rule": "!has(self.minReplicas) || !has(self.maxReplicas) || "
                "self.minReplicas <= self.maxReplicas",
                "message": "minReplicas must not exceed maxReplicas",
                "fieldPath": ".minReplicas",
            },
            {
                "rule": "self.schedule.split(' ').size() == 5",
                "messageExpression": "'schedule ' + self.schedule + ' must have five fields'",
                "reason": "FieldValueForbidden",
            },
            *(extra_spec_rules or []),
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"cronjobs.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": "cronjobs",
                "singular": "cronjob",
                "kind": "CronJob",
                "listKind": "CronJobList",
            },
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
                                "spec": spec_schema,
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "active": {"type": "integer"},
                                        "phase": {"type": "string", "maxLength": 32},
                                    },
                                    "x-kubernetes-validations": [
                                        {
                                            "rule": "!has(self.active) || self.active >= 0",
                                            "message": "active must not be negative",
                                        },
                                        {
                                            "rule": "!has(oldSelf.phase) || oldSelf.phase != 'Done' "
                                            "|| self.phase == 'Done'",
                                            "message": "a Done cron job stays Done",
                                            "reason": "FieldValueForbidden",
                                        },
                                    ],
                                },
                            },
                            "x-kubernetes-validations": [
                                {"rule": "self.metadata.name.size() <= 20", "message": "name too long"}
                            ],
                        }
                    },
                }
            ],
        },
    }


def cronjob(name: str = "nightly", **spec) -> dict:
    body = {"schedule": "*/1 * * * *", **spec}
    return {"apiVersion": f"{GROUP}/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


@pytest.fixture
def co(apiserver) -> client.CustomObjectsApi:
    apiserver.install_crds([cronjob_crd()])
    return client.CustomObjectsApi(apiserver.api_client())


def create(co, body):
    return co.create_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", body)


def refused(fn, *args) -> dict:
    with pytest.raises(ApiException) as e:
        fn(*args)
    assert e.value.status == 422, e.value.body
    return json.loads(e.value.body)


def replace(co, name, body):
    return co.replace_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", name, body)


def patch(co, name, body):
    return co.patch_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", name, body)


def patch_status(co, name, body):
    return co.patch_namespaced_custom_object_status(GROUP, "v1", "default", "cronjobs", name, body)


def test_good_object_is_accepted(co) -> None:
    got = create(
        co,
        cronjob(
            minReplicas=1,
            maxReplicas=3,
            ports=[{"name": "http", "port": 80}],
            labels={"app": "x"},
            memory="512Mi",
        ),
    )
    assert got["spec"]["maxReplicas"] == 3
    assert create(co, cronjob("intmem", memory=1024))["spec"]["memory"] == 1024


def test_bad_object_is_refused_with_kube_message_and_field_path(co) -> None:
    status = refused(create, co, cronjob(minReplicas=5, maxReplicas=3))
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'CronJob.{GROUP} "nightly" is invalid: spec.minReplicas: Invalid value: "object": '
        "minReplicas must not exceed maxReplicas"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "object": minReplicas must not exceed maxReplicas',
            "field": "spec.minReplicas",
        }
    ]


def test_message_expression_and_reason(co) -> None:
    status = refused(create, co, cronjob(schedule="* * * *"))
    assert status["message"] == (
        f'CronJob.{GROUP} "nightly" is invalid: spec: Forbidden: schedule * * * * must have five fields'
    )
    assert status["details"]["causes"][0]["reason"] == "FieldValueForbidden"
    # a map's rule with a message expression naming the bad key
    status = refused(create, co, cronjob(labels={"a" * 20: "x"}))
    assert status["message"].endswith('spec.labels: Invalid value: "object": label key too long: ' + "a" * 20)


def test_rule_without_message_reports_the_rule(apiserver) -> None:
    crd = cronjob_crd(extra_spec_rules=[{"rule": "!has(self.suspend) || !self.suspend"}])
    apiserver.install_crds([crd])
    co = client.CustomObjectsApi(apiserver.api_client())
    status = refused(create, co, cronjob(suspend=True))
    assert status["message"].endswith(
        'spec: Invalid value: "object": failed rule: !has(self.suspend) || !self.suspend'
    )


def test_root_rule_reports_nil_path(co) -> None:
    name = "a-name-longer-than-twenty"
    status = refused(create, co, cronjob(name))
    assert status["message"] == (
        f'CronJob.{GROUP} "{name}" is invalid: <nil>: Invalid value: "object": name too long'
    )


def test_transition_rule_immutability(co) -> None:
    create(co, cronjob(jobTemplateName="first"))
    obj = co.get_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", "nightly")
    obj["spec"]["jobTemplateName"] = "second"
    status = refused(replace, co, "nightly", obj)
    assert status["message"] == (
        f'CronJob.{GROUP} "nightly" is invalid: spec.jobTemplateName: Invalid value: "string": '
        "jobTemplateName is immutable"
    )
    # the same change as a merge patch; an unchanged value passes
    refused(patch, co, "nightly", {"spec": {"jobTemplateName": "third"}})
    assert patch(co, "nightly", {"spec": {"suspend": True}})["spec"]["jobTemplateName"] == "first"
    # a value set for the first time has no old value: the transition rule does not run
    create(co, cronjob("other"))
    assert patch(co, "other", {"spec": {"jobTemplateName": "x"}})["spec"]["jobTemplateName"] == "x"


def test_list_map_items_are_correlated_by_key(co) -> None:
    status = refused(create, co, cronjob(ports=[{"name": "http", "port": 70000}]))
    assert status["message"].endswith('spec.ports[0]: Invalid value: "object": port out of range')
    status = refused(create, co, cronjob(ports=[{"name": "HTTP", "port": 80}]))
    assert status["message"].endswith('spec.ports: Invalid value: "array": port names are lower case')
    create(
        co,
        cronjob(
            ports=[
                {"name": "http", "port": 80, "protocol": "TCP"},
                {"name": "dns", "port": 53, "protocol": "UDP"},
            ]
        ),
    )
    obj = co.get_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", "nightly")
    # reordered, dns's protocol changed: the item is found by its key, not its index
    obj["spec"]["ports"] = [
        {"name": "dns", "port": 53, "protocol": "TCP"},
        {"name": "http", "port": 80, "protocol": "TCP"},
    ]
    status = refused(replace, co, "nightly", obj)
    assert status["message"].endswith('spec.ports[0]: Invalid value: "object": protocol is immutable')
    obj["spec"]["ports"][0]["protocol"] = "UDP"
    assert replace(co, "nightly", obj)["spec"]["ports"][0]["name"] == "dns"


def test_int_or_string_rule(co) -> None:
    status = refused(create, co, cronjob(memory="2Gi"))
    assert status["message"].endswith('spec.memory: Invalid value: "": memory must be below 1Gi')


def test_status_writes_are_validated(co) -> None:
    create(co, cronjob())
    status = refused(patch_status, co, "nightly", {"status": {"active": -1}})
    assert status["message"] == (
        f'CronJob.{GROUP} "nightly" is invalid: status: Invalid value: "object": active must not be negative'
    )
    patch_status(co, "nightly", {"status": {"phase": "Done"}})
    status = refused(patch_status, co, "nightly", {"status": {"phase": "Running"}})
    assert status["message"].endswith("status: Forbidden: a Done cron job stays Done")


def test_runtime_error_is_reported(apiserver) -> None:
    crd = cronjob_crd(extra_spec_rules=[{"rule": "self.suspend == false", "message": "must not suspend"}])
    apiserver.install_crds([crd])
    co = client.CustomObjectsApi(apiserver.api_client())
    status = refused(create, co, cronjob())
    assert status["message"].endswith(
        'spec: Invalid value: "object": no such key: suspend evaluating rule: must not suspend'
    )
    create(co, cronjob(suspend=False))


def test_schema_errors_block_the_rules(co) -> None:
    status = refused(create, co, cronjob(minReplicas="five", maxReplicas=1))
    assert status["details"]["causes"][-1] == {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: null: some validation rules were not checked because the object was"
        " invalid; correct the existing errors to complete validation",
        "field": "<nil>",
    }


def test_optional_old_self_runs_on_create(apiserver) -> None:
    rule = {
        "rule": "oldSelf.hasValue() ? self.maxReplicas >= oldSelf.value().maxReplicas"
        " : self.maxReplicas <= 10",
        "message": "maxReplicas starts at most 10 and never shrinks",
        "optionalOldSelf": True,
    }
    apiserver.install_crds([cronjob_crd(extra_spec_rules=[rule])])
    co = client.CustomObjectsApi(apiserver.api_client())
    refused(create, co, cronjob(maxReplicas=11))
    create(co, cronjob(maxReplicas=5))
    assert patch(co, "nightly", {"spec": {"maxReplicas": 20}})["spec"]["maxReplicas"] == 20
    status = refused(patch, co, "nightly", {"spec": {"maxReplicas": 19}})
    assert status["message"].endswith(
        'spec: Invalid value: "object": maxReplicas starts at most 10 and never shrinks'
    )


def test_unchanged_invalid_values_ratchet(apiserver) -> None:
    """CRDValidationRatcheting (on since 1.30): a rule added later fails only values that change."""
    apiserver.install_crds([cronjob_crd()])
    api = apiserver.api_client()
    co = client.CustomObjectsApi(api)
    create(co, cronjob(maxReplicas=50, suspend=False))
    crd_api = client.ApiextensionsV1Api(api)
    crd = crd_api.read_custom_resource_definition(f"cronjobs.{GROUP}")
    props = crd.spec.versions[0].schema.open_apiv3_schema.properties["spec"].properties
    props["maxReplicas"].x_kubernetes_validations = [{"rule": "self <= 10", "message": "at most 10"}]
    crd_api.replace_custom_resource_definition(f"cronjobs.{GROUP}", crd)
    # another field changes: the unchanged maxReplicas is ratcheted (a warning, not an error)
    got, _, headers = co.patch_namespaced_custom_object_with_http_info(
        GROUP, "v1", "default", "cronjobs", "nightly", {"spec": {"suspend": True}}
    )
    assert got["spec"]["suspend"] is True
    assert "at most 10" in headers.get("Warning", "")
    status = refused(patch, co, "nightly", {"spec": {"maxReplicas": 40}})
    assert status["message"].endswith('spec.maxReplicas: Invalid value: "integer": at most 10')


# --- the CRD's rules are checked when the CRD is written ----------------------------------------------


def crd_refused(apiserver, crd: dict) -> dict:
    api = client.ApiextensionsV1Api(apiserver.api_client())
    return refused(api.create_custom_resource_definition, crd)


def test_rule_that_does_not_compile_refuses_the_crd(apiserver) -> None:
    crd = cronjob_crd(extra_spec_rules=[{"rule": "self.minReplicas <= "}])
    status = crd_refused(apiserver, crd)
    assert status["message"] == (
        f'CustomResourceDefinition.apiextensions.k8s.io "cronjobs.{GROUP}" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule: Invalid value: "
        'apiextensions.ValidationRule{Rule:"self.minReplicas <= ", Message:"", MessageExpression:"", '
        'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: "
        "compilation failed: ERROR: <input>:1:21: Syntax error: mismatched input '<EOF>' expecting "
        "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
        "BYTES, IDENTIFIER}\n"
        " | self.minReplicas <= \n"
        " | ....................^"
    )


@pytest.mark.parametrize(
    ("rule", "detail"),
    [
        ({"rule": "size(self.schedule)"}, "cel expression must evaluate to a bool"),
        ({"rule": "self.nope(1)"}, "compilation failed: ERROR: <input>:1:10: undeclared reference to 'nope'"),
        (
            {"rule": "1 + 'a' == 2"},
            "compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_'",
        ),
        ({"rule": "true", "messageExpression": "1"}, "messageExpression must evaluate to a string"),
        (
            {"rule": "self.minReplicsa > 0"},
            "compilation failed: ERROR: <input>:1:5: undefined field 'minReplicsa'\n | self.minReplicsa > 0\n"
            " | ....^",
        ),
        (
            {"rule": "self.ports.all(p, p.nmae != '')"},
            "compilation failed: ERROR: <input>:1:20: undefined field 'nmae'",
        ),
    ],
)
def test_compile_problems_refuse_the_crd(apiserver, rule, detail) -> None:
    status = crd_refused(apiserver, cronjob_crd(extra_spec_rules=[rule]))
    assert detail in status["message"], status["message"]


def test_malformed_rule_entries_refuse_the_crd(apiserver) -> None:
    status = crd_refused(
        apiserver,
        cronjob_crd(
            extra_spec_rules=[
                {"rule": " "},
                {"rule": "true", "reason": "FieldValueBogus"},
                {"rule": "true", "fieldPath": ".nope"},
            ]
        ),
    )
    base = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations"
    assert status["message"] == (
        f'CustomResourceDefinition.apiextensions.k8s.io "cronjobs.{GROUP}" is invalid: ['
        f"{base}[2].rule: Required value: rule is not specified, "
        f'{base}[3].reason: Unsupported value: "FieldValueBogus": supported values: "FieldValueDuplicate", '
        '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired", '
        f'{base}[4].fieldPath: Invalid value: ".nope": fieldPath must be a valid path]'
    )


def test_rule_over_the_cost_budget_refuses_the_crd(apiserver) -> None:
    crd = cronjob_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["names"] = {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}],
    }
    status = crd_refused(apiserver, crd)
    assert (
        "spec.validation.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0]"
        ".rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying "
        "the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are "
        "declared)"
    ) in status["message"]
    # bounded, the same rule is cheap enough
    spec["properties"]["names"]["maxItems"] = 10
    spec["properties"]["names"]["items"]["maxLength"] = 10
    apiserver.install_crds([crd])


def test_old_self_on_uncorrelatable_items_refuses_the_crd(apiserver) -> None:
    crd = cronjob_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["tags"] = {
        "type": "array",
        "maxItems": 4,
        "items": {
            "type": "string",
            "maxLength": 8,
            "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
        },
    }
    status = crd_refused(apiserver, crd)
    assert (
        "spec.validation.openAPIV3Schema.properties[spec].properties[tags].items.x-kubernetes-validations"
        '[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of '
        "the schema within spec.validation.openAPIV3Schema.properties[spec].properties[tags]"
    ) in status["message"]


def test_kubectl_apply_reports_the_rule(apiserver, kubectl) -> None:
    apiserver.install_crds([cronjob_crd()])
    bad = cronjob(minReplicas=4, maxReplicas=2)
    err = kubectl.fails("apply", "-f", "-", input=json.dumps(bad))
    assert (
        'The CronJob "nightly" is invalid: spec.minReplicas: Invalid value: "object": '
        "minReplicas must not exceed maxReplicas"
    ) in err
    kubectl.ok("apply", "-f", "-", input=json.dumps(cronjob(minReplicas=1, maxReplicas=2)))
    err = kubectl.fails(
        "patch",
        "cronjob.batch.tutorial.kubebuilder.io",
        "nightly",
        "--type=merge",
        "-p",
        json.dumps({"spec": {"schedule": "daily"}}),
    )
    assert "spec: Forbidden: schedule daily must have five fields" in err


def test_runtime_cost_limit(apiserver) -> None:
    """A rule within the static budget that costs more than the per-call limit on the actual value."""
    crd = cronjob_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["names"] = {
        "type": "array",
        "maxItems": 1000,
        "items": {"type": "string", "maxLength": 8},
        "x-kubernetes-validations": [
            {"rule": "self.all(x, self.exists(y, x == y))", "message": "names are names"}
        ],
    }
    apiserver.install_crds([crd])
    co = client.CustomObjectsApi(apiserver.api_client())
    create(co, cronjob("few", names=["a", "b", "c"]))
    status = refused(create, co, cronjob("many", names=[f"n{i}" for i in range(900)]))
    assert status["message"].endswith(
        "spec.names: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further "
        "validation rules will be run due to call cost exceeds limit for rule: names are names"
    )


def test_property_names_are_escaped(apiserver) -> None:
    """k8s.io/apiserver/pkg/cel/escaping.go: ``x-y`` is ``x__dash__y``, a keyword ``__in__``."""
    crd = cronjob_crd(
        extra_spec_rules=[
            {
                "rule": "!has(self.dry__dash__run) || !self.dry__dash__run || self.__in__ == 'x'",
                "message": "dry",
            }
        ]
    )
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["dry-run"] = {"type": "boolean"}
    spec["properties"]["in"] = {"type": "string", "maxLength": 4}
    apiserver.install_crds([crd])
    co = client.CustomObjectsApi(apiserver.api_client())
    create(co, cronjob("a", **{"dry-run": True, "in": "x"}))
    status = refused(create, co, cronjob("b", **{"dry-run": True, "in": "y"}))
    assert status["message"].endswith('spec: Invalid value: "object": dry')


def test_many_cheap_evaluations_fit_the_budget(apiserver) -> None:
    """Each item's rule is charged what it costs on the item, not the bound for the object's size:
    4,000 unbounded items, whose bounds alone would pass the 10,000,000 budget, are accepted."""
    crd = cronjob_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["tags"] = {
        "type": "array",
        "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.matches('^[a-z]+$')"}]},
    }
    apiserver.install_crds([crd])
    co = client.CustomObjectsApi(apiserver.api_client())
    assert len(create(co, cronjob(tags=["abc"] * 4000))["spec"]["tags"]) == 4000
    status = refused(create, co, cronjob("bad", tags=["abc", "A"]))
    assert status["message"].endswith(
        "spec.tags[1]: Invalid value: \"string\": failed rule: self.matches('^[a-z]+$')"
    )


def test_rules_at_every_level(apiserver) -> None:
    """Rules on map values (``spec.limits[cpu]``), an embedded resource (its metadata holds only name
    and generateName), an object preserving unknown fields, and reasons Required and Duplicate."""
    crd = cronjob_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["limits"] = {
        "type": "object",
        "maxProperties": 4,
        "additionalProperties": {
            "x-kubernetes-int-or-string": True,
            "x-kubernetes-validations": [
                {"rule": "quantity(string(self)).sign() >= 0", "message": "negative"}
            ],
        },
    }
    spec["properties"]["template"] = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": [
            {"rule": "self.kind == 'Pod'", "message": "only Pods"},
            {
                "rule": "!has(self.metadata.name) || self.metadata.name.startsWith('t-')",
                "reason": "FieldValueRequired",
                "message": "names start with t-",
            },
        ],
    }
    spec["properties"]["extra"] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": [
            {"rule": "!has(self.secret)", "message": "no secrets here", "reason": "FieldValueDuplicate"}
        ],
    }
    apiserver.install_crds([crd])
    co = client.CustomObjectsApi(apiserver.api_client())
    good = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t-1"}, "spec": {"containers": []}}
    create(co, cronjob("ok", limits={"cpu": "1", "memory": 100}, template=good, extra={"a": 1}))
    status = refused(create, co, cronjob("a", limits={"cpu": "-1"}))
    assert status["message"].endswith('spec.limits[cpu]: Invalid value: "": negative')
    status = refused(create, co, cronjob("b", template={**good, "kind": "Job"}))
    assert status["message"].endswith('spec.template: Invalid value: "object": only Pods')
    status = refused(create, co, cronjob("c", template={**good, "metadata": {"name": "x"}}))
    assert status["message"].endswith("spec.template: Required value: names start with t-")
    assert status["details"]["causes"][0]["reason"] == "FieldValueRequired"
    status = refused(create, co, cronjob("d", extra={"secret": "x"}))
    assert status["message"].endswith('spec.extra: Duplicate value: "object"')
    assert status["details"]["causes"][0]["reason"] == "FieldValueDuplicate"


def test_object_rules_ratchet_on_unchanged_objects(apiserver) -> None:
    """A rule added to ``spec`` later: an update that leaves ``spec`` as it was passes with a warning,
    one that changes ``spec`` fails."""
    apiserver.install_crds([cronjob_crd()])
    api = apiserver.api_client()
    co = client.CustomObjectsApi(api)
    create(co, cronjob(maxReplicas=50))
    crd_api = client.ApiextensionsV1Api(api)
    crd = crd_api.read_custom_resource_definition(f"cronjobs.{GROUP}")
    spec = crd.spec.versions[0].schema.open_apiv3_schema.properties["spec"]
    spec.x_kubernetes_validations.append(
        client.V1ValidationRule(rule="self.maxReplicas <= 10", message="at most 10 replicas")
    )
    crd_api.replace_custom_resource_definition(f"cronjobs.{GROUP}", crd)
    got, _, headers = co.patch_namespaced_custom_object_with_http_info(
        GROUP, "v1", "default", "cronjobs", "nightly", {"metadata": {"labels": {"a": "b"}}}
    )
    assert got["metadata"]["labels"] == {"a": "b"}
    assert headers.get("Warning") == '299 - "spec: Invalid value: \\"object\\": at most 10 replicas"'
    status = refused(patch, co, "nightly", {"spec": {"suspend": True}})
    assert status["message"].endswith('spec: Invalid value: "object": at most 10 replicas')
