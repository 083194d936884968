"""The warning a request to a deprecated version of a CRD gets (apiextensions-apiserver's
``customresource_handler.go``: ``deprecationWarning``, or a default naming the newest served version
that is not deprecated)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from framework.apiserver.crd.definition import version_entries, version_entry
from framework.meta.schema import version_priority

if TYPE_CHECKING:
    from framework.apiserver.registry.strategy import ResourceType


def deprecation_warning(rt: ResourceType) -> str | None:
    """The ``Warning`` text of a request to ``rt``'s version, None unless it is deprecated."""
    crd = rt.crd
    entry = version_entry(crd, rt.version) if crd is not None else None
    if crd is None or entry is None or entry.get("deprecated") is not True:
        return None
    custom = entry.get("deprecationWarning")
    if isinstance(custom, str):
        return custom
    spec = crd["spec"]
    kind = spec["names"]["kind"]
    text = f"{spec['group']}/{rt.version} {kind} is deprecated"
    # Served, not deprecated and newer than this version (Kube-aware version order).
    newer = [
        v["name"]
        for v in version_entries(crd)
        if v.get("served") is True
        and v.get("deprecated") is not True
        and isinstance(v.get("name"), str)
        and version_priority(v["name"]) < version_priority(rt.version)
    ]
    if newer:
        text += f"; use {spec['group']}/{min(newer, key=version_priority)} {kind}"
    return text
