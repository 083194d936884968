"""``[tool.framework]`` layout settings of ``python -m framework generate`` (a project laid out unlike the
scaffold, as gcm is) and ``@webhook`` markers describing plain admission handlers."""

from __future__ import annotations

import pytest
import yaml

from framework.__main__ import main
from framework.generate.cli import outputs
from framework.generate.project import load_project
from framework.markers.webhook import webhook, webhooks_of
from tests.framework.generate.projects import PYPROJECT, shop, write

# The shop's controllers and a plain handler, set up by one hook outside the controllers package; a
# second plain handler registered later (as a runnable would) is known from its marker only.
HOOK = """\
from framework.markers.rbac import rbac
from shop.controllers import mirror
from shop.webhooks.guard import Guard


@rbac(groups="authentication.k8s.io", resources="tokenreviews", verbs="create")
def setup_all(mgr):
    mirror.setup(mgr)
    mgr.webhook_server.register("/guard", Guard())
"""

GUARD = """\
from framework.markers.webhook import webhook


@webhook(
    path="/guard",
    name="guard.shop.example.com",
    groups=[""],
    versions=["v1"],
    resources=["namespaces"],
    operations=["DELETE"],
    scope="Cluster",
)
class Guard:
    def __call__(self, request):
        return None


@webhook(
    path="/late",
    name="late.shop.example.com",
    mutating=True,
    groups="apps",
    versions="v1",
    resources="deployments",
    operations=["CREATE"],
    admission_review_versions=["v1", "v1beta1"],
)
def late(request):
    return None
"""

API = """\
from typing import TypedDict

from framework.markers import resource
from framework.types import meta_v1


class WidgetSpec(TypedDict, total=False):
    size: int


@resource(group="shop.example.com", version="v1", kind="Widget")
class Widget(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: meta_v1.ObjectMeta
    spec: WidgetSpec
"""


def laid_out(root, extra: str):
    return write(
        shop(root, webhooks=False),
        {
            "pyproject.toml": PYPROJECT + extra,
            "shop/hooks.py": HOOK,
            "shop/webhooks/__init__.py": "",
            "shop/webhooks/guard.py": GUARD,
            "shop/types/__init__.py": "",
            "shop/types/widgets.py": API,
        },
    )


LAYOUT = """\
api-package = "shop.types"
setup = "shop.hooks:setup_all"
crd-dir = "deploy/crds"
role-file = "deploy/role.yaml"
role-name = "shop:manager"
role-labels = { "app.kubernetes.io/name" = "shop" }
cache-verbs = ["list", "watch"]
webhook-file = "deploy/webhooks.yaml"
managed-webhook-configuration = false
"""


def test_layout_settings_move_and_shape_the_outputs(tmp_path):
    out = outputs(load_project(laid_out(tmp_path, LAYOUT)))
    assert sorted(out) == [
        "deploy/crds/shop.example.com_widgets.yaml",
        "deploy/role.yaml",
        "deploy/webhooks.yaml",
    ]
    role, namespaced = yaml.safe_load_all(out["deploy/role.yaml"])
    assert role["metadata"] == {"name": "shop:manager", "labels": {"app.kubernetes.io/name": "shop"}}
    assert namespaced["metadata"] == {
        "name": "shop:manager",
        "namespace": "shop-system",
        "labels": {"app.kubernetes.io/name": "shop"},
    }
    rules = role["rules"]
    # the hook's Builder: its informers' rules have the cache-verbs only (get comes from a marker)
    assert {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]} in rules
    # ... united with a marker's get
    assert {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]} in rules
    # a marker in the setup hook's module
    assert {
        "apiGroups": ["authentication.k8s.io"],
        "resources": ["tokenreviews"],
        "verbs": ["create"],
    } in rules
    # managed-webhook-configuration = false: no rights on webhook configurations
    assert not [r for r in rules if "admissionregistration.k8s.io" in r.get("apiGroups", [])]
    mutating, validating = yaml.safe_load_all(out["deploy/webhooks.yaml"])
    assert mutating["webhooks"] == [
        {
            "admissionReviewVersions": ["v1", "v1beta1"],
            "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/late"}},
            "failurePolicy": "Fail",
            "name": "late.shop.example.com",
            "rules": [
                {
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["deployments"],
                }
            ],
            "sideEffects": "None",
        }
    ]
    (guard,) = validating["webhooks"]
    assert guard["name"] == "guard.shop.example.com"
    assert guard["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["DELETE"],
            "resources": ["namespaces"],
            "scope": "Cluster",
        }
    ]


def test_generators_switched_off_write_nothing(tmp_path, monkeypatch):
    root = laid_out(
        tmp_path,
        'api-package = "shop.types"\nsetup = "shop.hooks:setup_all"\ncrd-dir = false\nwebhook-file = false\n',
    )
    assert sorted(outputs(load_project(root))) == ["config/rbac/role.yaml"]
    monkeypatch.chdir(root)
    assert main(["generate"]) == 0
    assert main(["generate", "--check"]) == 0
    assert not (root / "config/crd").exists() and not (root / "config/webhook").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('crd-dir = "/abs"\n', "crd-dir must be a path relative to the project root, or false"),
        ('role-file = "../up.yaml"\n', "role-file must be a path relative to the project root, or false"),
        ("webhook-file = true\n", "webhook-file must be a path relative to the project root, or false"),
        ('setup = "shop.hooks"\n', 'setup must be "module:function"'),
        ('api-package = "shop-types"\n', "api-package must be a dotted Python module name"),
        ('role-name = ""\n', "role-name must be a non-empty string"),
        ("role-labels = { a = 1 }\n", "role-labels must be a table of strings"),
        ("cache-verbs = []\n", "cache-verbs must be a non-empty list of verbs"),
        ('setup = "shop.hooks:nothing"\n', "setup shop.hooks:nothing: shop.hooks has no function nothing"),
        (
            'setup = "shop.nowhere:f"\n',
            "setup shop.nowhere:f: cannot import shop.nowhere: ModuleNotFoundError",
        ),
    ],
)
def test_bad_layout_settings_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(laid_out(tmp_path, extra))
    assert main(["generate"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("error: ") and err.count("\n") == 1, err


def test_a_plain_handler_without_a_marker_still_exits_2(tmp_path, monkeypatch, capsys):
    root = laid_out(tmp_path, 'setup = "shop.hooks:setup_all"\napi-package = "shop.types"\n')
    (root / "shop/webhooks/guard.py").write_text(
        "class Guard:\n    def __call__(self, request):\n        return None\n"
    )
    monkeypatch.chdir(root)
    assert main(["generate"]) == 2
    assert "webhook /guard: a plain admission handler names no kind" in capsys.readouterr().err


def test_the_webhook_marker_refuses_what_the_api_server_would():
    good = {
        "path": "/p",
        "name": "p.example.com",
        "groups": [""],
        "versions": ["v1"],
        "resources": ["pods"],
        "operations": ["CREATE"],
    }

    @webhook(**good)
    class Handler:
        pass

    assert [m.path for m in webhooks_of(Handler)] == ["/p"]
    for bad in (
        {"path": "p"},
        {"name": "p.example"},
        {"operations": ["create"]},
        {"resources": []},
        {"failure_policy": "fail"},
        {"side_effects": "Some"},
        {"scope": "cluster"},
    ):
        with pytest.raises(ValueError):
            webhook(**{**good, **bad})
    with pytest.raises(TypeError):
        webhook(**{**good, "groups": [1]})
