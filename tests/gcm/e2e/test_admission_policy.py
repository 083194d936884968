"""gcm's admission policy (``manifests/deploy/policy.yaml``, docs/rbac.md "The admission policy"): in the
garden ``gcm --embedded`` bootstraps, gcm's ServiceAccount is refused, with the policy's message, every
write its RBAC allows but gcm never makes, while the same kinds of objects written as gcm writes them
pass and any other user is unaffected. Real HTTP with the official ``kubernetes`` client, with the
ServiceAccount's token from the kubeconfig embedded mode writes for gcm.

That gcm's whole workflow passes the policy is ``test_rbac_usage.py``'s (no 403 for the
ServiceAccount, with the policy installed).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from gcm import embedded
from gcm.controllers.project.project.reconciler import controller_reference, project_labels
from gcm.controllers.project.rbac import extension_objects as rbac_extension_objects
from gcm.controllers.project.rbac import standard_objects

ROOT = Path(__file__).resolve().parents[3]
POLICY = "gardener-controller-manager-writes"
CORE = "core.gardener.cloud"
RBAC_GROUP = "rbac.authorization.k8s.io"
GCM_SUBJECT = {"kind": "ServiceAccount", "name": embedded.SERVICE_ACCOUNT, "namespace": embedded.NAMESPACE}
MEMBER = "gardener.cloud:system:project-member"  # a global project role (manifests/global)


class Garden:
    """An embedded garden (as ``gcm --embedded`` bootstraps it, gcm itself not running) with Projects
    alpha and beta and their namespaces, a namespace ``plain`` and an unrelated ClusterRole and
    ClusterRoleBinding ``ops-view``, written by the admin."""

    def __init__(self, tmp: Path, extension_roles: bool = False) -> None:
        self.embedded = embedded.start(
            0, tmp / "admin.kubeconfig", ephemeral=True, extension_roles=extension_roles
        )
        self.admin = self.embedded.server.api_client()
        self.gcm = config.new_client_from_config(config_file=self.embedded.gcm_kubeconfig)
        self.project = self.project_with_namespace("alpha")
        self.other = self.project_with_namespace("beta")
        client.CoreV1Api(self.admin).create_namespace({"metadata": {"name": "plain"}})
        rbac = client.RbacAuthorizationV1Api(self.admin)
        rbac.create_cluster_role({"metadata": {"name": "ops-view"}, "rules": []})
        rbac.create_cluster_role_binding(
            {"metadata": {"name": "ops-view"}, "roleRef": role_ref("ops-view"), "subjects": []}
        )

    def project_with_namespace(self, name: str) -> dict:
        """A Project and its namespace ``garden-<name>``, labelled and owned as gcm makes it."""
        body = {
            "apiVersion": f"{CORE}/v1beta1",
            "kind": "Project",
            "metadata": {"name": name},
            "spec": {"namespace": f"garden-{name}"},
        }
        project = client.CustomObjectsApi(self.admin).create_cluster_custom_object(
            CORE, "v1beta1", "projects", body
        )
        meta = {
            "name": f"garden-{name}",
            "labels": project_labels(project),
            "ownerReferences": [controller_reference(project)],
        }
        client.CoreV1Api(self.admin).create_namespace({"metadata": meta})
        return project

    def close(self) -> None:
        self.gcm.close()
        self.admin.close()
        self.embedded.stop()


@pytest.fixture(scope="module")
def garden(tmp_path_factory) -> Iterator[Garden]:
    g = Garden(tmp_path_factory.mktemp("garden"))
    try:
        yield g
    finally:
        g.close()


def role_ref(name: str) -> dict:
    return {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name}


def gcm_objects(g: Garden) -> dict[tuple[str, str], dict]:
    """The 11 member RBAC objects of Project alpha, exactly as gcm's ProjectRBAC writes them."""
    return {(o["kind"], o["metadata"]["name"]): o for o in standard_objects(g.project)}


def refused(call: Callable[[], Any], resource: str, name: str, message: str) -> None:
    """``call`` is refused by the policy, as kube-apiserver words it, with ``message``."""
    with pytest.raises(ApiException) as e:
        call()
    status = json.loads(e.value.body)
    assert (e.value.status, status["reason"]) == (403, "Forbidden"), status
    assert status["message"] == (
        f"{resource} \"{name}\" is forbidden: ValidatingAdmissionPolicy '{POLICY}' with binding "
        f"'{POLICY}' denied request: {message}"
    )


CRB_NOT_MEMBER = (
    "gcm's ServiceAccount may write only the member ClusterRoleBindings of a Project, "
    "gardener.cloud:system:project[-uam|-member|-viewer]:<project>, unlabelled and with that Project as "
    "their only owner (controller): ClusterRoleBinding {} is not one"
)
CR_NOT_MEMBER = (
    "gcm's ServiceAccount may write only the member ClusterRoles of a Project, "
    "gardener.cloud:system:project[-uam|-member|-viewer]:<project> and "
    "gardener.cloud:extension:project:<project>:<role>, each with that Project as its only owner "
    "(controller): ClusterRole {} is not one"
)
NOT_PROJECT_NAMESPACE = (
    "gcm's ServiceAccount may change and delete only project namespaces (labelled "
    "gardener.cloud/role=project), and never give one to another Project: namespace {} is not one"
)


def test_embedded_installs_the_policy_from_manifests(garden):
    docs = [d for d in yaml.safe_load_all((ROOT / "manifests" / "deploy" / "policy.yaml").read_text()) if d]
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ValidatingAdmissionPolicy", POLICY),
        ("ValidatingAdmissionPolicyBinding", POLICY),
    ]
    adm = client.AdmissionregistrationV1Api(garden.admin)
    stored = adm.read_validating_admission_policy(POLICY).to_dict()
    assert stored["spec"]["failure_policy"] == "Fail"
    assert [c["expression"] for c in stored["spec"]["match_conditions"]] == [
        "request.userInfo.username == "
        f"'system:serviceaccount:{embedded.NAMESPACE}:{embedded.SERVICE_ACCOUNT}'"
    ]
    assert len(stored["spec"]["validations"]) == len(docs[0]["spec"]["validations"])
    binding = adm.read_validating_admission_policy_binding(POLICY).spec
    assert (binding.policy_name, binding.validation_actions) == (POLICY, ["Deny"])


def test_cluster_role_binding_to_a_global_project_role_is_refused(garden):
    """RBAC lets gcm bind project-member (`bind` by name) also at cluster scope: the policy does not."""
    rbac = client.RbacAuthorizationV1Api(garden.gcm)
    body = {"metadata": {"name": "gcm-member"}, "roleRef": role_ref(MEMBER), "subjects": [GCM_SUBJECT]}
    for dry_run in ("All", None):
        refused(
            lambda dry_run=dry_run: rbac.create_cluster_role_binding(body, dry_run=dry_run),
            "clusterrolebindings.rbac.authorization.k8s.io",
            "gcm-member",
            CRB_NOT_MEMBER.format("gcm-member"),
        )
    # Named and owned like a member binding of alpha, but bound to the global role.
    name = f"{MEMBER}:alpha"
    disguised = copy.deepcopy(gcm_objects(garden)["ClusterRoleBinding", name])
    disguised["roleRef"] = role_ref(MEMBER)
    disguised["subjects"] = [GCM_SUBJECT]
    refused(
        lambda: rbac.create_cluster_role_binding(disguised),
        "clusterrolebindings.rbac.authorization.k8s.io",
        name,
        f"ClusterRoleBinding {name} may bind only the ClusterRole of its own name, not ClusterRole {MEMBER} "
        "(gcm binds the global project roles only in RoleBindings of project namespaces)",
    )
    # The admin is not subject to it.
    admin = client.RbacAuthorizationV1Api(garden.admin)
    assert admin.create_cluster_role_binding(body, dry_run="All").role_ref.name == MEMBER


def test_role_binding_outside_project_namespaces_is_refused(garden):
    rbac = client.RbacAuthorizationV1Api(garden.gcm)
    body = copy.deepcopy(gcm_objects(garden)["RoleBinding", MEMBER])
    body["metadata"]["namespace"] = "plain"
    refused(
        lambda: rbac.create_namespaced_role_binding("plain", body),
        "rolebindings.rbac.authorization.k8s.io",
        MEMBER,
        "gcm's ServiceAccount may write and delete RoleBindings only in project namespaces (labelled "
        "gardener.cloud/role=project): namespace plain is not one",
    )
    # In the namespace of another Project (beta's, for a binding alpha controls).
    body["metadata"]["namespace"] = "garden-beta"
    refused(
        lambda: rbac.create_namespaced_role_binding("garden-beta", body),
        "rolebindings.rbac.authorization.k8s.io",
        MEMBER,
        "gcm's ServiceAccount may write only the member RoleBindings of the namespace's Project "
        "(gardener.cloud:system:project-member, -viewer and -serviceaccountmanager, and "
        "gardener.cloud:extension:project:<project>:<role>), with that Project as their only owner "
        f"(controller), each bound to the ClusterRole of its own name: RoleBinding {MEMBER} is not one",
    )
    admin = client.RbacAuthorizationV1Api(garden.admin)
    body["metadata"]["namespace"] = "plain"
    assert admin.create_namespaced_role_binding("plain", body, dry_run="All").metadata.namespace == "plain"


def test_deleting_a_cluster_role_not_of_a_project_is_refused(garden):
    rbac = client.RbacAuthorizationV1Api(garden.gcm)
    for name in ("ops-view", MEMBER, embedded_role()):
        refused(
            lambda name=name: rbac.delete_cluster_role(name),
            "clusterroles.rbac.authorization.k8s.io",
            name,
            f"gcm's ServiceAccount may delete only the member ClusterRoles of a Project: ClusterRole {name} "
            "is not one",
        )
    refused(
        lambda: rbac.delete_cluster_role_binding("ops-view"),
        "clusterrolebindings.rbac.authorization.k8s.io",
        "ops-view",
        "gcm's ServiceAccount may delete only the member ClusterRoleBindings of a Project: "
        "ClusterRoleBinding ops-view is not one",
    )
    assert client.RbacAuthorizationV1Api(garden.admin).read_cluster_role("ops-view").metadata.name


def embedded_role() -> str:
    return "gardener.cloud:system:controller-manager"


def test_patching_an_unrelated_cluster_role_binding_is_refused(garden):
    rbac = client.RbacAuthorizationV1Api(garden.gcm)
    for name in ("ops-view", embedded_role()):
        refused(
            lambda name=name: rbac.patch_cluster_role_binding(name, {"subjects": [GCM_SUBJECT]}),
            "clusterrolebindings.rbac.authorization.k8s.io",
            name,
            CRB_NOT_MEMBER.format(name),
        )
    refused(
        lambda: rbac.patch_cluster_role("ops-view", {"metadata": {"labels": {"x": "y"}}}),
        "clusterroles.rbac.authorization.k8s.io",
        "ops-view",
        CR_NOT_MEMBER.format("ops-view"),
    )
    admin = client.RbacAuthorizationV1Api(garden.admin)
    assert admin.patch_cluster_role_binding("ops-view", {"subjects": [GCM_SUBJECT]}).subjects


def test_deleting_a_namespace_that_is_no_project_namespace_is_refused(garden):
    core = client.CoreV1Api(garden.gcm)
    refused(
        lambda: core.delete_namespace("plain"),
        "namespaces",
        "plain",
        NOT_PROJECT_NAMESPACE.format("plain"),
    )
    labelled = core.read_namespace("plain")
    labelled.metadata.labels = {**(labelled.metadata.labels or {}), "x": "y"}
    refused(
        lambda: core.replace_namespace("plain", labelled),
        "namespaces",
        "plain",
        NOT_PROJECT_NAMESPACE.format("plain") + ", or its project.gardener.cloud/name label changes",
    )
    # A project namespace cannot be given to another Project either.
    given = core.read_namespace("garden-beta")
    given.metadata.labels["project.gardener.cloud/name"] = "alpha"
    refused(
        lambda: core.replace_namespace("garden-beta", given),
        "namespaces",
        "garden-beta",
        NOT_PROJECT_NAMESPACE.format("garden-beta") + ", or its project.gardener.cloud/name label changes",
    )
    refused(
        lambda: core.create_namespace({"metadata": {"name": "garden-stray"}}),
        "namespaces",
        "garden-stray",
        "gcm's ServiceAccount may create only project namespaces, labelled gardener.cloud/role=project and "
        "project.gardener.cloud/name=<project> and controlled by that Project: namespace garden-stray is "
        "not one",
    )
    assert client.CoreV1Api(garden.admin).read_namespace("plain").metadata.name == "plain"


def test_member_cluster_roles_grant_only_what_gcm_grants(garden):
    """A member ClusterRole with a right gcm holds but never grants (RBAC's escalation check passes),
    labelled for aggregation, or with a second owner that would outlive the Project: refused."""
    rbac = client.RbacAuthorizationV1Api(garden.gcm)
    name = "gardener.cloud:system:project-viewer:alpha"
    role = gcm_objects(garden)["ClusterRole", name]
    secrets = copy.deepcopy(role)
    secrets["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]})
    aggregated = copy.deepcopy(role)
    aggregated["metadata"]["labels"] = {"rbac.gardener.cloud/aggregate-to-project-member": "true"}
    rules_message = (
        f"ClusterRole {name} may grant only get on one namespace and get, patch, update, delete and "
        "manage-members on Project alpha, without labels (no aggregation into other roles) and without an "
        "aggregationRule"
    )
    for body in (secrets, aggregated):
        refused(
            lambda body=body: rbac.create_cluster_role(body),
            "clusterroles.rbac.authorization.k8s.io",
            name,
            rules_message,
        )
    two_owners = copy.deepcopy(role)
    two_owners["metadata"]["ownerReferences"].append(
        {"apiVersion": "v1", "kind": "Namespace", "name": "plain", "uid": "0000"}
    )
    refused(
        lambda: rbac.create_cluster_role(two_owners),
        "clusterroles.rbac.authorization.k8s.io",
        name,
        CR_NOT_MEMBER.format(name),
    )


def test_quotas_and_projects_outside_what_gcm_does_are_refused(garden):
    core = client.CoreV1Api(garden.gcm)
    quota = {"metadata": {"name": "gardener"}, "spec": {"hard": {"pods": "0"}}}
    refused(
        lambda: core.create_namespaced_resource_quota("plain", quota),
        "resourcequotas",
        "gardener",
        "gcm's ServiceAccount may create only the ResourceQuota gardener of a project namespace (labelled "
        "gardener.cloud/role=project): ResourceQuota gardener in namespace plain is not one",
    )
    client.CoreV1Api(garden.admin).create_namespaced_resource_quota(
        "plain", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}}
    )
    refused(
        lambda: core.patch_namespaced_resource_quota("q", "plain", {"spec": {"hard": {"pods": "9"}}}),
        "resourcequotas",
        "q",
        "gcm's ServiceAccount may change ResourceQuotas only in project namespaces (labelled "
        "gardener.cloud/role=project): namespace plain is not one",
    )
    projects = client.CustomObjectsApi(garden.gcm)
    refused(
        lambda: projects.delete_cluster_custom_object(CORE, "v1beta1", "projects", "beta"),
        f"projects.{CORE}",
        "beta",
        "gcm's ServiceAccount deletes only stale Projects due for auto-deletion "
        "(status.staleAutoDeleteTimestamp set, confirmed with the annotation "
        "confirmation.gardener.cloud/deletion=true): Project beta is not one",
    )


def test_what_gcm_writes_passes(garden):
    """The positive control of the refusals above: the same kinds written as gcm writes them."""
    rbac = client.RbacAuthorizationV1Api(garden.gcm)
    core = client.CoreV1Api(garden.gcm)
    gamma = garden.project_with_namespace("gamma")
    objects = {(o["kind"], o["metadata"]["name"]): o for o in standard_objects(gamma)}
    for (kind, _), obj in objects.items():
        if kind == "ClusterRole":
            rbac.create_cluster_role(obj)
        elif kind == "ClusterRoleBinding":
            rbac.create_cluster_role_binding(obj)
        else:
            rbac.create_namespaced_role_binding("garden-gamma", obj)
    # member changes (patches), a roleRef repair (delete and create), quota, namespace release
    uam = "gardener.cloud:system:project-uam:gamma"
    subject = {"apiGroup": RBAC_GROUP, "kind": "User", "name": "carol"}
    assert rbac.patch_cluster_role_binding(uam, {"subjects": [subject]}).subjects[0].name == "carol"
    rbac.patch_namespaced_role_binding(MEMBER, "garden-gamma", {"subjects": [subject]})
    rbac.delete_cluster_role_binding(uam)
    rbac.create_cluster_role_binding(objects["ClusterRoleBinding", uam])
    rbac.delete_namespaced_role_binding(MEMBER, "garden-gamma")
    rbac.delete_cluster_role(f"{MEMBER}:gamma")
    core.create_namespaced_resource_quota(
        "garden-gamma", {"metadata": {"name": "gardener"}, "spec": {"hard": {"count/secrets": "10"}}}
    )
    # adoption (annotations, labels kept) and release (the project labels removed): updates
    ns = core.read_namespace("garden-gamma")
    ns.metadata.annotations = {**(ns.metadata.annotations or {}), "note": "adopted"}
    ns = core.replace_namespace("garden-gamma", ns)
    ns.metadata.labels = {}
    assert "gardener.cloud/role" not in core.replace_namespace("garden-gamma", ns).metadata.labels
    # a namespace gcm creates, and deletes
    ns = {"metadata": {"name": "garden-gamma-2", "labels": project_labels(gamma)}}
    ns["metadata"]["ownerReferences"] = [controller_reference(gamma)]
    core.create_namespace(ns)
    core.delete_namespace("garden-gamma-2")
    # the stale auto-deletion: timestamp, confirmation, delete
    projects = client.CustomObjectsApi(garden.gcm)
    projects.patch_cluster_custom_object_status(
        CORE, "v1beta1", "projects", "gamma", {"status": {"staleAutoDeleteTimestamp": "2024-01-01T00:00:00Z"}}
    )
    projects.patch_cluster_custom_object(
        CORE,
        "v1beta1",
        "projects",
        "gamma",
        {"metadata": {"annotations": {"confirmation.gardener.cloud/deletion": "true"}}},
    )
    projects.delete_cluster_custom_object(CORE, "v1beta1", "projects", "gamma")


def test_extension_roles_opt_in_is_confined_to_what_gcm_writes(tmp_path):
    """With manifests/extension-roles (escalate and bind on every ClusterRole) RBAC lets gcm write any
    rules and bind anything; the policy still admits only extension roles as gcm writes them."""
    g = Garden(tmp_path, extension_roles=True)
    try:
        rbac = client.RbacAuthorizationV1Api(g.gcm)
        name = "gardener.cloud:extension:project:alpha:ops"
        role, binding = extension_objects(g.project, name)
        message = (
            f"extension ClusterRole {name} must be labelled gardener.cloud/role=extension-project-role and "
            "project.gardener.cloud/name=alpha, aggregate exactly the ClusterRoles labelled "
            "rbac.gardener.cloud/aggregate-to-extension-role=<role> of its name, and get its rules only "
            "from that aggregation"
        )
        member_rules = copy.deepcopy(role)
        member_rules["aggregationRule"]["clusterRoleSelectors"] = [
            {"matchLabels": {"rbac.gardener.cloud/aggregate-to-project-member": "true"}}
        ]
        any_rules = copy.deepcopy(role)
        any_rules["rules"] = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
        for body in (member_rules, any_rules):
            refused(
                lambda body=body: rbac.create_cluster_role(body, dry_run="All"),
                "clusterroles.rbac.authorization.k8s.io",
                name,
                message,
            )
        rbac.create_cluster_role(role)
        rbac.create_namespaced_role_binding("garden-alpha", binding)
        refused(
            lambda: rbac.patch_cluster_role(name, {"rules": any_rules["rules"]}),
            "clusterroles.rbac.authorization.k8s.io",
            name,
            message,
        )
        admin_binding = {
            "metadata": {"name": "gcm-admin"},
            "roleRef": role_ref("cluster-admin"),
            "subjects": [GCM_SUBJECT],
        }
        refused(
            lambda: rbac.create_cluster_role_binding(admin_binding, dry_run="All"),
            "clusterrolebindings.rbac.authorization.k8s.io",
            "gcm-admin",
            CRB_NOT_MEMBER.format("gcm-admin"),
        )
        rbac.delete_namespaced_role_binding(name, "garden-alpha")
        rbac.delete_cluster_role(name)
    finally:
        g.close()


def extension_objects(project: dict, name: str) -> list[dict]:
    """gcm's extension ClusterRole and RoleBinding ``name`` of ``project``, as ProjectRBAC writes them."""
    role = name.rsplit(":", 1)[1]
    member = {"apiGroup": RBAC_GROUP, "kind": "User", "name": "erin", "role": f"extension:{role}"}
    with_member = {**project, "spec": {**project["spec"], "members": [member]}}
    return rbac_extension_objects(with_member)
