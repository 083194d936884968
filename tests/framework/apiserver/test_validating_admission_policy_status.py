"""``status`` of ValidatingAdmissionPolicies as kube-controller-manager's
``validatingadmissionpolicy-status`` controller writes it (docs/apiserver.md, "ValidatingAdmissionPolicy"):
``observedGeneration`` and ``typeChecking``, through the official client and raw HTTP."""

from __future__ import annotations

import pytest
from kubernetes import client

from framework.apiserver.admission import typechecking
from framework.testing import eventually

from .test_crd import GROUP, widget_crd

G = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
DEPLOYMENTS = {
    "resourceRules": [
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}
    ]
}


@pytest.fixture
def adm(apiserver) -> client.AdmissionregistrationV1Api:
    return client.AdmissionregistrationV1Api(apiserver.api_client())


def create(raw, validations: list[dict], **spec) -> None:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p"},
        "spec": {"matchConstraints": DEPLOYMENTS, "validations": validations, **spec},
    }
    code, answer = raw.json("POST", G, body)
    assert code == 201, answer


def observed(raw, generation: int) -> dict:
    def status() -> dict | None:
        _, obj = raw.json("GET", f"{G}/p")
        return obj if obj["status"].get("observedGeneration") == generation else None

    return eventually(status, message=f"status.observedGeneration {generation}")


def test_a_policy_without_warnings_gets_observed_generation_and_empty_type_checking(raw, adm) -> None:
    create(raw, [{"expression": "object.spec.replicas <= 5"}])
    obj = observed(raw, 1)
    assert obj["metadata"]["generation"] == 1
    assert obj["status"] == {"observedGeneration": 1, "typeChecking": {}}
    managers = {
        (m["manager"], m["operation"], m.get("subresource")) for m in obj["metadata"]["managedFields"]
    }
    assert ("validatingadmissionpolicy-status", "Apply", "status") in managers
    typed = adm.read_validating_admission_policy("p")
    assert typed.status.observed_generation == 1 and typed.status.type_checking.expression_warnings is None


def test_undefined_fields_of_the_matched_kind_and_the_params_are_warned(raw, adm) -> None:
    create(
        raw,
        [
            {
                "expression": "object.spec.replicsa <= 5",
                "messageExpression": "'too many: ' + params.data.max",
            },
            {"expression": "object.metadata.labels.all(k, k != 'x')", "messageExpression": "params.spec.x"},
        ],
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
    )
    warnings = observed(raw, 1)["status"]["typeChecking"]["expressionWarnings"]
    assert warnings == [
        {
            "fieldRef": "spec.validations[0].expression",
            "warning": (
                "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicsa'\n"
                " | object.spec.replicsa <= 5\n"
                " | ...........^\n"
            ),
        },
        {
            "fieldRef": "spec.validations[1].messageExpression",
            "warning": (
                "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'spec'\n"
                " | params.spec.x\n"
                " | ......^\n"
            ),
        },
    ]
    # the policy is enforced as written: warnings never change what it does
    policy = adm.read_validating_admission_policy("p")
    assert policy.spec.validations[0].expression == "object.spec.replicsa <= 5"


def test_a_spec_change_is_checked_again_a_status_write_is_not(raw, adm) -> None:
    create(raw, [{"expression": "object.spec.replicsa <= 5"}])
    assert observed(raw, 1)["status"]["typeChecking"]["expressionWarnings"]
    code, body = raw.json(
        "PATCH",
        f"{G}/p",
        {"spec": {"validations": [{"expression": "object.spec.replicas <= 5"}]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200 and body["metadata"]["generation"] == 2
    assert observed(raw, 2)["status"] == {"observedGeneration": 2, "typeChecking": {}}
    code, body = raw.json(
        "PATCH",
        f"{G}/p",
        {"metadata": {"labels": {"a": "b"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200 and body["metadata"]["generation"] == 2


def test_kinds_with_wildcards_or_without_schema_are_not_checked(raw) -> None:
    rules = {
        "resourceRules": [
            {
                "apiGroups": ["*"],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["configmaps"],
            },
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["*", "pods/status"],
            },
        ]
    }
    create(raw, [{"expression": "object.nothing == 1"}], matchConstraints=rules)
    assert observed(raw, 1)["status"] == {"observedGeneration": 1, "typeChecking": {}}


def test_custom_resources_are_checked_with_their_schema_and_object_meta(apiserver) -> None:
    apiserver.install_crds([widget_crd()])
    policy = {
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["example.com"],
                        "apiVersions": ["v1"],
                        "resources": ["widgets"],
                        "operations": ["*"],
                    }
                ]
            }
        }
    }
    assert typechecking._types_to_check(apiserver.registry, policy["spec"]) == [
        ("example.com", "v1", "Widget")
    ]
    policy["spec"]["validations"] = [
        {"expression": "object.spec.size < 3 && object.spec.free.x == 1 && size(object.metadata.labels) < 3"},
        {"expression": "object.spec.colour == 'red'"},
    ]
    assert typechecking.check(apiserver.registry, policy) == [
        {
            "fieldRef": "spec.validations[1].expression",
            "warning": (
                f"{GROUP}/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'\n"
                " | object.spec.colour == 'red'\n"
                " | ...........^\n"
            ),
        }
    ]
