#!/usr/bin/env python3
"""Generate ``framework/apiserver/catalog/resources.json`` from the official client's API classes.

Every ``<Group><Version>Api`` class of the ``kubernetes`` package names, per operation, its HTTP method
and resource path (in ``_<op>_serialize``) and its response model (``_response_types_map``). From those
this script derives each built-in resource of the client's Kubernetes release: group, version, plural,
kind, scope, verbs, subresources (with their verbs and models), the model class names, and whether a
DELETE answers the deleted object (its response model is the kind's) rather than a Status. The source is
parsed with :mod:`ast` (not imported), which is several times faster than ``inspect`` on 60 modules.

Short names and categories are not in the client; they are the ones kube-apiserver's REST storage
declares (``ShortNames()``/``Categories()`` in ``pkg/registry/<group>/<kind>/storage/storage.go``) and
``kubectl api-resources`` lists.

Usage: ``python hack/gen-builtin-catalog.py`` (writes the file) or ``--check`` (exit 1 if stale).
``tests/framework/apiserver/test_catalog.py`` regenerates in memory and compares.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "framework/apiserver/catalog/resources.json"

# pkg/registry/*/storage: ShortNames() and Categories() of each resource ("group/plural", core: "plural").
SHORT_NAMES: dict[str, list[str]] = {
    "componentstatuses": ["cs"],
    "configmaps": ["cm"],
    "endpoints": ["ep"],
    "events": ["ev"],
    "limitranges": ["limits"],
    "namespaces": ["ns"],
    "nodes": ["no"],
    "persistentvolumeclaims": ["pvc"],
    "persistentvolumes": ["pv"],
    "pods": ["po"],
    "replicationcontrollers": ["rc"],
    "resourcequotas": ["quota"],
    "serviceaccounts": ["sa"],
    "services": ["svc"],
    "apiextensions.k8s.io/customresourcedefinitions": ["crd", "crds"],
    "apps/daemonsets": ["ds"],
    "apps/deployments": ["deploy"],
    "apps/replicasets": ["rs"],
    "apps/statefulsets": ["sts"],
    "autoscaling/horizontalpodautoscalers": ["hpa"],
    "batch/cronjobs": ["cj"],
    "certificates.k8s.io/certificatesigningrequests": ["csr"],
    "events.k8s.io/events": ["ev"],
    "networking.k8s.io/ingresses": ["ing"],
    "networking.k8s.io/ipaddresses": ["ip"],
    "networking.k8s.io/networkpolicies": ["netpol"],
    "policy/poddisruptionbudgets": ["pdb"],
    "scheduling.k8s.io/priorityclasses": ["pc"],
    "storage.k8s.io/storageclasses": ["sc"],
    "storage.k8s.io/volumeattributesclasses": ["vac"],
}
CATEGORIES: dict[str, list[str]] = {
    "pods": ["all"],
    "replicationcontrollers": ["all"],
    "services": ["all"],
    "apps/daemonsets": ["all"],
    "apps/deployments": ["all"],
    "apps/replicasets": ["all"],
    "apps/statefulsets": ["all"],
    "autoscaling/horizontalpodautoscalers": ["all"],
    "batch/cronjobs": ["all"],
    "batch/jobs": ["all"],
    "admissionregistration.k8s.io/mutatingadmissionpolicies": ["api-extensions"],
    "admissionregistration.k8s.io/mutatingadmissionpolicybindings": ["api-extensions"],
    "admissionregistration.k8s.io/mutatingwebhookconfigurations": ["api-extensions"],
    "admissionregistration.k8s.io/validatingadmissionpolicies": ["api-extensions"],
    "admissionregistration.k8s.io/validatingadmissionpolicybindings": ["api-extensions"],
    "admissionregistration.k8s.io/validatingwebhookconfigurations": ["api-extensions"],
    "apiextensions.k8s.io/customresourcedefinitions": ["api-extensions"],
    "apiregistration.k8s.io/apiservices": ["api-extensions"],
}
# Subresources whose response kind lives in another group (pkg/registry: ScaleREST, TokenREST, EvictionREST).
FOREIGN_KINDS = {
    "V1Scale": ("autoscaling", "v1", "Scale"),
    "AuthenticationV1TokenRequest": ("authentication.k8s.io", "v1", "TokenRequest"),
    "V1Eviction": ("policy", "v1", "Eviction"),
}

_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/{}]+)/(?P<version>[^/{}]+))"
    r"(?P<ns>/namespaces/\{namespace\})?/(?P<plural>[a-z0-9]+)(?P<name>/\{name\})?(?:/(?P<sub>[a-z]+))?$"
)
_NAMESPACE_ITSELF = re.compile(r"^/api/v1/namespaces/\{name\}(?:/(?P<sub>[a-z]+))?$")


def _client_api_dir() -> Path:
    import kubernetes.client.api as api

    return Path(api.__file__).parent


def _kwarg(call: ast.Call, name: str) -> str | None:
    for kw in call.keywords:
        if kw.arg == name and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    return None


def _operations(source: str) -> list[tuple[str, str, str, dict[str, str]]]:
    """(operation, HTTP method, resource path, response models by status) of one API module."""
    tree = ast.parse(source)
    routes: dict[str, tuple[str, str]] = {}
    responses: dict[str, dict[str, str]] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            serialize = fn.name.startswith("_") and fn.name.endswith("_serialize")
            public = (
                not fn.name.startswith("_")
                and "_with_http_info" not in fn.name
                and "_without_preload_content" not in fn.name
            )
            if not (serialize or public):
                continue  # the two thirds of the functions that say nothing new: not walked at all
            for node in ast.walk(fn):
                if (
                    serialize
                    and isinstance(node, ast.Call)
                    and getattr(node.func, "attr", "") == "param_serialize"
                ):
                    method, path = _kwarg(node, "method"), _kwarg(node, "resource_path")
                    if method and path:
                        routes[fn.name[1 : -len("_serialize")]] = (method, path)
                if (
                    public
                    and isinstance(node, ast.AnnAssign)
                    and getattr(node.target, "id", "") == "_response_types_map"
                    and isinstance(node.value, ast.Dict)
                ):
                    responses[fn.name] = {
                        str(k.value): str(v.value)
                        for k, v in zip(node.value.keys, node.value.values, strict=True)
                        if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and v.value
                    }
    return [(op, m, p, responses.get(op, {})) for op, (m, p) in routes.items()]


def _verb(op: str, method: str, named: bool) -> str | None:
    if method == "GET":
        return ("get" if named else "list") if not op.startswith("connect_") else "get"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return None


def _kind_of(model: str, version: str) -> str:
    """``V1beta1DeviceClass`` → ``DeviceClass``, ``CoreV1Event`` → ``Event`` (the client's model names are
    an optional group prefix, the capitalised version, then the kind)."""
    tag = version[0].upper() + version[1:]
    i = model.find(tag)
    return model[i + len(tag) :] if i >= 0 else model


_VERB_ORDER = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def generate(api_dir: Path | None = None) -> list[dict]:
    """The catalog: one entry per built-in resource, sorted by group, version and plural."""
    api_dir = api_dir or _client_api_dir()
    entries: dict[tuple[str, str, str], dict] = {}
    subs: dict[tuple[str, str, str], dict[str, dict]] = {}
    for path in sorted(api_dir.glob("*_api.py")):
        if path.name == "custom_objects_api.py":
            continue
        for op, method, rpath, resp in _operations(path.read_text()):
            m = _PATH.match(rpath)
            ns_self = _NAMESPACE_ITSELF.match(rpath)
            if ns_self:
                group, version, plural, namespaced, named, sub = "", "v1", "namespaces", False, True, None
                sub = ns_self.group("sub")
            elif m:
                group = m.group("group") or ""
                version = m.group("core") or m.group("version")
                plural, named, sub = m.group("plural"), bool(m.group("name")), m.group("sub")
                namespaced = bool(m.group("ns"))
                if not namespaced and "_for_all_namespaces" in op:
                    continue  # the cluster-wide list of a namespaced resource
            else:
                continue
            if sub and not named:
                continue
            verb = _verb(op, method, named)
            if verb is None:
                continue
            key = (group, version, plural)
            model = resp.get("200") or resp.get("201")
            if sub:
                entry = subs.setdefault(key, {}).setdefault(sub, {"verbs": set(), "model": None})
                entry["verbs"].add(verb)
                if model and model != "str" and (entry["model"] is None or verb == "get"):
                    entry["model"] = model
                continue
            e = entries.setdefault(
                key,
                {"group": group, "version": version, "resource": plural, "verbs": set(), "model": None},
            )
            if m and (namespaced or "namespace" not in e):
                e["namespaced"] = namespaced if "namespaced" not in e else e["namespaced"] or namespaced
            elif ns_self:
                e["namespaced"] = False
            e["verbs"].add(verb)
            if verb == "delete" and model:
                e["deleteModel"] = model
            if verb == "list" and model:
                e["listModel"] = model
                e["verbs"].add("watch")  # every list operation takes ?watch=true
            elif model and verb in ("get", "create") and (e["model"] is None or verb == "get"):
                e["model"] = model
    out = []
    for key in sorted(entries):
        e = entries[key]
        group, version, plural = key
        qualified = f"{group}/{plural}" if group else plural  # the SHORT_NAMES/CATEGORIES key
        model = e["model"] or (e.get("listModel") or "")[: -len("List")] or None
        item: dict = {
            "group": group,
            "version": version,
            "resource": plural,
            "kind": _kind_of(model, version) if model else "",
            "namespaced": e.get("namespaced", False),
            "verbs": [v for v in _VERB_ORDER if v in e["verbs"]],
            "model": model,
        }
        if e.get("listModel"):
            item["listModel"] = e["listModel"]
        if model and e.get("deleteModel") == model:
            # the store's ReturnDeletedObject: DELETE answers the object, not a Status
            item["deleteReturnsObject"] = True
        if SHORT_NAMES.get(qualified):
            item["shortNames"] = SHORT_NAMES[qualified]
        if CATEGORIES.get(qualified):
            item["categories"] = CATEGORIES[qualified]
        item["subresources"] = []
        for sub in sorted(subs.get(key, {})):
            s = subs[key][sub]
            sub_model = s["model"]
            entry: dict = {"name": sub, "verbs": [v for v in _VERB_ORDER if v in s["verbs"]]}
            if sub_model in FOREIGN_KINDS:
                g, v, k = FOREIGN_KINDS[sub_model]
                entry.update(group=g, version=v, kind=k)
            elif sub_model:
                entry["kind"] = _kind_of(sub_model, version)
            entry["model"] = sub_model
            item["subresources"].append(entry)
        out.append(item)
    return out


def render(catalog: list[dict]) -> str:
    return json.dumps(catalog, indent=1, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    text = render(generate())
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text() != text:
            sys.stderr.write(f"{OUT}: stale; run hack/gen-builtin-catalog.py\n")
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
