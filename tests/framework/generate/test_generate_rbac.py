"""``python -m framework generate``'s role: RBAC markers merged as controller-gen merges them, plus the
read rules of every watched kind, events and the managed webhook configuration; and a role that lets
the manager run under RBAC."""

from __future__ import annotations

import importlib
import threading

import pytest
import yaml
from kubernetes import client

from framework import Client, Manager
from framework.generate.cli import ROLE_PATH, outputs
from framework.generate.project import load_project, project_imports
from framework.generate.rbac import normalize_rules, roles
from framework.markers.rbac import Rule, rbac, rules_of
from framework.testing import APIServer, eventually
from tests.framework.generate.projects import shop


def test_rules_merge_and_sort_as_controller_gen():
    rules = [
        Rule(verbs=("get",), groups=("apps",), resources=("deployments",)),
        Rule(verbs=("list", "get"), groups=("apps",), resources=("deployments",)),  # same key: verbs united
        Rule(
            verbs=("get", "list"), groups=("apps",), resources=("replicasets",)
        ),  # same verbs: resources fold
        Rule(
            verbs=("get", "list"), groups=("batch",), resources=("deployments", "replicasets")
        ),  # groups fold
        Rule(verbs=("watch", "*"), groups=("core",), resources=("pods",)),  # * alone; core is ""
        Rule(verbs=("get",), urls=("/metrics",)),
        Rule(verbs=("get",), urls=("/healthz",)),  # URLs fold
    ]
    assert normalize_rules(rules) == [
        {"nonResourceURLs": ["/healthz", "/metrics"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]},
        {
            "apiGroups": ["apps", "batch"],
            "resources": ["deployments", "replicasets"],
            "verbs": ["get", "list"],
        },
    ]


def test_namespaced_rules_make_a_role_per_namespace():
    docs = roles(
        [
            Rule(verbs=("get",), groups=("",), resources=("secrets",), namespace="b"),
            Rule(verbs=("get",), groups=("",), resources=("secrets",), namespace="a"),
        ]
    )
    assert [(d["kind"], d["metadata"]) for d in docs] == [
        ("ClusterRole", {"name": "manager-role"}),
        ("Role", {"name": "manager-role", "namespace": "a"}),
        ("Role", {"name": "manager-role", "namespace": "b"}),
    ]
    assert docs[0]["rules"] == []


def test_the_decorator_stacks_in_source_order_and_refuses_what_rbac_would():
    @rbac(groups=[""], resources=["pods"], verbs=["get"])
    @rbac(groups="apps", resources="deployments", verbs="list")
    class Reconciler:
        pass

    class Child(Reconciler):
        pass

    assert [r.resources for r in rules_of(Reconciler)] == [("pods",), ("deployments",)]
    assert rules_of(Child) == ()  # a base class's markers are its own
    for bad in (
        {"groups": [""], "resources": ["pods"], "verbs": []},
        {"groups": [""], "resources": ["pods"], "verbs": ["GET"]},
        {"verbs": ["get"]},
        {"resources": ["pods"], "verbs": ["get"]},
        {"urls": ["/metrics"], "verbs": ["get"], "namespace": "x"},
        {"urls": ["/metrics"], "groups": [""], "resources": ["pods"], "verbs": ["get"]},
    ):
        with pytest.raises(ValueError):
            rbac(**bad)
    with pytest.raises(TypeError):
        rbac(groups=[""], resources=[1], verbs=["get"])  # type: ignore[list-item]


def test_role_from_markers_watches_and_events(tmp_path, no_leaked_threads):
    role = list(yaml.safe_load_all(outputs(load_project(shop(tmp_path, webhooks=False)))[ROLE_PATH]))
    assert role == [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "manager-role"},
            "rules": [
                {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
                # for_: read rules; owns: read rules united with the markers' write verbs
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": [""],
                    "resources": ["secrets"],
                    "verbs": ["create", "get", "list", "patch", "update", "watch"],
                },
                # watches(..., metadata_only=True): still list and watch of the resource
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["apps"], "resources": ["deployments/status"], "verbs": ["get"]},
                # mgr.event_recorder(...) in the setup
                {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "manager-role", "namespace": "shop-system"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resourceNames": ["settings"],
                    "resources": ["configmaps"],
                    "verbs": ["get"],
                }
            ],
        },
    ]


def test_webhooks_add_the_managed_configuration_rights_unless_switched_off(tmp_path):
    root = shop(tmp_path)
    webhook_rule = {
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
        "verbs": ["create", "get", "update"],
    }
    assert webhook_rule in next(yaml.safe_load_all(outputs(load_project(root))[ROLE_PATH]))["rules"]
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "managed-webhook-configuration = false\n")
    assert webhook_rule not in next(yaml.safe_load_all(outputs(load_project(root))[ROLE_PATH]))["rules"]


def _bind(api: client.ApiClient, docs: list[dict], user: str) -> None:
    rbac_api = client.RbacAuthorizationV1Api(api)
    subject = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
    for doc in docs:
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": doc["kind"], "name": doc["metadata"]["name"]}
        if doc["kind"] == "ClusterRole":
            rbac_api.create_cluster_role(doc)
            rbac_api.create_cluster_role_binding(
                {"metadata": {"name": user}, "roleRef": ref, "subjects": subject}
            )
        else:
            namespace = doc["metadata"]["namespace"]
            client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
            rbac_api.create_namespaced_role(namespace, doc)
            rbac_api.create_namespaced_role_binding(
                namespace, {"metadata": {"name": user}, "roleRef": ref, "subjects": subject}
            )


def test_the_generated_role_lets_the_manager_run_under_rbac(tmp_path):
    project = load_project(shop(tmp_path, webhooks=False))
    docs = list(yaml.safe_load_all(outputs(project)[ROLE_PATH]))
    with APIServer(authorization="RBAC") as server:
        _bind(server.api_client(), docs, "shop")
        server.record_requests()
        with project_imports(project):
            controllers = importlib.import_module("shop.controllers")
            mgr = Manager(
                Client.from_kubeconfig(server.kubeconfig_for("shop")), health_probe_bind_address="0"
            )
            controllers.setup(mgr)
        thread = threading.Thread(target=mgr.start, name="manager", daemon=True)
        thread.start()
        wanted = {(r, v) for r in ("configmaps", "secrets", "deployments") for v in ("list", "watch")}

        def watching() -> bool:
            return wanted <= {(r.resource, r.verb) for r in server.recorded_requests("shop")}

        try:
            eventually(lambda: mgr.is_leader(), message="caches synced, controllers started")
        finally:
            mgr.stop()
            thread.join(30)
        # A watch is recorded when it ends: the manager's stop closes them.
        eventually(watching, message="every watched kind listed and watched")
        refused = [r for r in server.recorded_requests("shop") if r.code == 403]
    assert not refused
