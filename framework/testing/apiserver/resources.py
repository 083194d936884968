"""The resource types the server serves: built-in kinds (spec §17) and custom resources (§16).

A :class:`ResourceType` is one resource in one group/version, with the per-kind rules the generic
REST code needs: scope, subresources, generation tracking, PUT semantics, name rules, field selectors,
strategic-merge strategies and the kind's own defaulting and validation hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from framework.meta.labels import label_selector_as_selector
from framework.meta.object import get_labels

from . import allocators, event_conversion, timefmt, validation
from .crd.definition import (
    default_crd,
    has_status_subresource,
    selectable_fields,
    served_versions,
    version_entry,
)
from .crd.definition_validation import validate_crd
from .crd.values import as_dict
from .errors import FieldError, duplicate, invalid_value, not_supported, required
from .kinds.core.podspec import is_int as _int
from .kinds.core.podspec import validate_pod_spec
from .patch import BUILTIN_SMP_STRATEGIES

PERSISTED_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)

Hook = Callable[[dict, dict | None], None]
Validator = Callable[[dict, dict | None], list[FieldError]]


@dataclass(eq=False)
class ResourceType:
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    tracks_generation: bool = False
    # Top-level keys whose change bumps generation; None means everything but metadata (6-4).
    generation_keys: tuple[str, ...] | None = None
    put_requires_rv: bool = False
    put_creates: bool = False
    name_rule: str = "subdomain"
    verbs: tuple[str, ...] = PERSISTED_VERBS
    storage: str = ""  # key of the shared storage table; two views (events) share one
    supports_gc: bool = True
    time_fields: tuple[str, ...] = ()
    microtime_fields: tuple[str, ...] = ()
    normalize: Hook | None = None  # defaulting/normalising on create (old None) and update
    validate: Validator | None = None
    fields: Callable[[dict], dict[str, str]] | None = None  # extra field-selector values
    field_names: tuple[str, ...] = ()
    smp: dict[str, Any] | None = None  # None: strategic merge patch not supported (CRs)
    crd: dict | None = None  # the CRD a custom resource type comes from
    # Conversion between this view and the stored form (events.k8s.io ↔ core/v1 Event).
    to_storage: Callable[[dict], dict] | None = None
    from_storage: Callable[[dict], dict] | None = None
    persisted: bool = True
    # The kind registers its own field-label conversion (core Event, Namespace, Secret, Service; every
    # custom resource): unknown fields say "field label not supported" instead of the default text.
    own_field_labels: bool = False
    # Values the registry allocates from what is stored (Service cluster IPs and node ports):
    # ``allocate(stored objects, key, new, old)`` → field errors.
    allocate: Callable[[dict, Any, dict, dict | None], list[FieldError]] | None = None
    # An immediate DELETE answers the deleted object, not a Status (the store's ReturnDeletedObject).
    returns_deleted_object: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.storage:
            self.storage = self.qualified

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``plural`` for the core group, ``plural.group`` otherwise (the ``RES`` of spec 5-3)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def list_kind(self) -> str:
        if self.crd:
            return self.crd["spec"]["names"].get("listKind") or self.kind + "List"
        return self.kind + "List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def is_custom(self) -> bool:
        return self.crd is not None

    def selectable_fields(self) -> tuple[str, ...]:
        base = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        if not self.is_custom and not (self.own_field_labels and not self.namespaced):
            base = ("metadata.name", "metadata.namespace")
        return base + self.field_names

    def field_set(self, obj: dict) -> dict[str, str]:
        meta = obj.get("metadata", {})
        out = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
        if self.fields:
            out.update(self.fields(obj))
        return out


# --- kind hooks ------------------------------------------------------------------------------------


def _role_normalize(obj: dict, old: dict | None) -> None:
    """Go's ``[]PolicyRule`` without omitempty: no rules (absent or empty) serialize as ``null`` (19-1)."""
    if not obj.get("rules"):
        obj["rules"] = None


def _namespace_normalize(obj: dict, old: dict | None) -> None:
    meta = obj["metadata"]
    labels = meta.setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = meta["name"]  # 6-11
    if old is None:
        spec = as_dict(obj.get("spec"))
        fins = list(spec.get("finalizers") or [])
        if "kubernetes" not in fins:
            fins.append("kubernetes")
        obj["spec"] = {**spec, "finalizers": fins}
        obj["status"] = {"phase": "Active"}
    elif not isinstance(obj.get("status"), dict) or not obj["status"].get("phase"):
        # SetDefaults_NamespaceStatus: the status is a struct, its empty phase defaults to Active
        # (a /status update with ``status: null`` or ``{}``).
        obj["status"] = {**(obj.get("status") or {}), "phase": "Active"}


def _namespace_fields(obj: dict) -> dict[str, str]:
    return {"status.phase": obj.get("status", {}).get("phase", ""), "name": obj["metadata"]["name"]}


def _secret_fields(obj: dict) -> dict[str, str]:
    return {"type": obj.get("type", "")}


def _secret_normalize(obj: dict, old: dict | None) -> None:
    validation.normalize_secret(obj)


def _sa_normalize(obj: dict, old: dict | None) -> None:
    validation.normalize_service_account(obj)


def _rq_normalize(obj: dict, old: dict | None) -> None:
    if old is None:
        obj.pop("status", None)


def _webhook_normalize(mutating: bool) -> Hook:
    def hook(obj: dict, old: dict | None) -> None:
        validation.default_webhook_configuration(obj, mutating)

    return hook


def _crd_normalize(obj: dict, old: dict | None) -> None:
    default_crd(obj)
    if old is None:
        obj["status"] = {
            "acceptedNames": {"kind": "", "plural": ""},
            "conditions": [],
            "storedVersions": [],
        }


# Deployment and Service are stored only (no workload controllers, no cluster IPs): enough upstream
# defaulting and validation for manifests to apply and round-trip, nothing that needs a controller.


def _deployment_normalize(obj: dict, old: dict | None) -> None:
    """apps/v1 ``SetDefaults_Deployment`` (not the pod template's defaults) and the registry strategy:
    status starts empty; annotations are copied to ReplicaSets upstream, so changing them bumps
    ``generation`` like a spec change does (the spec comparison itself is the generic one)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        strategy = spec.get("strategy")
        if not isinstance(strategy, dict):
            strategy = spec["strategy"] = {}
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if not isinstance(rolling, dict):
                rolling = strategy["rollingUpdate"] = {}
            for key in ("maxUnavailable", "maxSurge"):
                if rolling.get(key) is None:
                    rolling[key] = "25%"
        for key, default in (("revisionHistoryLimit", 10), ("progressDeadlineSeconds", 600)):
            if spec.get(key) is None:
                spec[key] = default
        template = spec.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])
    if old is None:
        obj["status"] = {}
        return
    meta, old_meta = obj["metadata"], old.get("metadata", {})
    if obj.get("spec") == old.get("spec") and (meta.get("annotations") or {}) != (
        old_meta.get("annotations") or {}
    ):
        meta["generation"] = old_meta.get("generation", 0) + 1


def default_pod_spec(pod: dict) -> None:
    """core/v1 ``SetDefaults_PodSpec`` and its containers', ports', probes' and volumes' defaults, as a
    pod template in a workload gets them (the Pod-only defaults, e.g. ``enableServiceLinks``, excluded)."""
    for key, default in (
        ("restartPolicy", "Always"),
        ("dnsPolicy", "ClusterFirst"),
        ("schedulerName", "default-scheduler"),
    ):
        if not pod.get(key):
            pod[key] = default
    if pod.get("terminationGracePeriodSeconds") is None:
        pod["terminationGracePeriodSeconds"] = 30
    if pod.get("securityContext") is None:
        pod["securityContext"] = {}
    for key in ("initContainers", "containers"):
        for c in pod.get(key) or []:
            if isinstance(c, dict):
                _default_container(c)
    for volume in pod.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        for source in ("secret", "configMap", "downwardAPI", "projected"):
            if isinstance(volume.get(source), dict) and volume[source].get("defaultMode") is None:
                volume[source]["defaultMode"] = 420


def _default_container(c: dict) -> None:
    if not c.get("imagePullPolicy"):
        image = c.get("image") or ""
        tag = image.rsplit("/", 1)[-1]
        latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
        c["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("resources") is None:
        c["resources"] = {}
    for port in c.get("ports") or []:
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"
    for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(probe_key)
        if not isinstance(probe, dict):
            continue
        for key, default in (
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ):
            if not probe.get(key):
                probe[key] = default
        http = probe.get("httpGet")
        if isinstance(http, dict):
            http.setdefault("path", "/")
            http.setdefault("scheme", "HTTP")


# Pods, ReplicationControllers, DaemonSets, Jobs and APIServices are stored only as well: no kubelet runs
# a Pod (it stays Pending), no controller creates Pods, no aggregated API server sits behind an
# APIService. Their defaults are upstream's, so what clients read back looks as in a cluster.


def _pod_normalize(obj: dict, old: dict | None) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_pod_spec(spec)
        if spec.get("enableServiceLinks") is None:
            spec["enableServiceLinks"] = True  # SetDefaults_Pod: Pods only, not templates
    if old is None:
        containers = (spec or {}).get("containers") or [] if isinstance(spec, dict) else []
        has_resources = any((c.get("resources") or {}) for c in containers if isinstance(c, dict))
        obj["status"] = {"phase": "Pending", "qosClass": "Burstable" if has_resources else "BestEffort"}


def _pod_fields(obj: dict) -> dict[str, str]:
    spec = as_dict(obj.get("spec"))
    status = as_dict(obj.get("status"))
    return {
        "spec.nodeName": spec.get("nodeName") or "",
        "spec.restartPolicy": spec.get("restartPolicy") or "",
        "spec.schedulerName": spec.get("schedulerName") or "",
        "spec.serviceAccountName": spec.get("serviceAccountName") or "",
        "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
        "status.phase": status.get("phase") or "",
        "status.podIP": status.get("podIP") or "",
        "status.nominatedNodeName": status.get("nominatedNodeName") or "",
    }


def _pod_validate(obj: dict, old: dict | None) -> list[FieldError]:
    return validate_pod_spec(obj.get("spec"), "spec")


def _template_normalize(status: dict, spec_defaults: dict) -> Hook:
    """Workload kinds with a pod template: spec defaults, the template's, and status on create."""

    def hook(obj: dict, old: dict | None) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            for key, default in spec_defaults.items():
                if spec.get(key) is None:
                    spec[key] = orjson.loads(orjson.dumps(default))
            template = spec.get("template")
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                default_pod_spec(template["spec"])
            if obj.get("kind") == "ReplicationController" and not spec.get("selector"):
                labels = ((template or {}).get("metadata") or {}).get("labels") if template else None
                if labels:
                    spec["selector"] = dict(labels)  # SetDefaults_ReplicationController
        if old is None:
            obj["status"] = orjson.loads(orjson.dumps(status))

    return hook


def _template_validate(obj: dict, old: dict | None) -> list[FieldError]:
    """ReplicationController and DaemonSet templates: a valid pod spec restarting Always."""
    template = as_dict(as_dict(obj.get("spec")).get("template"))
    return validate_pod_spec(template.get("spec"), "spec.template.spec", ("Always",))


def _rc_fields(obj: dict) -> dict[str, str]:
    return {"status.replicas": str((obj.get("status") or {}).get("replicas") or 0)}


def _node_fields(obj: dict) -> dict[str, str]:
    return {"spec.unschedulable": "true" if (obj.get("spec") or {}).get("unschedulable") else "false"}


def _apiservice_normalize(obj: dict, old: dict | None) -> None:
    """Status starts empty (no kubelet or aggregated server reports one)."""
    if old is None:
        obj["status"] = {}


def _deployment_validate(obj: dict, old: dict | None) -> list[FieldError]:
    """The parts of ``ValidateDeployment`` a manifest can get wrong: replicas, selector, template."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    for key in ("replicas", "revisionHistoryLimit", "progressDeadlineSeconds", "minReadySeconds"):
        value = spec.get(key)
        if value is not None and (not _int(value) or value < 0):
            errs.append(invalid_value(f"spec.{key}", value, "must be greater than or equal to 0"))
    template = as_dict(spec.get("template"))
    labels = get_labels(template)
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(
            required("spec.selector")
            if selector is None
            else invalid_value("spec.selector", selector, "empty selector is invalid for deployment")
        )
    else:
        selector_errs = validation.validate_label_selector(selector, "spec.selector")
        errs += selector_errs
        try:
            matches = label_selector_as_selector(selector).matches(labels)
        except ValueError:
            matches = bool(selector_errs)  # already reported
        if not matches:
            errs.append(
                invalid_value(
                    "spec.template.metadata.labels", labels, "`selector` does not match template `labels`"
                )
            )
    errs += validate_pod_spec(template.get("spec"), "spec.template.spec", ("Always",))
    if old is not None and (old.get("spec") or {}).get("selector") != selector:
        errs.append(invalid_value("spec.selector", selector, "field is immutable"))
    return errs


_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def _service_normalize(obj: dict, old: dict | None) -> None:
    """core/v1 ``SetDefaults_Service`` (allocation is ``allocators.allocate``); status starts empty on
    create."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        kind = spec.setdefault("type", "ClusterIP")
        affinity = spec.setdefault("sessionAffinity", "None")
        if affinity == "ClientIP":
            config = spec.setdefault("sessionAffinityConfig", {})
            client_ip = config.setdefault("clientIP", {}) if isinstance(config, dict) else {}
            if isinstance(client_ip, dict):
                client_ip.setdefault("timeoutSeconds", 10800)
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                if not port.get("protocol"):
                    port["protocol"] = "TCP"
                if port.get("targetPort") in (None, 0, "") and "port" in port:
                    port["targetPort"] = port["port"]
        if kind in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if kind != "ExternalName" and not spec.get("internalTrafficPolicy"):
            spec["internalTrafficPolicy"] = "Cluster"
        if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
    if old is None:
        obj["status"] = {"loadBalancer": {}}


def _service_fields(obj: dict) -> dict[str, str]:
    spec = as_dict(obj.get("spec"))
    return {"spec.clusterIP": spec.get("clusterIP") or "", "spec.type": spec.get("type") or ""}


def _service_validate(obj: dict, old: dict | None) -> list[FieldError]:
    """The parts of ``ValidateService`` a manifest can get wrong: type, ports, externalName."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    kind = spec.get("type", "ClusterIP")
    if kind not in _SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, _SERVICE_TYPES))
    if kind == "ExternalName" and not spec.get("externalName"):
        errs.append(required("spec.externalName"))
    ports = spec.get("ports") or []
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        errs.append(required("spec.ports"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        path = f"spec.ports[{i}]"
        port = port if isinstance(port, dict) else {}
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            errs.append(required(f"{path}.name"))
        elif name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(name)
        number = port.get("port")
        if not _int(number) or not 0 < number < 65536:
            errs.append(invalid_value(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
        if port.get("protocol", "TCP") not in _PROTOCOLS:
            errs.append(not_supported(f"{path}.protocol", port.get("protocol"), _PROTOCOLS))
        target = port.get("targetPort")
        if _int(target) and not 0 < target < 65536:
            errs.append(invalid_value(f"{path}.targetPort", target, "must be between 1 and 65535, inclusive"))
        elif target is not None and not _int(target) and not (isinstance(target, str) and target):
            errs.append(invalid_value(f"{path}.targetPort", target, "must contain at least one letter"))
    return errs


def _core_event_fields(obj: dict) -> dict[str, str]:
    return event_conversion.event_field_set(obj)


CORE_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

EVENT_TIME_FIELDS = ("firstTimestamp", "lastTimestamp")
EVENT_MICROTIME_FIELDS = ("eventTime", "series.lastObservedTime")


def _event_normalize(obj: dict, old: dict | None) -> None:
    event_conversion.add_zero_fields(obj)


def _core_event_validate(obj: dict, old: dict | None) -> list[FieldError]:
    return validation.validate_event(obj, created_via_events_v1=False, old_core=old)


def _events_v1_validate(obj: dict, old: dict | None) -> list[FieldError]:
    # Hooks run on the stored (core) form; the events.k8s.io view adds its stricter rules.
    return validation.validate_event(
        obj, created_via_events_v1=old is None, old_core=old, updated_via_events_v1=old is not None
    )


def _rbac_validator(fn: Callable[..., list[FieldError]], cluster: bool, binding: bool) -> Validator:
    if binding:
        return lambda obj, old: fn(obj, cluster, old)
    return lambda obj, old: fn(obj, cluster)


def _builtin() -> list[ResourceType]:
    smp = BUILTIN_SMP_STRATEGIES
    rbac = "rbac.authorization.k8s.io"
    return [
        ResourceType(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            "namespace",
            short_names=("ns",),
            subresources=("status", "finalize"),
            name_rule="label",
            # No deletecollection: kube-apiserver's namespace storage does not implement it.
            verbs=tuple(v for v in PERSISTED_VERBS if v != "deletecollection"),
            normalize=_namespace_normalize,
            validate=lambda o, old: validation.validate_namespace(o),
            fields=_namespace_fields,
            field_names=("status.phase", "name"),
            own_field_labels=True,
            smp=smp["Namespace"],
            time_fields=("status.conditions[].lastTransitionTime",),
        ),
        ResourceType(
            "",
            "v1",
            "configmaps",
            "ConfigMap",
            True,
            "configmap",
            short_names=("cm",),
            validate=validation.validate_configmap,
            smp=smp["ConfigMap"],
        ),
        ResourceType(
            "",
            "v1",
            "secrets",
            "Secret",
            True,
            "secret",
            normalize=_secret_normalize,
            validate=validation.validate_secret,
            fields=_secret_fields,
            field_names=("type",),
            own_field_labels=True,
            smp=smp["Secret"],
        ),
        ResourceType(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            True,
            "serviceaccount",
            short_names=("sa",),
            subresources=("token",),
            returns_deleted_object=True,
            normalize=_sa_normalize,
            validate=lambda o, old: validation.validate_service_account(o),
            smp=smp["ServiceAccount"],
        ),
        ResourceType(
            "",
            "v1",
            "resourcequotas",
            "ResourceQuota",
            True,
            "resourcequota",
            short_names=("quota",),
            subresources=("status",),
            returns_deleted_object=True,
            normalize=_rq_normalize,
            validate=lambda o, old: validation.validate_resource_quota(o),
            smp=smp["ResourceQuota"],
        ),
        ResourceType(
            "",
            "v1",
            "services",
            "Service",
            True,
            "service",
            short_names=("svc",),
            categories=("all",),
            subresources=("status",),
            name_rule="dns1035",
            returns_deleted_object=True,
            normalize=_service_normalize,
            allocate=allocators.allocate,
            validate=_service_validate,
            fields=_service_fields,
            field_names=("spec.clusterIP", "spec.type"),
            own_field_labels=True,
            smp=smp["Service"],
            time_fields=("status.conditions[].lastTransitionTime",),
        ),
        ResourceType(
            "",
            "v1",
            "events",
            "Event",
            True,
            "event",
            short_names=("ev",),
            put_creates=True,
            supports_gc=False,
            normalize=_event_normalize,
            validate=_core_event_validate,
            fields=_core_event_fields,
            field_names=CORE_EVENT_FIELDS,
            own_field_labels=True,
            smp=smp["Event"],
            storage="events",
            time_fields=EVENT_TIME_FIELDS,
            microtime_fields=EVENT_MICROTIME_FIELDS,
        ),
        ResourceType(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            True,
            "event",
            short_names=("ev",),
            put_creates=True,
            supports_gc=False,
            normalize=_event_normalize,
            validate=_events_v1_validate,
            fields=_core_event_fields,
            field_names=CORE_EVENT_FIELDS,
            own_field_labels=True,
            smp=smp["Event"],
            storage="events",
            time_fields=EVENT_TIME_FIELDS,
            microtime_fields=EVENT_MICROTIME_FIELDS,
            to_storage=event_conversion.events_v1_to_core,
            from_storage=event_conversion.stored_to_events_v1,
        ),
        ResourceType(
            rbac,
            "v1",
            "roles",
            "Role",
            True,
            "role",
            put_creates=True,
            name_rule="path",
            normalize=_role_normalize,
            validate=_rbac_validator(validation.validate_role, False, False),
            smp=smp["Role"],
        ),
        ResourceType(
            rbac,
            "v1",
            "rolebindings",
            "RoleBinding",
            True,
            "rolebinding",
            put_creates=True,
            name_rule="path",
            validate=_rbac_validator(validation.validate_binding, False, True),
            smp=smp["RoleBinding"],
        ),
        ResourceType(
            rbac,
            "v1",
            "clusterroles",
            "ClusterRole",
            False,
            "clusterrole",
            put_creates=True,
            name_rule="path",
            normalize=_role_normalize,
            validate=_rbac_validator(validation.validate_role, True, False),
            smp=smp["ClusterRole"],
        ),
        ResourceType(
            rbac,
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            False,
            "clusterrolebinding",
            put_creates=True,
            name_rule="path",
            validate=_rbac_validator(validation.validate_binding, True, True),
            smp=smp["ClusterRoleBinding"],
        ),
        ResourceType(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            True,
            "lease",
            put_requires_rv=True,
            put_creates=True,
            validate=lambda o, old: validation.validate_lease(o),
            smp=smp["Lease"],
            microtime_fields=("spec.acquireTime", "spec.renewTime"),
        ),
        ResourceType(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            True,
            "deployment",
            short_names=("deploy",),
            categories=("all",),
            subresources=("status",),
            tracks_generation=True,
            generation_keys=("spec",),
            normalize=_deployment_normalize,
            validate=_deployment_validate,
            smp=smp["Deployment"],
            time_fields=("status.conditions[].lastUpdateTime", "status.conditions[].lastTransitionTime"),
        ),
        ResourceType(
            "",
            "v1",
            "pods",
            "Pod",
            True,
            "pod",
            short_names=("po",),
            categories=("all",),
            subresources=("status",),
            returns_deleted_object=True,
            normalize=_pod_normalize,
            validate=_pod_validate,
            fields=_pod_fields,
            field_names=tuple(_pod_fields({})),
            own_field_labels=True,
            smp=smp["Pod"],
            time_fields=("status.conditions[].lastTransitionTime", "status.startTime"),
        ),
        ResourceType(
            "",
            "v1",
            "replicationcontrollers",
            "ReplicationController",
            True,
            "replicationcontroller",
            short_names=("rc",),
            categories=("all",),
            subresources=("status",),
            tracks_generation=True,
            generation_keys=("spec",),
            normalize=_template_normalize({"replicas": 0}, {"replicas": 1}),
            validate=_template_validate,
            fields=_rc_fields,
            field_names=("status.replicas",),
            own_field_labels=True,
            smp=smp["ReplicationController"],
            time_fields=("status.conditions[].lastTransitionTime",),
        ),
        ResourceType(
            "apps",
            "v1",
            "daemonsets",
            "DaemonSet",
            True,
            "daemonset",
            short_names=("ds",),
            categories=("all",),
            subresources=("status",),
            tracks_generation=True,
            generation_keys=("spec",),
            normalize=_template_normalize(
                {
                    "currentNumberScheduled": 0,
                    "desiredNumberScheduled": 0,
                    "numberMisscheduled": 0,
                    "numberReady": 0,
                },
                {
                    "updateStrategy": {
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                    },
                    "revisionHistoryLimit": 10,
                },
            ),
            validate=_template_validate,
            smp=smp["DaemonSet"],
            time_fields=("status.conditions[].lastTransitionTime",),
        ),
        ResourceType(
            "",
            "v1",
            "nodes",
            "Node",
            False,
            "node",
            short_names=("no",),
            subresources=("status",),
            normalize=_apiservice_normalize,  # status starts empty: no kubelet reports
            fields=_node_fields,
            field_names=("spec.unschedulable",),
            own_field_labels=True,
            smp=smp["Node"],
            time_fields=(
                "status.conditions[].lastTransitionTime",
                "status.conditions[].lastHeartbeatTime",
            ),
        ),
        ResourceType(
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            "APIService",
            False,
            "apiservice",
            categories=("api-extensions",),
            subresources=("status",),
            normalize=_apiservice_normalize,
            smp=smp["APIService"],
            time_fields=("status.conditions[].lastTransitionTime",),
        ),
        ResourceType(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            False,
            "validatingwebhookconfiguration",
            tracks_generation=True,
            generation_keys=("webhooks",),
            put_requires_rv=True,
            normalize=_webhook_normalize(False),
            validate=lambda o, old: validation.validate_webhook_configuration(o, False),
            smp=smp["ValidatingWebhookConfiguration"],
        ),
        ResourceType(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            False,
            "mutatingwebhookconfiguration",
            tracks_generation=True,
            generation_keys=("webhooks",),
            put_requires_rv=True,
            normalize=_webhook_normalize(True),
            validate=lambda o, old: validation.validate_webhook_configuration(o, True),
            smp=smp["MutatingWebhookConfiguration"],
        ),
        ResourceType(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            "customresourcedefinition",
            short_names=("crd", "crds"),
            categories=("api-extensions",),
            subresources=("status",),
            tracks_generation=True,
            generation_keys=("spec",),
            put_requires_rv=True,
            normalize=_crd_normalize,
            validate=validate_crd,
            smp=smp["CustomResourceDefinition"],
            time_fields=("status.conditions[].lastTransitionTime",),
        ),
        # Review APIs: create-only, never stored (§22).
        _review("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", False),
        _review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False),
        _review("authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", True),
        _review("authentication.k8s.io", "tokenreviews", "TokenReview", False),
        _review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", False),
    ]


def _review(group: str, resource: str, kind: str, namespaced: bool) -> ResourceType:
    return ResourceType(
        group,
        "v1",
        resource,
        kind,
        namespaced,
        kind.lower(),
        verbs=CREATE_ONLY,
        persisted=False,
        supports_gc=False,
    )


BUILTIN: list[ResourceType] = _builtin()


def custom_resource_types(crd: dict) -> list[ResourceType]:
    """One :class:`ResourceType` per served version of an established CRD (16-4)."""
    spec = crd["spec"]
    names = spec["names"]
    group = spec["group"]
    out = []
    for version in served_versions(crd):
        subs: tuple[str, ...] = ("status",) if has_status_subresource(crd, version) else ()
        entry = version_entry(crd, version) or {}
        if (entry.get("subresources") or {}).get("scale") is not None:
            subs += ("scale",)
        selectable = tuple(selectable_fields(crd, version))
        out.append(
            ResourceType(
                group,
                version,
                names["plural"],
                names["kind"],
                spec["scope"] == "Namespaced",
                names.get("singular") or names["kind"].lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=subs,
                tracks_generation=True,
                put_requires_rv=True,
                crd=crd,
                field_names=selectable,
                own_field_labels=True,
                fields=_selectable_getter(selectable) if selectable else None,
                storage=f"{names['plural']}.{group}",
            )
        )
    return out


def _selectable_getter(paths: tuple[str, ...]) -> Callable[[dict], dict[str, str]]:
    def get(obj: dict) -> dict[str, str]:
        out = {}
        for p in paths:
            cur: Any = obj
            for part in p.split("."):
                cur = cur.get(part) if isinstance(cur, dict) else None
            if cur is not None:
                out[p] = (
                    cur if isinstance(cur, str) else str(cur).lower() if isinstance(cur, bool) else str(cur)
                )
        return out

    return get


def normalize_times(rt: ResourceType, obj: dict) -> None:
    """Normalise Time / MicroTime fields of the kind (6-12); raises 400 for undecodable values."""
    if rt.time_fields or rt.microtime_fields:
        timefmt.normalize_object_times(
            obj, rt.time_fields, rt.microtime_fields, kind=rt.kind, version=rt.version
        )
