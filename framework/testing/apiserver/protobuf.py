"""Protobuf request bodies (spec 1-9, 24-2): ``k8s\\x00`` + ``runtime.Unknown`` → the JSON form of the object.

kubectl's typed-client commands (``create namespace``, ``create configmap``, ``create secret``,
``create serviceaccount``, ``create role`` …, ``auth can-i``) send ``application/vnd.kubernetes.protobuf``
and do not retry in JSON after a 415, so the server decodes these bodies for a fixed set of kinds.

The decoder is hand-written rather than built on the ``protobuf`` package: the wire format subset is
small (varint, length-delimited and fixed32/64 fields; no groups, no packed scalars in these kinds),
the schemas are fixed (a few dozen field numbers copied from ``k8s.io/api`` and
``k8s.io/apimachinery`` ``generated.proto``) and what matters is the mapping onto Go's JSON form —
which generated Python classes would not give us anyway. So: no compiled ``.proto``, no dependency.

Mapping rules (what Go's ``encoding/json`` would have produced from the decoded Go struct, so the rest
of the server sees exactly the dict a JSON request would have carried):

- scalars tagged ``omitempty`` are dropped when zero (go-to-protobuf writes non-pointer scalars even
  when empty, so the wire carries ``name: ""``, ``generation: 0`` …); scalars *without* ``omitempty``
  (``roleRef.apiGroup``, ``subjects[].kind``, ``status.allowed`` …) are always emitted; pointer scalars
  (``immutable``, ``automountServiceAccountToken``, ``deletionGracePeriodSeconds`` …) are emitted when
  present on the wire, whatever their value;
- non-pointer nested structs (``spec``, ``status``, ``roleRef``, ``metadata``) are always emitted, as Go
  emits ``{}`` for them; pointer structs only when present;
- repeated fields and maps are emitted when non-empty; ``bytes`` map values (Secret ``data``,
  ConfigMap ``binaryData``) become base64 strings;
- ``metav1.Time`` ``{seconds, nanos}`` becomes RFC 3339 with seconds precision and ``Z``; a zero time
  (empty message or Go's year-1 instant) is dropped, as Go's ``null``;
- unknown field numbers are skipped (as the generated Go code does); a wrong wire type, a truncated
  field or an overlong varint is a ``400 BadRequest`` phrased like the real server's decode errors;
- ``contentEncoding`` / ``contentType`` of the envelope are ignored, as the Go protobuf serializer does.

A kind outside :data:`KINDS` in the envelope is ``415 UnsupportedMediaType`` (24-2). :func:`encode` is
the inverse, used by the tests to build bodies (optionally with Go's zero-valued fields on the wire).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from framework.meta.schema import parse_group_version
from framework.meta.time import format_time, parse_time

from . import errors
from .errors import StatusError

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
# Media types accepted for bodies of kinds this module cannot decode (the 415 list, 5-3).
JSON_MEDIA = ["application/json", "application/yaml"]

# Field types. Anything else in ``_Field.type`` names a message in ``_MESSAGES``.
STRING, BOOL, INT32, INT64 = "string", "bool", "int32", "int64"
TIME = "Time"  # metav1.Time: a message {1 seconds, 2 nanos} with its own JSON form
FIELDS_V1 = "FieldsV1"  # metav1.FieldsV1: a message {1 Raw bytes} whose JSON form is Raw itself
MAP_STRING, MAP_BYTES, MAP_EXTRA = "map<string>", "map<bytes>", "map<ExtraValue>"
MAP_QUANTITY = "map<Quantity>"  # resource.Quantity {1 string}: its JSON form is the string
INT_OR_STRING = "IntOrString"  # intstr.IntOrString {1 type, 2 intVal, 3 strVal}: a JSON int or string
_MAPS = (MAP_STRING, MAP_BYTES, MAP_EXTRA, MAP_QUANTITY)

# JSON emission modes (see the module docstring).
OMITEMPTY, ALWAYS, POINTER = "omitempty", "always", "pointer"

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_SCALAR_WIRE = {STRING: _LEN, BOOL: _VARINT, INT32: _VARINT, INT64: _VARINT}
_ZERO: dict[str, Any] = {STRING: "", BOOL: False, INT32: 0, INT64: 0}
_GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): 0001-01-01T00:00:00Z
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class _Field:
    name: str
    type: str = STRING
    repeated: bool = False
    mode: str = OMITEMPTY

    @property
    def is_message(self) -> bool:
        return self.type in _MESSAGES

    @property
    def wire(self) -> int:
        return _SCALAR_WIRE.get(self.type, _LEN)


def _s(name: str, mode: str = OMITEMPTY) -> _Field:
    return _Field(name, STRING, mode=mode)


def _strings(name: str) -> _Field:
    return _Field(name, STRING, repeated=True)


def _msg(name: str, type_: str, pointer: bool = False) -> _Field:
    return _Field(name, type_, mode=POINTER if pointer else ALWAYS)


def _msgs(name: str, type_: str) -> _Field:
    return _Field(name, type_, repeated=True)


def _i32(name: str, mode: str = OMITEMPTY) -> _Field:
    return _Field(name, INT32, mode=mode)


def _bool(name: str, mode: str = OMITEMPTY) -> _Field:
    return _Field(name, BOOL, mode=mode)


_META = _msg("metadata", "ObjectMeta")

# message name → field number → field. Field numbers from kubernetes/api */v1/generated.proto and
# kubernetes/apimachinery pkg/apis/meta/v1/generated.proto; JSON modes from the Go struct tags.
_MESSAGES: dict[str, dict[int, _Field]] = {
    # -- apimachinery meta/v1 ------------------------------------------------------------------------
    TIME: {1: _Field("seconds", INT64), 2: _Field("nanos", INT32)},
    FIELDS_V1: {},  # {1 Raw bytes}, decoded by _fields_v1
    "ObjectMeta": {
        1: _s("name"),
        2: _s("generateName"),
        3: _s("namespace"),
        4: _s("selfLink"),
        5: _s("uid"),
        6: _s("resourceVersion"),
        7: _Field("generation", INT64),
        8: _Field("creationTimestamp", TIME),
        9: _Field("deletionTimestamp", TIME, mode=POINTER),
        10: _Field("deletionGracePeriodSeconds", INT64, mode=POINTER),
        11: _Field("labels", MAP_STRING),
        12: _Field("annotations", MAP_STRING),
        13: _msgs("ownerReferences", "OwnerReference"),
        14: _strings("finalizers"),
        17: _msgs("managedFields", "ManagedFieldsEntry"),
    },
    "OwnerReference": {
        5: _s("apiVersion", ALWAYS),
        1: _s("kind", ALWAYS),
        3: _s("name", ALWAYS),
        4: _s("uid", ALWAYS),
        6: _Field("controller", BOOL, mode=POINTER),
        7: _Field("blockOwnerDeletion", BOOL, mode=POINTER),
    },
    "ManagedFieldsEntry": {
        1: _s("manager"),
        2: _s("operation"),
        3: _s("apiVersion"),
        4: _Field("time", TIME, mode=POINTER),
        6: _s("fieldsType"),
        7: _Field("fieldsV1", FIELDS_V1, mode=POINTER),
        8: _s("subresource"),
    },
    "LabelSelector": {
        1: _Field("matchLabels", MAP_STRING),
        2: _msgs("matchExpressions", "LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {1: _s("key", ALWAYS), 2: _s("operator", ALWAYS), 3: _strings("values")},
    "FieldSelectorRequirement": {1: _s("key", ALWAYS), 2: _s("operator", ALWAYS), 3: _strings("values")},
    # -- core/v1 -------------------------------------------------------------------------------------
    "Namespace": {1: _META, 2: _msg("spec", "NamespaceSpec"), 3: _msg("status", "NamespaceStatus")},
    "NamespaceSpec": {1: _strings("finalizers")},
    "NamespaceStatus": {1: _s("phase"), 2: _msgs("conditions", "NamespaceCondition")},
    "NamespaceCondition": {
        1: _s("type", ALWAYS),
        2: _s("status", ALWAYS),
        4: _Field("lastTransitionTime", TIME),
        5: _s("reason"),
        6: _s("message"),
    },
    "ConfigMap": {
        1: _META,
        4: _Field("immutable", BOOL, mode=POINTER),
        2: _Field("data", MAP_STRING),
        3: _Field("binaryData", MAP_BYTES),
    },
    "Secret": {
        1: _META,
        5: _Field("immutable", BOOL, mode=POINTER),
        2: _Field("data", MAP_BYTES),
        4: _Field("stringData", MAP_STRING),
        3: _s("type"),
    },
    "ServiceAccount": {
        1: _META,
        2: _msgs("secrets", "ObjectReference"),
        3: _msgs("imagePullSecrets", "LocalObjectReference"),
        4: _Field("automountServiceAccountToken", BOOL, mode=POINTER),
    },
    "ObjectReference": {
        1: _s("kind"),
        2: _s("namespace"),
        3: _s("name"),
        4: _s("uid"),
        5: _s("apiVersion"),
        6: _s("resourceVersion"),
        7: _s("fieldPath"),
    },
    "LocalObjectReference": {1: _s("name")},
    # -- rbac/v1 -------------------------------------------------------------------------------------
    "Role": {1: _META, 2: _msgs("rules", "PolicyRule")},
    "ClusterRole": {
        1: _META,
        2: _msgs("rules", "PolicyRule"),
        3: _msg("aggregationRule", "AggregationRule", pointer=True),
    },
    "AggregationRule": {1: _msgs("clusterRoleSelectors", "LabelSelector")},
    "PolicyRule": {
        1: _strings("verbs"),
        2: _strings("apiGroups"),
        3: _strings("resources"),
        4: _strings("resourceNames"),
        5: _strings("nonResourceURLs"),
    },
    "RoleBinding": {1: _META, 2: _msgs("subjects", "Subject"), 3: _msg("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: _META, 2: _msgs("subjects", "Subject"), 3: _msg("roleRef", "RoleRef")},
    "Subject": {1: _s("kind", ALWAYS), 2: _s("apiGroup"), 3: _s("name", ALWAYS), 4: _s("namespace")},
    "RoleRef": {1: _s("apiGroup", ALWAYS), 2: _s("kind", ALWAYS), 3: _s("name", ALWAYS)},
    # -- authorization/v1 ----------------------------------------------------------------------------
    "SelfSubjectAccessReview": {
        1: _META,
        2: _msg("spec", "SelfSubjectAccessReviewSpec"),
        3: _msg("status", "SubjectAccessReviewStatus"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: _msg("resourceAttributes", "ResourceAttributes", pointer=True),
        2: _msg("nonResourceAttributes", "NonResourceAttributes", pointer=True),
    },
    "SubjectAccessReview": {
        1: _META,
        2: _msg("spec", "SubjectAccessReviewSpec"),
        3: _msg("status", "SubjectAccessReviewStatus"),
    },
    "LocalSubjectAccessReview": {
        1: _META,
        2: _msg("spec", "SubjectAccessReviewSpec"),
        3: _msg("status", "SubjectAccessReviewStatus"),
    },
    "SubjectAccessReviewSpec": {
        1: _msg("resourceAttributes", "ResourceAttributes", pointer=True),
        2: _msg("nonResourceAttributes", "NonResourceAttributes", pointer=True),
        3: _s("user"),
        4: _strings("groups"),
        5: _Field("extra", MAP_EXTRA),
        6: _s("uid"),
    },
    "ResourceAttributes": {
        1: _s("namespace"),
        2: _s("verb"),
        3: _s("group"),
        4: _s("version"),
        5: _s("resource"),
        6: _s("subresource"),
        7: _s("name"),
        8: _msg("fieldSelector", "FieldSelectorAttributes", pointer=True),
        9: _msg("labelSelector", "LabelSelectorAttributes", pointer=True),
    },
    "FieldSelectorAttributes": {1: _s("rawSelector"), 2: _msgs("requirements", "FieldSelectorRequirement")},
    "LabelSelectorAttributes": {1: _s("rawSelector"), 2: _msgs("requirements", "LabelSelectorRequirement")},
    "NonResourceAttributes": {1: _s("path"), 2: _s("verb")},
    "SubjectAccessReviewStatus": {
        1: _Field("allowed", BOOL, mode=ALWAYS),
        4: _Field("denied", BOOL),
        2: _s("reason"),
        3: _s("evaluationError"),
    },
    # -- authentication/v1 ---------------------------------------------------------------------------
    "TokenRequest": {1: _META, 2: _msg("spec", "TokenRequestSpec"), 3: _msg("status", "TokenRequestStatus")},
    "TokenRequestSpec": {
        1: _strings("audiences"),
        4: _Field("expirationSeconds", INT64, mode=POINTER),
        3: _msg("boundObjectRef", "BoundObjectReference", pointer=True),
    },
    "BoundObjectReference": {1: _s("kind"), 2: _s("apiVersion"), 3: _s("name"), 4: _s("uid")},
    "TokenRequestStatus": {1: _s("token", ALWAYS), 2: _Field("expirationTimestamp", TIME)},
    "SelfSubjectReview": {1: _META, 2: _msg("status", "SelfSubjectReviewStatus")},
    "SelfSubjectReviewStatus": {1: _msg("userInfo", "UserInfo")},
    "UserInfo": {1: _s("username"), 2: _s("uid"), 3: _strings("groups"), 4: _Field("extra", MAP_EXTRA)},
    # -- core/v1 Service and ResourceQuota, apps/v1 Deployment (kubectl create service|quota|deployment)
    "Service": {1: _META, 2: _msg("spec", "ServiceSpec"), 3: _msg("status", "ServiceStatus")},
    "ServiceSpec": {
        1: _msgs("ports", "ServicePort"),
        2: _Field("selector", MAP_STRING),
        3: _s("clusterIP"),
        18: _strings("clusterIPs"),
        4: _s("type"),
        5: _strings("externalIPs"),
        7: _s("sessionAffinity"),
        8: _s("loadBalancerIP"),
        9: _strings("loadBalancerSourceRanges"),
        10: _s("externalName"),
        11: _s("externalTrafficPolicy"),
        12: _i32("healthCheckNodePort"),
        13: _bool("publishNotReadyAddresses"),
        19: _strings("ipFamilies"),
        17: _s("ipFamilyPolicy", POINTER),
        20: _bool("allocateLoadBalancerNodePorts", POINTER),
        21: _s("loadBalancerClass", POINTER),
        22: _s("internalTrafficPolicy", POINTER),
        23: _s("trafficDistribution", POINTER),
    },
    "ServicePort": {
        1: _s("name"),
        2: _s("protocol"),
        6: _s("appProtocol", POINTER),
        3: _i32("port", ALWAYS),
        4: _Field("targetPort", INT_OR_STRING),
        5: _i32("nodePort"),
    },
    "ServiceStatus": {1: _msg("loadBalancer", "LoadBalancerStatus")},
    "LoadBalancerStatus": {1: _msgs("ingress", "LoadBalancerIngress")},
    "LoadBalancerIngress": {1: _s("ip"), 2: _s("hostname"), 4: _s("ipMode", POINTER)},
    "ResourceQuota": {
        1: _META,
        2: _msg("spec", "ResourceQuotaSpec"),
        3: _msg("status", "ResourceQuotaStatus"),
    },
    "ResourceQuotaSpec": {
        1: _Field("hard", MAP_QUANTITY),
        2: _strings("scopes"),
        3: _msg("scopeSelector", "ScopeSelector", pointer=True),
    },
    "ScopeSelector": {1: _msgs("matchExpressions", "ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: _s("scopeName", ALWAYS),
        2: _s("operator", ALWAYS),
        3: _strings("values"),
    },
    "ResourceQuotaStatus": {1: _Field("hard", MAP_QUANTITY), 2: _Field("used", MAP_QUANTITY)},
    "Deployment": {1: _META, 2: _msg("spec", "DeploymentSpec"), 3: _msg("status", "DeploymentStatus")},
    "DeploymentSpec": {
        1: _i32("replicas", POINTER),
        2: _msg("selector", "LabelSelector", pointer=True),
        3: _msg("template", "PodTemplateSpec"),
        4: _msg("strategy", "DeploymentStrategy"),
        5: _i32("minReadySeconds"),
        6: _i32("revisionHistoryLimit", POINTER),
        7: _bool("paused"),
        9: _i32("progressDeadlineSeconds", POINTER),
    },
    "DeploymentStrategy": {1: _s("type"), 2: _msg("rollingUpdate", "RollingUpdateDeployment", pointer=True)},
    "RollingUpdateDeployment": {
        1: _Field("maxUnavailable", INT_OR_STRING, mode=POINTER),
        2: _Field("maxSurge", INT_OR_STRING, mode=POINTER),
    },
    # The server resets a Deployment's status on create and keeps it on update: none of it is read.
    "DeploymentStatus": {},
    "PodTemplateSpec": {1: _META, 2: _msg("spec", "PodSpec")},
    "PodSpec": {
        20: _msgs("initContainers", "Container"),
        2: _msgs("containers", "Container"),
        3: _s("restartPolicy"),
        4: _Field("terminationGracePeriodSeconds", INT64, mode=POINTER),
        5: _Field("activeDeadlineSeconds", INT64, mode=POINTER),
        6: _s("dnsPolicy"),
        7: _Field("nodeSelector", MAP_STRING),
        8: _s("serviceAccountName"),
        9: _s("serviceAccount"),
        21: _bool("automountServiceAccountToken", POINTER),
        10: _s("nodeName"),
        11: _bool("hostNetwork"),
        12: _bool("hostPID"),
        13: _bool("hostIPC"),
        15: _msgs("imagePullSecrets", "LocalObjectReference"),
        16: _s("hostname"),
        17: _s("subdomain"),
        19: _s("schedulerName"),
        24: _s("priorityClassName"),
        25: _i32("priority", POINTER),
        30: _bool("enableServiceLinks", POINTER),
    },
    "Container": {
        1: _s("name", ALWAYS),
        2: _s("image"),
        3: _strings("command"),
        4: _strings("args"),
        5: _s("workingDir"),
        6: _msgs("ports", "ContainerPort"),
        7: _msgs("env", "EnvVar"),
        8: _msg("resources", "ResourceRequirements"),
        9: _msgs("volumeMounts", "VolumeMount"),
        13: _s("terminationMessagePath"),
        20: _s("terminationMessagePolicy"),
        14: _s("imagePullPolicy"),
        16: _bool("stdin"),
        17: _bool("stdinOnce"),
        18: _bool("tty"),
    },
    "ContainerPort": {
        1: _s("name"),
        2: _i32("hostPort"),
        3: _i32("containerPort", ALWAYS),
        4: _s("protocol"),
        5: _s("hostIP"),
    },
    "EnvVar": {1: _s("name", ALWAYS), 2: _s("value")},
    "ResourceRequirements": {1: _Field("limits", MAP_QUANTITY), 2: _Field("requests", MAP_QUANTITY)},
    "VolumeMount": {
        1: _s("name", ALWAYS),
        2: _bool("readOnly"),
        3: _s("mountPath", ALWAYS),
        4: _s("subPath"),
        5: _s("mountPropagation", POINTER),
        6: _s("subPathExpr"),
    },
}

# Messages whose unmodelled fields must not be dropped silently (24-6): such a field carrying a value
# fails the request with 400 instead of storing a Deployment without its probes or volumes.
_STRICT = frozenset(
    {
        "ServiceSpec",
        "ServicePort",
        "ResourceQuotaSpec",
        "DeploymentSpec",
        "PodTemplateSpec",
        "PodSpec",
        "Container",
        "ContainerPort",
        "EnvVar",
        "ResourceRequirements",
        "VolumeMount",
    }
)
_INT_OR_STRING = {1: _Field("type", INT64), 2: _Field("intVal", INT32), 3: _Field("strVal", STRING)}

# (apiVersion, kind) of the objects whose protobuf bodies are decoded (1-9).
KINDS: frozenset[tuple[str, str]] = frozenset(
    [("v1", k) for k in ("Namespace", "ConfigMap", "Secret", "ServiceAccount")]
    + [
        ("rbac.authorization.k8s.io/v1", k)
        for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
    ]
    + [
        ("authorization.k8s.io/v1", k)
        for k in ("SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview")
    ]
    + [("authentication.k8s.io/v1", k) for k in ("TokenRequest", "SelfSubjectReview")]
    + [("v1", "Service"), ("v1", "ResourceQuota"), ("apps/v1", "Deployment")]
)

# runtime.Unknown and its TypeMeta (k8s.io/apimachinery/pkg/runtime/generated.proto).
_UNKNOWN = {1: "typeMeta", 2: "raw", 3: "contentEncoding", 4: "contentType"}
_TYPE_META = {1: "apiVersion", 2: "kind"}


def decodable(api_version: str, kind: str) -> bool:
    """Whether protobuf bodies of this kind are decoded (else such a body is a 415)."""
    return (api_version, kind) in KINDS


class _Malformed(Exception):
    """A wire-format error; turned into a 400 whose text follows the real server's decode errors."""


# -- wire format --------------------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise _Malformed("unexpected EOF")
        if shift >= 64:
            raise _Malformed("proto: integer overflow")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def _fields(buf: bytes, message: str) -> list[tuple[int, int, Any]]:
    """``(number, wire type, value)`` for each field: an int for varint/fixed, bytes for length-delimited."""
    out = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if num <= 0 or num > 0x1FFFFFFF:
            raise _Malformed(f"proto: {message}: illegal tag {num} (wire type {wire})")
        value: int | bytes
        if wire == _VARINT:
            value, pos = _varint(buf, pos)
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if pos + size > len(buf):
                raise _Malformed("unexpected EOF")
            value = int.from_bytes(buf[pos : pos + size], "little")
            pos += size
        elif wire == _LEN:
            length, pos = _varint(buf, pos)
            if length > 0x7FFFFFFFFFFFFFFF:
                raise _Malformed("proto: negative length found during unmarshaling")
            if pos + length > len(buf):
                raise _Malformed("unexpected EOF")
            value = buf[pos : pos + length]
            pos += length
        else:  # 3/4 are proto2 groups, never used by Kubernetes types; 6/7 do not exist
            raise _Malformed(f"proto: {message}: illegal wireType {wire} for field number {num}")
        out.append((num, wire, value))
    return out


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _text(raw: bytes) -> str:
    # Go strings may hold any bytes; its JSON encoder writes invalid UTF-8 as U+FFFD.
    return raw.decode("utf-8", errors="replace")


# -- decoding -----------------------------------------------------------------------------------------


def _scalar(f: _Field, value: Any) -> Any:
    if f.type == STRING:
        return _text(value)
    if f.type == BOOL:
        return value != 0
    if f.type == INT32:
        return _signed(value, 32)
    return _signed(value, 64)


def _map_entry(f: _Field, raw: bytes) -> tuple[str, Any]:
    key, value = "", None
    for num, wire, v in _fields(raw, f"{f.name} map entry"):
        if num == 1:
            if wire != _LEN:
                raise _Malformed(f"proto: wrong wireType = {wire} for field {f.name} key")
            key = _text(v)
        elif num == 2:
            if wire != _LEN:
                raise _Malformed(f"proto: wrong wireType = {wire} for field {f.name} value")
            value = v
    if f.type == MAP_STRING:
        return key, _text(value or b"")
    if f.type == MAP_BYTES:
        return key, base64.b64encode(value or b"").decode()
    if f.type == MAP_QUANTITY:
        text = ""
        for num, wire, v in _fields(value or b"", "Quantity"):
            if num == 1:
                if wire != _LEN:
                    raise _Malformed(f"proto: wrong wireType = {wire} for field String_")
                text = _text(v)
        return key, text or "0"
    # ExtraValue {repeated string items = 1}: its JSON form is the bare list.
    items = []
    for num, wire, v in _fields(value or b"", "ExtraValue"):
        if num == 1:
            if wire != _LEN:
                raise _Malformed(f"proto: wrong wireType = {wire} for field Items")
            items.append(_text(v))
    return key, items


def _time(raw: bytes) -> str | None:
    """metav1.Time → RFC 3339 (seconds precision, UTC), None for Go's zero time (JSON ``null``)."""
    if not raw:
        return None  # what Go writes for a zero Time
    t = _decode_fields(raw, TIME)
    seconds, nanos = t.get("seconds", 0), t.get("nanos", 0)
    if seconds == _GO_ZERO_TIME and nanos == 0:
        return None
    try:
        dt = _EPOCH + timedelta(seconds=seconds + nanos // 1_000_000_000)  # time.Unix normalises nanos
    except OverflowError:
        raise _Malformed(f"Time.MarshalJSON: year outside of range [0,9999] (seconds={seconds})") from None
    return format_time(dt)


def _fields_v1(raw: bytes) -> Any:
    """metav1.FieldsV1 {1 Raw}: its JSON form is the raw JSON document itself."""
    data = b""
    for num, wire, value in _fields(raw, FIELDS_V1):
        if num == 1:
            if wire != _LEN:
                raise _Malformed(f"proto: wrong wireType = {wire} for field Raw")
            data = value
    if not data:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise _Malformed(f"FieldsV1 is not JSON: {e}") from None


def _int_or_string(raw: bytes) -> int | str:
    out: dict[str, Any] = {"type": 0, "intVal": 0, "strVal": ""}
    for num, wire, value in _fields(raw, INT_OR_STRING):
        f = _INT_OR_STRING.get(num)
        if f is None:
            continue
        if wire != f.wire:
            raise _Malformed(f"proto: wrong wireType = {wire} for field {f.name[:1].upper()}{f.name[1:]}")
        out[f.name] = _scalar(f, value)
    return out["strVal"] if out["type"] == 1 else out["intVal"]


def _unmodelled(message: str, num: int, wire: int, value: Any) -> None:
    """A field this module has no schema for: fine when it holds Go's zero value, 400 otherwise."""
    if message in _STRICT and value not in (0, b""):
        raise _Malformed(
            f"{message} field {num} (wire type {wire}) is not supported in protobuf by this test API "
            "server; send the object as JSON"
        )


def _decode_fields(buf: bytes, message: str) -> dict[str, Any]:
    """Decode one message into its JSON form."""
    schema = _MESSAGES[message]
    scalars: dict[int, Any] = {}
    lists: dict[int, list] = {}
    maps: dict[int, dict] = {}
    nested: dict[int, bytes] = {}  # non-repeated messages: repeated occurrences merge (concatenate)
    for num, wire, value in _fields(buf, message):
        f = schema.get(num)
        if f is None:
            _unmodelled(message, num, wire, value)
            continue  # unknown fields are skipped, as the generated Go code does
        if wire != f.wire:
            raise _Malformed(f"proto: wrong wireType = {wire} for field {f.name[:1].upper()}{f.name[1:]}")
        if f.type in _MAPS:
            k, v = _map_entry(f, value)
            maps.setdefault(num, {})[k] = v
        elif f.repeated:
            item = _decode_fields(value, f.type) if f.is_message else _scalar(f, value)
            lists.setdefault(num, []).append(item)
        elif f.is_message or f.type == INT_OR_STRING:
            nested[num] = nested.get(num, b"") + value
        else:
            scalars[num] = _scalar(f, value)

    out: dict[str, Any] = {}
    for num, f in schema.items():
        if f.type in _MAPS:
            if maps.get(num):
                out[f.name] = maps[num]
        elif f.type == INT_OR_STRING:
            if num in nested:
                v = _int_or_string(nested[num])
                # A zero IntOrString (non-pointer, omitempty) is dropped: defaulting fills it.
                if f.mode == POINTER or v not in (0, ""):
                    out[f.name] = v
        elif f.repeated:
            if lists.get(num):
                out[f.name] = lists[num]
        elif f.type == TIME:
            if num in nested and (t := _time(nested[num])) is not None:
                out[f.name] = t
        elif f.type == FIELDS_V1:
            if num in nested:
                out[f.name] = _fields_v1(nested[num])
        elif f.is_message:
            if num in nested or f.mode == ALWAYS:
                out[f.name] = _decode_fields(nested.get(num, b""), f.type)
        elif num in scalars:
            v = scalars[num]
            if f.mode != OMITEMPTY or v != _ZERO[f.type]:
                out[f.name] = v
        elif f.mode == ALWAYS:
            out[f.name] = _ZERO[f.type]
    return out


def _summary(data: bytes, limit: int = 30) -> str:
    # apiserver's summarizeData: the first bytes of the body, hex-encoded for non-JSON bodies.
    if not data:
        return "<empty>"
    return data[:limit].hex() + (" ..." if len(data) > limit else "")


def decode(data: bytes, api_version: str = "", kind: str = "") -> dict[str, Any]:
    """Decode a protobuf request body into the object's JSON form (with ``apiVersion`` and ``kind``).

    ``api_version`` / ``kind`` are the endpoint's: they default an envelope that leaves them empty (as
    the Go serializer does) and name the expected type in error messages like the real server's.
    Raises ``StatusError`` 400 for malformed bodies and 415 for kinds outside :data:`KINDS`.
    """
    target = kind or "the requested kind"

    def unrecognized(err: str) -> StatusError:
        return errors.bad_request(
            f"the object provided is unrecognized (must be of type {target}): {err} ({_summary(data)})"
        )

    if not data:
        raise unrecognized("empty data")
    if not data.startswith(MAGIC):
        raise unrecognized(
            f"provided data does not appear to be a protobuf message, expected prefix {list(MAGIC)}"
        )
    try:
        body_version, body_kind, raw = _envelope(data[len(MAGIC) :])
    except _Malformed as e:
        raise unrecognized(str(e)) from None
    body_kind = body_kind or kind
    body_version = body_version or api_version
    if not body_kind:
        raise unrecognized("Object 'Kind' is missing in the protobuf envelope")
    if (body_version, body_kind) not in KINDS:
        raise errors.unsupported_media_type(JSON_MEDIA)
    try:
        obj = _decode_fields(raw, body_kind)
    except _Malformed as e:
        version = parse_group_version(body_version).version
        raise errors.bad_request(
            f'{body_kind} in version "{version}" cannot be handled as a {target}: {e}'
        ) from None
    return {"apiVersion": body_version, "kind": body_kind, **obj}


def _envelope(buf: bytes) -> tuple[str, str, bytes]:
    api_version = kind = ""
    type_meta = raw = b""
    for num, wire, value in _fields(buf, "Unknown"):
        if num not in _UNKNOWN:
            continue
        if wire != _LEN:
            raise _Malformed(f"proto: wrong wireType = {wire} for field {_UNKNOWN[num]}")
        if num == 1:
            type_meta += value
        elif num == 2:
            raw = value
    for num, wire, value in _fields(type_meta, "TypeMeta"):
        if num not in _TYPE_META:
            continue
        if wire != _LEN:
            raise _Malformed(f"proto: wrong wireType = {wire} for field {_TYPE_META[num]}")
        if num == 1:
            api_version = _text(value)
        else:
            kind = _text(value)
    return api_version, kind, raw


# -- encoding (tests) ---------------------------------------------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _put_len(out: bytearray, num: int, payload: bytes) -> None:
    _put_varint(out, num << 3 | _LEN)
    _put_varint(out, len(payload))
    out += payload


def _encode_time(value: str | None) -> bytes:
    dt = parse_time(value)
    if dt is None:
        return b""
    delta = dt - _EPOCH
    return _encode_fields(
        {"seconds": delta.days * 86400 + delta.seconds, "nanos": delta.microseconds * 1000}, TIME, False
    )


def _encode_value(f: _Field, value: Any, go_zeros: bool) -> bytes | int:
    if f.type == TIME:
        return _encode_time(value)
    if f.type == INT_OR_STRING:
        out = bytearray()
        if isinstance(value, str):
            _put_varint(out, 1 << 3 | _VARINT)
            _put_varint(out, 1)
            _put_len(out, 3, value.encode())
        else:
            _put_varint(out, 2 << 3 | _VARINT)
            _put_varint(out, int(value))
        return bytes(out)
    if f.type == FIELDS_V1:
        raw = bytearray()
        _put_len(raw, 1, orjson.dumps(value))
        return bytes(raw)
    if f.is_message:
        return _encode_fields(value or {}, f.type, go_zeros)
    if f.type == STRING:
        return value.encode()
    return int(value)


def _encode_fields(obj: dict[str, Any], message: str, go_zeros: bool) -> bytes:
    out = bytearray()
    for num, f in sorted(_MESSAGES[message].items()):
        value = obj.get(f.name)
        if f.type in _MAPS:
            for k, v in sorted((value or {}).items()):
                entry = bytearray()
                _put_len(entry, 1, k.encode())
                if f.type == MAP_STRING:
                    payload = v.encode()
                elif f.type == MAP_QUANTITY:
                    quantity = bytearray()
                    _put_len(quantity, 1, v.encode())
                    payload = bytes(quantity)
                elif f.type == MAP_BYTES:
                    payload = base64.b64decode(v)
                else:
                    items = bytearray()
                    for item in v:
                        _put_len(items, 1, item.encode())
                    payload = bytes(items)
                _put_len(entry, 2, payload)
                _put_len(out, num, bytes(entry))
            continue
        if f.repeated:
            for item in value or []:
                _put_len(out, num, _encode_value(f, item, go_zeros))  # type: ignore[arg-type]
            continue
        if value is None:
            # go-to-protobuf writes every non-pointer field, zero or not (what kubectl sends).
            if not go_zeros or f.mode == POINTER:
                continue
            if f.type == FIELDS_V1:
                continue  # a pointer in every kind here; never written when nil
            value = "" if f.type == TIME else {} if f.is_message else _ZERO.get(f.type, 0)
        encoded = _encode_value(f, value, go_zeros)
        if f.wire == _LEN:
            _put_len(out, num, encoded)  # type: ignore[arg-type]
        else:
            _put_varint(out, num << 3 | _VARINT)
            _put_varint(out, encoded)  # type: ignore[arg-type]
    return bytes(out)


def encode(obj: dict[str, Any], go_zeros: bool = False) -> bytes:
    """The protobuf body for ``obj`` (a dict in JSON form of one of :data:`KINDS`), magic included.

    ``go_zeros`` also writes the zero values of non-pointer fields that ``obj`` leaves out, as Go's
    generated marshallers do.
    """
    api_version, kind = obj["apiVersion"], obj["kind"]
    if (api_version, kind) not in KINDS:
        raise ValueError(f"no protobuf schema for {api_version} {kind}")
    type_meta = bytearray()
    _put_len(type_meta, 1, api_version.encode())
    _put_len(type_meta, 2, kind.encode())
    envelope = bytearray()
    _put_len(envelope, 1, bytes(type_meta))
    _put_len(envelope, 2, _encode_fields(obj, kind, go_zeros))
    if go_zeros:
        _put_len(envelope, 3, b"")
        _put_len(envelope, 4, b"")
    return MAGIC + bytes(envelope)
