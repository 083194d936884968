"""ValidatingAdmissionPolicy and its bindings (admissionregistration.k8s.io/v1), evaluated as
kube-apiserver's ``ValidatingAdmissionPolicy`` plugin does, through the official client and raw HTTP."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

G = "/apis/admissionregistration.k8s.io/v1"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _status(e: ApiException) -> dict:
    return json.loads(e.body)


def deployment(name: str, replicas: int, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


DEPLOYMENT_RULES = {
    "resourceRules": [
        {
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["deployments"],
        }
    ]
}


def policy(name: str, validations: list[dict], **spec) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"matchConstraints": DEPLOYMENT_RULES, "validations": validations, **spec},
    }


def binding(name: str, policy_name: str, actions: list[str], **spec) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy_name, "validationActions": actions, **spec},
    }


@pytest.fixture
def adm(apiserver) -> client.AdmissionregistrationV1Api:
    return client.AdmissionregistrationV1Api(apiserver.api_client())


@pytest.fixture
def apps(apiserver) -> client.AppsV1Api:
    return client.AppsV1Api(apiserver.api_client())


def _limit_policy(adm, core, actions: list[str], max_replicas: str = "3") -> None:
    core.create_namespaced_config_map(
        "default", {"metadata": {"name": "limits"}, "data": {"maxReplicas": max_replicas}}
    )
    adm.create_validating_admission_policy(
        policy(
            "replica-limit",
            [
                {
                    "expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                    "messageExpression": "'replicas must be no greater than ' + params.data.maxReplicas",
                }
            ],
            paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        )
    )
    adm.create_validating_admission_policy_binding(
        binding(
            "replica-limit-binding",
            "replica-limit",
            actions,
            paramRef={"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"},
        )
    )


def test_policy_with_params_denies_as_kube_apiserver(adm, apps, core) -> None:
    _limit_policy(adm, core, ["Deny"])
    stored = adm.read_validating_admission_policy("replica-limit")
    assert stored.spec.failure_policy == "Fail" and stored.spec.match_constraints.match_policy == "Equivalent"
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_deployment("default", deployment("web", 5))
    assert e.value.status == 422
    body = _status(e.value)
    message = (
        "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: "
        "replicas must be no greater than 3"
    )
    assert body["reason"] == "Invalid"
    assert body["message"] == f'deployments.apps "web" is forbidden: {message}'
    assert body["details"] == {
        "name": "web",
        "group": "apps",
        "kind": "deployments",
        "causes": [{"message": message}],
    }
    assert apps.create_namespaced_deployment("default", deployment("web", 2)).spec.replicas == 2
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 4}})
    assert e.value.status == 422
    # Changes of params, policies and bindings take effect at once.
    core.patch_namespaced_config_map("limits", "default", {"data": {"maxReplicas": "10"}})
    assert apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 4}}).spec.replicas == 4
    adm.delete_validating_admission_policy_binding("replica-limit-binding")
    assert apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 40}}).spec.replicas == 40


def test_missing_params_follow_parameter_not_found_action(adm, apps, core) -> None:
    _limit_policy(adm, core, ["Deny"])
    core.delete_namespaced_config_map("limits", "default")
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_deployment("default", deployment("web", 1))
    assert _status(e.value)["message"] == (
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding "
        "'replica-limit-binding' denied request: failed to configure binding: no params found for policy "
        "binding with `Deny` parameterNotFoundAction"
    )
    adm.patch_validating_admission_policy_binding(
        "replica-limit-binding", {"spec": {"paramRef": {"parameterNotFoundAction": "Allow"}}}
    )
    assert apps.create_namespaced_deployment("default", deployment("web", 9)).spec.replicas == 9


def test_warn_adds_a_warning_header_and_audit_does_not_deny(adm, apps, core, raw) -> None:
    _limit_policy(adm, core, ["Warn", "Audit"])
    r = raw.request("POST", DEPLOYMENTS, deployment("web", 5))
    assert r.status == 201
    assert r.headers["Warning"] == (
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding "
        "'replica-limit-binding': replicas must be no greater than 3\""
    )
    adm.patch_validating_admission_policy_binding(
        "replica-limit-binding", {"spec": {"validationActions": ["Audit"]}}
    )
    r = raw.request("POST", DEPLOYMENTS, deployment("web2", 5))
    assert r.status == 201 and "Warning" not in r.headers


def test_match_conditions_selectors_and_exclusions(adm, apps, core) -> None:
    adm.create_validating_admission_policy(
        policy(
            "no-big",
            [{"expression": "object.spec.replicas < 3", "message": "too big", "reason": "Forbidden"}],
            matchConditions=[
                {
                    "name": "not-skipped",
                    "expression": "!has(object.metadata.labels) || !('skip' in object.metadata.labels)",
                }
            ],
            matchConstraints={
                **DEPLOYMENT_RULES,
                "excludeResourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["*"],
                        "operations": ["*"],
                        "resources": ["deployments"],
                        "resourceNames": ["exempt"],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"policed": "yes"}},
            },
        )
    )
    adm.create_validating_admission_policy_binding(binding("no-big", "no-big", ["Deny"]))
    assert (
        apps.create_namespaced_deployment("default", deployment("a", 5)).spec.replicas == 5
    )  # namespace not selected
    core.patch_namespace("default", {"metadata": {"labels": {"policed": "yes"}}})
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_deployment("default", deployment("b", 5))
    assert e.value.status == 403 and _status(e.value)["reason"] == "Forbidden"
    assert _status(e.value)["message"].endswith("denied request: too big")
    apps.create_namespaced_deployment("default", deployment("c", 5, labels={"skip": "1"}))
    apps.create_namespaced_deployment("default", deployment("exempt", 5))
    # The binding's own matchResources narrow the policy's further.
    adm.patch_validating_admission_policy_binding(
        "no-big", {"spec": {"matchResources": {"objectSelector": {"matchLabels": {"tier": "prod"}}}}}
    )
    apps.create_namespaced_deployment("default", deployment("d", 5))
    with pytest.raises(ApiException):
        apps.create_namespaced_deployment("default", deployment("e", 5, labels={"tier": "prod"}))


@pytest.mark.parametrize(("failure_policy", "denied"), [("Fail", True), ("Ignore", False)])
def test_failure_policy_on_a_runtime_error(adm, apps, failure_policy, denied) -> None:
    adm.create_validating_admission_policy(
        policy("broken", [{"expression": "object.spec.nothing > 1"}], failurePolicy=failure_policy)
    )
    adm.create_validating_admission_policy_binding(binding("broken", "broken", ["Deny"]))
    if not denied:
        assert apps.create_namespaced_deployment("default", deployment("web", 1)).metadata.name == "web"
        return
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_deployment("default", deployment("web", 1))
    assert _status(e.value)["message"] == (
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'broken' with binding 'broken' "
        "denied "
        "request: expression 'object.spec.nothing > 1' resulted in error: no such key: nothing"
    )


def test_variables_request_namespace_object_and_delete(adm, apps, core) -> None:
    core.patch_namespace("default", {"metadata": {"labels": {"env": "prod"}}})
    adm.create_validating_admission_policy(
        policy(
            "ctx",
            [
                {
                    "expression": "request.operation != 'DELETE' || variables.env != 'prod'",
                    "messageExpression": (
                        "'no deletes in ' + variables.env + ' by ' + request.userInfo.username"
                    ),
                },
                {"expression": "request.operation == 'DELETE' || object.metadata.name.startsWith('app-')"},
            ],
            variables=[{"name": "env", "expression": "namespaceObject.metadata.labels.env"}],
            matchConstraints={
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["*"],
                        "resources": ["deployments"],
                    }
                ]
            },
        )
    )
    adm.create_validating_admission_policy_binding(binding("ctx", "ctx", ["Deny"]))
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_deployment("default", deployment("web", 1))
    assert _status(e.value)["message"].endswith(
        "denied request: failed expression: "
        "request.operation == 'DELETE' || object.metadata.name.startsWith('app-')"
    )
    apps.create_namespaced_deployment("default", deployment("app-web", 1))
    with pytest.raises(ApiException) as e:
        apps.delete_namespaced_deployment("app-web", "default")
    assert _status(e.value)["message"].endswith("denied request: no deletes in prod by admin")
    assert apps.read_namespaced_deployment("app-web", "default").metadata.name == "app-web"


def test_policy_and_binding_are_validated(raw) -> None:
    bad = policy("bad", [{"expression": "object.spec.replicas <"}, {"expression": " "}])
    code, body = raw.json("POST", f"{G}/validatingadmissionpolicies", bad)
    assert code == 422
    causes = body["details"]["causes"]
    assert causes[0]["field"] == "spec.validations[0].expression"
    assert causes[0]["message"].startswith(
        'Invalid value: "object.spec.replicas <": compilation failed: ERROR: <input>:1:23: Syntax error:'
    )
    assert causes[1] == {
        "reason": "FieldValueRequired",
        "message": "Required value: expression is not specified",
        "field": "spec.validations[1].expression",
    }
    code, body = raw.json(
        "POST",
        f"{G}/validatingadmissionpolicies",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "e"},
            "spec": {},
        },
    )
    assert code == 422
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.matchConstraints", "spec.validations"]
    code, body = raw.json(
        "POST", f"{G}/validatingadmissionpolicybindings", binding("b", "p", ["Deny", "Warn", "Nope"])
    )
    assert code == 422
    assert body["message"] == (
        'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b" is invalid: ['
        'spec.validationActions[2]: Unsupported value: "Nope": supported values: "Audit", "Deny", "Warn", '
        "spec.validationActions: Invalid value: [Deny Warn Nope]: must not contain both Deny and Warn "
        "(repeating "
        "the same validation failure information in the API response and headers serves no purpose)]"
    )
    code, body = raw.json("POST", f"{G}/validatingadmissionpolicybindings", binding("b", "", []))
    assert code == 422
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.policyName", "spec.validationActions"]


def test_admission_configuration_is_exempt(adm, raw) -> None:
    """Policies never judge admission configuration itself (a policy cannot lock itself in)."""
    adm.create_validating_admission_policy(
        {
            **policy("deny-all", [{"expression": "false"}]),
            "spec": {
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
                    ]
                },
                "validations": [{"expression": "false"}],
            },
        }
    )
    adm.create_validating_admission_policy_binding(binding("deny-all", "deny-all", ["Deny"]))
    code, _ = raw.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})
    assert code == 422
    adm.delete_validating_admission_policy_binding("deny-all")
    code, _ = raw.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})
    assert code == 201


def test_kubectl_prints_the_warning_and_the_denial(adm, core, kubectl, tmp_path) -> None:
    _limit_policy(adm, core, ["Warn"])
    manifest = tmp_path / "d.json"
    manifest.write_text(json.dumps(deployment("web", 5)))
    result = kubectl.run("apply", "-f", str(manifest))
    assert result.returncode == 0, result.stderr
    assert (
        "Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding "
        "'replica-limit-binding': replicas must be no greater than 3"
    ) in result.stderr
    adm.patch_validating_admission_policy_binding(
        "replica-limit-binding", {"spec": {"validationActions": ["Deny"]}}
    )
    # deployments/scale is another resource to the rules (as on a real cluster): not matched.
    kubectl.ok("scale", "deployment/web", "--replicas=7")
    result = kubectl.run("patch", "deployment/web", "-p", '{"spec":{"replicas":8}}')
    assert result.returncode != 0
    # kubectl prints a 422 from its causes, as the Kubernetes documentation shows it for a real cluster.
    assert result.stderr == (
        "The deployments \"web\" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding "
        "'replica-limit-binding' denied request: replicas must be no greater than 3\n"
    )


REPLICA_LIMIT_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "replicalimits.rules.example.com"},
    "spec": {
        "group": "rules.example.com",
        "scope": "Cluster",
        "names": {"plural": "replicalimits", "singular": "replicalimit", "kind": "ReplicaLimit"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {"maxReplicas": {"type": "integer"}},
                    }
                },
            }
        ],
    },
}


def test_custom_resource_params_selected_by_label(apiserver, adm, apps) -> None:
    """The Kubernetes documentation's ReplicaLimit example: cluster-scoped params picked by a selector,
    each evaluated; the strictest one denies."""
    apiserver.install_crds([REPLICA_LIMIT_CRD])
    co = client.CustomObjectsApi(apiserver.api_client())
    for name, limit in (("loose", 10), ("strict", 3), ("other", 1)):
        co.create_cluster_custom_object(
            "rules.example.com",
            "v1",
            "replicalimits",
            {
                "apiVersion": "rules.example.com/v1",
                "kind": "ReplicaLimit",
                "metadata": {"name": name, "labels": {"set": "a" if name != "other" else "b"}},
                "maxReplicas": limit,
            },
        )
    adm.create_validating_admission_policy(
        policy(
            "limit",
            [{"expression": "object.spec.replicas <= params.maxReplicas", "reason": "Forbidden"}],
            paramKind={"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"},
        )
    )
    adm.create_validating_admission_policy_binding(
        binding(
            "limit-a",
            "limit",
            ["Deny"],
            paramRef={"selector": {"matchLabels": {"set": "a"}}, "parameterNotFoundAction": "Deny"},
        )
    )
    assert apps.create_namespaced_deployment("default", deployment("ok", 3)).spec.replicas == 3
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_deployment("default", deployment("big", 4))
    assert e.value.status == 403
    assert _status(e.value)["message"].endswith(
        "with binding 'limit-a' denied request: failed expression: object.spec.replicas <= params.maxReplicas"
    )
