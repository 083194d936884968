"""core/v1 Service: stored, with cluster IPs and node ports allocated (``allocators``); upstream's
defaulting (``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Service``) and the parts of
``ValidateService`` a manifest commonly gets wrong (``pkg/registry/core/service/strategy.go``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError, duplicate, invalid_value, not_supported, required
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.apiserver.registry.core import allocators
from framework.apiserver.registry.strategy import ResourceType

_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]


_PROTOCOLS = ["SCTP", "TCP", "UDP"]


def normalize(obj: dict, old: dict | None) -> None:
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


def fields(obj: dict) -> dict[str, str]:
    spec = as_dict(obj.get("spec"))
    return {"spec.clusterIP": spec.get("clusterIP") or "", "spec.type": spec.get("type") or ""}


def validate(obj: dict, old: dict | None) -> list[FieldError]:
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
        if not is_int(number) or not 0 < number < 65536:
            errs.append(invalid_value(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
        if port.get("protocol", "TCP") not in _PROTOCOLS:
            errs.append(not_supported(f"{path}.protocol", port.get("protocol"), _PROTOCOLS))
        target = port.get("targetPort")
        if is_int(target) and not 0 < target < 65536:
            errs.append(invalid_value(f"{path}.targetPort", target, "must be between 1 and 65535, inclusive"))
        elif target is not None and not is_int(target) and not (isinstance(target, str) and target):
            errs.append(invalid_value(f"{path}.targetPort", target, "must contain at least one letter"))
    return errs


NULLS = decoding.shape(
    {
        **decoding.structs("spec.ports[]", "status.loadBalancer.ingress[]"),
        **decoding.strings(
            "spec.selector{}",
            *(f"spec.{k}[]" for k in ("clusterIPs", "externalIPs", "ipFamilies", "loadBalancerSourceRanges")),
        ),
        **decoding.CONDITIONS,
    },
    keep=decoding.TRANSITION_TIME,
)


def _external_ip(svc: dict) -> str:
    """``getServiceExternalIP`` (wide: the server prints wide, so nothing is clipped)."""
    spec = as_dict(svc.get("spec"))
    external = [ip for ip in spec.get("externalIPs") or [] if isinstance(ip, str)]
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        balancer = as_dict(as_dict(svc.get("status")).get("loadBalancer"))
        ingress = [as_dict(i) for i in balancer.get("ingress") or []]
        ips = sorted(
            {str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname")}
        )
        return ",".join([*ips, *external]) or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def _service_cells(svc: dict, now: datetime) -> list[Any]:
    spec = as_dict(svc.get("spec"))
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = []
    for port in spec.get("ports") or []:
        port = as_dict(port)
        node = f":{port['nodePort']}" if port.get("nodePort") else ""
        ports.append(f"{port.get('port', '')}{node}/{port.get('protocol', 'TCP')}")
    selector = as_dict(spec.get("selector"))
    return [
        printing.name(svc),
        spec.get("type", ""),
        cluster_ips[0] if cluster_ips else "<none>",
        _external_ip(svc),
        ",".join(ports) or "<none>",
        printing.age(svc, now),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Type", "The type of the service"),
        printing.col("Cluster-IP", "The cluster IP of the service"),
        printing.col("External-IP", "The external IPs of the service"),
        printing.col("Port(s)", "The ports of the service"),
        printing.AGE,
        printing.col("Selector", "The label selector of the service", priority=1),
    ],
    _service_cells,
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "services",
        "Service",
        True,
        "service",
        null_shape=NULLS,
        short_names=("svc",),
        categories=("all",),
        subresources=("status",),
        name_rule="dns1035",
        returns_deleted_object=True,
        normalize=normalize,
        allocate=allocators.allocate,
        validate=validate,
        fields=fields,
        field_names=("spec.clusterIP", "spec.type"),
        own_field_labels=True,
        printer=PRINTER,
        time_fields=("status.conditions[].lastTransitionTime",),
    ),
]
