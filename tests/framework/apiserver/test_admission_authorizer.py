"""The ``authorizer`` of admission expressions (k8s.io/apiserver ``pkg/cel/library/authz.go``) in
ValidatingAdmissionPolicies and webhook ``matchConditions``, answered by the server's RBAC authorizer
for the requester (docs/apiserver.md, "ValidatingAdmissionPolicy"); through the official client."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.apiserver.server import APIServer

CONFIGMAP_RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
    ]
}
PODS_LIST = ".group('').resource('pods').check('list')"
SECRETS_GET = "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get')"


@pytest.fixture(scope="module")
def server() -> Iterator[APIServer]:
    with APIServer(authorization="RBAC") as s:
        rbac = client.RbacAuthorizationV1Api(s.api_client())
        rbac.create_namespaced_role(
            "default",
            {
                "metadata": {"name": "cm-writer"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "delete"]}],
            },
        )
        for user in ("alice", "bob"):
            rbac.create_namespaced_role_binding(
                "default",
                {
                    "metadata": {"name": f"{user}-cm"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
                    "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
                },
            )
        rbac.create_namespaced_role(
            "default",
            {
                "metadata": {"name": "secret-reader"},
                "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
            },
        )
        rbac.create_namespaced_role_binding(
            "default",
            {
                "metadata": {"name": "bob-secrets"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-reader"},
                "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
            },
        )
        yield s


@pytest.fixture
def adm(server) -> Iterator[client.AdmissionregistrationV1Api]:
    api = client.AdmissionregistrationV1Api(server.api_client())
    yield api
    api.delete_collection_validating_admission_policy_binding()
    api.delete_collection_validating_admission_policy()
    api.delete_collection_validating_webhook_configuration()


def core_for(server: APIServer, user: str) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=server.kubeconfig_for(user)))


def install(adm, validations: list[dict], **spec) -> None:
    adm.create_validating_admission_policy(
        {
            "metadata": {"name": "authz"},
            "spec": {"matchConstraints": CONFIGMAP_RULES, "validations": validations, **spec},
        }
    )
    adm.create_validating_admission_policy_binding(
        {
            "metadata": {"name": "authz-binding"},
            "spec": {"policyName": "authz", "validationActions": ["Deny"]},
        }
    )


def refusal(core: client.CoreV1Api, name: str) -> str | None:
    try:
        core.create_namespaced_config_map("default", {"metadata": {"name": name}})
    except ApiException as e:
        return json.loads(e.body)["message"]
    core.delete_namespaced_config_map(name, "default")
    return None


def denied(name: str, message: str) -> str:
    return (
        f"configmaps \"{name}\" is forbidden: ValidatingAdmissionPolicy 'authz' with binding "
        f"'authz-binding' denied request: {message}"
    )


def test_checks_are_answered_for_the_requester(server, adm) -> None:
    install(adm, [{"expression": f"{SECRETS_GET}.allowed()", "message": "secret readers only"}])
    assert refusal(core_for(server, "alice"), "a") == denied("a", "secret readers only")
    assert refusal(core_for(server, "bob"), "b") is None
    assert refusal(client.CoreV1Api(server.api_client()), "admin") is None  # system:masters


def test_reason_request_resource_and_message_expressions(server, adm) -> None:
    install(
        adm,
        [{"expression": "false", "messageExpression": "variables.why"}],
        variables=[{"name": "why", "expression": "authorizer.requestResource.check('create').reason()"}],
    )
    assert refusal(core_for(server, "bob"), "r") == denied(
        "r", 'RBAC: allowed by RoleBinding "bob-cm/default" of Role "cm-writer" to User "bob"'
    )
    with pytest.raises(ApiException) as e:
        adm.patch_validating_admission_policy(
            "authz",
            {
                "spec": {
                    "validations": [{"expression": "false", "messageExpression": "authorizer.path('/x')"}]
                }
            },
        )
    assert e.value.status == 422
    assert "undeclared reference to 'authorizer'" in json.loads(e.value.body)["message"]


def test_service_accounts_paths_and_errors(server, adm) -> None:
    install(
        adm,
        [
            {"expression": f"!authorizer.serviceAccount('default', 'builder'){PODS_LIST}.allowed()"},
            {"expression": "authorizer.path('/healthz').check('get').allowed()"},
            {"expression": "authorizer.group('').resource(' ').check('get').allowed()"},
        ],
    )
    assert refusal(core_for(server, "bob"), "s") == denied(
        "s",
        "expression 'authorizer.group('').resource(' ').check('get').allowed()' resulted in error: "
        "resource must not be empty",
    )


def test_each_check_costs_350000(server, adm) -> None:
    three = " && ".join([f"{SECRETS_GET}.allowed()"] * 3)
    install(adm, [{"expression": three}])
    assert refusal(core_for(server, "bob"), "c") == denied(
        "c", f"expression '{three}' resulted in error: operation cancelled: actual cost limit exceeded"
    )
    adm.patch_validating_admission_policy(
        "authz", {"spec": {"validations": [{"expression": " && ".join([f"{SECRETS_GET}.allowed()"] * 2)}]}}
    )
    assert refusal(core_for(server, "bob"), "c2") is None


def test_webhook_match_conditions_use_the_authorizer(server, adm) -> None:
    hook = {
        "name": "authz.example.com",
        "clientConfig": {"url": "https://127.0.0.1:1/validate"},
        "rules": CONFIGMAP_RULES["resourceRules"],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "failurePolicy": "Fail",
        "matchConditions": [{"name": "not-secret-readers", "expression": f"!{SECRETS_GET}.allowed()"}],
    }
    adm.create_validating_webhook_configuration({"metadata": {"name": "authz"}, "webhooks": [hook]})
    assert refusal(core_for(server, "bob"), "w") is None  # the condition is false: no call
    message = refusal(core_for(server, "alice"), "w")
    assert message is not None and 'failed calling webhook "authz.example.com"' in message


# --- unit: the library on the engine -----------------------------------------------------------------


def _evaluate(expression: str, authorize) -> object:
    from framework.apiserver import cel
    from framework.apiserver.admission.expressions import AUTHORIZER_TYPE
    from framework.apiserver.cel.library import authz

    program = cel.compile(expression, variables={"authorizer": AUTHORIZER_TYPE})
    value = authz.authorizer_value(
        {"name": "u", "uid": "", "groups": ["g"], "extra": {}},
        {"group": "apps", "resource": "deployments", "subresource": "scale", "namespace": "n", "name": "d"},
    )
    token = authz.AUTHORIZE.set(authorize)
    try:
        return program.evaluate({"authorizer": value})
    finally:
        authz.AUTHORIZE.reset(token)


def test_unit_attributes_and_service_account_identity() -> None:
    seen: list[tuple[dict, dict]] = []

    def record(user: dict, attributes: dict) -> tuple[bool, str]:
        seen.append((user, attributes))
        return False, "nope"

    assert _evaluate("authorizer.requestResource.check('update').reason()", record) == "nope"
    assert seen[-1] == (
        {"name": "u", "uid": "", "groups": ["g"], "extra": {}},
        {
            "resourceRequest": True,
            "group": "apps",
            "version": "*",
            "resource": "deployments",
            "subresource": "scale",
            "namespace": "n",
            "name": "d",
            "verb": "update",
        },
    )
    assert _evaluate(f"authorizer.serviceAccount('ns', 'sa'){PODS_LIST}.allowed()", record) is False
    assert seen[-1][0]["name"] == "system:serviceaccount:ns:sa"
    assert seen[-1][0]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:ns"]
    assert _evaluate("authorizer.path('/metrics').check('get').allowed()", record) is False
    assert seen[-1][1] == {"resourceRequest": False, "path": "/metrics", "verb": "get"}


def test_unit_errors() -> None:
    from framework.apiserver import cel

    assert _evaluate(f"authorizer{PODS_LIST}.errored()", None) is True
    assert _evaluate(f"authorizer{PODS_LIST}.error()", None) == "no authorizer"
    with pytest.raises(cel.EvaluationError) as e:
        _evaluate(f"authorizer.serviceAccount('Bad_NS', 'sa'){PODS_LIST}.allowed()", None)
    assert e.value.message == "Invalid service account namespace"
    with pytest.raises(cel.EvaluationError) as e:
        _evaluate("authorizer.path(' ').check('get').allowed()", None)
    assert e.value.message == "path must not be empty"
