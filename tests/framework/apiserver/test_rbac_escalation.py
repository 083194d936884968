"""RBAC escalation prevention as kube-apiserver's policy-based storage enforces it (19-2, issue 31):
aggregationRule needs full authority, ``escalate`` is authorized against the URL's name, ``bind``
against the binding's namespace, a binding to a missing role is 404, and the 403 lists the missing
rules compacted and sorted as upstream prints them."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.testing import APIServer

RBAC = "rbac.authorization.k8s.io"
AGG_ADMIN = {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}


@pytest.fixture
def server():
    with APIServer(authorization="RBAC") as s:
        yield s


def as_user(server: APIServer, name: str, groups=()) -> client.ApiClient:
    return config.new_client_from_config(config_file=server.kubeconfig_for(name, groups))


def status(e: pytest.ExceptionInfo) -> dict:
    return json.loads(e.value.body)


def grant(server: APIServer, name: str, rules: list[dict], subject: str) -> None:
    """A ClusterRole ``name`` with ``rules`` bound cluster-wide to user ``subject`` (as the admin)."""
    r = client.RbacAuthorizationV1Api(server.api_client())
    r.create_cluster_role({"metadata": {"name": name}, "rules": rules})
    r.create_cluster_role_binding(
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "User", "name": subject, "apiGroup": RBAC}],
        }
    )


def crb(name: str, role: str, user: str) -> dict:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "User", "name": user, "apiGroup": RBAC}],
    }


def aggregating(name: str, labels: dict | None = None) -> dict:
    return {
        "metadata": {"name": name},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": labels or AGG_ADMIN}]},
    }


CREATE_ROLES_AND_BINDINGS = [
    {"apiGroups": [RBAC], "resources": ["clusterroles", "clusterrolebindings"], "verbs": ["create", "get"]},
]


def test_binding_to_a_missing_role_without_bind_is_404(server):
    """RoleBinding storage resolves the role before ConfirmNoEscalation: a missing one is NotFound."""
    grant(server, "creator", CREATE_ROLES_AND_BINDINGS, "mallory")
    mallory = client.RbacAuthorizationV1Api(as_user(server, "mallory"))
    with pytest.raises(ApiException) as e:
        mallory.create_cluster_role_binding(crb("mine", "not-yet", "mallory"))
    assert e.value.status == 404
    assert status(e)["message"] == 'clusterroles.rbac.authorization.k8s.io "not-yet" not found'
    assert status(e)["details"] == {"name": "not-yet", "group": RBAC, "kind": "clusterroles"}


def test_aggregation_rule_chain_is_refused_at_the_role(server):
    """The attack of issue 31: bind oneself to a ClusterRole name that does not exist yet, then create it
    with an aggregationRule selecting aggregate-to-admin. The binding (with ``bind``) is allowed; the
    ClusterRole is 403 and the attacker never reads Secrets."""
    core = client.CoreV1Api(server.api_client())
    core.create_namespaced_secret("default", {"metadata": {"name": "crown-jewels"}, "stringData": {"k": "v"}})
    grant(
        server,
        "creator",
        [*CREATE_ROLES_AND_BINDINGS, {"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["bind"]}],
        "mallory",
    )
    api = as_user(server, "mallory")
    mallory = client.RbacAuthorizationV1Api(api)
    mallory.create_cluster_role_binding(crb("mine", "stolen-admin", "mallory"))  # step 1: bind is allowed
    with pytest.raises(ApiException) as e:
        mallory.create_cluster_role(aggregating("stolen-admin"))  # step 2
    assert e.value.status == 403
    assert status(e)["reason"] == "Forbidden"
    assert status(e)["message"] == (
        'clusterroles.rbac.authorization.k8s.io "stolen-admin" is forbidden: '
        "must have cluster-admin privileges to use the aggregationRule"
    )
    assert status(e)["details"] == {"name": "stolen-admin", "group": RBAC, "kind": "clusterroles"}
    with pytest.raises(ApiException) as e:
        client.CoreV1Api(api).read_namespaced_secret("crown-jewels", "default")
    assert e.value.status == 403
    with pytest.raises(ApiException) as e:
        client.RbacAuthorizationV1Api(server.api_client()).read_cluster_role("stolen-admin")
    assert e.value.status == 404  # nothing was stored


def test_aggregation_rule_on_update_needs_full_authority(server):
    """Adding (or removing) an aggregationRule on update is refused the same way; other edits of an
    aggregated role's labels too, since the old role has one."""
    grant(
        server,
        "updater",
        [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["get", "update", "patch"]}],
        "mallory",
    )
    admin = client.RbacAuthorizationV1Api(server.api_client())
    admin.create_cluster_role({"metadata": {"name": "empty"}})
    admin.create_cluster_role(aggregating("agg", {"example.com/none": "true"}))  # selects nothing
    mallory = client.RbacAuthorizationV1Api(as_user(server, "mallory"))
    body = mallory.read_cluster_role("empty").to_dict()
    body["aggregation_rule"] = {"cluster_role_selectors": [{"match_labels": AGG_ADMIN}]}
    with pytest.raises(ApiException) as e:
        mallory.replace_cluster_role("empty", body)
    assert e.value.status == 403
    assert status(e)["message"].endswith("must have cluster-admin privileges to use the aggregationRule")
    with pytest.raises(ApiException) as e:
        mallory.patch_cluster_role("agg", {"aggregationRule": None})
    assert e.value.status == 403
    assert status(e)["message"].endswith("must have cluster-admin privileges to use the aggregationRule")
    # Only the garbage collector's fields: allowed whatever the rules (IsOnlyMutatingGCFields).
    mallory.patch_cluster_role("agg", {"metadata": {"finalizers": ["example.com/keep"]}})
    assert admin.read_cluster_role("agg").metadata.finalizers == ["example.com/keep"]


def test_escalate_or_full_authority_may_create_an_aggregating_role(server):
    grant(
        server,
        "escalator",
        [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create", "escalate"]}],
        "erin",
    )
    client.RbacAuthorizationV1Api(as_user(server, "erin")).create_cluster_role(aggregating("erins"))
    # Full authority held through a binding (not system:masters) is enough without escalate.
    r = client.RbacAuthorizationV1Api(server.api_client())
    r.create_cluster_role_binding(crb("root", "cluster-admin", "root"))
    client.RbacAuthorizationV1Api(as_user(server, "root")).create_cluster_role(aggregating("roots"))
    # And system:masters always.
    client.RbacAuthorizationV1Api(as_user(server, "ops", ["system:masters"])).create_cluster_role(
        aggregating("ops")
    )
    assert {n for n in ("erins", "roots", "ops") if r.read_cluster_role(n)} == {"erins", "roots", "ops"}


def test_escalate_with_resource_names_covers_updates_not_creates(server):
    """RoleEscalationAuthorized asks about the URL's name: a POST has none."""
    grant(
        server,
        "named-escalate",
        [
            {"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create", "get", "update"]},
            {
                "apiGroups": [RBAC],
                "resources": ["clusterroles"],
                "verbs": ["escalate"],
                "resourceNames": ["mine"],
            },
        ],
        "nina",
    )
    nina = client.RbacAuthorizationV1Api(as_user(server, "nina"))
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}
    with pytest.raises(ApiException) as e:
        nina.create_cluster_role({"metadata": {"name": "mine"}, "rules": [secrets]})
    assert e.value.status == 403
    nina.create_cluster_role({"metadata": {"name": "mine"}})
    role = nina.read_cluster_role("mine")
    role.rules = [
        client.V1PolicyRule(**{"api_groups": [""], "resources": ["secrets"], "verbs": ["get", "list"]})
    ]
    nina.replace_cluster_role("mine", role)  # escalate on "mine" covers the update
    assert client.RbacAuthorizationV1Api(server.api_client()).read_cluster_role("mine").rules[
        0
    ].resources == ["secrets"]


def test_escalation_message_compacts_and_sorts(server):
    """ConfirmNoEscalation: missing rules broken down, simple ones merged by group/resource, sorted."""
    grant(
        server,
        "role-writer",
        [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create"]}],
        "sam",
    )
    sam = client.RbacAuthorizationV1Api(as_user(server, "sam", ["team"]))
    rules = [
        {"apiGroups": ["apps", ""], "resources": ["deployments", "configmaps"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["b", "a"], "verbs": ["get"]},
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
    ]
    with pytest.raises(ApiException) as e:
        sam.create_cluster_role({"metadata": {"name": "wide"}, "rules": rules})
    assert status(e)["message"] == (
        'clusterroles.rbac.authorization.k8s.io "wide" is forbidden: user "sam" '
        '(groups=["team" "system:authenticated"]) is attempting to grant RBAC permissions '
        "not currently held:\n"
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "list"]}\n'
        '{APIGroups:[""], Resources:["deployments"], Verbs:["get" "list"]}\n'
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}\n'
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}\n'
        '{APIGroups:["apps"], Resources:["configmaps"], Verbs:["get" "list"]}\n'
        '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}\n'
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}'
    )


def test_escalation_message_names_unresolvable_bindings(server):
    """A binding of the requester to a missing role is reported after the rules (RulesFor's errors)."""
    grant(
        server,
        "writer",
        [{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create", "bind"]}],
        "sam",
    )
    r = client.RbacAuthorizationV1Api(server.api_client())
    r.create_cluster_role_binding(crb("dangling", "gone", "sam"))
    sam = client.RbacAuthorizationV1Api(as_user(server, "sam"))
    cm = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
    with pytest.raises(ApiException) as e:
        sam.create_cluster_role({"metadata": {"name": "x"}, "rules": [cm]})
    assert status(e)["message"].endswith(
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}; resolution errors: '
        '[clusterroles.rbac.authorization.k8s.io "gone" not found]'
    )
    # Several distinct errors are aggregated as "[a, b]" (utilerrors), inside the printed slice.
    r.create_cluster_role_binding(crb("dangling2", "gone2", "sam"))
    with pytest.raises(ApiException) as e:
        sam.create_cluster_role({"metadata": {"name": "x"}, "rules": [cm]})
    assert status(e)["message"].endswith(
        '; resolution errors: [[clusterroles.rbac.authorization.k8s.io "gone" not found, '
        'clusterroles.rbac.authorization.k8s.io "gone2" not found]]'
    )


def test_bind_with_resource_names_and_namespace(server):
    """BindingAuthorized: ``bind`` on the named role, in the binding's namespace (a RoleBinding of a
    ClusterRole), lets one bind a role whose rules one lacks; elsewhere it does not."""
    core = client.CoreV1Api(server.api_client())
    for ns in ("team-a", "team-b"):
        core.create_namespace({"metadata": {"name": ns}})
    admin = client.RbacAuthorizationV1Api(server.api_client())
    admin.create_namespaced_role(
        "team-a",
        {
            "metadata": {"name": "binder"},
            "rules": [
                {"apiGroups": [RBAC], "resources": ["rolebindings"], "verbs": ["create"]},
                {
                    "apiGroups": [RBAC],
                    "resources": ["clusterroles"],
                    "verbs": ["bind"],
                    "resourceNames": ["view"],
                },
            ],
        },
    )
    admin.create_namespaced_role(
        "team-b",
        {
            "metadata": {"name": "binder"},
            "rules": [{"apiGroups": [RBAC], "resources": ["rolebindings"], "verbs": ["create"]}],
        },
    )
    for ns in ("team-a", "team-b"):
        admin.create_namespaced_role_binding(
            ns,
            {
                "metadata": {"name": "lead"},
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "binder"},
                "subjects": [{"kind": "User", "name": "lead", "apiGroup": RBAC}],
            },
        )
    lead = client.RbacAuthorizationV1Api(as_user(server, "lead"))

    def bind(ns: str, role: str) -> None:
        lead.create_namespaced_role_binding(
            ns,
            {
                "metadata": {"name": f"dev-{role}"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "User", "name": "dev", "apiGroup": RBAC}],
            },
        )

    bind("team-a", "view")
    with pytest.raises(ApiException) as e:
        bind("team-a", "edit")  # bind is limited to "view"
    assert e.value.status == 403 and "attempting to grant RBAC permissions" in status(e)["message"]
    with pytest.raises(ApiException) as e:
        bind("team-b", "view")  # bind is granted in team-a only
    assert e.value.status == 403
    assert status(e)["message"].startswith(
        'rolebindings.rbac.authorization.k8s.io "dev-view" is forbidden: user "lead" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
    )


def test_system_masters_and_pods_star_subresources(server):
    """system:masters bypasses the checks; a rule ``pods/*`` grants no subresource (upstream matches
    only ``*``, exact names and ``*/sub``), while ``*/status`` does."""
    grant(
        server,
        "odd",
        [
            {"apiGroups": [""], "resources": ["pods/*", "*/status"], "verbs": ["get"]},
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews"],
                "verbs": ["create"],
            },
        ],
        "olga",
    )
    authz = client.AuthorizationV1Api(as_user(server, "olga"))

    def can(resource: str, sub: str) -> bool:
        attrs = {"verb": "get", "resource": resource, "subresource": sub, "namespace": "default"}
        return authz.create_self_subject_access_review({"spec": {"resourceAttributes": attrs}}).status.allowed

    assert can("pods", "status") is True
    assert can("pods", "log") is False
    masters = client.RbacAuthorizationV1Api(as_user(server, "root", ["system:masters"]))
    masters.create_cluster_role(
        {
            "metadata": {"name": "anything"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        }
    )
