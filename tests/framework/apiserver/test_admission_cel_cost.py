"""The runtime cost of admission CEL (docs/apiserver.md, "ValidatingAdmissionPolicy"): each evaluation
against the per-call limit, each pass of a policy's expressions against its budget (k8s.io/apiserver
``pkg/apis/cel/config.go``), webhook ``matchConditions`` against theirs; through the official client.

The expensive expression is ``object.data.big.contains(object.data.big)``: cel-go charges it
``ceil(0.1 * n) ** 2`` for a string of n characters, so 9,400 characters cost 883,600 (under the
per-call limit of 1,000,000; eleven of them fit the budget of 10,000,000, twelve do not) and 20,000
characters cost 4,000,000.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

EXPENSIVE = "object.data.big.contains(object.data.big)"
NEAR_LIMIT = "a" * 9400
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
CONFIGMAP_RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
    ]
}


@pytest.fixture
def adm(apiserver) -> client.AdmissionregistrationV1Api:
    return client.AdmissionregistrationV1Api(apiserver.api_client())


def install(adm, validations: list[dict], actions: tuple[str, ...] = ("Deny",), **spec) -> None:
    adm.create_validating_admission_policy(
        {
            "metadata": {"name": "cost"},
            "spec": {"matchConstraints": CONFIGMAP_RULES, "validations": validations, **spec},
        }
    )
    adm.create_validating_admission_policy_binding(
        {"metadata": {"name": "cost-binding"}, "spec": {"policyName": "cost", "validationActions": actions}}
    )


def refusal(core, big: str, name: str = "cm") -> str | None:
    """The message of the create's refusal, None when it is created."""
    try:
        core.create_namespaced_config_map("default", {"metadata": {"name": name}, "data": {"big": big}})
    except ApiException as e:
        return json.loads(e.body)["message"]
    return None


def denied(message: str, name: str = "cm") -> str:
    return (
        f"configmaps \"{name}\" is forbidden: ValidatingAdmissionPolicy 'cost' with binding "
        f"'cost-binding' denied request: {message}"
    )


@pytest.mark.parametrize("failure_policy", ["Fail", "Ignore"])
def test_an_evaluation_over_the_per_call_limit_is_an_expression_error(adm, core, failure_policy) -> None:
    install(adm, [{"expression": EXPENSIVE}], failurePolicy=failure_policy)
    assert refusal(core, NEAR_LIMIT, "near") is None
    message = refusal(core, "a" * 20_000)
    if failure_policy == "Ignore":
        assert message is None
        return
    assert message == denied(
        f"expression '{EXPENSIVE}' resulted in error: operation cancelled: actual cost limit exceeded"
    )


def test_a_policys_validations_share_one_budget(adm, core) -> None:
    install(adm, [{"expression": EXPENSIVE}] * 12)
    assert refusal(core, NEAR_LIMIT) == denied(OUT_OF_BUDGET)
    adm.patch_validating_admission_policy("cost", {"spec": {"validations": [{"expression": EXPENSIVE}] * 11}})
    assert refusal(core, NEAR_LIMIT) is None


def test_each_binding_has_a_budget_of_its_own(adm, core) -> None:
    install(adm, [{"expression": EXPENSIVE}] * 11)
    adm.create_validating_admission_policy_binding(
        {"metadata": {"name": "second"}, "spec": {"policyName": "cost", "validationActions": ["Deny"]}}
    )
    assert refusal(core, NEAR_LIMIT) is None


def test_a_variable_is_charged_once_per_pass(adm, core) -> None:
    install(
        adm,
        [{"expression": "variables.expensive"}] * 12,
        variables=[{"name": "expensive", "expression": EXPENSIVE}],
    )
    assert refusal(core, NEAR_LIMIT) is None


def test_a_variable_over_the_per_call_limit_fails_the_expressions_reading_it(adm, core) -> None:
    install(
        adm,
        [{"expression": "variables.expensive"}],
        variables=[{"name": "expensive", "expression": EXPENSIVE}],
    )
    assert refusal(core, "a" * 20_000) == denied(
        "expression 'variables.expensive' resulted in error: composited variable \"expensive\" fails to "
        "evaluate: operation cancelled: actual cost limit exceeded"
    )


def test_message_expressions_run_on_what_the_validations_left(adm, core) -> None:
    validations = [{"expression": EXPENSIVE}] * 11 + [
        {"expression": "false", "messageExpression": f"{EXPENSIVE} ? 'too big' : 'other'"}
    ]
    install(adm, validations)
    assert refusal(core, NEAR_LIMIT) == denied(f"failed messageExpression: {OUT_OF_BUDGET}")
    adm.patch_validating_admission_policy("cost", {"spec": {"validations": validations[10:]}})
    assert refusal(core, NEAR_LIMIT) == denied("too big")


@pytest.mark.parametrize("failure_policy", ["Fail", "Ignore"])
def test_match_conditions_share_a_smaller_budget(adm, core, failure_policy) -> None:
    conditions = [{"name": f"c{i}", "expression": EXPENSIVE} for i in range(3)]
    install(adm, [{"expression": "false"}], matchConditions=conditions, failurePolicy=failure_policy)
    message = refusal(core, NEAR_LIMIT)
    assert message == (denied(OUT_OF_BUDGET) if failure_policy == "Fail" else None)
    # matchConditions merge by name in a strategic merge patch: this one deletes the third
    adm.patch_validating_admission_policy(
        "cost", {"spec": {"matchConditions": [{"name": "c2", "$patch": "delete"}]}}
    )
    assert refusal(core, NEAR_LIMIT, "two") == denied("failed expression: false", "two")


def test_audit_annotation_errors_deny_whatever_the_actions(adm, core) -> None:
    install(
        adm,
        [{"expression": "true"}],
        ("Warn",),
        auditAnnotations=[{"key": "data", "valueExpression": "object.data"}],
    )
    assert refusal(core, "x") == denied(
        "valueExpression 'object.data' resulted in unsupported return type: map. Return type must be "
        "either string or null."
    )


def test_a_failed_variable_is_reported_where_it_is_read(adm, core) -> None:
    install(
        adm,
        [{"expression": "variables.v == 'x'"}],
        variables=[{"name": "v", "expression": "object.data.missing"}],
    )
    assert refusal(core, "x") == denied(
        "expression 'variables.v == 'x'' resulted in error: composited variable \"v\" fails to evaluate: "
        "no such key: missing"
    )


def test_webhook_match_conditions_have_a_budget(apiserver, core) -> None:
    adm = client.AdmissionregistrationV1Api(apiserver.api_client())
    hook = {
        "name": "cost.example.com",
        "clientConfig": {"url": "https://127.0.0.1:1/validate"},
        "rules": CONFIGMAP_RULES["resourceRules"],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "failurePolicy": "Fail",
        "matchConditions": [{"name": f"c{i}", "expression": EXPENSIVE} for i in range(3)],
    }
    adm.create_validating_webhook_configuration({"metadata": {"name": "cost"}, "webhooks": [hook]})
    assert refusal(core, NEAR_LIMIT) == (
        f'configmaps "cm" is forbidden: failed calling webhook "cost.example.com": {OUT_OF_BUDGET}'
    )
    hook["matchConditions"] = hook["matchConditions"][:2]
    version = adm.read_validating_webhook_configuration("cost").metadata.resource_version
    adm.replace_validating_webhook_configuration(
        "cost", {"metadata": {"name": "cost", "resourceVersion": version}, "webhooks": [hook]}
    )
    message = refusal(core, NEAR_LIMIT)  # within the budget: the webhook is called (and unreachable)
    assert message is not None and OUT_OF_BUDGET not in message
    assert 'failed calling webhook "cost.example.com": failed to call webhook' in message
