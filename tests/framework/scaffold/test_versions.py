"""A kind in two versions: ``create api`` for a further version (``--no-controller``, ``--storage``),
``create webhook --conversion --spoke``, the generated CRD and kustomize patch, and the generated
project's own tests (a round trip through both versions via the manager's conversion webhook); the
marker-inserted code of a project with several kinds passes ruff."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from framework.scaffold.files import LINE_LENGTH, import_block
from framework.testing import Kubectl
from tests.framework.scaffold.projects import ROOT, assert_refused, run, scaffold

V1 = ["--group", "batch", "--version", "v1", "--kind", "CronJob"]
V2 = ["--group", "batch", "--version", "v2", "--kind", "CronJob"]
V3 = ["--group", "batch", "--version", "v3", "--kind", "CronJob"]
CRD = "config/crd/bases/batch.example.com_cronjobs.yaml"


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> Path:
    """init, create api v1, create api v2 --no-controller, create webhook --conversion, generate."""
    return scaffold(
        tmp_path_factory.mktemp("cronjob-operator"),
        ["init", "--domain", "example.com", "--project", "cronjob-operator"],
        ["create", "api", *V1],
        ["create", "api", *V2, "--no-controller"],
        ["create", "webhook", *V1, "--conversion", "--spoke", "v2"],
        ["generate"],
    )


@pytest.fixture
def project(converted, tmp_path) -> Path:
    return Path(shutil.copytree(converted, tmp_path / "cronjob-operator"))


def test_the_second_version_is_served_and_the_first_stored(converted):
    crd = yaml.safe_load((converted / CRD).read_text())
    assert [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]] == [
        ("v2", True, False),
        ("v1", True, True),
    ]
    assert "conversion" not in crd["spec"]  # controller-gen's bases; the kustomize patch adds it
    resources = yaml.safe_load((converted / "PROJECT").read_text())["resources"]
    assert [(r["version"], r["controller"]) for r in resources] == [("v1", True), ("v2", False)]
    assert resources[0]["webhooks"] == {"conversion": True, "spoke": ["v2"], "webhookVersion": "v1"}
    assert sorted(p.name for p in (converted / "cronjob_operator/controllers").glob("*.py")) == [
        "__init__.py",
        "cronjob.py",
    ]
    assert (converted / "config/samples/batch.example.com_v2_cronjob.yaml").is_file()
    spoke = (converted / "cronjob_operator/api/batch/v2/cronjob_conversion.py").read_text()
    assert "class CronJobV2:" in spoke
    assert "def convert_to(self, obj" in spoke and "def convert_from(self, hub" in spoke
    hooks = (converted / "cronjob_operator/webhooks/cronjob_conversion.py").read_text()
    assert 'hooks.with_conversion(hub="v1", spokes=SPOKES)' in hooks
    assert "cronjob_conversion.setup," in (converted / "cronjob_operator/webhooks/__init__.py").read_text()


def test_the_role_lets_the_manager_read_its_webhook_configurations(converted):
    """A project with a conversion webhook only: the manager's webhook configurator still reads the
    (empty) admission configurations, so the generated role grants it; no manifests.yaml is written."""
    rules = yaml.safe_load((converted / "config/rbac/role.yaml").read_text())["rules"]
    assert {
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
        "verbs": ["create", "get", "update"],
    } in rules
    assert not (converted / "config/webhook/manifests.yaml").exists()


def test_the_kustomize_tree_turns_the_conversion_webhook_on(converted, apiserver, tmp_path):
    kubectl = Kubectl(apiserver.kubeconfig, tmp_path)
    built = list(yaml.safe_load_all(kubectl.ok("kustomize", str(converted / "config/default"))))
    [crd] = [d for d in built if d["kind"] == "CustomResourceDefinition"]
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                # config/crd/kustomizeconfig.yaml: namePrefix and namespace reach the Service reference
                "service": {
                    "name": "cronjob-operator-webhook-service",
                    "namespace": "cronjob-operator-system",
                    "path": "/convert",
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    services = {d["metadata"]["name"] for d in built if d["kind"] == "Service"}
    assert "cronjob-operator-webhook-service" in services


def test_the_projects_tests_round_trip_through_both_versions(converted):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "PYTEST", "FRAMEWORK_PATH"))}
    env["PYTHONPATH"] = str(ROOT)
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"],
        cwd=converted,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "PASSED tests/test_cronjob_conversion.py::test_an_object_reads_the_same_in_every_version" in (
        tests.stdout
    )


def test_storage_moves_to_the_new_version_with_storage(tmp_path, monkeypatch):
    assert run(monkeypatch, tmp_path, "init", "--domain", "example.com", "--project", "moved") == 0
    assert run(monkeypatch, tmp_path, "create", "api", *V1) == 0
    assert run(monkeypatch, tmp_path, "create", "api", *V2, "--no-controller", "--storage") == 0
    assert "    storage=False,\n)" in (tmp_path / "moved/api/batch/v1/cronjob.py").read_text()
    assert "storage=" not in (tmp_path / "moved/api/batch/v2/cronjob.py").read_text()
    assert run(monkeypatch, tmp_path, "generate") == 0
    crd = yaml.safe_load((tmp_path / CRD).read_text())
    assert {v["name"]: v["storage"] for v in crd["spec"]["versions"]} == {"v1": False, "v2": True}


def test_no_resource_adds_a_controller_to_an_existing_version(tmp_path, monkeypatch):
    assert run(monkeypatch, tmp_path, "init", "--domain", "example.com", "--project", "later") == 0
    assert run(monkeypatch, tmp_path, "create", "api", *V1, "--no-controller") == 0
    assert not (tmp_path / "later/controllers/cronjob.py").exists()
    assert run(monkeypatch, tmp_path, "create", "api", *V1, "--no-resource") == 0
    assert "from later.controllers import cronjob" in (tmp_path / "later/controllers/__init__.py").read_text()
    [resource] = yaml.safe_load((tmp_path / "PROJECT").read_text())["resources"]
    assert resource["controller"] is True


def edit_v1_types(project: Path) -> None:
    types = project / "cronjob_operator/api/batch/v1/cronjob.py"
    types.write_text(types.read_text() + "# mine\n")


@pytest.mark.parametrize(
    ("prepare", "argv", "message"),
    [
        (
            None,
            ["create", "api", *V2, "--no-resource", "--no-controller"],
            "create api needs --resource and/or --controller",
        ),
        (
            None,
            ["create", "api", *V3],
            "PROJECT: CronJob has a controller already (batch.example.com/v1); "
            "add this version with --no-controller",
        ),
        (
            None,
            ["create", "api", *V3, "--no-resource"],
            "PROJECT: no API batch.example.com/v3 CronJob; create it with --resource first",
        ),
        (
            None,
            ["create", "api", *V3, "--cluster-scoped"],
            "PROJECT: CronJob is not Cluster-scoped in batch.example.com/v1; "
            "every version of a kind has the same scope",
        ),
        (
            edit_v1_types,
            ["create", "api", *V3, "--no-controller", "--storage"],
            "cronjob_operator/api/batch/v1/cronjob.py: changed since `python -m framework` wrote it;"
            " not overwriting it",
        ),
        (
            None,
            ["create", "webhook", *V1, "--conversion", "--spoke", "v2"],
            "PROJECT: the API batch.example.com/v1 CronJob has webhooks already",
        ),
        (
            None,
            ["create", "webhook", *V2, "--conversion"],
            "create webhook --conversion needs --spoke VERSION (each version converted)",
        ),
        (
            None,
            ["create", "webhook", *V1, "--defaulting", "--spoke", "v2"],
            "--spoke names the versions of a conversion webhook: add --conversion",
        ),
        (
            lambda p: (p / "PROJECT").write_text(
                (p / "PROJECT").read_text().replace("    conversion: true\n", "")
            ),
            ["create", "webhook", *V1, "--conversion", "--spoke", "v3"],
            "PROJECT: no API batch.example.com/v3 CronJob; add the version with "
            "`create api ... --no-controller` first",
        ),
        (
            lambda p: (p / "PROJECT").write_text(
                (p / "PROJECT").read_text().replace("    conversion: true\n", "")
            ),
            ["create", "webhook", *V1, "--conversion", "--spoke", "v1"],
            "--spoke v1: the hub version (--version) cannot be a spoke too",
        ),
    ],
    ids=[
        "api-nothing",
        "api-second-controller",
        "api-no-resource-unknown",
        "api-other-scope",
        "api-storage-over-edited-types",
        "conversion-twice",
        "conversion-without-spoke",
        "spoke-without-conversion",
        "conversion-unknown-spoke",
        "conversion-hub-as-spoke",
    ],
)
def test_refusals_change_nothing(project, monkeypatch, capsys, prepare, argv, message):
    if prepare is not None:
        prepare(project)
    assert_refused(project, monkeypatch, capsys, argv, message)


def test_a_project_with_several_kinds_and_webhooks_passes_ruff(project, monkeypatch):
    pytest.importorskip("ruff")
    for kind in ("Zebra", "Apple", "Memcached"):
        assert (
            run(monkeypatch, project, "create", "api", "--group", "apps", "--version", "v1", "--kind", kind)
            == 0
        )
    apps = ["--group", "apps", "--version", "v1"]
    assert run(monkeypatch, project, "create", "webhook", *apps, "--kind", "Zebra", "--validation") == 0
    assert run(monkeypatch, project, "create", "webhook", *apps, "--kind", "Apple", "--defaulting") == 0
    assert run(monkeypatch, project, "create", "webhook", *V1, "--defaulting", "--validation") == 0
    imports = (project / "cronjob_operator/controllers/__init__.py").read_text()
    assert "from cronjob_operator.controllers import apple, cronjob, memcached, zebra\n" in imports
    for argv in (["check", "--no-cache", "."], ["format", "--no-cache", "--check", "."]):
        linted = subprocess.run(
            [sys.executable, "-m", "ruff", *argv],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert linted.returncode == 0, linted.stdout + linted.stderr


def test_import_blocks_merge_sort_and_wrap_as_ruff_does():
    block = import_block(
        [
            "from p.webhooks import zebra\n",
            "import p.extra\n",
            "from p.api import KIND, API_VERSION\n",
            "from p.webhooks import apple as fruit\n",
            "from p.webhooks import Widget\n",
        ]
    )
    assert block == [
        "import p.extra\n",
        "from p.api import API_VERSION, KIND\n",
        "from p.webhooks import Widget, apple as fruit, zebra\n",
    ]
    names = [f"module_{i:02}" for i in range(12)]
    wrapped = import_block([f"from p.controllers import {n}\n" for n in reversed(names)])
    assert len(f"from p.controllers import {', '.join(names)}") > LINE_LENGTH
    assert wrapped == ["from p.controllers import (\n", *(f"    {n},\n" for n in names), ")\n"]
    assert import_block(["x = 1\n", "import a\n"]) == ["import a\n", "x = 1\n"]  # not an import block
