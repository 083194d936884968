"""``init``, ``create api`` and ``create webhook``: plan the files from the templates, refuse what would
overwrite a file the project did not get from these commands, then write (:mod:`framework.scaffold.files`)."""

from __future__ import annotations

import importlib.metadata
import keyword
import os
import re
from pathlib import Path
from string import Template
from typing import Any

import framework
from framework.generate.cli import ROLE_PATH, render_documents
from framework.generate.project import ProjectError, check_domain, check_project_name
from framework.generate.rbac import leader_election_role, roles
from framework.scaffold import resource_templates as rt
from framework.scaffold.files import Changes, ProjectFile
from framework.scaffold.templates import INIT

__all__ = ["FRAMEWORK_PATH_ENV", "create_api", "create_webhook", "framework_requirement", "init"]

FRAMEWORK_PATH_ENV = "FRAMEWORK_PATH"
"""Environment variable naming the framework checkout a new project depends on (``--framework-path``)."""

_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_GROUP = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def _distribution() -> str:
    """The distribution that ships the ``framework`` package (``gcm``)."""
    names = importlib.metadata.packages_distributions().get("framework") or []
    return names[0] if names else "gcm"


def _checkout_of(path: Path) -> Path | None:
    return (
        path
        if (path / "pyproject.toml").is_file() and (path / "framework" / "__init__.py").is_file()
        else None
    )


def framework_requirement(framework_path: str | None) -> str:
    """How a new project depends on the framework, which is not on PyPI: a direct reference to a
    checkout (``--framework-path``, else ``$FRAMEWORK_PATH``, else the checkout this framework runs
    from), or, for an installed framework, its distribution and version (from your own index)."""
    dist = _distribution()
    given = framework_path or os.environ.get(FRAMEWORK_PATH_ENV)
    if given:
        path = Path(given).expanduser().resolve()
        if _checkout_of(path) is None:
            raise ProjectError(f"framework path {given}: not a checkout of the framework (no pyproject.toml)")
        return f"{dist} @ {path.as_uri()}"
    here = _checkout_of(Path(framework.__file__).resolve().parents[1])
    if here is not None:
        return f"{dist} @ {here.as_uri()}"
    return f"{dist}=={importlib.metadata.version(dist)}"


def _render(text: str, values: dict[str, str]) -> str:
    return Template(text).substitute(values)


def init(root: Path, domain: str, project: str, framework_path: str | None = None) -> list[str]:
    """Write a new project into ``root``; the files written."""
    check_domain(domain)
    check_project_name(project)
    package = project.replace("-", "_")
    if keyword.iskeyword(package):
        raise ProjectError(f"project name {project!r} makes the package name {package!r}, a Python keyword")
    if (root / "PROJECT").exists():
        raise ProjectError("PROJECT: exists; this directory holds a project already (init writes a new one)")
    values = {
        "domain": domain,
        "project": project,
        "package": package,
        "framework_requirement": framework_requirement(framework_path),
        "framework_dist": _distribution(),
    }
    changes = Changes(root, ProjectFile(domain=domain, project_name=project, package=package))
    for rel, text in INIT.items():
        changes.add(_render(rel, values), _render(text, values))
    changes.add(ROLE_PATH, render_documents(roles([])))  # what `generate` writes for a project without code
    changes.add("config/rbac/leader_election_role.yaml", render_documents([leader_election_role()]))
    return changes.apply()


def _names(project: ProjectFile, group: str, version: str, kind: str) -> dict[str, str]:
    if not _GROUP.match(group):
        raise ProjectError(
            f"group {group!r} must be a DNS label (lower case letters, digits, '-'), e.g. cache"
        )
    if not _VERSION.match(version):
        raise ProjectError(f"version {version!r} is not a Kubernetes version (v1, v1beta1, v2alpha1, ...)")
    if not _KIND.match(kind):
        raise ProjectError(
            f"kind {kind!r} must be CamelCase, starting with an upper-case letter (e.g. Memcached)"
        )
    from framework.generate.crd import plural_of

    module = kind.lower() + ("_" if keyword.iskeyword(kind.lower()) else "")
    group_module = group.replace("-", "_") + ("_" if keyword.iskeyword(group) else "")
    full_group = f"{group}.{project.domain}"
    return {
        "domain": project.domain,
        "project": project.project_name,
        "package": project.package,
        "group": full_group,
        "group_short": group,
        "group_module": group_module,
        "version": version,
        "kind": kind,
        "plural": plural_of(kind),
        "module": module,
        "api_module": f"{project.package}.api.{group_module}.{version}.{module}",
        "sample": f"{full_group}_{version}_{kind.lower()}.yaml",
    }


def create_api(root: Path, group: str, version: str, kind: str, cluster_scoped: bool = False) -> list[str]:
    """Add a kind: its types, a reconciler wired into the manager, a sample and a test."""
    project = ProjectFile.read(root)
    names = _names(project, group, version, kind)
    if project.find(group, version, kind) is not None:
        raise ProjectError(f"PROJECT: the API {names['group']}/{version} {kind} exists already")
    values = {**names, "scope": "Cluster" if cluster_scoped else "Namespaced"}
    values["sample_namespace"] = "None" if cluster_scoped else '"default"'
    package = project.package
    api_dir = f"{package}/api/{names['group_module']}"
    changes = Changes(root, project)
    for init_file, doc in (
        (f"{api_dir}/__init__.py", f'"""The {names["group"]} API group."""\n'),
        (f"{api_dir}/{version}/__init__.py", f'"""The {names["group"]}/{version} API."""\n'),
    ):
        if not (root / init_file).exists():
            changes.add(init_file, doc)
    changes.add(f"{api_dir}/{version}/{names['module']}.py", _render(rt.TYPES, values))
    changes.add(f"{package}/controllers/{names['module']}.py", _render(rt.CONTROLLER, values))
    changes.add(f"tests/test_{names['module']}_controller.py", _render(rt.CONTROLLER_TEST, values))
    changes.add(f"config/samples/{names['sample']}", _render(rt.SAMPLE, values))
    changes.insert(
        f"{package}/controllers/__init__.py",
        "imports",
        f"from {package}.controllers import {names['module']}",
    )
    changes.insert(f"{package}/controllers/__init__.py", "setups", f"{names['module']}.setup,")
    changes.insert(
        "config/crd/kustomization.yaml", "crds", f"- bases/{names['group']}_{names['plural']}.yaml"
    )
    changes.insert("config/samples/kustomization.yaml", "samples", f"- {names['sample']}")
    resource: dict[str, Any] = {
        "group": group,
        "version": version,
        "kind": kind,
        "domain": project.domain,
        "path": names["api_module"],
        "api": {"crdVersion": "v1", "namespaced": not cluster_scoped},
        "controller": True,
    }
    project.resources.append(resource)
    return changes.apply()


def create_webhook(
    root: Path, group: str, version: str, kind: str, defaulting: bool = False, validation: bool = False
) -> list[str]:
    """Add a kind's defaulting and/or validating webhook (the kind must exist: ``create api`` first)."""
    if not defaulting and not validation:
        raise ProjectError("create webhook needs --defaulting and/or --validation")
    project = ProjectFile.read(root)
    names = _names(project, group, version, kind)
    resource = project.find(group, version, kind)
    if resource is None:
        raise ProjectError(
            f"PROJECT: no API {names['group']}/{version} {kind}; run `create api` for it first"
        )
    if resource.get("webhooks"):
        raise ProjectError(f"PROJECT: the API {names['group']}/{version} {kind} has webhooks already")
    values = dict(names)
    functions, chain, tests = "", "", ""
    if defaulting:
        functions += _render(rt.DEFAULTER, values)
        chain += "    hooks.with_defaulter(default)\n"
        tests += _render(rt.DEFAULTER_TEST, values)
    if validation:
        functions += _render(rt.VALIDATOR, values)
        chain += "    hooks.with_validator(on_create=validate, on_update=validate_update)\n"
        tests += _render(rt.VALIDATOR_TEST, values)
    namespaced = bool((resource.get("api") or {}).get("namespaced", True))
    values.update(
        functions=functions,
        chain=chain,
        tests=tests,
        what=" and ".join(w for w, on in (("defaulting", defaulting), ("validation", validation)) if on),
        namespace_field=', "namespace": "default"' if namespaced else "",
    )
    package = project.package
    changes = Changes(root, project)
    webhook_text = _render(rt.WEBHOOK, values)
    if not validation:  # no refusals to raise: keep the module free of unused imports
        webhook_text = webhook_text.replace("from framework.meta import field\n", "").replace(
            "from framework.webhook import Invalid, WebhookBuilder",
            "from framework.webhook import WebhookBuilder",
        )
    changes.add(f"{package}/webhooks/{names['module']}.py", webhook_text)
    test_text = _render(rt.WEBHOOK_TEST, values)
    if not validation:
        test_text = test_text.replace("import pytest\n", "").replace(
            "from framework.client import APIError\n", ""
        )
    changes.add(f"tests/test_{names['module']}_webhook.py", test_text)
    if not (root / "config/webhook/kustomization.yaml").exists():
        changes.add("config/webhook/kustomization.yaml", rt.WEBHOOK_KUSTOMIZATION)
        changes.add("config/webhook/service.yaml", _render(rt.WEBHOOK_SERVICE, values))
        changes.insert("config/default/kustomization.yaml", "default", "- ../webhook")
    changes.insert(
        f"{package}/webhooks/__init__.py", "imports", f"from {package}.webhooks import {names['module']}"
    )
    changes.insert(f"{package}/webhooks/__init__.py", "setups", f"{names['module']}.setup,")
    resource["webhooks"] = {"defaulting": defaulting, "validation": validation, "webhookVersion": "v1"}
    return changes.apply()
