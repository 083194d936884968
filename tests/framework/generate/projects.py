"""Hand-written projects for the generator tests (imported as ``tests.framework.generate.projects``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

PYPROJECT = """\
[project]
name = "shop"
version = "0.1.0"

[tool.framework]
domain = "shop.example.com"
project = "shop"
package = "shop"
"""

CONTROLLERS_INIT = """\
from shop.controllers import mirror


def setup(mgr):
    mirror.setup(mgr)
"""

# Watches ConfigMaps, owns Secrets, watches Deployments' metadata; records events; markers add more.
MIRROR = """\
from framework import Builder
from framework.handler import EnqueueRequestsFromMapFunc
from framework.markers.rbac import rbac


@rbac(groups=[""], resources=["secrets"], verbs=["create", "update"])
@rbac(groups=["core"], resources=["secrets"], verbs=["patch"])
@rbac(groups=["apps"], resources=["deployments", "deployments/status"], verbs=["get"])
@rbac(
    groups=[""], resources=["configmaps"], resource_names=["settings"], verbs=["get"], namespace="shop-system"
)
@rbac(urls=["/metrics"], verbs=["get"])
class Mirror:
    def reconcile(self, request):
        return None


def setup(mgr):
    recorder = mgr.event_recorder("mirror")
    Builder(mgr).for_("v1", "ConfigMap").owns("v1", "Secret").watches(
        "apps/v1", "Deployment", EnqueueRequestsFromMapFunc(lambda obj: []), metadata_only=True
    ).complete(Mirror())
    return recorder
"""

WEBHOOKS_INIT = """\
from framework.webhook import WebhookBuilder


def default(obj):
    obj.setdefault("data", {}).setdefault("defaulted", "yes")


def validate(obj):
    return None


def setup(mgr):
    WebhookBuilder(mgr).for_("v1", "ConfigMap").with_defaulter(default).with_validator(
        on_create=validate, on_delete=validate
    ).complete()
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def shop(root: Path, webhooks: bool = True) -> Path:
    """A project with a controller of built-in kinds (no api package) and, optionally, webhooks."""
    files = {
        "pyproject.toml": PYPROJECT,
        "shop/__init__.py": "",
        "shop/controllers/__init__.py": CONTROLLERS_INIT,
        "shop/controllers/mirror.py": MIRROR,
    }
    if webhooks:
        files["shop/webhooks/__init__.py"] = WEBHOOKS_INIT
    return write(root, files)
