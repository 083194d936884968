"""The default ClusterRoles and ClusterRoleBindings (19-4, 22-2, issue 31): the served objects equal
kube-apiserver's bootstrap policy (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``, its rendered
``testdata`` checked in as ``bootstrap_policy.json``), spot-checked against literal upstream rules, and
what they let ordinary users and ServiceAccounts do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.apiserver.auth.bootstrap_policy import policy_data
from framework.testing import APIServer, eventually
from framework.testing.kubectl import Kubectl

RBAC = "rbac.authorization.k8s.io"
READ = ["get", "list", "watch"]
READ_WRITE = [*READ, "create", "update", "patch", "delete", "deletecollection"]
BOOTSTRAP_META = {
    "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
    "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
}
# Upstream roles and bindings the server deliberately does not create (name -> why). Empty: it creates
# every cluster-scoped one, including those of components it does not run.
OMITTED: dict[str, str] = {}


@pytest.fixture(scope="module")
def server():
    with APIServer(authorization="RBAC") as s:
        yield s


def rbac(server: APIServer) -> client.RbacAuthorizationV1Api:
    return client.RbacAuthorizationV1Api(server.api_client())


def rules_of(server: APIServer, name: str) -> list[dict]:
    role = rbac(server).read_cluster_role(name)
    return [client.ApiClient().sanitize_for_serialization(r) for r in role.rules or []]


def serialized(obj: object) -> dict:
    return client.ApiClient().sanitize_for_serialization(obj)


def test_the_checked_in_policy_is_upstream_shaped():
    """The data file holds upstream's rendered objects: every rule's lists sorted as upstream's rule
    builder sorts them, every binding granting an upstream ClusterRole, the controllers' roles bound to
    their ServiceAccounts in kube-system."""
    data = policy_data()
    assert data["metadata"] == BOOTSTRAP_META
    roles = {r["name"]: r for r in data["clusterRoles"]}
    assert len(roles) == len(data["clusterRoles"]) == 69
    for role in roles.values():
        assert ("rules" in role) != ("aggregationRule" in role), role["name"]
        for rule in role.get("rules", []):
            for key in ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"):
                assert rule.get(key, []) == sorted(rule.get(key, [])), (role["name"], rule)
    bindings = {b["name"]: b for b in data["clusterRoleBindings"]}
    assert len(bindings) == len(data["clusterRoleBindings"]) == 50
    assert set(bindings) <= set(roles)
    controllers = {n for n in roles if n.startswith("system:controller:")}
    assert len(controllers) == 38
    for name in controllers:
        sa = name.removeprefix("system:controller:")
        assert bindings[name]["subjects"] == [
            {"kind": "ServiceAccount", "name": sa, "namespace": "kube-system"}
        ]
    assert "subjects" not in bindings["system:node"]  # the Node authorizer grants kubelets their access


def upstream_and_served(entries: list[dict], served: list) -> list[tuple[dict, Any]]:
    """Each upstream entry with the served object of its name; an entry in OMITTED must not be served."""
    by_name = {obj.metadata.name: obj for obj in served}
    for name in OMITTED:
        assert name not in by_name
    return [(e, by_name[e["name"]]) for e in entries if e["name"] not in OMITTED]


def sa_client(server: APIServer, namespace: str, name: str) -> client.ApiClient:
    """A client authenticated as a ServiceAccount (a TokenRequest token)."""
    core = client.CoreV1Api(server.api_client())
    token = core.create_namespaced_service_account_token(name, namespace, {"spec": {}}).status.token
    cfg = client.Configuration()
    cfg.host, cfg.ssl_ca_cert = server.url, str(server.ca_path)
    cfg.api_key = {"authorization": "Bearer " + token}
    return client.ApiClient(cfg)


def test_served_policy_equals_the_upstream_data(server):
    """Every upstream ClusterRole and ClusterRoleBinding is served, read through the official client,
    with upstream's labels, annotations, rules (in upstream's order), aggregation rules, roleRefs and
    subjects; an aggregated role's rules are the union of the rules of the roles it selects."""
    data = policy_data()
    for entry, role in upstream_and_served(data["clusterRoles"], rbac(server).list_cluster_role().items):
        name = entry["name"]
        assert role.metadata.labels == {**entry.get("labels", {}), **BOOTSTRAP_META["labels"]}, name
        assert role.metadata.annotations == BOOTSTRAP_META["annotations"], name
        if "aggregationRule" not in entry:
            assert [serialized(r) for r in role.rules or []] == entry["rules"], name
            assert role.aggregation_rule is None, name
            continue
        assert serialized(role.aggregation_rule) == entry["aggregationRule"], name
        selected = [
            r
            for r in data["clusterRoles"]
            for sel in entry["aggregationRule"]["clusterRoleSelectors"]
            if sel["matchLabels"].items() <= r.get("labels", {}).items()
        ]
        assert selected, name

        def aggregated() -> bool:
            have = [serialized(r) for r in rbac(server).read_cluster_role(name).rules or []]  # noqa: B023
            return all(rule in have for r in selected for rule in r.get("rules", []))  # noqa: B023

        eventually(aggregated)
    served_bindings = rbac(server).list_cluster_role_binding().items
    for entry, served in upstream_and_served(data["clusterRoleBindings"], served_bindings):
        name, binding = entry["name"], serialized(served)
        assert binding["metadata"]["labels"] == BOOTSTRAP_META["labels"], name
        assert binding["metadata"]["annotations"] == BOOTSTRAP_META["annotations"], name
        assert binding["roleRef"] == {"apiGroup": RBAC, "kind": "ClusterRole", "name": name}
        assert binding.get("subjects") == entry.get("subjects"), name


def test_a_controller_service_account_holds_its_upstream_role(server):
    """The controllers' bindings take effect as on a real cluster: kube-system's namespace-controller
    ServiceAccount may delete any namespace (its role), kube-system's default ServiceAccount may not."""
    core = client.CoreV1Api(server.api_client())
    core.create_namespaced_service_account("kube-system", {"metadata": {"name": "namespace-controller"}})
    core.create_namespace({"metadata": {"name": "doomed"}})

    def as_sa(name: str) -> client.CoreV1Api:
        return client.CoreV1Api(sa_client(server, "kube-system", name))

    with pytest.raises(ApiException) as e:
        as_sa("default").delete_namespace("doomed")
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"].startswith(
        'namespaces "doomed" is forbidden: User "system:serviceaccount:kube-system:default" cannot delete '
        'resource "namespaces" in API group ""'
    )
    controller = as_sa("namespace-controller")
    assert controller.list_namespaced_config_map("default").items is not None  # list on "*"/"*"
    controller.delete_namespace("doomed")

    def gone_or_terminating() -> bool:
        try:
            return core.read_namespace("doomed").status.phase == "Terminating"
        except ApiException as x:
            return x.status == 404

    assert gone_or_terminating()


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
    assert rules_of(server, "system:service-account-issuer-discovery") == [
        {"nonResourceURLs": ["/.well-known/openid-configuration", "/openid/v1/jwks"], "verbs": ["get"]}
    ]
    assert rules_of(server, "system:kubelet-api-admin")[2] == {
        "apiGroups": [""],
        "resources": ["nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats"],
        "verbs": ["*"],
    }
    assert rules_of(server, "system:controller:clusterrole-aggregation-controller") == [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["escalate", "get", "list", "patch", "update", "watch"],
        }
    ]
    edit = rules_of(server, "system:aggregate-to-edit")
    assert {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]} in edit
    assert edit[-1] == {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "verbs": sorted(READ_WRITE),
    }
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

    delegate, plain = sa_client(server, "default", "delegate"), sa_client(server, "default", "plain")
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
        untouched = {
            "system:node": r.read_cluster_role_binding("system:node").metadata.resource_version,
            "view": r.read_cluster_role("view").metadata.resource_version,
            "system:controller:job-controller": r.read_cluster_role(
                "system:controller:job-controller"
            ).metadata.resource_version,
        }
    with APIServer(data_dir=tmp_path, authorization="RBAC") as s:
        # What already matches upstream is not rewritten (system:node's binding has no subjects).
        assert (
            rbac(s).read_cluster_role_binding("system:node").metadata.resource_version
            == untouched["system:node"]
        )
        for name in ("view", "system:controller:job-controller"):
            assert rbac(s).read_cluster_role(name).metadata.resource_version == untouched[name]
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
