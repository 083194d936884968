"""CustomResourceDefinitions from ``@resource``-declared ``TypedDict`` types: controller-gen's ``crd``
generator (sigs.k8s.io/controller-tools ``pkg/crd``) for Python declarations.

``generate_crds(modules)`` finds every class declared with ``@resource`` in the given modules, groups
the versions of each kind, and renders one structural ``apiextensions.k8s.io/v1`` CRD per kind as
YAML, keyed by its path ``config/crd/bases/<group>_<plural>.yaml`` (kubebuilder's layout). The output
is deterministic: keys sorted and lists in a fixed order, as controller-gen writes them, so a rerun is
byte-identical and ``generate --check`` can compare.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from importlib import resources
from types import ModuleType
from typing import Any

import orjson
import yaml

from framework.generate.schema import GenerateError, Schema, SchemaBuilder, is_typeddict
from framework.markers.resource import ResourceInfo, resource_info
from framework.meta.schema import version_priority

__all__ = ["GenerateError", "crd_objects", "declared_resources", "generate_crds", "plural_of", "render_yaml"]

_VERSION = re.compile(r"v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def plural_of(kind: str) -> str:
    """The lower-cased plural of a kind, as controller-gen's default (flect's rules for the usual
    English endings): ``CronJob`` → ``cronjobs``, ``Policy`` → ``policies``, ``Ingress`` →
    ``ingresses``."""
    word = kind.lower()
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + "s"


@functools.cache
def _type_meta_docs() -> tuple[str, str]:
    """``TypeMeta``'s ``apiVersion`` and ``kind`` documentation, from the built-in catalog."""
    data = orjson.loads(
        resources.files("framework.apiserver.catalog").joinpath("descriptions.json").read_bytes()
    )
    pod = data.get("V1Pod", {})
    return pod.get("apiVersion", ""), pod.get("kind", "")


def declared_resources(modules: Iterable[ModuleType]) -> list[tuple[type, ResourceInfo]]:
    """Every ``@resource`` class the modules hold (declared there or imported), each once."""
    seen: dict[int, tuple[type, ResourceInfo]] = {}
    for module in modules:
        for obj in vars(module).values():
            info = resource_info(obj)
            if info is not None and id(obj) not in seen:
                seen[id(obj)] = (obj, info)
    return list(seen.values())


def _check_info(cls: type, info: ResourceInfo) -> None:
    where = f"{cls.__name__} ({info.kind})"
    if not is_typeddict(cls):
        raise GenerateError("@resource must decorate a TypedDict", where)
    if not _VERSION.fullmatch(info.version):
        raise GenerateError(
            f"version {info.version!r} is not a Kubernetes version (v1, v1beta1, v2alpha1, ...)", where
        )
    if not info.group or "." not in info.group:
        raise GenerateError(
            f"group {info.group!r} must be a domain name with a dot (e.g. batch.example.com)", where
        )
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", info.kind):
        raise GenerateError(
            f"kind {info.kind!r} must be CamelCase, starting with an upper-case letter", where
        )
    for name in (info.plural, info.singular, *info.short_names):
        if name is not None and not _DNS_LABEL.fullmatch(name):
            raise GenerateError(f"name {name!r} must be a lower-case DNS label", where)


def _version_schema(builder: SchemaBuilder, cls: type) -> Schema:
    schema = builder.type_schema(cls)
    props = schema.setdefault("properties", {})
    api_version_doc, kind_doc = _type_meta_docs()
    # TypeMeta and ObjectMeta as controller-gen writes a root type: the API server owns metadata's schema
    # and refuses anything but its type there (a description too).
    props["apiVersion"] = {"type": "string", **({"description": api_version_doc} if api_version_doc else {})}
    props["kind"] = {"type": "string", **({"description": kind_doc} if kind_doc else {})}
    props["metadata"] = {"type": "object"}
    required = [r for r in schema.get("required", ()) if r not in ("apiVersion", "kind", "metadata")]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    return schema


def _printer_column(column: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonPath": column.json_path, "name": column.name, "type": column.type}
    if column.description:
        out["description"] = column.description
    if column.format:
        out["format"] = column.format
    if column.priority is not None:
        out["priority"] = column.priority
    return out


def _same(kind: str, infos: list[ResourceInfo], attr: str, value: Any) -> None:
    values = {repr(value(i)) for i in infos}
    if len(values) > 1:
        raise GenerateError(f"its versions disagree on {attr} ({', '.join(sorted(values))})", kind)


def crd_objects(modules: Iterable[ModuleType]) -> dict[str, dict[str, Any]]:
    """The CRDs as objects, keyed by output path (``generate_crds`` renders them)."""
    by_kind: dict[tuple[str, str], list[tuple[type, ResourceInfo]]] = {}
    for cls, info in declared_resources(modules):
        _check_info(cls, info)
        by_kind.setdefault((info.group, info.kind), []).append((cls, info))
    builder = SchemaBuilder()
    out: dict[str, dict[str, Any]] = {}
    for (group, kind), decls in sorted(by_kind.items()):
        where = f"{kind}.{group}"
        infos = [i for _, i in decls]
        versions = [i.version for i in infos]
        duplicated = sorted({v for v in versions if versions.count(v) > 1})
        if duplicated:
            raise GenerateError(f"version {duplicated[0]} is declared twice", where)
        storage = [i.version for i in infos if i.storage]
        if len(storage) != 1:
            raise GenerateError(
                f"exactly one version must be the storage version, found {len(storage)}"
                + (f" ({', '.join(sorted(storage))})" if storage else ""),
                where,
            )
        _same(where, infos, "scope", lambda i: i.scope)
        _same(where, infos, "plural", lambda i: i.plural)
        _same(where, infos, "singular", lambda i: i.singular)
        _same(where, infos, "short_names", lambda i: i.short_names)
        _same(where, infos, "categories", lambda i: i.categories)
        _same(where, infos, "list_kind", lambda i: i.list_kind)
        _same(where, infos, "labels", lambda i: i.labels)
        first = infos[0]
        plural = first.plural or plural_of(kind)
        names: dict[str, Any] = {
            "kind": kind,
            "listKind": first.list_kind or f"{kind}List",
            "plural": plural,
            "singular": first.singular or kind.lower(),
        }
        if first.short_names:
            names["shortNames"] = list(first.short_names)
        if first.categories:
            names["categories"] = list(first.categories)
        crd_versions = []
        for cls, info in sorted(decls, key=lambda d: version_priority(d[1].version)):
            entry: dict[str, Any] = {
                "name": info.version,
                "schema": {"openAPIV3Schema": _version_schema(builder, cls)},
                "served": info.served,
                "storage": info.storage,
            }
            if info.printer_columns:
                entry["additionalPrinterColumns"] = [_printer_column(c) for c in info.printer_columns]
            if info.deprecated:
                entry["deprecated"] = True
                if info.deprecation_warning:
                    entry["deprecationWarning"] = info.deprecation_warning
            subresources: dict[str, Any] = {}
            if info.scale is not None:
                scale = {
                    "specReplicasPath": info.scale.spec_replicas_path,
                    "statusReplicasPath": info.scale.status_replicas_path,
                }
                if info.scale.label_selector_path:
                    scale["labelSelectorPath"] = info.scale.label_selector_path
                subresources["scale"] = scale
            if info.status:
                subresources["status"] = {}
            if subresources:
                entry["subresources"] = subresources
            crd_versions.append(entry)
        metadata: dict[str, Any] = {"name": f"{plural}.{group}"}
        if first.labels:
            metadata["labels"] = dict(first.labels)
        out[f"config/crd/bases/{group}_{plural}.yaml"] = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": metadata,
            "spec": {"group": group, "names": names, "scope": first.scope, "versions": crd_versions},
        }
    return out


class _Dumper(yaml.SafeDumper):
    """YAML as sigs.k8s.io/yaml writes it: block style, keys sorted, multi-line strings as ``|-``."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def render_yaml(obj: Any) -> str:
    """One YAML document, starting with ``---`` as controller-gen's files do."""
    text: str = yaml.dump(
        obj,
        Dumper=_Dumper,
        sort_keys=True,
        default_flow_style=False,
        explicit_start=True,
        allow_unicode=True,
        width=80,
    )
    return text


def generate_crds(modules: Iterable[ModuleType]) -> dict[str, str]:
    """``config/crd/bases/<group>_<plural>.yaml`` → the CRD's YAML, for every kind declared with
    ``@resource`` in ``modules``. Raises ``GenerateError`` (one line naming the class and field) for
    an annotation it cannot map and for an inconsistent declaration."""
    return {path: render_yaml(obj) for path, obj in crd_objects(modules).items()}
