"""gcm's manifests (issue 6 §3-4): CRDs, global roles and the in-cluster deployment, applied with the real
``kubectl`` to an RBAC-enforcing test API server; the CRD schemas; the least-privilege RBAC exercised
with the ServiceAccount's own token; the Dockerfile linted by hadolint.

One API server serves the whole module (the manifests are applied once); tests that write objects use
names no other test reads. ``kubectl`` runs with ``HOME`` in a temporary directory, so its discovery
cache starts empty, and every run is bounded by a timeout.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from framework.testing import APIServer
from framework.testing.kubectl import KUBECTL, TIMEOUT, Kubectl
from gcm.controllers.project.project.reconciler import controller_reference
from gcm.controllers.project.rbac import owner_reference
from tests.hadolint import assert_hadolint_clean

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "manifests"
CRDS, GLOBAL, DEPLOY = MANIFESTS / "crds", MANIFESTS / "global", MANIFESTS / "deploy"

GCM_NS, GCM_SA = "garden", "gardener-controller-manager"
GCM_USER = f"system:serviceaccount:{GCM_NS}:{GCM_SA}"
LEASE = "gardener-controller-manager-leader-election"
CORE, SECURITY = "core.gardener.cloud", "security.gardener.cloud"

EXPECTED_CRDS = {
    f"projects.{CORE}": ("Project", "Cluster", "v1beta1", True),
    f"shoots.{CORE}": ("Shoot", "Namespaced", "v1beta1", True),
    f"secretbindings.{CORE}": ("SecretBinding", "Namespaced", "v1beta1", False),
    f"quotas.{CORE}": ("Quota", "Namespaced", "v1beta1", False),
    f"backupentries.{CORE}": ("BackupEntry", "Namespaced", "v1beta1", True),
    f"plants.{CORE}": ("Plant", "Namespaced", "v1beta1", True),
    f"internalsecrets.{CORE}": ("InternalSecret", "Namespaced", "v1beta1", False),
    f"credentialsbindings.{SECURITY}": ("CredentialsBinding", "Namespaced", "v1alpha1", False),
    f"workloadidentities.{SECURITY}": ("WorkloadIdentity", "Namespaced", "v1alpha1", True),
}

pytestmark = pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")


def _crd_docs() -> list[tuple[Path, list[dict]]]:
    return [(p, [d for d in yaml.safe_load_all(p.read_text()) if d]) for p in sorted(CRDS.glob("*.yaml"))]


@pytest.fixture(scope="module")
def gcm_cluster(tmp_path_factory) -> Iterator[tuple[APIServer, Kubectl]]:
    """An RBAC API server with ``manifests/crds``, ``global`` and ``deploy`` applied by kubectl."""
    with APIServer(authorization="RBAC") as server:
        kubectl = Kubectl(server.kubeconfig, tmp_path_factory.mktemp("kubectl-home"))
        kubectl.ok("apply", "-f", str(CRDS))
        names = [f"crd/{doc['metadata']['name']}" for _, docs in _crd_docs() for doc in docs]
        kubectl.ok("wait", "--for=condition=established", "--timeout=20s", *names)
        kubectl.ok("apply", "-k", str(GLOBAL))
        kubectl.ok("apply", "-k", str(DEPLOY))
        yield server, kubectl


@pytest.fixture(scope="module")
def rendered_deploy(tmp_path_factory) -> dict[tuple[str, str], dict]:
    """``kubectl kustomize manifests/deploy`` (no server needed), keyed by (kind, name)."""
    home = tmp_path_factory.mktemp("kustomize-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env["HOME"] = str(home)
    r = subprocess.run(
        [KUBECTL, "kustomize", str(DEPLOY)],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    out = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    assert len(out) == len(docs), "duplicate objects in the rendering"
    return out


def _sa_api(server: APIServer) -> client.ApiClient:
    """An API client authenticated with a TokenRequest token of gcm's ServiceAccount."""
    token = (
        client.CoreV1Api(server.api_client())
        .create_namespaced_service_account_token(GCM_SA, GCM_NS, {"spec": {"expirationSeconds": 3600}})
        .status.token
    )
    cfg = client.Configuration()
    cfg.host, cfg.ssl_ca_cert = server.url, str(server.ca_path)
    cfg.api_key = {"authorization": "Bearer " + token}
    return client.ApiClient(cfg)


@pytest.fixture(scope="module")
def gcm_sa(gcm_cluster) -> client.ApiClient:
    return _sa_api(gcm_cluster[0])


def _raw(api: client.ApiClient, method: str, path: str, body: Any, content_type: str = "application/json"):
    """A JSON request with the credentials of ``api``; returns (status, decoded body)."""
    cfg = api.configuration
    http = urllib3.PoolManager(ca_certs=cfg.ssl_ca_cert, retries=False)
    r = http.request(
        method,
        cfg.host + path,
        body=json.dumps(body).encode(),
        headers={"Authorization": cfg.api_key["authorization"], "Content-Type": content_type},
    )
    return r.status, json.loads(r.data) if r.data else None


def _status_of(e: ApiException) -> dict:
    return json.loads(e.body)


# --- CRDs -------------------------------------------------------------------------------------------


def test_crd_files_hold_one_established_crd_each(gcm_cluster):
    server, _ = gcm_cluster
    ext = client.ApiextensionsV1Api(server.api_client())
    seen = {}
    for path, docs in _crd_docs():
        assert len(docs) == 1 and docs[0]["kind"] == "CustomResourceDefinition", path.name
        crd = docs[0]
        seen[crd["metadata"]["name"]] = path
        spec = crd["spec"]
        assert path.name == f"{spec['group']}_{spec['names']['plural']}.yaml"
    assert set(seen) == set(EXPECTED_CRDS)
    for name, (kind, scope, version, status) in EXPECTED_CRDS.items():
        live = ext.read_custom_resource_definition(name).to_dict()
        conditions = {c["type"]: c["status"] for c in live["status"]["conditions"]}
        assert conditions.get("Established") == "True", name
        assert live["spec"]["names"]["kind"] == kind and live["spec"]["scope"] == scope
        (v,) = live["spec"]["versions"]
        assert v["name"] == version and v["served"] and v["storage"]
        assert bool((v.get("subresources") or {}).get("status") is not None) == status, name


def test_project_crd_printer_columns_and_short_names(gcm_cluster):
    server, _ = gcm_cluster
    ext = client.ApiextensionsV1Api(server.api_client())
    project = ext.read_custom_resource_definition(f"projects.{CORE}")
    columns = [(c.name, c.json_path) for c in project.spec.versions[0].additional_printer_columns]
    assert columns == [
        ("Namespace", ".spec.namespace"),
        ("Status", ".status.phase"),
        ("Owner", ".spec.owner.name"),
        ("Creator", ".spec.createdBy.name"),
        ("Age", ".metadata.creationTimestamp"),
    ]
    short = {
        name: ext.read_custom_resource_definition(name).spec.names.short_names
        for name in (f"secretbindings.{CORE}", f"quotas.{CORE}", f"backupentries.{CORE}")
    }
    assert short == {
        f"secretbindings.{CORE}": ["sb"],
        f"quotas.{CORE}": ["squota"],
        f"backupentries.{CORE}": ["bec"],
    }


PROJECT = {
    "apiVersion": f"{CORE}/v1beta1",
    "kind": "Project",
    "metadata": {"name": "schema-dev", "labels": {"tier": "trial"}},
    "spec": {
        "createdBy": {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
        "description": "development",
        "owner": {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
        "purpose": "testing",
        "members": [
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "User",
                "name": "alice",
                "role": "admin",
                "roles": ["owner", "uam"],
            },
            {"kind": "ServiceAccount", "name": "robot", "namespace": "garden-dev", "role": "viewer"},
            {"kind": "Group", "name": "ops", "role": "extension:ops"},
        ],
        "namespace": "garden-dev",
        "tolerations": {"defaults": [{"key": "a", "value": "b"}], "whitelist": [{"key": "a"}]},
        "dualApprovalForDeletion": [{"resource": "shoots", "selector": {"matchLabels": {}}}],
    },
}


def test_project_schema_accepts_every_field_gcm_uses(gcm_cluster):
    server, _ = gcm_cluster
    api = client.CustomObjectsApi(server.api_client())
    created = api.create_cluster_custom_object(CORE, "v1beta1", "projects", copy.deepcopy(PROJECT))
    assert created["spec"] == PROJECT["spec"]  # typed fields kept, unknown ones preserved
    assert created["metadata"]["generation"] == 1
    status = {
        "observedGeneration": 1,
        "phase": "Ready",
        "staleSinceTimestamp": "2024-01-01T00:00:00Z",
        "staleAutoDeleteTimestamp": "2024-04-01T00:00:00Z",
        "lastActivityTimestamp": "2024-01-02T03:04:05Z",
    }
    patched = api.patch_cluster_custom_object_status(
        CORE, "v1beta1", "projects", "schema-dev", {"status": status}
    )
    assert patched["status"] == status and patched["metadata"]["generation"] == 1
    cleared = api.patch_cluster_custom_object_status(
        CORE,
        "v1beta1",
        "projects",
        "schema-dev",
        {"status": {"staleSinceTimestamp": None, "staleAutoDeleteTimestamp": None}},
    )
    assert set(cleared["status"]) == {"observedGeneration", "phase", "lastActivityTimestamp"}


@pytest.mark.parametrize(
    ("field", "spec", "message"),
    [
        ("spec.members", {"members": "alice"}, 'spec.members: Invalid value: "string": spec.members in body'),
        ("spec.members[0].roles", {"members": [{"kind": "User", "name": "a", "roles": "admin"}]}, ""),
        ("spec.members[0].name", {"members": [{"kind": "User"}]}, "Required value"),
        ("spec.owner.name", {"owner": {"kind": "User", "name": 7}}, ""),
        ("spec.namespace", {"namespace": "kube-system"}, "should match '^garden(-.+)?$'"),
        ("spec.namespace", {"namespace": 1}, ""),
        ("spec.tolerations.defaults", {"tolerations": {"defaults": {"key": "a"}}}, ""),
    ],
)
def test_project_schema_rejects_bad_types(gcm_cluster, field, spec, message):
    server, _ = gcm_cluster
    api = client.CustomObjectsApi(server.api_client())
    body = {"apiVersion": f"{CORE}/v1beta1", "kind": "Project", "metadata": {"name": "bad"}, "spec": spec}
    with pytest.raises(ApiException) as e:
        api.create_cluster_custom_object(CORE, "v1beta1", "projects", body)
    st = _status_of(e.value)
    assert e.value.status == 422 and st["reason"] == "Invalid"
    assert field in [c["field"] for c in st["details"]["causes"]], st
    assert message in st["message"]


@pytest.mark.parametrize(
    "status",
    [
        {"observedGeneration": "one"},
        {"phase": 3},
        {"staleSinceTimestamp": "yesterday"},
        {"lastActivityTimestamp": 1700000000},
    ],
)
def test_project_status_schema_rejects_bad_types(gcm_cluster, status):
    server, _ = gcm_cluster
    api = client.CustomObjectsApi(server.api_client())
    name = "status-bad"
    try:
        api.create_cluster_custom_object(
            CORE, "v1beta1", "projects", {"metadata": {"name": name}, "spec": {}} | _project_type()
        )
    except ApiException as e:
        assert e.status == 409
    with pytest.raises(ApiException) as e:
        api.patch_cluster_custom_object_status(CORE, "v1beta1", "projects", name, {"status": status})
    assert e.value.status == 422
    (key,) = status
    assert f"status.{key}" in [c["field"] for c in _status_of(e.value)["details"]["causes"]]


def _project_type() -> dict:
    return {"apiVersion": f"{CORE}/v1beta1", "kind": "Project"}


SHOOT_SPEC = {
    "cloudProfileName": "aws",
    "region": "eu-west-1",
    "provider": {"type": "aws", "workers": [{"name": "w1", "minimum": 1}]},
    "kubernetes": {"version": "1.31.1", "kubeAPIServer": {"enableAnonymousAuthentication": False}},
    "secretBindingName": "my-secret",
    "credentialsBindingName": "my-credentials",
    "purpose": "evaluation",
    "hibernation": {"enabled": False, "schedules": [{"start": "00 18 * * 1,2,3,4,5"}]},
    "networking": {"type": "calico", "nodes": "10.0.0.0/16"},
}


def test_shoot_schema(gcm_cluster):
    server, _ = gcm_cluster
    api = client.CustomObjectsApi(server.api_client())
    client.CoreV1Api(server.api_client()).create_namespace({"metadata": {"name": "garden-shoots"}})
    body = {
        "apiVersion": f"{CORE}/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": "crazy-botany"},
        "spec": copy.deepcopy(SHOOT_SPEC),
        "status": {"ignored": "on create"},
    }
    shoot = api.create_namespaced_custom_object(CORE, "v1beta1", "garden-shoots", "shoots", body)
    assert shoot["spec"] == SHOOT_SPEC and "status" not in shoot  # status subresource
    for spec, field in (
        ({"secretBindingName": 5}, "spec.secretBindingName"),
        ({"credentialsBindingName": ["x"]}, "spec.credentialsBindingName"),
        ({"hibernation": {"enabled": "yes"}}, "spec.hibernation.enabled"),
    ):
        bad = {**body, "metadata": {"name": "bad"}, "spec": spec}
        with pytest.raises(ApiException) as e:
            api.create_namespaced_custom_object(CORE, "v1beta1", "garden-shoots", "shoots", bad)
        assert e.value.status == 422
        assert field in [c["field"] for c in _status_of(e.value)["details"]["causes"]]


def test_binding_schemas(gcm_cluster):
    """SecretBinding and CredentialsBinding keep their fields at the top level (no spec)."""
    server, _ = gcm_cluster
    api = client.CustomObjectsApi(server.api_client())
    client.CoreV1Api(server.api_client()).create_namespace({"metadata": {"name": "garden-bindings"}})
    sb = {
        "apiVersion": f"{CORE}/v1beta1",
        "kind": "SecretBinding",
        "metadata": {"name": "sb"},
        "secretRef": {"name": "s", "namespace": "garden-bindings"},
        "quotas": [{"name": "q", "namespace": "garden-bindings"}],
        "provider": {"type": "aws"},
    }
    assert api.create_namespaced_custom_object(CORE, "v1beta1", "garden-bindings", "secretbindings", sb)[
        "secretRef"
    ] == {"name": "s", "namespace": "garden-bindings"}
    cb = {
        "apiVersion": f"{SECURITY}/v1alpha1",
        "kind": "CredentialsBinding",
        "metadata": {"name": "cb"},
        "credentialsRef": {
            "apiVersion": f"{SECURITY}/v1alpha1",
            "kind": "WorkloadIdentity",
            "name": "wi",
            "namespace": "garden-bindings",
        },
        "quotas": [{"name": "q", "namespace": "garden-bindings"}],
        "provider": {"type": "aws"},
    }
    created = api.create_namespaced_custom_object(
        SECURITY, "v1alpha1", "garden-bindings", "credentialsbindings", cb
    )
    assert created["credentialsRef"] == cb["credentialsRef"] and created["quotas"] == cb["quotas"]
    bad = {**sb, "metadata": {"name": "bad"}, "secretRef": {"name": 1}}
    with pytest.raises(ApiException) as e:
        api.create_namespaced_custom_object(CORE, "v1beta1", "garden-bindings", "secretbindings", bad)
    assert e.value.status == 422


# --- deploy: rendering and cross-references ---------------------------------------------------------


def _container(deployment: dict) -> dict:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def test_deploy_renders_with_consistent_references(rendered_deploy):
    objs = rendered_deploy
    assert {kind for kind, _ in objs} == {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
    assert ("Namespace", GCM_NS) in objs and ("ServiceAccount", GCM_SA) in objs
    dep = objs["Deployment", GCM_SA]
    assert dep["metadata"]["namespace"] == GCM_NS and dep["spec"]["replicas"] == 2
    pod = dep["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == GCM_SA
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    c = _container(dep)
    assert c["command"] + c["args"] == [
        "python",
        "-m",
        "gcm",
        "--config",
        "/etc/gcm/config.yaml",
        "--metrics-secure",
    ]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"health": 2718, "metrics": 2719, "webhook": 2721}
    assert (c["livenessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["port"]) == (
        "/healthz",
        "health",
    )
    assert (c["readinessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["port"]) == (
        "/readyz",
        "health",
    )
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert c["resources"]["requests"] and c["resources"]["limits"]
    assert c["image"] == "gcm:0.1.0"

    # Volumes: the ConfigMap is rendered here, the TLS Secret is a documented prerequisite.
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    cm_name = volumes["config"]["configMap"]["name"]
    assert ("ConfigMap", cm_name) in objs and mounts["config"] == "/etc/gcm"
    assert volumes["webhook-cert"]["secret"]["secretName"] == "gardener-controller-manager-cert"
    assert "tmp" in mounts  # writable scratch space on a read-only root filesystem

    # The config agrees with the container and the leader-election Role.
    config = yaml.safe_load(objs["ConfigMap", cm_name]["data"]["config.yaml"])
    assert config["apiVersion"] == "controllermanager.config.gardener.cloud/v1alpha1"
    assert config["kind"] == "ControllerManagerConfiguration"
    assert "kubeconfig" not in config.get("gardenClientConnection", {})  # in-cluster
    server_cfg = config["server"]
    assert server_cfg["healthProbes"]["port"] == ports["health"]
    assert server_cfg["metrics"]["port"] == ports["metrics"]
    assert server_cfg["webhooks"]["port"] == ports["webhook"]
    assert server_cfg["webhooks"]["tls"]["serverCertDir"] == mounts["webhook-cert"]
    election = config["leaderElection"]
    role = objs["Role", "gardener.cloud:system:controller-manager:leader-election"]
    assert election["resourceNamespace"] == role["metadata"]["namespace"] == GCM_NS
    assert any(election["resourceName"] in (r.get("resourceNames") or []) for r in role["rules"])
    assert "event" in config["controllers"]  # the Event controller is on, and RBAC covers it
    # extension roles need manifests/extension-roles (cluster-admin equivalent): off in the deploy
    assert config["controllers"]["project"]["extensionRoles"] is False
    rules = [r for (k, _), o in objs.items() if k in ("ClusterRole", "Role") for r in o["rules"]]
    assert not [r for r in rules if "escalate" in r["verbs"] or "*" in r["verbs"]]
    assert all(r.get("resourceNames") for r in rules if "bind" in r["verbs"])

    # Service → pods, webhook → Service.
    svc = objs["Service", GCM_SA]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    svc_ports = {p["name"]: (p["port"], p["targetPort"]) for p in svc["spec"]["ports"]}
    assert svc_ports == {"webhook": (443, "webhook"), "metrics": (2719, "metrics")}
    (hook,) = objs["ValidatingWebhookConfiguration", "validate-namespace-deletion"]["webhooks"]
    assert hook["name"] == "validate-namespace-deletion.gardener.cloud"
    assert hook["clientConfig"]["service"] == {
        "namespace": GCM_NS,
        "name": svc["metadata"]["name"],
        "path": "/webhooks/validate-namespace-deletion",
        "port": 443,
    }
    assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None"
    assert hook["admissionReviewVersions"] == ["v1"] and hook["timeoutSeconds"] == 10
    assert hook["namespaceSelector"] == {"matchLabels": {"gardener.cloud/role": "project"}}
    assert hook["rules"] == [
        {
            "operations": ["DELETE"],
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["namespaces"],
            "scope": "Cluster",
        }
    ]

    # Bindings → the ServiceAccount.
    sa_subject = [{"kind": "ServiceAccount", "name": GCM_SA, "namespace": GCM_NS}]
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        (binding,) = [o for (k, _), o in objs.items() if k == kind]
        assert binding["subjects"] == sa_subject
        role_kind = "ClusterRole" if kind == "ClusterRoleBinding" else "Role"
        assert (role_kind, binding["roleRef"]["name"]) in objs

    # The admission policy narrowing the ServiceAccount (policy.yaml): matched for it alone, bound to Deny.
    (policy,) = [o for (k, _), o in objs.items() if k == "ValidatingAdmissionPolicy"]
    (policy_binding,) = [o for (k, _), o in objs.items() if k == "ValidatingAdmissionPolicyBinding"]
    assert policy_binding["spec"] == {"policyName": policy["metadata"]["name"], "validationActions": ["Deny"]}
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert [c["expression"] for c in policy["spec"]["matchConditions"]] == [
        f"request.userInfo.username == '{GCM_USER}'"
    ]
    assert all(v["reason"] == "Forbidden" and v["messageExpression"] for v in policy["spec"]["validations"])

    # Scrapers of the secure /metrics: kubebuilder's metrics_reader_role, bound by the operator.
    reader = objs["ClusterRole", "gardener-controller-manager-metrics-reader"]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def test_deploy_objects_are_stored(gcm_cluster):
    server, kubectl = gcm_cluster
    api = server.api_client()
    dep = client.AppsV1Api(api).read_namespaced_deployment(GCM_SA, GCM_NS)
    assert dep.spec.replicas == 2 and dep.metadata.generation == 1
    assert dep.spec.template.spec.containers[0].ports[0].container_port == 2718
    svc = client.CoreV1Api(api).read_namespaced_service(GCM_SA, GCM_NS)
    assert [p.port for p in svc.spec.ports] == [443, 2719]
    assert client.CoreV1Api(api).read_namespaced_config_map("gardener-controller-manager-config", GCM_NS)
    hook = client.AdmissionregistrationV1Api(api).read_validating_webhook_configuration(
        "validate-namespace-deletion"
    )
    assert hook.webhooks[0].client_config.service.path == "/webhooks/validate-namespace-deletion"
    rbac = client.RbacAuthorizationV1Api(api)
    for name in ("project-member", "project-viewer", "project-serviceaccountmanager"):
        role = rbac.read_cluster_role(f"gardener.cloud:system:{name}")
        assert role.aggregation_rule.cluster_role_selectors
    # Re-applying is a no-op (kubectl's three-way patches of every kind are accepted).
    out = kubectl.ok("apply", "-k", str(DEPLOY))
    assert all(line.endswith(" unchanged") for line in out.splitlines()), out
    out = kubectl.ok("apply", "-k", str(GLOBAL))
    assert all(line.endswith(" unchanged") for line in out.splitlines()), out


def test_deployment_kubectl_apply_update_merges_by_name(gcm_cluster, rendered_deploy, tmp_path):
    """A changed Deployment re-applied with kubectl: strategic merge by container name / port / env name."""
    server, kubectl = gcm_cluster
    dep = copy.deepcopy(rendered_deploy["Deployment", GCM_SA])
    dep["metadata"] = {"name": "smp-probe", "namespace": "default"}
    manifest = tmp_path / "dep.yaml"
    manifest.write_text(yaml.safe_dump(dep))
    kubectl.ok("apply", "-f", str(manifest))
    c = _container(dep)
    c["env"] = [{"name": "GCM_EXTRA", "value": "1"}]
    c["ports"] = [p for p in c["ports"] if p["name"] != "metrics"]
    c["image"] = "gcm:0.2.0"
    dep["spec"]["replicas"] = 3
    manifest.write_text(yaml.safe_dump(dep))
    kubectl.ok("apply", "-f", str(manifest))
    live = client.AppsV1Api(server.api_client()).read_namespaced_deployment("smp-probe", "default")
    (container,) = live.spec.template.spec.containers
    assert container.image == "gcm:0.2.0" and [(e.name, e.value) for e in container.env] == [
        ("GCM_EXTRA", "1")
    ]
    assert [p.name for p in container.ports] == ["health", "webhook"]
    assert [m.name for m in container.volume_mounts] == ["config", "webhook-cert", "tmp"]
    assert live.spec.replicas == 3 and live.metadata.generation == 2


# --- gcm's least-privilege RBAC, exercised with the ServiceAccount's token --------------------------

ALLOWED = [
    # (verb, group, resource, subresource, namespace, name)
    ("list", CORE, "projects", "", "", ""),
    ("watch", CORE, "projects", "", "", ""),
    ("get", CORE, "projects", "", "", "dev"),
    ("update", CORE, "projects", "", "", "dev"),
    ("patch", CORE, "projects", "", "", "dev"),
    ("delete", CORE, "projects", "", "", "dev"),
    ("manage-members", CORE, "projects", "", "", "dev"),  # held for the per-project ClusterRoles
    ("patch", CORE, "projects", "status", "", "dev"),
    ("update", CORE, "projects", "finalizers", "", "dev"),
    *[
        (verb, group, resource, "", "garden-dev", "")
        for verb in ("list", "watch")
        for group, resource in [
            (CORE, "shoots"),
            (CORE, "backupentries"),
            (CORE, "plants"),
            (CORE, "quotas"),
            (CORE, "secretbindings"),
            (CORE, "internalsecrets"),
            (SECURITY, "credentialsbindings"),
            (SECURITY, "workloadidentities"),
            ("", "secrets"),
        ]
    ],
    *[("list", CORE, "shoots", "", "", ""), ("watch", "", "secrets", "", "", "")],  # cluster-wide
    *[(v, "", "namespaces", "", "", "garden-dev") for v in ("create", "get", "update", "delete")],
    ("list", "", "namespaces", "", "", ""),
    ("watch", "", "namespaces", "", "", ""),
    *[(v, "", "resourcequotas", "", "garden-dev", "gardener") for v in ("create", "get", "patch")],
    ("watch", "", "resourcequotas", "", "", ""),
    ("create", "authentication.k8s.io", "tokenreviews", "", "", ""),  # the secure metrics endpoint
    ("create", "authorization.k8s.io", "subjectaccessreviews", "", "", ""),
    ("create", "coordination.k8s.io", "leases", "", GCM_NS, ""),
    ("get", "coordination.k8s.io", "leases", "", GCM_NS, LEASE),
    ("update", "coordination.k8s.io", "leases", "", GCM_NS, LEASE),
    *[
        (v, "events.k8s.io", "events", "", "default", "")
        for v in ("create", "patch", "list", "watch", "delete")
    ],
    ("watch", "events.k8s.io", "events", "", "", ""),
    *[
        (v, "rbac.authorization.k8s.io", r, "", "", "")
        for r in ("clusterroles", "clusterrolebindings")
        for v in ("create", "get", "list", "watch", "patch", "delete")
    ],
    *[
        ("bind", "rbac.authorization.k8s.io", "clusterroles", "", ns, f"gardener.cloud:system:{role}")
        for role in ("project-member", "project-viewer", "project-serviceaccountmanager")
        for ns in ("garden-dev", "default")
    ],
    *[
        (v, "rbac.authorization.k8s.io", "rolebindings", "", "garden-dev", "")
        for v in ("create", "get", "list", "watch", "patch", "delete")
    ],
]

DENIED = [
    ("get", "", "secrets", "", "garden-dev", "s"),  # no reading of secret data by name
    ("get", "", "secrets", "", GCM_NS, "gardener-controller-manager-cert"),
    ("create", "", "secrets", "", "garden-dev", ""),
    ("create", CORE, "projects", "", "", ""),
    ("create", CORE, "shoots", "", "garden-dev", ""),
    ("delete", CORE, "shoots", "", "garden-dev", "s"),
    ("get", CORE, "internalsecrets", "", "garden-dev", "s"),
    ("create", "", "serviceaccounts", "", "garden-dev", ""),
    ("create", "", "serviceaccounts", "token", "garden-dev", "robot"),
    ("create", "", "configmaps", "", "garden-dev", ""),
    ("create", "rbac.authorization.k8s.io", "roles", "", "garden-dev", ""),
    ("get", "coordination.k8s.io", "leases", "", GCM_NS, "someone-elses-lease"),
    ("update", "coordination.k8s.io", "leases", "", "kube-system", LEASE),
    ("create", "coordination.k8s.io", "leases", "", "default", ""),
    ("delete", "", "events", "", "default", "x"),
    ("create", "apps", "deployments", "", GCM_NS, ""),
    ("update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "", "x"),
    ("impersonate", "", "users", "", "", "admin"),
    # least privilege (issue 31): no escalate, bind only on the three global project roles, only the
    # verbs gcm's requests use (tests/gcm/e2e/test_rbac_usage.py)
    *[
        (verb, "rbac.authorization.k8s.io", "clusterroles", "", ns, name)
        for verb, ns, name in (
            ("escalate", "", ""),
            ("escalate", "", "gardener.cloud:system:project:dev"),
            ("escalate", "", "gardener.cloud:system:controller-manager"),
            ("bind", "", "cluster-admin"),
            ("bind", "kube-system", "admin"),
            ("bind", "", "gardener.cloud:system:project:dev"),
            ("bind", "", "gardener.cloud:system:controller-manager"),
            ("update", "", "gardener.cloud:system:controller-manager"),
        )
    ],
    ("update", CORE, "projects", "status", "", "dev"),
    ("patch", "", "namespaces", "", "", "garden-dev"),
    ("update", "", "resourcequotas", "", "garden-dev", "gardener"),
    ("create", "", "events", "", "default", ""),  # events.k8s.io is always served
    ("get", "events.k8s.io", "events", "", "default", "x"),
]


def _ssar(api: client.ApiClient, verb, group, resource, subresource, namespace, name) -> bool:
    review = client.AuthorizationV1Api(api).create_self_subject_access_review(
        {
            "spec": {
                "resourceAttributes": {
                    "verb": verb,
                    "group": group,
                    "resource": resource,
                    "subresource": subresource,
                    "namespace": namespace,
                    "name": name,
                }
            }
        }
    )
    return review.status.allowed


def test_sa_token_is_gcm_service_account(gcm_cluster, gcm_sa):
    server, _ = gcm_cluster
    review = client.AuthenticationV1Api(server.api_client()).create_token_review(
        {"spec": {"token": gcm_sa.configuration.api_key["authorization"].removeprefix("Bearer ")}}
    )
    assert review.status.authenticated and review.status.user.username == GCM_USER


def test_sa_rbac_allows_exactly_what_gcm_uses(gcm_sa):
    denied = [attrs for attrs in ALLOWED if not _ssar(gcm_sa, *attrs)]
    assert denied == []
    allowed = [attrs for attrs in DENIED if _ssar(gcm_sa, *attrs)]
    assert allowed == []


SA_SUBJECT = {"kind": "ServiceAccount", "name": GCM_SA, "namespace": GCM_NS}
ALL = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]


def _forbidden(call) -> str:
    with pytest.raises(ApiException) as e:
        call()
    assert e.value.status == 403, e.value.body
    return _status_of(e.value)["message"]


def _role_ref(name: str) -> dict:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}


def test_sa_cannot_escalate(gcm_cluster, gcm_sa):
    """Issue 31's "done when": gcm's ServiceAccount cannot bind cluster-admin or edit its own role, and
    reads no Secret by name; what RBAC still allows it on Secrets (list) is asserted as the documented
    residual (docs/rbac.md)."""
    server, _ = gcm_cluster
    admin = server.api_client()
    rbac, core = client.RbacAuthorizationV1Api(gcm_sa), client.CoreV1Api(gcm_sa)
    not_held = "is attempting to grant RBAC permissions not currently held"
    crb = {
        "metadata": {"name": "gcm-escalation"},
        "roleRef": _role_ref("cluster-admin"),
        "subjects": [SA_SUBJECT],
    }
    assert not_held in _forbidden(lambda: rbac.create_cluster_role_binding(crb, dry_run="All"))
    assert not_held in _forbidden(lambda: rbac.create_cluster_role_binding(crb))
    for ns, role in (("kube-system", "cluster-admin"), ("kube-system", "admin"), ("default", "edit")):
        rb = {"metadata": {"name": "gcm-escalation"}, "roleRef": _role_ref(role), "subjects": [SA_SUBJECT]}
        assert not_held in _forbidden(
            lambda ns=ns, rb=rb: rbac.create_namespaced_role_binding(ns, rb, dry_run="All")
        )
    # its own ClusterRole: not to */*/*, not even one verb more (escalate); no new role with */*/*
    own = "gardener.cloud:system:controller-manager"
    before = client.RbacAuthorizationV1Api(admin).read_cluster_role(own).rules
    assert not_held in _forbidden(lambda: rbac.patch_cluster_role(own, {"rules": ALL}))
    (manifest,) = [
        d
        for d in yaml.safe_load_all((DEPLOY / "role.yaml").read_text())
        if d and d["metadata"]["name"] == own and d["kind"] == "ClusterRole"
    ]
    more = manifest["rules"] + [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["escalate"]}
    ]
    assert not_held in _forbidden(lambda: rbac.patch_cluster_role(own, {"rules": more}))
    assert client.RbacAuthorizationV1Api(admin).read_cluster_role(own).rules == before
    assert not_held in _forbidden(
        lambda: rbac.create_cluster_role({"metadata": {"name": "gcm-all"}, "rules": ALL}, dry_run="All")
    )
    # Secrets: never read by name, in no namespace ...
    if "kube-system" not in {n.metadata.name for n in client.CoreV1Api(admin).list_namespace().items}:
        client.CoreV1Api(admin).create_namespace({"metadata": {"name": "kube-system"}})
    client.CoreV1Api(admin).create_namespaced_secret(
        "kube-system", {"metadata": {"name": "not-for-gcm"}, "stringData": {"token": "s3cret"}}
    )
    _forbidden(lambda: core.read_namespaced_secret("not-for-gcm", "kube-system"))
    _forbidden(lambda: core.patch_namespaced_secret("not-for-gcm", "kube-system", {"data": {}}))
    # ... but the stale check's cache lists them cluster-wide, and RBAC has no metadata-only grant: a list
    # returns the data (the residual docs/rbac.md names; gcm itself lists them as metadata only).
    listed = {s.metadata.name: s for s in core.list_namespaced_secret("kube-system").items}
    assert listed["not-for-gcm"].data == {"token": "czNjcmV0"}


def test_sa_bind_at_cluster_scope_is_left_to_the_policy(gcm_sa):
    """`bind` on the global project roles (docs/rbac.md): kube authorizes `bind` with the binding's
    namespace, and a ClusterRole's grant covers every namespace and the cluster scope, so RBAC lets gcm
    bind them in a ClusterRoleBinding too; the admission policy (policy.yaml) refuses that."""
    rbac = client.RbacAuthorizationV1Api(gcm_sa)
    for role in ("project-member", "project-viewer", "project-serviceaccountmanager"):
        name = f"gardener.cloud:system:{role}"
        assert _ssar(gcm_sa, "bind", "rbac.authorization.k8s.io", "clusterroles", "", "", name)
        crb = {"metadata": {"name": f"gcm-{role}"}, "roleRef": _role_ref(name), "subjects": [SA_SUBJECT]}
        message = _forbidden(lambda crb=crb: rbac.create_cluster_role_binding(crb, dry_run="All"))
        assert "ValidatingAdmissionPolicy 'gardener-controller-manager-writes'" in message
        assert message.endswith(f"ClusterRoleBinding gcm-{role} is not one")


@contextlib.contextmanager
def _kubeconfig_webhook_failing_open(kubectl: Kubectl) -> Iterator[None]:
    """``failurePolicy: Ignore`` for the kubeconfig-secret webhook while Secrets go into project
    namespaces of a cluster where no gcm serves it (with Fail, as shipped, they are refused)."""

    def policy(value: str) -> None:
        patch = [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": value}]
        kubectl.ok(
            "patch", "validatingwebhookconfiguration", "validate-kubeconfig-secrets", "--type=json",
            "-p", json.dumps(patch),
        )  # fmt: skip

    policy("Ignore")
    try:
        yield
    finally:
        policy("Fail")


def test_sa_real_requests(gcm_cluster, gcm_sa):
    """What the controllers do, done with gcm's token: the grants are sufficient, not just reviewed."""
    server, _ = gcm_cluster
    admin = server.api_client()
    objs, core = client.CustomObjectsApi(gcm_sa), client.CoreV1Api(gcm_sa)
    client.CustomObjectsApi(admin).create_cluster_custom_object(
        CORE,
        "v1beta1",
        "projects",
        {**_project_type(), "metadata": {"name": "rbac-dev"}, "spec": {"namespace": "garden-rbac-dev"}},
    )
    # list + watch projects
    listed = objs.list_cluster_custom_object(CORE, "v1beta1", "projects")
    assert "rbac-dev" in {p["metadata"]["name"] for p in listed["items"]}
    w = watch.Watch()
    events = []
    for ev in w.stream(
        objs.list_cluster_custom_object,
        CORE,
        "v1beta1",
        "projects",
        resource_version=listed["metadata"]["resourceVersion"],
        timeout_seconds=1,
    ):
        events.append(ev)
    assert events == []  # the watch was allowed (and nothing changed)
    # finalizer patch, status patch
    objs.patch_cluster_custom_object(
        CORE, "v1beta1", "projects", "rbac-dev", {"metadata": {"finalizers": ["gardener"]}}
    )
    project = objs.patch_cluster_custom_object_status(
        CORE, "v1beta1", "projects", "rbac-dev", {"status": {"phase": "Pending", "observedGeneration": 1}}
    )
    assert project["status"]["phase"] == "Pending"
    # namespace with a blocking owner reference to the Project (needs projects/finalizers)
    ns = core.create_namespace(
        {
            "metadata": {
                "name": "garden-rbac-dev",
                "labels": {"gardener.cloud/role": "project", "project.gardener.cloud/name": "rbac-dev"},
                "ownerReferences": [controller_reference(project)],
            }
        }
    )
    assert ns.metadata.name == "garden-rbac-dev"
    # the member RBAC objects gcm writes have the Project as their one controller (the admission policy
    # refuses them otherwise)
    owned = {"ownerReferences": [owner_reference(project)]}
    core.create_namespaced_resource_quota(
        "garden-rbac-dev", {"metadata": {"name": "gardener"}, "spec": {"hard": {"count/secrets": "10"}}}
    )
    # member RBAC: a ClusterRole with the custom verb (no escalate: gcm holds every rule it grants), a
    # binding of it (gcm holds its rules), bindings of the global roles whose rules gcm does not hold
    # (bind); an extension role's leftovers (written by an admin: gcm may not write aggregationRules)
    # are listed and deleted
    rbac = client.RbacAuthorizationV1Api(gcm_sa)
    rbac.create_cluster_role(
        {
            "metadata": {"name": "gardener.cloud:system:project:rbac-dev", **owned},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["namespaces"],
                    "resourceNames": ["garden-rbac-dev"],
                    "verbs": ["get"],
                },
                {
                    "apiGroups": [CORE],
                    "resources": ["projects"],
                    "resourceNames": ["rbac-dev"],
                    "verbs": ["get", "patch", "manage-members", "update", "delete"],
                },
            ],
        }
    )
    client.RbacAuthorizationV1Api(admin).create_cluster_role(
        {
            "metadata": {
                "name": "gardener.cloud:extension:project:rbac-dev:ops",
                "labels": {
                    "gardener.cloud/role": "extension-project-role",
                    "project.gardener.cloud/name": "rbac-dev",
                },
            },
            "aggregationRule": {
                "clusterRoleSelectors": [
                    {"matchLabels": {"rbac.gardener.cloud/aggregate-to-extension-role": "ops"}}
                ]
            },
        }
    )
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": "gardener.cloud:system:project:rbac-dev", **owned},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "gardener.cloud:system:project:rbac-dev",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
        }
    )
    for role in ("project-member", "project-viewer", "project-serviceaccountmanager"):
        rbac.create_namespaced_role_binding(
            "garden-rbac-dev",
            {
                "metadata": {"name": f"gardener.cloud:system:{role}", **owned},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": f"gardener.cloud:system:{role}",
                },
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
            },
        )
    stale = rbac.list_cluster_role(
        label_selector="gardener.cloud/role=extension-project-role,project.gardener.cloud/name=rbac-dev"
    )
    assert [r.metadata.name for r in stale.items] == ["gardener.cloud:extension:project:rbac-dev:ops"]
    rbac.delete_cluster_role("gardener.cloud:extension:project:rbac-dev:ops")
    # leader election Lease in garden
    coord = client.CoordinationV1Api(gcm_sa)
    lease = coord.create_namespaced_lease(
        GCM_NS, {"metadata": {"name": LEASE}, "spec": {"holderIdentity": "gcm-0", "leaseDurationSeconds": 15}}
    )
    lease.spec.holder_identity = "gcm-1"
    assert coord.replace_namespaced_lease(LEASE, GCM_NS, lease).spec.holder_identity == "gcm-1"
    # events: recorder writes (events.k8s.io), TTL controller lists and deletes. Raw JSON: the official
    # client re-renders eventTime with "+00:00", which MicroTime parsing rejects (as upstream does).
    code, _ = _raw(
        gcm_sa,
        "POST",
        "/apis/events.k8s.io/v1/namespaces/default/events",
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "rbac-dev.1"},
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "reportingController": "gardener.cloud/project-controller",
            "reportingInstance": "gcm-0",
            "action": "Reconcile",
            "reason": "NamespaceReconcileSuccessful",
            "type": "Normal",
            "note": "ok",
            "regarding": {"apiVersion": f"{CORE}/v1beta1", "kind": "Project", "name": "rbac-dev"},
        },
    )
    assert code == 201
    code, _ = _raw(
        gcm_sa,
        "PATCH",
        "/apis/events.k8s.io/v1/namespaces/default/events/rbac-dev.1",
        {"series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"}},
        "application/merge-patch+json",
    )
    assert code == 200
    events = client.EventsV1Api(gcm_sa)
    assert "rbac-dev.1" in {e.metadata.name for e in events.list_event_for_all_namespaces().items}
    events.delete_namespaced_event("rbac-dev.1", "default")
    # secrets: metadata listing is allowed, reading one by name is not
    with _kubeconfig_webhook_failing_open(gcm_cluster[1]):  # no gcm answers it here
        client.CoreV1Api(admin).create_namespaced_secret(
            "garden-rbac-dev", {"metadata": {"name": "creds"}, "stringData": {"k": "v"}}
        )
    assert [s.metadata.name for s in core.list_namespaced_secret("garden-rbac-dev").items] == ["creds"]
    with pytest.raises(ApiException) as e:
        core.read_namespaced_secret("creds", "garden-rbac-dev")
    assert e.value.status == 403
    assert _status_of(e.value)["message"] == (
        f'secrets "creds" is forbidden: User "{GCM_USER}" cannot get resource "secrets" in API group "" '
        'in the namespace "garden-rbac-dev"'
    )
    # stale auto-deletion: the auto-delete timestamp, the confirmation annotation, then DELETE
    objs.patch_cluster_custom_object_status(
        CORE,
        "v1beta1",
        "projects",
        "rbac-dev",
        {"status": {"staleAutoDeleteTimestamp": "2024-01-01T00:00:00Z"}},
    )
    objs.patch_cluster_custom_object(
        CORE,
        "v1beta1",
        "projects",
        "rbac-dev",
        {"metadata": {"annotations": {"confirmation.gardener.cloud/deletion": "true"}}},
    )
    objs.delete_cluster_custom_object(CORE, "v1beta1", "projects", "rbac-dev")


# --- Dockerfile ----------------------------------------------------------------------------------------


def test_dockerfile_passes_hadolint():
    assert_hadolint_clean(REPO / "Dockerfile")


def test_dockerfile_essentials():
    """Issue 17 §1: any registry's Debian base, Debian's Python, a venv copied out of a builder stage."""
    text = (REPO / "Dockerfile").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert lines[0] == "ARG BASE=docker.io/library/debian:bookworm-slim"
    froms = [line for line in lines if line.startswith("FROM ")]
    assert froms == ["FROM ${BASE} AS builder", "FROM ${BASE}"]
    runtime = lines[lines.index("FROM ${BASE}") :]
    assert "COPY --from=builder /opt/gcm /opt/gcm" in runtime
    assert not [line for line in runtime if line.startswith("COPY") and "--from" not in line], "sources"
    assert "python3-venv" not in "\n".join(runtime) and "pip install" not in "\n".join(runtime)
    assert 'ENTRYPOINT ["python", "-m", "gcm"]' in lines
    assert not any(line.startswith("WORKDIR") for line in lines), "the install must not depend on the cwd"
    user = [line for line in lines if line.startswith("USER ")]
    assert user and user[-1] == "USER 65532:65532"
    assert "pip install --no-cache-dir /src" in text and "[test]" not in text
    assert any(line.startswith("LABEL org.opencontainers.image.") for line in runtime)
