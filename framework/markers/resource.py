"""``@resource``: the top-level ``TypedDict`` of a custom resource, named as controller-gen's
``+kubebuilder:resource``, ``+kubebuilder:subresource:*``, ``+kubebuilder:printcolumn``,
``+kubebuilder:storageversion``/``unservedversion``/``deprecatedversion`` markers name it.

Several versions of one kind are several decorated classes (one per version); exactly one of them is
the storage version (``framework.generate.crd`` refuses anything else).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

__all__ = ["PrinterColumn", "ResourceInfo", "Scale", "resource", "resource_info"]

_T = TypeVar("_T")
_ATTR = "__k8s_resource__"


@dataclass(frozen=True)
class PrinterColumn:
    """``+kubebuilder:printcolumn``: a column of ``kubectl get``."""

    name: str
    type: Literal["integer", "number", "string", "boolean", "date"]
    json_path: str
    description: str | None = None
    format: str | None = None
    priority: int | None = None


@dataclass(frozen=True)
class Scale:
    """``+kubebuilder:subresource:scale``: where the replica counts (and the selector) live."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None


@dataclass(frozen=True)
class ResourceInfo:
    """What ``@resource`` recorded on a class."""

    group: str
    version: str
    kind: str
    scope: Literal["Namespaced", "Cluster"]
    plural: str | None
    singular: str | None
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    printer_columns: tuple[PrinterColumn, ...]
    status: bool
    scale: Scale | None
    served: bool
    storage: bool
    deprecated: bool
    deprecation_warning: str | None
    list_kind: str | None
    labels: tuple[tuple[str, str], ...] = ()


def resource(
    *,
    group: str,
    version: str,
    kind: str,
    scope: Literal["Namespaced", "Cluster"] = "Namespaced",
    plural: str | None = None,
    singular: str | None = None,
    short_names: Sequence[str] = (),
    categories: Sequence[str] = (),
    printer_columns: Sequence[PrinterColumn] = (),
    status: bool = True,
    scale: Scale | None = None,
    served: bool = True,
    storage: bool = True,
    deprecated: bool = False,
    deprecation_warning: str | None = None,
    list_kind: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> Callable[[_T], _T]:
    """Declare a ``TypedDict`` as one version of a custom resource kind.

    ``plural`` defaults to the lower-cased kind made plural, ``singular`` to the lower-cased kind, as
    controller-gen's defaults; ``status`` adds the status subresource (kubebuilder scaffolds it on every
    kind); ``scale`` the scale subresource; ``labels`` go on the CustomResourceDefinition object itself.
    The class is returned unchanged: the decorator only records.
    """
    if scope not in ("Namespaced", "Cluster"):
        raise ValueError(f"{kind}: scope must be Namespaced or Cluster, not {scope!r}")
    info = ResourceInfo(
        group=group,
        version=version,
        kind=kind,
        scope=scope,
        plural=plural,
        singular=singular,
        short_names=tuple(short_names),
        categories=tuple(categories),
        printer_columns=tuple(printer_columns),
        status=status,
        scale=scale,
        served=served,
        storage=storage,
        deprecated=deprecated,
        deprecation_warning=deprecation_warning,
        list_kind=list_kind,
        labels=tuple(sorted((labels or {}).items())),
    )

    def decorate(cls: _T) -> _T:
        setattr(cls, _ATTR, info)
        return cls

    return decorate


def resource_info(cls: object) -> ResourceInfo | None:
    """The declaration ``@resource`` put on ``cls`` itself (not inherited), if any."""
    info = vars(cls).get(_ATTR) if isinstance(cls, type) else None
    return info if isinstance(info, ResourceInfo) else None
