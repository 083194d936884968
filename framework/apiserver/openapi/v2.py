"""``/openapi/v2``: one Swagger 2.0 document for every served kind (kube-openapi's ``handler``).

The definitions are :mod:`.v3`'s component schemas of every served group-version, merged (their
names are unique across groups: the client's model class names, ``group.version.Kind`` for custom
resources) with ``$ref``s pointing at ``#/definitions/``; v2 has no ``allOf`` wrapper around a
described ``$ref``, so a field's description sits beside its ``$ref`` as kube-openapi writes it. Paths
hold each resource's collection (``list``, ``post``) and item (``get``, ``put``, ``patch``,
``delete``) operations, tagged ``x-kubernetes-group-version-kind`` and ``x-kubernetes-action``; the
PATCH operations take ``fieldValidation``, which kubectl's v2 query-parameter check looks for
(kubernetes/cli-runtime ``pkg/resource/query_param_verifier.go``).

The document is rebuilt only when a group-version's document is (a CRD change).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from framework.apiserver.endpoints.discovery import GIT_VERSION
from framework.apiserver.openapi import v3 as openapi_v3
from framework.apiserver.registry.served import Registry
from framework.apiserver.registry.strategy import ResourceType

_V3_REF = "#/components/schemas/"
_V2_REF = "#/definitions/"
# kube-apiserver's verbs → the operations of a collection and of an item path (x-kubernetes-action).
_COLLECTION = {
    "list": ("get", "list"),
    "create": ("post", "post"),
    "deletecollection": ("delete", "deletecollection"),
}
_ITEM = {
    "get": ("get", "get"),
    "update": ("put", "put"),
    "patch": ("patch", "patch"),
    "delete": ("delete", "delete"),
}
_QUERY = {
    "post": ("dryRun", "fieldManager", "fieldValidation"),
    "put": ("dryRun", "fieldManager", "fieldValidation"),
    "patch": ("dryRun", "fieldManager", "fieldValidation", "force"),
    "list": ("labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch"),
}


def _v2(schema: Any) -> Any:
    """A v3 schema as v2 writes it: ``$ref``s into ``#/definitions/``, a lone ``allOf`` ref inlined."""
    if isinstance(schema, list):
        return [_v2(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _v2(v) for k, v in schema.items() if k != "allOf"}
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        out["$ref"] = all_of[0]["$ref"]
    elif all_of is not None:
        out["allOf"] = _v2(all_of)
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_V3_REF):
        out["$ref"] = _V2_REF + ref[len(_V3_REF) :]
    return out


def _operation(rt: ResourceType, action: str, kind_ref: str | None) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": f"{action}{rt.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "parameters": [
            {"name": name, "in": "query", "type": "string", "uniqueItems": True}
            for name in _QUERY.get(action, ())
        ],
        "responses": {"200": {"description": "OK", **({"schema": {"$ref": kind_ref}} if kind_ref else {})}},
    }
    if action in ("post", "put", "patch"):
        body = {"name": "body", "in": "body", "required": True, "schema": {"type": "object"}}
        op["parameters"].append(body)
    return op


def _paths(rt: ResourceType, kind_ref: str | None) -> dict[str, dict[str, Any]]:
    base = "/" + openapi_v3.gv_path(rt.group, rt.version)
    collection = f"{base}{'/namespaces/{namespace}' if rt.namespaced else ''}/{rt.resource}"
    paths: dict[str, dict[str, Any]] = {}
    for table, path in ((_COLLECTION, collection), (_ITEM, collection + "/{name}")):
        for verb, (method, action) in table.items():
            if verb in rt.verbs:
                paths.setdefault(path, {})[method] = _operation(rt, action, kind_ref)
    return paths


def _kind_refs(doc: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    refs = {}
    for name, schema in doc["components"]["schemas"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            refs[(gvk["group"], gvk["version"], gvk["kind"])] = _V2_REF + name
    return refs


def _build(registry: Registry, docs: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    definitions: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for group, version, doc in docs:
        for name, schema in doc["components"]["schemas"].items():
            definitions.setdefault(name, _v2(schema))
        refs = _kind_refs(doc)
        for rt in registry.all():
            if rt.group == group and rt.version == version:
                for path, ops in _paths(rt, refs.get((rt.group, rt.version, rt.kind))).items():
                    paths.setdefault(path, {}).update(ops)
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }


# The last document by registry, with the v3 documents it was built from (compared by identity: a
# group-version's v3 document is rebuilt, as a new object, exactly when it changes).
_CACHE: weakref.WeakKeyDictionary[Registry, tuple[list[Any], dict[str, Any]]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


#: The protobuf answer's type: kube-openapi's, with a dot, as Go's MIME parser refuses the ``@`` of the
#: requested ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``.
PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

# The protobuf encoding of each registry's last document, with that document (compared by identity).
_ENCODED: weakref.WeakKeyDictionary[Registry, tuple[dict[str, Any], bytes]] = weakref.WeakKeyDictionary()


def protobuf_document(registry: Registry) -> bytes:
    """:func:`document` as gnostic's ``openapi.v2.Document`` protobuf, encoded once per document."""
    doc = document(registry)
    with _LOCK:
        cached = _ENCODED.get(registry)
    if cached is not None and cached[0] is doc:
        return cached[1]
    from framework.apiserver.openapi import (
        v2_proto as openapi_v2_proto,  # local: only kubectl's discovery client asks for it
    )

    body = openapi_v2_proto.encode_document(doc)
    with _LOCK:
        _ENCODED[registry] = (doc, body)
    return body


def document(registry: Registry) -> dict[str, Any]:
    """The Swagger 2.0 document of everything ``registry`` serves (shared: do not modify)."""
    docs = []
    for group, versions in sorted(registry.group_versions().items()):
        for version in versions:
            doc = openapi_v3.document(registry, group, version)
            if doc is not None:
                docs.append((group, version, doc))
    with _LOCK:
        cached = _CACHE.get(registry)
    if cached is not None and [id(d[2]) for d in cached[0]] == [id(d[2]) for d in docs]:
        return cached[1]  # the very same documents (held by the entry, so their ids are not reused)
    built = _build(registry, docs)
    with _LOCK:
        _CACHE[registry] = (docs, built)
    return built
