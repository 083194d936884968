"""``python -m framework generate [--check]``: the project's generated manifests, from its code.

In the project's root (the directory of its ``pyproject.toml`` with ``[tool.framework]``, see
:mod:`framework.generate.project`) it writes

- ``config/crd/bases/<group>_<plural>.yaml`` for every ``@resource`` type in ``<package>.api``
  (:mod:`framework.generate.crd`);
- ``config/rbac/role.yaml``: markers plus derived rules (:mod:`framework.generate.rbac`);
- ``config/webhook/manifests.yaml`` when the project registers webhooks or declares ``@webhook``
  markers (:mod:`framework.generate.webhook`).

The paths are the scaffold's; ``crd-dir``, ``role-file`` and ``webhook-file`` in ``[tool.framework]``
move them (``false``: that generator is off, its files are hand-written).

Output is deterministic: a rerun on unchanged code writes nothing (byte-identical files are left
alone). ``--check`` writes nothing and exits 1 with one line per file that is missing or differs from
what the code generates (for CI). What cannot be generated (a type annotation without a schema, a watched
kind whose resource is unknown, a setup that fails) exits 2 with one line saying what and where.
Files the generator no longer produces (a removed kind's CRD) are left alone.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from framework.generate import rbac as rbac_gen
from framework.generate.crd import GenerateError, crd_objects, render_yaml
from framework.generate.kinds import Kinds
from framework.generate.project import ProjectConfig, ProjectError, import_tree, project_imports, record_setup
from framework.generate.webhook import webhook_configurations
from framework.markers.rbac import Rule, rules_of
from framework.markers.webhook import WebhookMarker, webhooks_of

__all__ = ["ROLE_PATH", "WEBHOOK_PATH", "generate", "outputs", "render_documents"]

ROLE_PATH = "config/rbac/role.yaml"
WEBHOOK_PATH = "config/webhook/manifests.yaml"


def _crds(modules: list[ModuleType]) -> dict[str, dict[str, Any]]:
    try:
        return crd_objects(modules)
    except GenerateError as e:
        raise ProjectError(str(e)) from None


def _own_objects(modules: list[ModuleType]) -> Iterable[Any]:
    for module in modules:
        for value in vars(module).values():
            # Each decorated object once: where it is defined, not every module that imports it.
            if getattr(value, "__module__", None) == module.__name__:
                yield value


def _marker_rules(modules: list[ModuleType]) -> list[Rule]:
    return [rule for value in _own_objects(modules) for rule in rules_of(value)]


def _webhook_markers(modules: list[ModuleType]) -> list[WebhookMarker]:
    return [marker for value in _own_objects(modules) for marker in webhooks_of(value)]


def render_documents(documents: Iterable[dict[str, Any]]) -> str:
    """A YAML stream of ``documents``, each after ``---``, as controller-gen writes a file."""
    return "".join(render_yaml(doc) for doc in documents)


def outputs(project: ProjectConfig) -> dict[str, str]:
    """Relative path → the text the project's code generates for it."""
    with project_imports(project):
        api = import_tree(project.api, project.root)
        crds = _crds(api) if api else {}
        code = [
            *import_tree(f"{project.package}.controllers", project.root),
            *import_tree(f"{project.package}.webhooks", project.root),
        ]
        if project.setup:
            # The setup hook's module holds markers too: what the manager it builds needs.
            hook = import_tree(project.setup.partition(":")[0], project.root)
            code += [m for m in hook if m not in code]
        rules = _marker_rules(code)
        webhook_markers = _webhook_markers(code)
        recording = record_setup(project)
    kinds = Kinds(crds.values())
    setup = project.setup or f"{project.package}.controllers.setup(mgr)"
    for key in recording.informers:
        info = kinds.lookup(key.api_version, key.kind, setup)
        rule = Rule(verbs=project.cache_verbs, groups=(info.group,), resources=(info.resource,))
        rules.append(replace(rule, namespace=key.namespace or None))
    if recording.event_recorders:
        rules.append(rbac_gen.EVENT_RULE)
    webhooks = bool(recording.webhooks or webhook_markers)
    # The manager runs its webhook configurator whenever it serves webhooks, conversions only included:
    # it reads the configurations even when it has no admission webhook to write into them.
    if (webhooks or recording.conversions) and project.managed_webhook_configuration:
        rules.append(rbac_gen.WEBHOOK_CONFIGURATION_RULE)
    out: dict[str, str] = {}
    if project.crd_dir is not None:
        for path, crd in sorted(crds.items()):
            out[f"{project.crd_dir}/{path.rsplit('/', 1)[1]}"] = render_yaml(crd)
    if project.role_file is not None:
        out[project.role_file] = render_documents(
            rbac_gen.roles(rules, project.role_name, dict(project.role_labels))
        )
    if webhooks and project.webhook_file is not None:
        out[project.webhook_file] = render_documents(
            webhook_configurations(recording.webhooks, kinds, project.name, webhook_markers)
        )
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _current(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def generate(project: ProjectConfig, check: bool = False, out: Any = None) -> int:
    """Write (or with ``check``, compare) the outputs; the exit code (0, or 1 for stale files)."""
    stream = out or sys.stdout
    stale = 0
    for rel, text in outputs(project).items():
        path = project.root / rel
        current = _current(path)
        if current == text:
            continue
        if check:
            state = "missing" if current is None else "differs from what the code generates"
            sys.stderr.write(f"{rel}: {state}\n")
            stale += 1
        else:
            _write(path, text)
            stream.write(f"wrote {rel}\n")
    if stale:
        sys.stderr.write(f"{stale} generated file(s) out of date: run `python -m framework generate`\n")
        return 1
    return 0
