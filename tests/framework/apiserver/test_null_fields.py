"""Explicit JSON ``null`` in the fields of every built-in kind, over real HTTP.

kube-apiserver decodes a built-in kind's body into its Go struct: a ``null`` leaves the field at its
zero value (nil pointer, slice or map; the zero struct), which defaulting then fills and ``omitempty``
leaves out on the way back. So ``null`` behaves like an absent field, except where Go writes the zero
value as ``null`` itself: slices without ``omitempty`` (Role/ClusterRole ``rules``, 19-1) and
``metav1.Time``/``MicroTime`` struct fields (Event ``eventTime``, ``firstTimestamp``, …). A null list
item or map value decodes as the element's zero value (``""``, ``{}``, quantity ``0``).

For every kind and every field below, create (7-1), update (7-5), merge patch (8-3), strategic merge
patch (8-6), JSON patch (8-4) and the ``/status`` subresource (10-1) must never answer 5xx; the answer is
2xx, or ``422 Invalid`` where the real server's validation rejects the zero value (5-3), and a served
object never carries a ``null`` where Go would have left the field out.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

NS = "default"
RBAC = "rbac.authorization.k8s.io"
MICRO = "2024-05-01T10:00:00.000000Z"
TIME = "2024-05-01T10:00:00Z"
CA_BUNDLE = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="


@dataclass
class Kind:
    id: str
    collection: str  # URL of the collection (namespaced kinds: in NS)
    make: Callable[[str], dict]  # a valid object with the given name
    paths: list[str]  # dotted paths set to null (digits index lists)
    invalid: set[str] = field(default_factory=set)  # paths whose null the real server rejects (422)
    invalid_update: set[str] | None = None  # the same for updates; None: same as ``invalid``
    keep: set[str] = field(default_factory=set)  # where a null is served as null (list items as [])
    status_paths: list[str] = field(default_factory=list)  # nulls sent to /status
    status_seed: dict = field(default_factory=dict)  # status fields set before (conditions to null)
    create_only: bool = False
    bad_request: set[str] = field(default_factory=set)  # paths whose null the real server answers 400

    @property
    def put_invalid(self) -> set[str]:
        return self.invalid if self.invalid_update is None else self.invalid_update


def core(resource: str, namespaced: bool = True) -> str:
    return f"/api/v1/namespaces/{NS}/{resource}" if namespaced else f"/api/v1/{resource}"


def group(g: str, resource: str, namespaced: bool = True) -> str:
    return f"/apis/{g}/v1/namespaces/{NS}/{resource}" if namespaced else f"/apis/{g}/v1/{resource}"


def meta(name: str) -> dict:
    return {"name": name, "labels": {"a": "b"}, "annotations": {"x": "y"}}


META_PATHS = [
    "metadata.labels",
    "metadata.labels.a",
    "metadata.annotations",
    "metadata.annotations.x",
    "metadata.finalizers",
    "metadata.ownerReferences",
    "metadata.generateName",
]


def webhook_configuration(name: str, mutating: bool) -> dict:
    hook: dict[str, Any] = {
        "name": "hook.example.com",
        "clientConfig": {"url": "https://127.0.0.1:1/hook", "caBundle": CA_BUNDLE},
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": ["example.com"],
                "apiVersions": ["v1"],
                "resources": ["x"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "failurePolicy": "Ignore",
        "timeoutSeconds": 5,
        "objectSelector": {"matchLabels": {"never": "matches"}},
    }
    if mutating:
        hook["reinvocationPolicy"] = "Never"
    return {"metadata": meta(name), "webhooks": [hook]}


WEBHOOK_PATHS = [
    "webhooks",
    "webhooks.0",
    "webhooks.0.name",
    "webhooks.0.clientConfig",
    "webhooks.0.clientConfig.caBundle",
    "webhooks.0.clientConfig.service",
    "webhooks.0.rules",
    "webhooks.0.rules.0",
    "webhooks.0.rules.0.operations",
    "webhooks.0.rules.0.scope",
    "webhooks.0.sideEffects",
    "webhooks.0.admissionReviewVersions",
    "webhooks.0.failurePolicy",
    "webhooks.0.timeoutSeconds",
    "webhooks.0.objectSelector",
    "webhooks.0.objectSelector.matchLabels",
    "webhooks.0.namespaceSelector",
    "webhooks.0.matchConditions",
]
WEBHOOK_INVALID = {
    "webhooks.0",
    "webhooks.0.name",
    "webhooks.0.clientConfig",
    "webhooks.0.rules.0",
    "webhooks.0.rules.0.operations",
    "webhooks.0.sideEffects",
    "webhooks.0.admissionReviewVersions",
}


def crd(token: str) -> dict:
    plural = f"nulls{token}"
    return {
        "metadata": {"name": f"{plural}.example.com", "labels": {"a": "b"}},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "kind": plural.capitalize(),
                "shortNames": [plural + "x"],
                "categories": ["nulls"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "d",
                            "properties": {
                                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                            },
                        }
                    },
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                    ],
                }
            ],
        },
    }


def event_v1(name: str) -> dict:
    return {
        "metadata": meta(name),
        "eventTime": MICRO,
        "reportingController": "example.com/controller",
        "reportingInstance": "i-1",
        "action": "Act",
        "reason": "Why",
        "type": "Normal",
        "note": "hello",
        "regarding": {"kind": "ConfigMap", "namespace": NS, "name": "c", "apiVersion": "v1"},
        "related": {"kind": "Secret", "namespace": NS, "name": "s", "apiVersion": "v1"},
    }


EVENT_V1_IMMUTABLE = {
    "eventTime",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "type",
    "note",
    "regarding",
    "regarding.name",
    "related",
}

KINDS = [
    Kind(
        "namespaces",
        core("namespaces", False),
        lambda n: {"metadata": meta(n), "spec": {"finalizers": ["kubernetes", "example.com/f"]}},
        [*META_PATHS, "spec", "status", "spec.finalizers", "spec.finalizers.0"],
        invalid={"spec.finalizers.0"},  # "" is not a qualified finalizer name
        invalid_update=set(),  # spec is kept by updates (7-7)
        status_paths=[
            "status",
            "status.phase",
            "status.conditions",
            "status.conditions.0",
            "status.conditions.0.lastTransitionTime",
            "status.conditions.0.reason",
        ],
        status_seed={
            "conditions": [
                {
                    "type": "NamespaceContentRemaining",
                    "status": "False",
                    "reason": "ContentRemoved",
                    "message": "All content successfully removed",
                    "lastTransitionTime": TIME,
                }
            ]
        },
        keep={"status.conditions[].lastTransitionTime"},
    ),
    Kind(
        "configmaps",
        core("configmaps"),
        lambda n: {
            "metadata": meta(n),
            "data": {"k": "v"},
            "binaryData": {"b": "AAE="},
            "immutable": False,
        },
        [*META_PATHS, "data", "data.k", "binaryData", "binaryData.b", "immutable"],
    ),
    Kind(
        "secrets",
        core("secrets"),
        lambda n: {
            "metadata": meta(n),
            "data": {"k": "dg=="},
            "stringData": {"s": "v"},
            "type": "Opaque",
            "immutable": False,
        },
        [*META_PATHS, "data", "data.k", "stringData", "stringData.s", "type", "immutable"],
    ),
    Kind(
        "serviceaccounts",
        core("serviceaccounts"),
        lambda n: {
            "metadata": meta(n),
            "secrets": [{"name": "s"}],
            "imagePullSecrets": [{"name": "p"}],
            "automountServiceAccountToken": True,
        },
        [
            *META_PATHS,
            "secrets",
            "secrets.0",
            "secrets.0.name",
            "imagePullSecrets",
            "imagePullSecrets.0",
            "automountServiceAccountToken",
        ],
    ),
    Kind(
        "resourcequotas",
        core("resourcequotas"),
        lambda n: {
            "metadata": meta(n),
            "spec": {"hard": {"pods": "10"}, "scopes": ["NotTerminating"]},
        },
        [*META_PATHS, "spec", "spec.hard", "spec.hard.pods", "spec.scopes", "status"],
        status_paths=["status", "status.hard", "status.used", "status.used.pods"],
    ),
    Kind(
        "services",
        core("services"),
        lambda n: {
            "metadata": meta(n),
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}], "selector": {"app": "x"}},
        },
        [
            *META_PATHS,
            "spec",
            "spec.ports",
            "spec.ports.0",
            "spec.ports.0.targetPort",
            "spec.ports.0.protocol",
            "spec.selector",
            "spec.selector.app",
            "spec.type",
            "spec.sessionAffinity",
            "status",
        ],
        invalid={"spec", "spec.ports", "spec.ports.0"},
        status_paths=["status", "status.loadBalancer", "status.conditions"],
    ),
    Kind(
        "events",
        core("events"),
        lambda n: {
            "metadata": meta(n),
            "involvedObject": {"kind": "ConfigMap", "namespace": NS, "name": "c", "apiVersion": "v1"},
            "reason": "Why",
            "message": "hello",
            "type": "Normal",
            "source": {"component": "c"},
            "firstTimestamp": TIME,
            "lastTimestamp": TIME,
            "count": 2,
        },
        [
            *META_PATHS,
            "involvedObject",
            "involvedObject.name",
            "reason",
            "message",
            "type",
            "source",
            "source.component",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "eventTime",
            "series",
            "related",
            "action",
            "reportingComponent",
            "reportingInstance",
        ],
        keep={"firstTimestamp", "lastTimestamp", "eventTime"},
    ),
    Kind(
        "events.k8s.io",
        group("events.k8s.io", "events"),
        event_v1,
        [
            *META_PATHS,
            *sorted(EVENT_V1_IMMUTABLE),
            "series",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        ],
        invalid={"eventTime", "reportingController", "reportingInstance", "action", "reason", "type"},
        invalid_update=EVENT_V1_IMMUTABLE,
        keep={"eventTime", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"},
    ),
    Kind(
        "roles",
        group(RBAC, "roles"),
        lambda n: {
            "metadata": meta(n),
            "rules": [
                {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["c"]}
            ],
        },
        [
            *META_PATHS,
            "rules",
            "rules.0",
            "rules.0.verbs",
            "rules.0.verbs.0",
            "rules.0.apiGroups",
            "rules.0.resources",
            "rules.0.resourceNames",
        ],
        invalid={"rules.0", "rules.0.verbs", "rules.0.apiGroups", "rules.0.resources"},
        keep={"rules"},
    ),
    Kind(
        "clusterroles",
        group(RBAC, "clusterroles", False),
        lambda n: {"metadata": meta(n), "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]},
        [
            *META_PATHS,
            "rules",
            "rules.0",
            "rules.0.verbs",
            "rules.0.nonResourceURLs",
            "aggregationRule",
            "aggregationRule.clusterRoleSelectors",
        ],
        # Without nonResourceURLs the rule is a resource rule lacking apiGroups and resources.
        invalid={"rules.0", "rules.0.verbs", "rules.0.nonResourceURLs"},
        keep={"rules"},
    ),
    Kind(
        "rolebindings",
        group(RBAC, "rolebindings"),
        lambda n: {
            "metadata": meta(n),
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "u", "apiGroup": RBAC}],
        },
        [
            *META_PATHS,
            "roleRef",
            "roleRef.name",
            "subjects",
            "subjects.0",
            "subjects.0.name",
            "subjects.0.namespace",
        ],
        invalid={"roleRef", "roleRef.name", "subjects.0", "subjects.0.name"},
    ),
    Kind(
        "clusterrolebindings",
        group(RBAC, "clusterrolebindings", False),
        lambda n: {
            "metadata": meta(n),
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}],
        },
        [*META_PATHS, "roleRef", "roleRef.kind", "subjects", "subjects.0", "subjects.0.namespace"],
        invalid={"roleRef", "roleRef.kind", "subjects.0", "subjects.0.namespace"},
    ),
    Kind(
        "leases",
        group("coordination.k8s.io", "leases"),
        lambda n: {
            "metadata": meta(n),
            "spec": {
                "holderIdentity": "h",
                "leaseDurationSeconds": 10,
                "acquireTime": MICRO,
                "renewTime": MICRO,
                "leaseTransitions": 1,
            },
        },
        [
            *META_PATHS,
            "spec",
            "spec.holderIdentity",
            "spec.leaseDurationSeconds",
            "spec.acquireTime",
            "spec.renewTime",
            "spec.leaseTransitions",
            "spec.strategy",
            "spec.preferredHolder",
        ],
    ),
    Kind(
        "deployments",
        group("apps", "deployments"),
        lambda n: {
            "metadata": meta(n),
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "x"}},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        [
            *META_PATHS,
            "spec",
            "spec.replicas",
            "spec.strategy",
            "spec.selector",
            "spec.selector.matchLabels",
            "spec.template",
            "spec.template.metadata",
            "spec.template.spec.containers",
            "spec.template.spec.containers.0",
            "spec.template.spec.containers.0.image",
            "status",
        ],
        invalid={
            "spec",
            "spec.selector",
            "spec.selector.matchLabels",
            "spec.template",
            "spec.template.metadata",
            "spec.template.spec.containers",
            "spec.template.spec.containers.0",
            "spec.template.spec.containers.0.image",
        },
        status_paths=[
            "status",
            "status.replicas",
            "status.conditions",
            "status.conditions.0",
            "status.conditions.0.lastUpdateTime",
        ],
        status_seed={
            "replicas": 1,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": TIME,
                    "lastTransitionTime": TIME,
                }
            ],
        },
        keep={"status.conditions[].lastUpdateTime"},
    ),
    Kind(
        "validatingwebhookconfigurations",
        group("admissionregistration.k8s.io", "validatingwebhookconfigurations", False),
        lambda n: webhook_configuration(n, False),
        [*META_PATHS, *WEBHOOK_PATHS],
        invalid=WEBHOOK_INVALID,
    ),
    Kind(
        "mutatingwebhookconfigurations",
        group("admissionregistration.k8s.io", "mutatingwebhookconfigurations", False),
        lambda n: webhook_configuration(n, True),
        [*META_PATHS, *WEBHOOK_PATHS, "webhooks.0.reinvocationPolicy"],
        invalid=WEBHOOK_INVALID,
    ),
    Kind(
        "customresourcedefinitions",
        group("apiextensions.k8s.io", "customresourcedefinitions", False),
        crd,
        [
            "metadata.labels",
            "metadata.labels.a",
            "spec",
            "spec.names.shortNames",
            "spec.names.categories",
            "spec.names.singular",
            "spec.conversion",
            "spec.preserveUnknownFields",
            "spec.versions.0.schema",
            "spec.versions.0.schema.openAPIV3Schema.description",
            "spec.versions.0.schema.openAPIV3Schema.properties.spec",
            "spec.versions.0.schema.openAPIV3Schema.properties.spec.x-kubernetes-preserve-unknown-fields",
            "spec.versions.0.schema.openAPIV3Schema.properties.spec.default",
            "spec.versions.0.schema.openAPIV3Schema.required",
            "spec.versions.0.subresources",
            "spec.versions.0.subresources.status",
            "spec.versions.0.additionalPrinterColumns",
            "spec.versions.0.deprecated",
            "status",
        ],
        invalid={
            "spec",
            "spec.versions.0.schema",
            # A zero JSONSchemaProps has no type (16-1: every node typed).
            "spec.versions.0.schema.openAPIV3Schema.properties.spec",
        },
        status_paths=["status", "status.conditions", "status.storedVersions", "status.acceptedNames"],
    ),
    Kind(
        "subjectaccessreviews",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        lambda n: {
            "spec": {
                "user": "u",
                "groups": ["g"],
                "extra": {"k": ["v"]},
                "resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": NS},
            }
        },
        ["metadata", "spec.user", "spec.groups", "spec.extra", "spec.resourceAttributes.verb", "spec.uid"],
        create_only=True,
    ),
    Kind(
        "selfsubjectaccessreviews",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        lambda n: {"spec": {"resourceAttributes": {"verb": "get", "resource": "configmaps"}}},
        ["spec", "spec.resourceAttributes", "spec.resourceAttributes.resource", "spec.nonResourceAttributes"],
        invalid={"spec", "spec.resourceAttributes"},
        create_only=True,
    ),
    Kind(
        "tokenreviews",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        lambda n: {"spec": {"token": "nope", "audiences": ["a"]}},
        ["spec", "spec.token", "spec.audiences"],
        create_only=True,
        # no token: the TokenReview REST storage's own 400 (pkg/registry/authentication/tokenreview)
        bad_request={"spec", "spec.token"},
    ),
]


# --- helpers ------------------------------------------------------------------------------------------


def _steps(path: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in path.split(".")]


def set_null(obj: dict, path: str) -> dict:
    """A copy of ``obj`` with ``path`` set to null (missing parent objects created; list items must
    exist)."""
    out = copy.deepcopy(obj)
    cur: Any = out
    steps = _steps(path)
    for step, after in itertools.pairwise(steps):
        if isinstance(cur, list):
            cur = cur[step]
        else:
            assert not isinstance(after, int) or isinstance(cur.get(step), list), (path, obj)
            if not isinstance(cur.get(step), dict | list):
                cur[step] = {}
            cur = cur[step]
    cur[steps[-1]] = None
    return out


def merge_body(path: str) -> dict:
    body: dict = {}
    cur = body
    steps = _steps(path)
    for step in steps[:-1]:
        cur = cur.setdefault(step, {})
    cur[steps[-1]] = None
    return body


def pointer(path: str) -> str:
    return "/" + "/".join(str(s).replace("~", "~0").replace("/", "~1") for s in _steps(path))


def null_paths(value: Any, path: str = "") -> set[str]:
    """Where ``value`` holds nulls, as dotted paths (list items as ``[]``)."""
    if value is None:
        return {path}
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if path == "metadata.managedFields[].fieldsV1":
                continue
            out |= null_paths(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for v in value:
            out |= null_paths(v, path + "[]")
    return out


def put_latest(raw, url: str, path: str, status: dict | None = None) -> tuple[int, Any]:
    """PUT the current object (with ``status`` fields added) with ``path`` null; refetch on a conflict
    with an in-process controller (the CRD controller writes the status of a new CRD)."""
    for _ in range(20):
        code, current = raw.json("GET", url)
        assert code == 200, current
        if status:
            current["status"] = {**(current.get("status") or {}), **status}
        code, body = raw.json("PUT", url, set_null(current, path))
        if code != 409:
            break
    return code, body


def check(kind: Kind, what: str, code: int, body: Any, expect_invalid: bool | None) -> dict:
    """No 5xx; 2xx with an object free of unexpected nulls, or a 4xx Status with a reason."""
    assert code < 500, f"{kind.id} {what}: {code} {body}"
    if 200 <= code < 300:
        assert expect_invalid is not True, f"{kind.id} {what}: expected 422, got {code} {body}"
        assert isinstance(body, dict) and body.get("kind") != "Status", (what, body)
        stray = null_paths(body) - kind.keep
        assert not stray, f"{kind.id} {what}: nulls served at {sorted(stray)}: {body}"
        return body
    assert 400 <= code < 500, (what, code, body)
    assert isinstance(body, dict) and body.get("kind") == "Status" and body.get("reason"), (what, body)
    assert body["code"] == code
    if expect_invalid is not None:
        assert expect_invalid, f"{kind.id} {what}: expected 2xx, got {code} {body}"
        assert (code, body["reason"]) == (422, "Invalid"), (what, body)
    return body


# --- the sweep ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.id)
def test_nulls_never_crash_and_decode_like_absent_fields(raw, kind: Kind) -> None:
    """7-1, 7-5, 8-3, 8-4, 8-6, 10-1, 5-3: null in every field of every built-in kind."""
    for i, path in enumerate(kind.paths):
        # Create with the field null.
        name = f"c{i}"
        code, body = raw.json("POST", kind.collection, set_null(kind.make(name), path))
        if path in kind.bad_request:
            assert (code, body.get("reason")) == (400, "BadRequest"), (kind.id, path, code, body)
        else:
            check(kind, f"create {path}", code, body, path in kind.invalid)
        if kind.create_only:
            continue
        # Update (PUT) of a valid object with the field null.
        name = f"u{i}"
        code, created = raw.json("POST", kind.collection, kind.make(name))
        assert code == 201, created
        url = f"{kind.collection}/{created['metadata']['name']}"
        code, body = put_latest(raw, url, path)
        check(kind, f"update {path}", code, body, path in kind.put_invalid)
        # Merge and strategic merge patches: null deletes, so the result is the field's absence.
        if not any(s.isdigit() for s in path.split(".")):
            for content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                code, body = raw.json("PATCH", url, merge_body(path), headers={"Content-Type": content_type})
                check(kind, f"{content_type} {path}", code, body, path in kind.put_invalid)
        # JSON patch: the null itself lands in the object (parents may be missing: 422 then).
        code, body = raw.json(
            "PATCH",
            url,
            [{"op": "add", "path": pointer(path), "value": None}],
            headers={"Content-Type": "application/json-patch+json"},
        )
        check(kind, f"json-patch {path}", code, body, None)
    for i, path in enumerate(kind.status_paths):
        name = f"s{i}"
        code, created = raw.json("POST", kind.collection, kind.make(name))
        assert code == 201, created
        url = f"{kind.collection}/{created['metadata']['name']}/status"
        code, body = put_latest(raw, url, path, kind.status_seed)
        check(kind, f"status update {path}", code, body, False)
        assert body.get("spec") == created.get("spec")  # 10-1: only status changes
        code, body = raw.json(
            "PATCH",
            url,
            [{"op": "add", "path": pointer(path), "value": None}],
            headers={"Content-Type": "application/json-patch+json"},
        )
        check(kind, f"status json-patch {path}", code, body, None)


# --- what comes back ------------------------------------------------------------------------------------


def test_namespace_spec_and_status_null(raw) -> None:
    """12-1, 7-7, 10-1: ``spec: null`` is the zero NamespaceSpec (then ``kubernetes`` is added); a PUT
    keeps the stored finalizers; ``status: null`` through /status is a zero status, defaulted Active."""
    code, ns = raw.json("POST", "/api/v1/namespaces", {"metadata": {"name": "n1"}, "spec": None})
    assert code == 201, ns
    assert ns["spec"] == {"finalizers": ["kubernetes"]} and ns["status"] == {"phase": "Active"}
    code, ns = raw.json("PUT", "/api/v1/namespaces/n1", {**ns, "spec": None, "status": None})
    assert code == 200, ns
    assert ns["spec"] == {"finalizers": ["kubernetes"]} and ns["status"] == {"phase": "Active"}
    code, ns = raw.json("PUT", "/api/v1/namespaces/n1/status", {**ns, "status": None})
    assert code == 200, ns
    assert ns["status"] == {"phase": "Active"} and ns["spec"] == {"finalizers": ["kubernetes"]}
    code, ns = raw.json("PUT", "/api/v1/namespaces/n1/finalize", {**ns, "spec": None})
    assert code == 200, ns
    assert "finalizers" not in (ns.get("spec") or {})  # 10-4: finalize sets spec.finalizers (to none)


def test_omitempty_nulls_are_absent(raw) -> None:
    """7-1, 17: nil maps, slices and pointers are left out (ConfigMap ``data``, ServiceAccount
    ``secrets``, Lease spec fields, Secret ``immutable``); null map values are the zero string."""
    code, cm = raw.json(
        "POST",
        core("configmaps"),
        {"metadata": {"name": "c", "labels": {"a": None}}, "data": None, "binaryData": {"b": None}},
    )
    assert code == 201, cm
    assert "data" not in cm and cm["binaryData"] == {"b": ""} and cm["metadata"]["labels"] == {"a": ""}
    code, cm = raw.json("PUT", core("configmaps") + "/c", {**cm, "data": {"k": None}, "binaryData": None})
    assert code == 200, cm
    assert cm["data"] == {"k": ""} and "binaryData" not in cm
    code, sa = raw.json(
        "POST",
        core("serviceaccounts"),
        {"metadata": {"name": "sa"}, "secrets": None, "imagePullSecrets": [None]},
    )
    assert code == 201, sa
    assert "secrets" not in sa and sa["imagePullSecrets"] == [{}]
    code, lease = raw.json(
        "POST",
        group("coordination.k8s.io", "leases"),
        {
            "metadata": {"name": "l"},
            "spec": {
                "holderIdentity": None,
                "acquireTime": None,
                "renewTime": MICRO,
                "leaseTransitions": None,
            },
        },
    )
    assert code == 201, lease
    assert lease["spec"] == {"renewTime": MICRO}
    code, secret = raw.json(
        "POST", core("secrets"), {"metadata": {"name": "s"}, "type": None, "immutable": None, "data": None}
    )
    assert code == 201, secret
    assert secret["type"] == "Opaque" and "immutable" not in secret and "data" not in secret


def test_status_null_through_the_status_subresource(raw) -> None:
    """10-1: ``status: null`` via /status of a ResourceQuota is its zero status — never served null."""
    code, quota = raw.json(
        "POST", core("resourcequotas"), {"metadata": {"name": "q"}, "spec": {"hard": {"secrets": "5"}}}
    )
    assert code == 201, quota
    code, quota = raw.json("PUT", core("resourcequotas") + "/q/status", {**quota, "status": {"used": None}})
    assert code == 200, quota
    assert quota.get("status") in (None, {}) or "used" not in quota["status"]
    code, quota = raw.json("PUT", core("resourcequotas") + "/q/status", {**quota, "status": None})
    assert code == 200, quota
    assert quota.get("status", {}) == {} and quota["spec"] == {"hard": {"secrets": "5"}}


def test_rules_null_is_served_as_null(raw) -> None:
    """19-1: Role/ClusterRole ``rules`` has no omitempty, so an empty value serializes as null; a null
    rule is the zero PolicyRule (422 for its missing verbs)."""
    for collection in (group(RBAC, "roles"), group(RBAC, "clusterroles", False)):
        code, role = raw.json("POST", collection, {"metadata": {"name": "r"}, "rules": None})
        assert code == 201, role
        assert "rules" in role and role["rules"] is None
        code, got = raw.json("GET", f"{collection}/r")
        assert got["rules"] is None
        code, st = raw.json("PUT", f"{collection}/r", {**got, "rules": [None]})
        assert code == 422 and st["reason"] == "Invalid"
        assert any(c["field"] == "rules[0].verbs" for c in st["details"]["causes"])
        # Absent or empty rules serialize as null too (a nil slice either way).
        for i, body in enumerate(({}, {"rules": []})):
            code, role = raw.json("POST", collection, {"metadata": {"name": f"e{i}"}, **body})
            assert code == 201 and "rules" in role and role["rules"] is None
            assert raw.json("GET", f"{collection}/e{i}")[1]["rules"] is None


def test_event_times_null_are_served_as_null(raw) -> None:
    """18-1, 6-12: ``metav1.Time``/``MicroTime`` are structs that marshal their zero value as null, so
    an Event's null timestamps stay null (in both API versions); ``series`` (a pointer) is left out."""
    code, ev = raw.json(
        "POST",
        core("events"),
        {
            "metadata": {"name": "e"},
            "involvedObject": {"kind": "ConfigMap", "namespace": NS, "name": "c"},
            "reason": "R",
            "firstTimestamp": None,
            "lastTimestamp": TIME,
            "eventTime": None,
            "series": None,
            "related": None,
        },
    )
    assert code == 201, ev
    assert ev["firstTimestamp"] is None and ev["eventTime"] is None and ev["lastTimestamp"] == TIME
    assert "series" not in ev and "related" not in ev
    code, v1 = raw.json("GET", group("events.k8s.io", "events") + "/e")
    assert code == 200 and v1["deprecatedFirstTimestamp"] is None and v1["eventTime"] is None


def test_required_nulls_are_invalid(raw) -> None:
    """5-3, 19-1, 21-2: a null required field is its zero value, which validation rejects (422)."""
    code, st = raw.json(
        "POST",
        group(RBAC, "rolebindings"),
        {"metadata": {"name": "rb"}, "roleRef": None, "subjects": None},
    )
    assert code == 422 and st["reason"] == "Invalid", st
    assert {c["field"] for c in st["details"]["causes"]} >= {
        "roleRef.apiGroup",
        "roleRef.kind",
        "roleRef.name",
    }
    hook = webhook_configuration("w", False)
    hook["webhooks"][0]["sideEffects"] = None
    code, st = raw.json(
        "POST", group("admissionregistration.k8s.io", "validatingwebhookconfigurations", False), hook
    )
    assert code == 422 and st["details"]["causes"][0]["field"] == "webhooks[0].sideEffects", st


def test_custom_resources_keep_schema_null_semantics(raw, apiserver) -> None:
    """16-7: custom resources are not Go structs: a null stays where the schema says ``nullable``, a
    non-nullable null is removed and then defaulted; only ObjectMeta is decoded like a built-in's."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "opt": {"type": "string", "nullable": True},
                    "size": {"type": "integer", "default": 3},
                    "mode": {"type": "string"},
                    "list": {"type": "array", "nullable": True, "items": {"type": "string"}},
                },
            }
        },
    }
    definition = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        **crd("gizmos"),
    }
    definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    apiserver.install_crds([definition])
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Nullsgizmos",
        "metadata": {"name": "g", "labels": {"a": None}, "finalizers": None},
        "spec": {"opt": None, "size": None, "mode": None, "list": None},
    }
    code, body = raw.json("POST", "/apis/example.com/v1/namespaces/default/nullsgizmos", obj)
    assert code == 201, body
    assert body["spec"] == {"opt": None, "size": 3, "list": None}
    assert body["metadata"]["labels"] == {"a": ""} and "finalizers" not in body["metadata"]


def test_decoding_of_crd_schemas_keeps_json_values() -> None:
    """16-1: in a CRD's JSONSchemaProps, nulls of schema fields are absent (a null nested schema is the
    zero schema), while ``enum`` values and the inside of ``default`` are JSON data and stay."""
    from framework.apiserver.encoding import decoding
    from framework.apiserver.registry.apiextensions import customresourcedefinition

    crd_obj: dict[str, Any] = {
        "spec": {
            "versions": [
                {
                    "name": "v1",
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": None,
                            "required": [None],
                            "properties": {
                                "a": None,
                                "b": {
                                    "type": "string",
                                    "enum": [None, "x"],
                                    "nullable": True,
                                    "default": None,
                                },
                                "c": {
                                    "type": "object",
                                    "default": {"k": None},
                                    "items": None,
                                    "allOf": [None],
                                },
                            },
                        }
                    },
                    "additionalPrinterColumns": None,
                }
            ]
        }
    }
    decoding.decode(customresourcedefinition.NULLS, crd_obj)
    assert crd_obj["spec"]["versions"][0] == {
        "name": "v1",
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "required": [""],
                "properties": {
                    "a": {},
                    "b": {"type": "string", "enum": [None, "x"], "nullable": True},
                    "c": {"type": "object", "default": {"k": None}, "allOf": [{}]},
                },
            }
        },
    }
