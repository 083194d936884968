"""The default ClusterRoles and ClusterRoleBindings (19-4, 22-2, issue 31), spot-checked against
kube-apiserver's bootstrap policy (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``) of the client's
release, and what they let ordinary users and ServiceAccounts do."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.testing import APIServer, eventually
from framework.testing.kubectl import Kubectl

RBAC = "rbac.authorization.k8s.io"
READ = ["get", "list", "watch"]


@pytest.fixture(scope="module")
def server():
    with APIServer(authorization="RBAC") as s:
        yield s


def rbac(server: APIServer) -> client.RbacAuthorizationV1Api:
    return client.RbacAuthorizationV1Api(server.api_client())


def rules_of(server: APIServer, name: str) -> list[dict]:
    role = rbac(server).read_cluster_role(name)
    return [client.ApiClient().sanitize_for_serialization(r) for r in role.rules or []]


def test_default_roles_and_bindings_exist_with_upstream_metadata(server):
    roles = {r.metadata.name: r for r in rbac(server).list_cluster_role().items}
    expected = {
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:aggregate-to-admin",
        "system:aggregate-to-edit",
        "system:aggregate-to-view",
        "system:auth-delegator",
        "system:basic-user",
        "system:discovery",
        "system:monitoring",
        "system:public-info-viewer",
        "system:service-account-issuer-discovery",
        "system:heapster",
        "system:kube-aggregator",
        "system:kube-dns",
        "system:kubelet-api-admin",
        "system:node-bootstrapper",
        "system:node-problem-detector",
        "system:node-proxier",
        "system:persistent-volume-provisioner",
        "system:volume-scheduler",
        "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
        "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
        "system:certificates.k8s.io:kube-apiserver-client-approver",
        "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
        "system:certificates.k8s.io:kubelet-serving-approver",
        "system:certificates.k8s.io:legacy-unknown-approver",
    }
    assert expected <= set(roles)
    for name in expected:
        meta = roles[name].metadata
        assert meta.labels["kubernetes.io/bootstrapping"] == "rbac-defaults", name
        assert meta.annotations == {"rbac.authorization.kubernetes.io/autoupdate": "true"}, name
    bindings = {b.metadata.name: b for b in rbac(server).list_cluster_role_binding().items}

    def subjects(name: str) -> list[tuple[str, str]]:
        return [(s.kind, s.name) for s in bindings[name].subjects]

    assert subjects("cluster-admin") == [("Group", "system:masters")]
    assert subjects("system:basic-user") == [("Group", "system:authenticated")]
    assert subjects("system:discovery") == [("Group", "system:authenticated")]
    assert subjects("system:public-info-viewer") == [
        ("Group", "system:authenticated"),
        ("Group", "system:unauthenticated"),
    ]
    assert subjects("system:monitoring") == [("Group", "system:monitoring")]
    assert subjects("system:service-account-issuer-discovery") == [("Group", "system:serviceaccounts")]
    assert subjects("system:node-proxier") == [("User", "system:kube-proxy")]
    assert subjects("system:volume-scheduler") == [("User", "system:kube-scheduler")]
    assert bindings["system:kube-dns"].subjects[0].namespace == "kube-system"


def test_spot_checked_rules(server):
    assert rules_of(server, "system:basic-user") == [
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            "verbs": ["create"],
        },
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ]
    assert rules_of(server, "system:auth-delegator") == [
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
    ]
    assert rules_of(server, "system:monitoring") == [
        {
            "nonResourceURLs": [
                "/healthz",
                "/healthz/*",
                "/livez",
                "/livez/*",
                "/metrics",
                "/metrics/slis",
                "/readyz",
                "/readyz/*",
            ],
            "verbs": ["get"],
        }
    ]
    assert rules_of(server, "system:certificates.k8s.io:kubelet-serving-approver") == [
        {
            "apiGroups": ["certificates.k8s.io"],
            "resourceNames": ["kubernetes.io/kubelet-serving"],
            "resources": ["signers"],
            "verbs": ["approve"],
        }
    ]
    assert {
        "apiGroups": ["", "events.k8s.io"],
        "resources": ["events"],
        "verbs": ["create", "patch", "update"],
    } in (rules_of(server, "system:node-problem-detector"))
    edit = rules_of(server, "system:aggregate-to-edit")
    assert {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]} in edit
    assert not any(
        "endpoints" in r.get("resources", []) and "create" in r["verbs"] for r in edit
    )  # CVE-2021-25740
    view = rules_of(server, "system:aggregate-to-view")
    assert {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": READ} in view
    assert not any("secrets" in r.get("resources", []) for r in view)


def test_aggregated_roles_are_filled(server):
    def resources(name: str) -> set[str]:
        return {res for r in rules_of(server, name) for res in r.get("resources", [])}

    eventually(lambda: "rolebindings" in resources("admin"))
    assert {"secrets", "pods/exec", "deployments", "endpointslices"} <= resources("admin")
    assert "rolebindings" not in resources("edit") and "secrets" in resources("edit")
    assert "secrets" not in resources("view") and "pods/log" in resources("view")


def test_kubectl_auth_whoami_for_a_non_admin(server, tmp_path):
    """``kubectl auth whoami`` (SelfSubjectReview) works for any authenticated user via system:basic-user."""
    token = server.add_user("walter", ["devs"])
    res = Kubectl(server.kubeconfig, tmp_path).run("--token", token, "auth", "whoami", "-o", "json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)["status"]["userInfo"]
    assert info["username"] == "walter"
    assert info["groups"] == ["devs", "system:authenticated"]


def test_auth_delegator_lets_a_service_account_review(server):
    """An SA bound to system:auth-delegator may create TokenReviews and SubjectAccessReviews; one that is
    not gets 403."""
    core = client.CoreV1Api(server.api_client())
    for name in ("delegate", "plain"):
        core.create_namespaced_service_account("default", {"metadata": {"name": name}})
    rbac(server).create_cluster_role_binding(
        {
            "metadata": {"name": "delegate-auth"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "system:auth-delegator"},
            "subjects": [{"kind": "ServiceAccount", "name": "delegate", "namespace": "default"}],
        }
    )

    def as_sa(name: str) -> client.ApiClient:
        token = core.create_namespaced_service_account_token(name, "default", {"spec": {}}).status.token
        cfg = client.Configuration()
        cfg.host, cfg.ssl_ca_cert = server.url, str(server.ca_path)
        cfg.api_key = {"authorization": "Bearer " + token}
        return client.ApiClient(cfg)

    delegate, plain = as_sa("delegate"), as_sa("plain")
    user_token = server.add_user("victor")
    tr = client.AuthenticationV1Api(delegate).create_token_review({"spec": {"token": user_token}})
    assert tr.status.authenticated is True and tr.status.user.username == "victor"
    attrs = {"verb": "get", "resource": "pods", "namespace": "default"}
    sar = client.AuthorizationV1Api(delegate).create_subject_access_review(
        {"spec": {"user": "victor", "resourceAttributes": attrs}}
    )
    assert sar.status.allowed is False
    with pytest.raises(ApiException) as e:
        client.AuthenticationV1Api(plain).create_token_review({"spec": {"token": user_token}})
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"] == (
        'tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:default:plain" cannot '
        'create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope'
    )
    with pytest.raises(ApiException) as e:
        client.AuthorizationV1Api(plain).create_subject_access_review(
            {"spec": {"user": "victor", "resourceAttributes": attrs}}
        )
    assert e.value.status == 403


def test_issuer_discovery_and_monitoring_urls(server):
    """Non-resource roles: a ServiceAccount may read the issuer's discovery document path; a member of
    system:monitoring may read /metrics, an ordinary user may not."""
    authz = client.AuthorizationV1Api(server.api_client())

    def allowed(user: str, groups: list[str], path: str) -> bool:
        spec = {"user": user, "groups": groups, "nonResourceAttributes": {"path": path, "verb": "get"}}
        return authz.create_subject_access_review({"spec": spec}).status.allowed

    sa_groups = ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert allowed("system:serviceaccount:default:x", sa_groups, "/openid/v1/jwks") is True
    assert allowed("u", ["system:authenticated"], "/openid/v1/jwks") is False
    assert allowed("prom", ["system:monitoring", "system:authenticated"], "/metrics") is True
    assert allowed("u", ["system:authenticated"], "/metrics") is False
    assert allowed("anon", ["system:unauthenticated"], "/version") is True
    api = config.new_client_from_config(config_file=server.kubeconfig_for("u"))
    assert client.VersionApi(api).get_code().git_version


def test_a_stored_policy_is_reconciled_on_start(tmp_path):
    """A store written by an older release gains the missing default rules and subjects on start, keeps
    what was added to them, and a role annotated ``autoupdate: "false"`` is left alone
    (kube-apiserver's bootstrap reconciliation)."""
    custom = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}
    with APIServer(data_dir=tmp_path, authorization="RBAC") as s:
        r = rbac(s)
        old_basic = {
            "metadata": {"name": "system:basic-user"},
            "rules": [
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                custom,
            ],
        }
        r.replace_cluster_role(
            "system:basic-user", {**old_basic, "metadata": r.read_cluster_role("system:basic-user").metadata}
        )
        r.patch_cluster_role(
            "system:auth-delegator",
            {
                "metadata": {"annotations": {"rbac.authorization.kubernetes.io/autoupdate": "false"}},
                "rules": [custom],
            },
        )
        r.patch_cluster_role_binding(
            "system:discovery", {"subjects": [{"kind": "Group", "name": "x", "apiGroup": RBAC}]}
        )
        assert len(rules_of(s, "system:basic-user")) == 2
    with APIServer(data_dir=tmp_path, authorization="RBAC") as s:
        basic = rules_of(s, "system:basic-user")
        assert custom in basic
        assert {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["selfsubjectreviews"],
            "verbs": ["create"],
        } in basic
        assert rules_of(s, "system:auth-delegator") == [custom]
        subjects = [(x.kind, x.name) for x in rbac(s).read_cluster_role_binding("system:discovery").subjects]
        assert subjects == [("Group", "x"), ("Group", "system:authenticated")]
