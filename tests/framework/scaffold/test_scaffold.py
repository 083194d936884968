"""``python -m framework init`` / ``create api`` / ``create webhook``: what they write, that the result is
consistent with ``generate``, installable, served by the API server, and that they refuse to overwrite
files they did not write. (The whole flow including the project's own tests runs in
tests/docs/test_walkthrough.py.)"""

from __future__ import annotations

import hashlib
import importlib
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from framework.generate.project import ProjectConfig, project_imports
from framework.testing import APIServer, Kubectl, eventually, free_port
from tests.framework.scaffold.projects import ROOT, assert_refused, run, scaffold
from tests.hadolint import assert_hadolint_clean

KIND = ["--group", "cache", "--version", "v1alpha1", "--kind", "Memcached"]
CRD = "config/crd/bases/cache.example.com_memcacheds.yaml"


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    """init + create api + create webhook + generate, once for the module (tests copy it to change it)."""
    return scaffold(
        tmp_path_factory.mktemp("memcached-operator"),
        ["init", "--domain", "example.com", "--project", "memcached-operator"],
        ["create", "api", *KIND],
        ["create", "webhook", *KIND, "--defaulting", "--validation"],
        ["generate"],
    )


@pytest.fixture
def project(scaffolded, tmp_path) -> Path:
    return Path(shutil.copytree(scaffolded, tmp_path / "memcached-operator"))


def test_the_layout(scaffolded):
    for rel in (
        "pyproject.toml",
        "PROJECT",
        "README.md",
        "Dockerfile",
        "memcached_operator/__main__.py",
        "memcached_operator/api/cache/v1alpha1/memcached.py",
        "memcached_operator/controllers/memcached.py",
        "memcached_operator/webhooks/memcached.py",
        "tests/conftest.py",
        "tests/test_memcached_controller.py",
        "tests/test_memcached_webhook.py",
        "config/samples/cache.example.com_v1alpha1_memcached.yaml",
        "config/rbac/leader_election_role.yaml",
        "config/manager/manager.yaml",
        "config/prometheus/monitor.yaml",
        "config/webhook/service.yaml",
        "config/default/kustomization.yaml",
        CRD,
        "config/rbac/role.yaml",
        "config/webhook/manifests.yaml",
    ):
        assert (scaffolded / rel).is_file(), rel
    controllers = (scaffolded / "memcached_operator/controllers/__init__.py").read_text()
    assert "from memcached_operator.controllers import memcached" in controllers
    assert "    memcached.setup," in controllers
    assert (
        "- bases/cache.example.com_memcacheds.yaml"
        in (scaffolded / "config/crd/kustomization.yaml").read_text()
    )
    project = yaml.safe_load((scaffolded / "PROJECT").read_text())
    assert project["resources"] == [
        {
            "group": "cache",
            "version": "v1alpha1",
            "kind": "Memcached",
            "domain": "example.com",
            "path": "memcached_operator.api.cache.v1alpha1.memcached",
            "api": {"crdVersion": "v1", "namespaced": True},
            "controller": True,
            "webhooks": {"defaulting": True, "validation": True, "webhookVersion": "v1"},
        }
    ]
    written = project["files"]["memcached_operator/controllers/memcached.py"]
    assert (
        written
        == hashlib.sha256(
            (scaffolded / "memcached_operator/controllers/memcached.py").read_bytes()
        ).hexdigest()
    )
    assert CRD not in project["files"]  # generate's output, not the scaffold's


def test_generated_role_and_webhooks_follow_the_scaffolded_code(scaffolded):
    rules = yaml.safe_load((scaffolded / "config/rbac/role.yaml").read_text())["rules"]
    assert {
        "apiGroups": ["cache.example.com"],
        "resources": ["memcacheds/status"],
        "verbs": ["get", "patch", "update"],
    } in rules
    assert any("mutatingwebhookconfigurations" in r["resources"] for r in rules)
    mutating, validating = yaml.safe_load_all((scaffolded / "config/webhook/manifests.yaml").read_text())
    assert (
        mutating["webhooks"][0]["clientConfig"]["service"]["path"]
        == "/mutate-cache-example-com-v1alpha1-memcached"
    )
    assert validating["webhooks"][0]["rules"][0]["resources"] == ["memcacheds"]


def test_check_passes_on_a_fresh_scaffold_and_fails_after_a_field_is_added(tmp_path, monkeypatch, capsys):
    assert run(monkeypatch, tmp_path, "init", "--domain", "example.com", "--project", "fresh") == 0
    assert run(monkeypatch, tmp_path, "generate", "--check") == 0
    assert run(monkeypatch, tmp_path, "create", "api", *KIND) == 0
    assert run(monkeypatch, tmp_path, "generate") == 0
    assert run(monkeypatch, tmp_path, "generate", "--check") == 0
    types = tmp_path / "fresh/api/cache/v1alpha1/memcached.py"
    types.write_text(
        types.read_text().replace(
            "class MemcachedSpec(TypedDict):\n",
            'class MemcachedSpec(TypedDict):\n    size: int\n    """How many."""\n\n',
        )
    )
    capsys.readouterr()
    assert run(monkeypatch, tmp_path, "generate", "--check") == 1
    assert capsys.readouterr().err.splitlines()[0] == f"{CRD}: differs from what the code generates"


def test_the_crd_installs_and_kubectl_explains_the_docstrings(scaffolded, apiserver, tmp_path):
    apiserver.install_crds(scaffolded / "config/crd/bases")
    kubectl = Kubectl(apiserver.kubeconfig, tmp_path)
    explained = kubectl.ok("explain", "memcached.spec")
    assert "An example field of Memcached: replace it with yours." in explained
    kubectl.ok("apply", "-f", str(scaffolded / "config/samples/cache.example.com_v1alpha1_memcached.yaml"))
    assert kubectl.json("get", "memcached", "memcached-sample", "-o", "json")["spec"] == {"foo": "bar"}


def test_the_kustomize_tree_builds_and_applies(scaffolded, apiserver, tmp_path):
    kubectl = Kubectl(apiserver.kubeconfig, tmp_path)
    built = list(yaml.safe_load_all(kubectl.ok("kustomize", str(scaffolded / "config/default"))))
    names = {(d["kind"], d["metadata"]["name"]) for d in built}
    assert {
        ("CustomResourceDefinition", "memcacheds.cache.example.com"),
        ("ClusterRole", "memcached-operator-manager-role"),
        ("Role", "memcached-operator-leader-election-role"),
        ("Deployment", "memcached-operator-controller-manager"),
        ("Service", "memcached-operator-webhook-service"),  # create webhook added ../webhook
        ("Service", "memcached-operator-controller-manager-metrics-service"),
    } <= names
    [deployment] = [d for d in built if d["kind"] == "Deployment"]
    assert deployment["metadata"]["namespace"] == "memcached-operator-system"
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--metrics-bind-address=:8080", "--leader-elect", "--health-probe-bind-address=:8081"]
    kubectl.ok("apply", "-k", str(scaffolded / "config/default"))
    kubectl.ok("get", "crd", "memcacheds.cache.example.com")


def test_the_dockerfile_passes_hadolint(scaffolded):
    assert_hadolint_clean(scaffolded / "Dockerfile")


def test_the_project_builds_its_package_metadata(scaffolded, tmp_path):
    """What pip's build step makes of the pyproject (setuptools' egg_info), without installing."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "egg_info",
            "--egg-base",
            str(tmp_path),
        ],
        cwd=scaffolded,
        check=True,
        capture_output=True,
        timeout=60,
    )
    info = tmp_path / "memcached_operator.egg-info"
    assert "Name: memcached-operator" in (info / "PKG-INFO").read_text()
    requires = (info / "requires.txt").read_text().splitlines()
    assert requires[0] == f"gcm@ {ROOT.as_uri()}"  # this checkout, as a direct reference
    sources = (info / "SOURCES.txt").read_text()
    assert "memcached_operator/controllers/memcached.py" in sources


def test_framework_path_and_its_environment_variable(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FRAMEWORK_PATH", str(ROOT))
    assert run(monkeypatch, tmp_path, "init", "--domain", "example.com", "--project", "a") == 0
    assert f'"gcm @ {ROOT.as_uri()}"' in (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "b").mkdir()
    capsys.readouterr()
    assert (
        run(
            monkeypatch,
            tmp_path / "b",
            "init",
            "--domain",
            "example.com",
            "--project",
            "b",
            "--framework-path",
            str(tmp_path),
        )
        == 2
    )
    assert (
        capsys.readouterr().err
        == f"error: framework path {tmp_path}: not a checkout of the framework (no pyproject.toml)\n"
    )


def forget_and_edit(project: Path) -> None:
    """The resource is gone from PROJECT (so create api goes on), its reconciler was edited."""
    record = project / "PROJECT"
    record.write_text(record.read_text().replace("- group: cache", "- group: gone"))
    (project / "memcached_operator/controllers/memcached.py").write_text("# my reconciler\n")


@pytest.mark.parametrize(
    ("prepare", "argv", "message"),
    [
        (
            lambda p: None,
            ["init", "--domain", "example.com", "--project", "x"],
            "PROJECT: exists; this directory holds a project already (init writes a new one)",
        ),
        (
            lambda p: (p / "PROJECT").unlink(),
            ["init", "--domain", "example.com", "--project", "memcached-operator"],
            ".dockerignore: exists and was not written by `python -m framework`; not overwriting it",
        ),
        (
            lambda p: None,
            ["create", "api", *KIND],
            "PROJECT: the API cache.example.com/v1alpha1 Memcached exists already",
        ),
        (
            lambda p: (p / "memcached_operator/controllers/widget.py").write_text("# mine\n"),
            ["create", "api", "--group", "cache", "--version", "v1", "--kind", "Widget"],
            "memcached_operator/controllers/widget.py: exists and was not written by `python -m framework`;"
            " not overwriting it",
        ),
        (
            forget_and_edit,
            ["create", "api", *KIND],
            "memcached_operator/controllers/memcached.py: changed since `python -m framework` wrote it;"
            " not overwriting it",
        ),
        (
            lambda p: None,
            ["create", "webhook", "--group", "cache", "--version", "v1", "--kind", "Widget", "--defaulting"],
            "PROJECT: no API cache.example.com/v1 Widget; run `create api` for it first",
        ),
        (
            lambda p: None,
            ["create", "webhook", *KIND, "--validation"],
            "PROJECT: the API cache.example.com/v1alpha1 Memcached has webhooks already",
        ),
        (
            lambda p: None,
            ["create", "webhook", *KIND],
            "create webhook needs --defaulting, --validation and/or --conversion",
        ),
        (
            lambda p: (p / "config/crd/kustomization.yaml").write_text("resources: []\n"),
            ["create", "api", "--group", "cache", "--version", "v1", "--kind", "Widget"],
            "config/crd/kustomization.yaml: the line `# +framework:scaffold:crds` is missing;"
            " this command adds its code there",
        ),
        (
            lambda p: None,
            ["create", "api", "--group", "cache", "--version", "1", "--kind", "Widget"],
            "version '1' is not a Kubernetes version (v1, v1beta1, v2alpha1, ...)",
        ),
        (
            lambda p: None,
            ["create", "api", "--group", "cache", "--version", "v1", "--kind", "widget"],
            "kind 'widget' must be CamelCase, starting with an upper-case letter (e.g. Memcached)",
        ),
    ],
    ids=[
        "init-twice",
        "init-over-a-file",
        "api-twice",
        "api-over-a-file",
        "api-over-an-edited-file",
        "webhook-without-api",
        "webhook-twice",
        "webhook-without-kind",
        "marker-removed",
        "bad-version",
        "bad-kind",
    ],
)
def test_refusals_name_the_file_and_change_nothing(project, monkeypatch, capsys, prepare, argv, message):
    prepare(project)
    assert_refused(project, monkeypatch, capsys, argv, message)


def test_init_leaves_unrelated_files_alone_and_takes_the_directory_name(tmp_path, monkeypatch):
    root = tmp_path / "notes-operator"
    (root / ".git").mkdir(parents=True)
    (root / "NOTES.txt").write_text("mine\n")
    assert run(monkeypatch, root, "init", "--domain", "example.com") == 0
    assert (root / "NOTES.txt").read_text() == "mine\n"
    assert yaml.safe_load((root / "PROJECT").read_text())["package"] == "notes_operator"


def test_the_manager_runs_with_the_generated_roles_only(scaffolded, tmp_path):
    """The scaffolded manager (leader election, controller, managed webhooks) as a user bound to
    config/rbac/role.yaml and leader_election_role.yaml: the sample gets Ready, no request is refused."""
    cluster_role = yaml.safe_load((scaffolded / "config/rbac/role.yaml").read_text())
    election_role = yaml.safe_load((scaffolded / "config/rbac/leader_election_role.yaml").read_text())
    subject = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "operator"}]
    with APIServer(authorization="RBAC") as server:
        api = server.api_client()
        rbac_api = client.RbacAuthorizationV1Api(api)
        rbac_api.create_cluster_role(cluster_role)
        rbac_api.create_cluster_role_binding(
            {
                "metadata": {"name": "operator"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "manager-role",
                },
                "subjects": subject,
            }
        )
        rbac_api.create_namespaced_role("default", election_role)
        rbac_api.create_namespaced_role_binding(
            "default",
            {
                "metadata": {"name": "operator"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": "leader-election-role",
                },
                "subjects": subject,
            },
        )
        server.install_crds(scaffolded / "config/crd/bases")
        server.record_requests()
        port = free_port()
        config = ProjectConfig(scaffolded, "example.com", "memcached-operator", "memcached_operator")
        with project_imports(config):
            main_module = importlib.import_module("memcached_operator.__main__")
            argv = ["--kubeconfig", server.kubeconfig_for("operator"), "--leader-elect", "--webhook-port"]
            argv += [str(port), "--webhook-url", f"https://127.0.0.1:{port}", "--health-probe-bind-address"]
            argv += ["0", "--webhook-cert-dir", str(tmp_path / "certs")]
            args = main_module.parse_args(argv)
            mgr = main_module.build_manager(args)
        thread = threading.Thread(target=mgr.start, name="manager", daemon=True)
        thread.start()
        try:
            eventually(lambda: mgr.webhook_configurator.last_error is None, message="webhooks configured")
            sample = yaml.safe_load(
                (scaffolded / "config/samples/cache.example.com_v1alpha1_memcached.yaml").read_text()
            )
            created = client.CustomObjectsApi(api).create_namespaced_custom_object(
                "cache.example.com", "v1alpha1", "default", "memcacheds", {**sample, "spec": {}}
            )
            assert created["spec"] == {"foo": "default"}  # the defaulting webhook ran

            def ready() -> bool:
                obj = client.CustomObjectsApi(api).get_namespaced_custom_object(
                    "cache.example.com", "v1alpha1", "default", "memcacheds", "memcached-sample"
                )
                return any(c["type"] == "Ready" for c in (obj.get("status") or {}).get("conditions", []))

            eventually(ready, message="the sample is Ready")
        finally:
            mgr.stop()
            thread.join(30)
        records = server.recorded_requests("operator")
    assert [r for r in records if r.code == 403] == []
    assert {("leases", "create"), ("mutatingwebhookconfigurations", "create")} <= {
        (r.resource, r.verb) for r in records
    }
