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
from framework.meta.schema import version_priority
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


def _versions_of(project: ProjectFile, group: str, kind: str, but: str) -> list[dict[str, Any]]:
    """The PROJECT resources of ``kind`` in ``group`` other than version ``but``."""
    return [
        r
        for r in project.resources
        if (r.get("group"), r.get("kind")) == (group, kind) and r.get("version") != but
    ]


_NOT_STORAGE = "    storage=False,\n"


def _demote_storage(root: Path, project: ProjectFile, others: list[dict[str, Any]], changes: Changes) -> None:
    """``storage=False`` into the ``@resource`` of the kind's current storage version (a module the
    scaffold wrote and nobody changed since: :class:`Changes` refuses otherwise)."""
    for other in others:
        rel = str(other.get("path", "")).replace(".", "/") + ".py"
        try:
            text = (root / rel).read_text()
        except FileNotFoundError:
            raise ProjectError(f"{rel}: not found; --storage marks its @resource storage=False") from None
        if _NOT_STORAGE in text:
            continue
        at = text.find("\n)\nclass ", text.find("@resource("))
        if "@resource(" not in text or at < 0:
            raise ProjectError(f"{rel}: no @resource(...) to mark storage=False; set it there yourself")
        changes.add(rel, text[: at + 1] + _NOT_STORAGE + text[at + 1 :])


def create_api(
    root: Path,
    group: str,
    version: str,
    kind: str,
    cluster_scoped: bool = False,
    *,
    resource: bool = True,
    controller: bool = True,
    storage: bool = False,
) -> list[str]:
    """Add a kind or a version of it: its types (``resource``), a reconciler wired into the manager, a
    sample and a test (``controller``). A further version of a kind is served but not stored unless
    ``storage``, which moves the storage version to it (a kind has exactly one)."""
    if not resource and not controller:
        raise ProjectError("create api needs --resource and/or --controller")
    project = ProjectFile.read(root)
    names = _names(project, group, version, kind)
    existing = project.find(group, version, kind)
    others = _versions_of(project, group, kind, version)
    package = project.package
    changes = Changes(root, project)
    entry: dict[str, Any]
    if resource:
        if existing is not None:
            raise ProjectError(f"PROJECT: the API {names['group']}/{version} {kind} exists already")
        if others and bool((others[0].get("api") or {}).get("namespaced", True)) == cluster_scoped:
            scope = "Cluster" if cluster_scoped else "Namespaced"
            raise ProjectError(
                f"PROJECT: {kind} is not {scope}-scoped in {names['group']}/{others[0].get('version')};"
                " every version of a kind has the same scope"
            )
        if storage and others:
            _demote_storage(root, project, others, changes)
        elif storage is False and not others:
            storage = True  # the first version of a kind is its storage version
        values = {**names, "scope": "Cluster" if cluster_scoped else "Namespaced"}
        values["storage"] = "" if storage else _NOT_STORAGE
        api_dir = f"{package}/api/{names['group_module']}"
        for init_file, doc in (
            (f"{api_dir}/__init__.py", f'"""The {names["group"]} API group."""\n'),
            (f"{api_dir}/{version}/__init__.py", f'"""The {names["group"]}/{version} API."""\n'),
        ):
            if not (root / init_file).exists():
                changes.add(init_file, doc)
        changes.add(f"{api_dir}/{version}/{names['module']}.py", _render(rt.TYPES, values))
        changes.add(f"config/samples/{names['sample']}", _render(rt.SAMPLE, values))
        changes.insert(
            "config/crd/kustomization.yaml", "crds", f"- bases/{names['group']}_{names['plural']}.yaml"
        )
        changes.insert("config/samples/kustomization.yaml", "samples", f"- {names['sample']}")
        entry = {
            "group": group,
            "version": version,
            "kind": kind,
            "domain": project.domain,
            "path": names["api_module"],
            "api": {"crdVersion": "v1", "namespaced": not cluster_scoped},
            "controller": controller,
        }
        project.resources.append(entry)
    else:
        if existing is None:
            raise ProjectError(
                f"PROJECT: no API {names['group']}/{version} {kind}; create it with --resource first"
            )
        entry = existing
        cluster_scoped = not bool((entry.get("api") or {}).get("namespaced", True))
    if controller:
        with_controller = [r for r in (existing, *others) if r is not None and r.get("controller")]
        if with_controller:
            raise ProjectError(
                f"PROJECT: {kind} has a controller already ({names['group']}/"
                f"{with_controller[0].get('version')}); add this version with --no-controller"
            )
        values = {**names, "sample_namespace": "None" if cluster_scoped else '"default"'}
        changes.add(f"{package}/controllers/{names['module']}.py", _render(rt.CONTROLLER, values))
        changes.add(f"tests/test_{names['module']}_controller.py", _render(rt.CONTROLLER_TEST, values))
        changes.insert(
            f"{package}/controllers/__init__.py",
            "imports",
            f"from {package}.controllers import {names['module']}",
        )
        changes.insert(f"{package}/controllers/__init__.py", "setups", f"{names['module']}.setup,")
        entry["controller"] = True
    return changes.apply()


def create_webhook(
    root: Path,
    group: str,
    version: str,
    kind: str,
    defaulting: bool = False,
    validation: bool = False,
    *,
    conversion: bool = False,
    spokes: list[str] | None = None,
) -> list[str]:
    """Add a kind's defaulting and/or validating webhook, and/or its conversion webhook with ``version``
    as the hub and ``spokes`` the versions converted to and from it (the versions must exist:
    ``create api`` first)."""
    spokes = sorted(set(spokes or ()))
    if not defaulting and not validation and not conversion:
        raise ProjectError("create webhook needs --defaulting, --validation and/or --conversion")
    if conversion and not spokes:
        raise ProjectError("create webhook --conversion needs --spoke VERSION (each version converted)")
    if spokes and not conversion:
        raise ProjectError("--spoke names the versions of a conversion webhook: add --conversion")
    project = ProjectFile.read(root)
    names = _names(project, group, version, kind)
    resource = project.find(group, version, kind)
    if resource is None:
        raise ProjectError(
            f"PROJECT: no API {names['group']}/{version} {kind}; run `create api` for it first"
        )
    others = _versions_of(project, group, kind, version)
    hooks: dict[str, Any] = resource.get("webhooks") or {}
    for other in (resource, *others):
        done = other.get("webhooks") or {}
        if ((defaulting or validation) and (done.get("defaulting") or done.get("validation"))) or (
            conversion and done.get("conversion")
        ):
            raise ProjectError(
                f"PROJECT: the API {names['group']}/{other.get('version')} {kind} has webhooks already"
            )
    changes = Changes(root, project)
    if defaulting or validation:
        _admission_webhooks(root, project, resource, names, defaulting, validation, changes)
        hooks.update(defaulting=defaulting, validation=validation)
    if conversion:
        versions = {str(r.get("version")): r for r in others}
        for spoke in spokes:
            _names(project, group, spoke, kind)
            if spoke == version:
                raise ProjectError(f"--spoke {spoke}: the hub version (--version) cannot be a spoke too")
            if spoke not in versions:
                raise ProjectError(
                    f"PROJECT: no API {names['group']}/{spoke} {kind}; add the version with "
                    "`create api ... --no-controller` first"
                )
        _conversion_webhook(root, project, names, {v: versions[v] for v in spokes}, resource, changes)
        hooks.update(conversion=True, spoke=spokes)
    if not (root / "config/webhook/kustomization.yaml").exists():
        changes.add("config/webhook/kustomization.yaml", rt.WEBHOOK_KUSTOMIZATION)
        changes.add("config/webhook/service.yaml", _render(rt.WEBHOOK_SERVICE, names))
        changes.insert("config/default/kustomization.yaml", "default", "- ../webhook")
    hooks["webhookVersion"] = "v1"
    resource["webhooks"] = hooks
    return changes.apply()


def _register_webhook_module(changes: Changes, package: str, module: str) -> None:
    changes.insert(f"{package}/webhooks/__init__.py", "imports", f"from {package}.webhooks import {module}")
    changes.insert(f"{package}/webhooks/__init__.py", "setups", f"{module}.setup,")


def _admission_webhooks(
    root: Path,
    project: ProjectFile,
    resource: dict[str, Any],
    names: dict[str, str],
    defaulting: bool,
    validation: bool,
    changes: Changes,
) -> None:
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
    _register_webhook_module(changes, package, names["module"])


def _conversion_webhook(
    root: Path,
    project: ProjectFile,
    names: dict[str, str],
    spokes: dict[str, dict[str, Any]],
    hub: dict[str, Any],
    changes: Changes,
) -> None:
    """kubebuilder's ``create webhook --conversion --spoke``: the hub's marker module and each spoke's
    ``convert_to``/``convert_from`` beside their types, the webhook module registering them, a test, and
    the CRD patch that turns the conversion webhook on (config/crd/patches/webhook_in_<plural>.yaml)."""
    package, module, kind = project.package, names["module"], names["kind"]
    values = {**names, "hub": names["version"]}
    changes.add(str(hub["path"]).replace(".", "/") + "_conversion.py", _render(rt.HUB, values))
    imports = [f"from {names['api_module']} import API_VERSION, KIND"]
    entries = ""
    for version, spoke in spokes.items():
        spoke_class = version[:1].upper() + version[1:]
        spoke_module = f"{spoke['path']}_conversion"
        changes.add(
            spoke_module.replace(".", "/") + ".py",
            _render(rt.SPOKE, {**values, "spoke": version, "spoke_class": spoke_class}),
        )
        imports.append(f"from {spoke_module} import {kind}{spoke_class}")
        entries += f'    "{version}": {kind}{spoke_class}(),\n'
    namespaced = bool((hub.get("api") or {}).get("namespaced", True))
    values.update(
        imports="".join(f"{line}\n" for line in sorted(imports)),
        spokes=entries,
        versions=", ".join(f'"{v}"' for v in sorted([names["version"], *spokes], key=version_priority)),
        sample_namespace='"default"' if namespaced else "None",
    )
    changes.add(f"{package}/webhooks/{module}_conversion.py", _render(rt.CONVERSION_WEBHOOK, values))
    changes.add(f"tests/test_{module}_conversion.py", _render(rt.CONVERSION_TEST, values))
    patch = f"patches/webhook_in_{names['plural']}.yaml"
    changes.add(f"config/crd/{patch}", _render(rt.CRD_WEBHOOK_PATCH, values))
    changes.insert("config/crd/kustomization.yaml", "crdkustomizewebhookpatch", f"- path: {patch}")
    _register_webhook_module(changes, package, f"{module}_conversion")
