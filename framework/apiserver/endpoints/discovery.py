"""Discovery: ``/version``, the legacy ``/api`` and ``/apis`` documents, per-version resource lists
and aggregated discovery (``apidiscovery.k8s.io``), all built from the registry's resource types.

kube-apiserver's counterparts live in k8s.io/apiserver ``pkg/endpoints/discovery`` (``legacy.go``,
``group.go``, ``version.go`` and ``aggregated/``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from framework.apiserver.endpoints.responses import json_response
from framework.apiserver.registry.served import Registry
from framework.apiserver.registry.strategy import ResourceType

GIT_VERSION = "v1.32.4"

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": GIT_VERSION,
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T00:00:00Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

ROOT_PATHS = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/readyz", "/version"]


class Discovery:
    """The discovery documents of the groups, versions and resources a registry serves."""

    def __init__(
        self, registry: Registry, extra_subresources: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        self.registry = registry
        # Subresources served beyond the types' own, by storage key (``pods/log`` with simulated nodes).
        self.extra_subresources = dict(extra_subresources or {})

    @staticmethod
    def core_versions(host: str) -> dict:
        """``/api``: the legacy ``APIVersions`` document, clients reach the server at ``host``."""
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
        }

    @staticmethod
    def group(group: str, versions: list[str]) -> dict:
        """``/apis/GROUP``: one ``APIGroup``, its first version preferred."""
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": gvs,
            "preferredVersion": gvs[0],
        }

    def groups(self) -> list[tuple[str, list[str]]]:
        """Every named group with its versions, in kube-apiserver's order (``*.k8s.io`` first)."""
        return [(g, vs) for g, vs in sorted(self.registry.group_versions().items(), key=_group_order) if g]

    def group_list(self) -> dict:
        """``/apis``: the ``APIGroupList``."""
        groups = [self.group(g, vs) for g, vs in self.groups()]
        for g in groups:
            g.pop("kind")
            g.pop("apiVersion")
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def aggregated(self, version: str, groups: list[tuple[str, list[str]]]) -> web.Response:
        """Aggregated discovery (``apidiscovery.k8s.io`` ``APIGroupDiscoveryList``, spec 3-6): every group,
        version and resource in one document, from the same entries as the per-version lists."""
        items = []
        for group, versions in groups:
            entries = []
            for v in versions:
                entries.append({"version": v, "resources": self._resources(group, v), "freshness": "Current"})
            meta: dict[str, Any] = {"name": group} if group else {}
            meta["creationTimestamp"] = None
            items.append({"metadata": meta, "versions": entries})
        body = {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {},
            "items": items,
        }
        ctype = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
        resp = json_response(body)
        resp.headers["Content-Type"] = ctype
        resp.headers["Vary"] = "Accept"
        return resp

    def _resources(self, group: str, version: str) -> list[dict]:
        legacy = self.resource_list(group, version)["resources"]
        out: list[dict] = []
        by_name: dict[str, dict] = {}
        for entry in legacy:
            name = entry["name"]
            if "/" not in name:
                res: dict[str, Any] = {
                    "resource": name,
                    "responseKind": {"group": group, "version": version, "kind": entry["kind"]},
                    "scope": "Namespaced" if entry["namespaced"] else "Cluster",
                    "singularResource": entry["singularName"],
                    "verbs": entry["verbs"],
                }
                for key in ("shortNames", "categories"):
                    if entry.get(key):
                        res[key] = entry[key]
                by_name[name] = res
                out.append(res)
                continue
            parent, _, sub = name.partition("/")
            kind = {"group": entry.get("group", group), "version": entry.get("version", version)}
            kind["kind"] = entry["kind"]
            by_name[parent].setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind, "verbs": entry["verbs"]}
            )
        return out

    def resource_list(self, group: str, version: str) -> dict:
        """``/api/v1``, ``/apis/GROUP/VERSION``: the ``APIResourceList`` with every subresource."""
        gv = f"{group}/{version}" if group else version
        resources = []
        for rt in sorted(self.registry.all(), key=lambda r: r.resource):
            if rt.group != group or rt.version != version:
                continue
            entry: dict[str, Any] = {
                "name": rt.resource,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(rt.verbs),
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            entry["storageVersionHash"] = _hash(rt)
            resources.append(entry)
            for sub in rt.subresources + self.extra_subresources.get(rt.storage, ()):
                sub_entry: dict[str, Any] = {
                    "name": f"{rt.resource}/{sub}",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "kind": rt.kind,
                    "verbs": ["get", "patch", "update"],
                }
                if sub == "finalize":
                    sub_entry["verbs"] = ["update"]
                elif sub == "log":
                    sub_entry["verbs"] = ["get"]
                elif sub == "scale":
                    sub_entry.update(group="autoscaling", version="v1", kind="Scale")
                elif sub == "token":
                    sub_entry.update(
                        group="authentication.k8s.io", version="v1", kind="TokenRequest", verbs=["create"]
                    )
                resources.append(sub_entry)
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def _hash(rt: ResourceType) -> str:
    return hashlib.sha256(f"{rt.group}/{rt.version}/{rt.kind}".encode()).digest()[:8].hex()[:11]


def _group_order(item: tuple[str, list[str]]) -> tuple[int, str]:
    return (0 if item[0].endswith(".k8s.io") or "." not in item[0] else 1, item[0])
