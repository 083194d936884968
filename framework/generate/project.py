"""A project of ``python -m framework``: its ``pyproject.toml`` ``[tool.framework]`` table, its modules,
and what its setup registers with a manager.

``[tool.framework]`` (written by ``python -m framework init``)::

    [tool.framework]
    domain = "example.com"            # API groups are <group>.<domain>
    project = "memcached-operator"    # the name of deployments, roles and the lease
    package = "memcached_operator"    # the import package: api/, controllers/, webhooks/
    managed-webhook-configuration = true  # the manager writes its webhook configurations (RBAC for it)

A project whose layout is not the scaffold's says where things are (every key optional; the defaults
are the scaffold's layout)::

    api-package = "<package>.api"            # the @resource declarations
    setup = "module:function"                # called with the manager instead of the two setup()s
    crd-dir = "config/crd/bases"             # <crd-dir>/<group>_<plural>.yaml; false: no CRDs
    role-file = "config/rbac/role.yaml"      # false: no role
    role-name = "manager-role"               # the ClusterRole's (and namespaced Roles') name
    role-labels = {}                         # labels of the generated roles
    cache-verbs = ["get", "list", "watch"]   # the derived rule of every kind the cache holds
    webhook-file = "config/webhook/manifests.yaml"  # false: the webhook manifests are hand-written

The generators import ``<package>.api`` (types and their ``@resource`` declarations),
``<package>.controllers`` and ``<package>.webhooks`` with every module below them (RBAC markers), and
run ``<package>.controllers.setup(mgr)`` and ``<package>.webhooks.setup(mgr)`` (or ``setup``, whose
module's markers are read as well) on a recording manager:
a real :class:`~framework.manager.Manager` whose client points nowhere and which is never started, so
the Builders and WebhookBuilders register what they register in production (informers, webhooks, event
recorders) and nothing talks to a cluster. A setup that reads from the cluster fails there, with one
line naming it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import re
import sys
import tempfile
import tomllib
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["ProjectConfig", "ProjectError", "Recording", "load_project", "project_imports", "record_setup"]

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


class ProjectError(Exception):
    """What the command cannot do, in one line (exit code 2)."""


@dataclass(frozen=True)
class ProjectConfig:
    root: Path
    domain: str
    name: str
    package: str
    managed_webhook_configuration: bool = True
    api_package: str = ""  # "": <package>.api
    setup: str = ""  # "module:function" called with the manager; "": the packages' setup(mgr)
    crd_dir: str | None = "config/crd/bases"  # None: no CRDs are generated
    role_file: str | None = "config/rbac/role.yaml"  # None: no role is generated
    role_name: str = "manager-role"
    role_labels: tuple[tuple[str, str], ...] = ()
    cache_verbs: tuple[str, ...] = ("get", "list", "watch")
    webhook_file: str | None = "config/webhook/manifests.yaml"  # None: webhook manifests hand-written

    @property
    def api(self) -> str:
        """The package of the ``@resource`` declarations."""
        return self.api_package or f"{self.package}.api"

    def group(self, group: str) -> str:
        """The full API group of ``group`` (``cache`` → ``cache.example.com``)."""
        return f"{group}.{self.domain}" if group else self.domain


def check_domain(domain: str) -> str:
    if not domain or len(domain) > 253 or not _DNS_SUBDOMAIN.match(domain):
        raise ProjectError(f"domain {domain!r} is not a DNS subdomain (lower case, dots, e.g. example.com)")
    return domain


def check_project_name(name: str) -> str:
    if not name or len(name) > 63 - len("-controller-manager") or not _DNS_LABEL.match(name):
        raise ProjectError(
            f"project name {name!r} must be a DNS label of at most 44 characters "
            "(lower case letters, digits and '-', starting with a letter)"
        )
    return name


def load_project(root: Path) -> ProjectConfig:
    """The project whose ``pyproject.toml`` is in ``root``."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ProjectError(f"{path}: not found (run the command in a project made by `init`)") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ProjectError(f"{path}: {e}") from None
    table = data.get("tool", {}).get("framework")
    if not isinstance(table, dict):
        raise ProjectError(f"{path}: no [tool.framework] table (run the command in a project made by `init`)")
    values: dict[str, Any] = {}
    for key in ("domain", "project", "package"):
        value = table.get(key)
        if not isinstance(value, str) or not value:
            raise ProjectError(f'{path}: [tool.framework] needs {key} = "..."')
        values[key] = value
    if not values["package"].isidentifier():
        raise ProjectError(f"{path}: [tool.framework] package {values['package']!r} is not a Python name")
    managed = table.get("managed-webhook-configuration", True)
    if not isinstance(managed, bool):
        raise ProjectError(f"{path}: [tool.framework] managed-webhook-configuration must be true or false")
    return ProjectConfig(
        root=root,
        domain=check_domain(values["domain"]),
        name=check_project_name(values["project"]),
        package=values["package"],
        managed_webhook_configuration=managed,
        **_layout(path, table),
    )


def _layout(path: Path, table: dict[str, Any]) -> dict[str, Any]:
    """The optional layout keys of ``[tool.framework]`` as :class:`ProjectConfig` fields."""
    out: dict[str, Any] = {}

    def bad(key: str, expected: str) -> ProjectError:
        return ProjectError(f"{path}: [tool.framework] {key} must be {expected}, got {table[key]!r}")

    if "api-package" in table:
        value = table["api-package"]
        if not isinstance(value, str) or not all(p.isidentifier() for p in value.split(".")):
            raise bad("api-package", "a dotted Python module name")
        out["api_package"] = value
    if "setup" in table:
        value = table["setup"]
        module, _, function = value.partition(":") if isinstance(value, str) else ("", "", "")
        if not (all(p.isidentifier() for p in module.split(".")) and function.isidentifier()):
            raise bad("setup", '"module:function"')
        out["setup"] = value
    for key in ("crd-dir", "role-file", "webhook-file"):
        if key in table:
            value = table[key]
            if value is False:
                out[key.replace("-", "_")] = None
                continue
            if (
                not isinstance(value, str)
                or not value
                or Path(value).is_absolute()
                or ".." in Path(value).parts
            ):
                raise bad(key, "a path relative to the project root, or false")
            out[key.replace("-", "_")] = Path(value).as_posix()
    if "role-name" in table:
        if not isinstance(table["role-name"], str) or not table["role-name"]:
            raise bad("role-name", "a non-empty string")
        out["role_name"] = table["role-name"]
    if "role-labels" in table:
        labels = table["role-labels"]
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            raise bad("role-labels", "a table of strings")
        out["role_labels"] = tuple(sorted(labels.items()))
    if "cache-verbs" in table:
        verbs = table["cache-verbs"]
        if not isinstance(verbs, list) or not verbs or not all(isinstance(v, str) and v for v in verbs):
            raise bad("cache-verbs", "a non-empty list of verbs")
        out["cache_verbs"] = tuple(verbs)
    return out


def _forget(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


@contextlib.contextmanager
def project_imports(project: ProjectConfig) -> Iterator[None]:
    """Import the project's package fresh from its root (not an installed copy), and forget it after."""
    root = str(project.root.resolve())
    _forget(project.package)
    sys.path.insert(0, root)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(root)
        _forget(project.package)


def _describe(error: BaseException, root: Path | None = None) -> str:
    """``Type: first line``, and where in the project it was raised (the deepest frame under ``root``)."""
    text = str(error).strip().splitlines()
    out = f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
    if root is not None:
        where = None
        base = str(root.resolve()) + os.sep
        for frame, line in traceback.walk_tb(error.__traceback__):
            filename = frame.f_code.co_filename
            if filename.startswith(base):
                where = f"{filename[len(base) :]}:{line}"
        if (
            where is None
            and isinstance(error, SyntaxError)
            and error.filename
            and error.filename.startswith(base)
        ):
            where = f"{error.filename[len(base) :]}:{error.lineno}"
        if where:
            out += f" ({where})"
    return out


def import_tree(name: str, root: Path | None = None) -> list[ModuleType]:
    """``name`` and every module below it, sorted by name; [] if ``name`` does not exist. Errors name
    the place in the project (under ``root``) that raised."""
    try:
        top = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return []
        raise ProjectError(f"cannot import {name}: {_describe(e, root)}") from None
    except Exception as e:
        raise ProjectError(f"cannot import {name}: {_describe(e, root)}") from None
    modules = [top]
    for info in sorted(
        pkgutil.walk_packages(getattr(top, "__path__", []), prefix=name + "."), key=lambda i: i.name
    ):
        try:
            modules.append(importlib.import_module(info.name))
        except Exception as e:
            raise ProjectError(f"cannot import {info.name}: {_describe(e, root)}") from None
    return modules


def _setups(project: ProjectConfig) -> list[tuple[str, Any]]:
    """The setup functions to run, each with the name errors give it."""
    if project.setup:
        module_name, _, function = project.setup.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as e:
            raise ProjectError(
                f"setup {project.setup}: cannot import {module_name}: {_describe(e, project.root)}"
            ) from None
        setup = getattr(module, function, None)
        if not callable(setup):
            raise ProjectError(f"setup {project.setup}: {module_name} has no function {function}")
        return [(f"{module_name}.{function}", setup)]
    out = []
    for sub in ("controllers", "webhooks"):
        name = f"{project.package}.{sub}"
        package = sys.modules.get(name)
        if package is None:
            continue
        setup = getattr(package, "setup", None)
        if not callable(setup):
            raise ProjectError(f"{name} has no setup(mgr) function to register its {sub}")
        out.append((f"{name}.setup", setup))
    return out


@dataclass
class Recording:
    """What the project's setup registered with the recording manager."""

    informers: list[Any] = field(default_factory=list)  # framework.cache InformerKey
    webhooks: dict[str, Any] = field(default_factory=dict)  # path -> admission handler
    conversions: list[str] = field(default_factory=list)  # the paths of conversion webhooks
    event_recorders: list[str] = field(default_factory=list)


def record_setup(project: ProjectConfig) -> Recording:
    """Run ``<package>.controllers.setup(mgr)`` and ``<package>.webhooks.setup(mgr)`` (or the project's
    ``setup`` hook) on a manager that is never started (inside :func:`project_imports`)."""
    from kubernetes.client import Configuration
    from prometheus_client import CollectorRegistry

    from framework.client import Client
    from framework.manager import Manager
    from framework.webhook import WebhookServer

    recording = Recording()

    class RecordingManager(Manager):
        def event_recorder(self, name: str) -> Any:
            recording.event_recorders.append(name)
            return super().event_recorder(name)

    configuration = Configuration()
    # Port 1 of the loopback: nothing listens there, so a setup that reads the cluster fails at once.
    configuration.host = "https://127.0.0.1:1"
    client = Client(configuration, max_retries=0, timeout=(1.0, 1.0))
    with tempfile.TemporaryDirectory(prefix="framework-generate-") as cert_dir:
        registry = CollectorRegistry()
        server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=registry)
        mgr = RecordingManager(client, webhook_server=server, registry=registry)
        for name, setup in _setups(project):
            try:
                setup(mgr)
            except Exception as e:
                raise ProjectError(f"{name}(mgr) failed: {_describe(e, project.root)}") from None
        recording.informers = sorted(mgr.cache.factory.informers(), key=lambda k: tuple(map(str, k)))
        recording.webhooks = dict(sorted(server.webhooks.items()))
        recording.conversions = sorted(server.conversions)
    client.close()
    return recording
