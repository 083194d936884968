"""The protobuf messages we decode (field numbers from kubernetes/api ``*/v1/generated.proto`` and
kubernetes/apimachinery ``pkg/apis/meta/v1/generated.proto``, JSON modes from the Go struct tags), the
kinds whose bodies are decoded, and the ``runtime.Unknown`` envelope."""

from __future__ import annotations

from .fields import (
    ALWAYS,
    BOOL,
    FIELDS_V1,
    INT32,
    INT64,
    INT_OR_STRING,
    MAP_BYTES,
    MAP_EXTRA,
    MAP_QUANTITY,
    MAP_STRING,
    OMITEMPTY,
    POINTER,
    STRING,
    TIME,
    Field,
)


def _s(name: str, mode: str = OMITEMPTY) -> Field:
    return Field(name, STRING, mode=mode)


def _strings(name: str) -> Field:
    return Field(name, STRING, repeated=True)


def _msg(name: str, type_: str, pointer: bool = False) -> Field:
    return Field(name, type_, mode=POINTER if pointer else ALWAYS)


def _msgs(name: str, type_: str) -> Field:
    return Field(name, type_, repeated=True)


def _i32(name: str, mode: str = OMITEMPTY) -> Field:
    return Field(name, INT32, mode=mode)


def _bool(name: str, mode: str = OMITEMPTY) -> Field:
    return Field(name, BOOL, mode=mode)


_META = _msg("metadata", "ObjectMeta")

# message name → field number → field. Field numbers from kubernetes/api */v1/generated.proto and
# kubernetes/apimachinery pkg/apis/meta/v1/generated.proto; JSON modes from the Go struct tags.
MESSAGES: dict[str, dict[int, Field]] = {
    # -- apimachinery meta/v1 ------------------------------------------------------------------------
    TIME: {1: Field("seconds", INT64), 2: Field("nanos", INT32)},
    FIELDS_V1: {},  # {1 Raw bytes}, decoded by _fields_v1
    "ObjectMeta": {
        1: _s("name"),
        2: _s("generateName"),
        3: _s("namespace"),
        4: _s("selfLink"),
        5: _s("uid"),
        6: _s("resourceVersion"),
        7: Field("generation", INT64),
        8: Field("creationTimestamp", TIME),
        9: Field("deletionTimestamp", TIME, mode=POINTER),
        10: Field("deletionGracePeriodSeconds", INT64, mode=POINTER),
        11: Field("labels", MAP_STRING),
        12: Field("annotations", MAP_STRING),
        13: _msgs("ownerReferences", "OwnerReference"),
        14: _strings("finalizers"),
        17: _msgs("managedFields", "ManagedFieldsEntry"),
    },
    "OwnerReference": {
        5: _s("apiVersion", ALWAYS),
        1: _s("kind", ALWAYS),
        3: _s("name", ALWAYS),
        4: _s("uid", ALWAYS),
        6: Field("controller", BOOL, mode=POINTER),
        7: Field("blockOwnerDeletion", BOOL, mode=POINTER),
    },
    "ManagedFieldsEntry": {
        1: _s("manager"),
        2: _s("operation"),
        3: _s("apiVersion"),
        4: Field("time", TIME, mode=POINTER),
        6: _s("fieldsType"),
        7: Field("fieldsV1", FIELDS_V1, mode=POINTER),
        8: _s("subresource"),
    },
    "LabelSelector": {
        1: Field("matchLabels", MAP_STRING),
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
        4: Field("lastTransitionTime", TIME),
        5: _s("reason"),
        6: _s("message"),
    },
    "ConfigMap": {
        1: _META,
        4: Field("immutable", BOOL, mode=POINTER),
        2: Field("data", MAP_STRING),
        3: Field("binaryData", MAP_BYTES),
    },
    "Secret": {
        1: _META,
        5: Field("immutable", BOOL, mode=POINTER),
        2: Field("data", MAP_BYTES),
        4: Field("stringData", MAP_STRING),
        3: _s("type"),
    },
    "ServiceAccount": {
        1: _META,
        2: _msgs("secrets", "ObjectReference"),
        3: _msgs("imagePullSecrets", "LocalObjectReference"),
        4: Field("automountServiceAccountToken", BOOL, mode=POINTER),
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
        5: Field("extra", MAP_EXTRA),
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
        1: Field("allowed", BOOL, mode=ALWAYS),
        4: Field("denied", BOOL),
        2: _s("reason"),
        3: _s("evaluationError"),
    },
    # -- authentication/v1 ---------------------------------------------------------------------------
    "TokenRequest": {1: _META, 2: _msg("spec", "TokenRequestSpec"), 3: _msg("status", "TokenRequestStatus")},
    "TokenRequestSpec": {
        1: _strings("audiences"),
        4: Field("expirationSeconds", INT64, mode=POINTER),
        3: _msg("boundObjectRef", "BoundObjectReference", pointer=True),
    },
    "BoundObjectReference": {1: _s("kind"), 2: _s("apiVersion"), 3: _s("name"), 4: _s("uid")},
    "TokenRequestStatus": {1: _s("token", ALWAYS), 2: Field("expirationTimestamp", TIME)},
    "SelfSubjectReview": {1: _META, 2: _msg("status", "SelfSubjectReviewStatus")},
    "SelfSubjectReviewStatus": {1: _msg("userInfo", "UserInfo")},
    "UserInfo": {1: _s("username"), 2: _s("uid"), 3: _strings("groups"), 4: Field("extra", MAP_EXTRA)},
    # -- core/v1 Service and ResourceQuota, apps/v1 Deployment (kubectl create service|quota|deployment)
    "Service": {1: _META, 2: _msg("spec", "ServiceSpec"), 3: _msg("status", "ServiceStatus")},
    "ServiceSpec": {
        1: _msgs("ports", "ServicePort"),
        2: Field("selector", MAP_STRING),
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
        4: Field("targetPort", INT_OR_STRING),
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
        1: Field("hard", MAP_QUANTITY),
        2: _strings("scopes"),
        3: _msg("scopeSelector", "ScopeSelector", pointer=True),
    },
    "ScopeSelector": {1: _msgs("matchExpressions", "ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: _s("scopeName", ALWAYS),
        2: _s("operator", ALWAYS),
        3: _strings("values"),
    },
    "ResourceQuotaStatus": {1: Field("hard", MAP_QUANTITY), 2: Field("used", MAP_QUANTITY)},
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
        1: Field("maxUnavailable", INT_OR_STRING, mode=POINTER),
        2: Field("maxSurge", INT_OR_STRING, mode=POINTER),
    },
    # The server resets a Deployment's status on create and keeps it on update: none of it is read.
    "DeploymentStatus": {},
    "PodTemplateSpec": {1: _META, 2: _msg("spec", "PodSpec")},
    "PodSpec": {
        20: _msgs("initContainers", "Container"),
        2: _msgs("containers", "Container"),
        3: _s("restartPolicy"),
        4: Field("terminationGracePeriodSeconds", INT64, mode=POINTER),
        5: Field("activeDeadlineSeconds", INT64, mode=POINTER),
        6: _s("dnsPolicy"),
        7: Field("nodeSelector", MAP_STRING),
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
    "ResourceRequirements": {1: Field("limits", MAP_QUANTITY), 2: Field("requests", MAP_QUANTITY)},
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
STRICT = frozenset(
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
INT_OR_STRING_FIELDS = {1: Field("type", INT64), 2: Field("intVal", INT32), 3: Field("strVal", STRING)}

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
UNKNOWN = {1: "typeMeta", 2: "raw", 3: "contentEncoding", 4: "contentType"}
TYPE_META = {1: "apiVersion", 2: "kind"}


def decodable(api_version: str, kind: str) -> bool:
    """Whether protobuf bodies of this kind are decoded (else such a body is a 415)."""
    return (api_version, kind) in KINDS
