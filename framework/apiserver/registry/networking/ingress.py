"""networking.k8s.io/v1 Ingress: stored only (no ingress controller writes ``status.loadBalancer``);
upstream's validation and printer columns (``pkg/apis/networking/validation``)."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.meta import field
from framework.meta.validation import is_dns1035_label, is_dns1123_subdomain

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_INVALID_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_SUFFIXES = ("/..", "/.")


def normalize(obj: dict, old: dict | None) -> None:
    if old is None:
        obj["status"] = {"loadBalancer": {}}


def validate_backend(backend: dict, path: str) -> list[FieldError]:
    """``validateIngressBackend``: a service (name and port name or number) or a resource, not both."""
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [field.invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        resource = as_dict(resource)
        return [field.required(f"{path}.resource.{k}") for k in ("kind", "name") if not resource.get(k)]
    if service is None:
        return [field.invalid(path, "", "resource or service backend is required")]
    service = as_dict(service)
    errs: list[FieldError] = []
    name = service.get("name")
    if not name:
        errs.append(field.required(f"{path}.service.name"))
    else:
        errs += [field.invalid(f"{path}.service.name", name, m) for m in is_dns1035_label(str(name))]
    port = as_dict(service.get("port"))
    port_name, number = port.get("name"), port.get("number")
    if port_name and number:
        errs.append(field.invalid(path, "", "cannot set both port name & port number"))
    elif number:
        if not is_int(number) or not 0 < number < 65536:
            errs.append(
                field.invalid(f"{path}.service.port.number", number, "must be between 1 and 65535, inclusive")
            )
    elif not port_name:
        errs.append(field.required(path, "port name or number is required"))
    return errs


def validate_http_path(p: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    path_type, value = p.get("pathType"), p.get("path") or ""
    if path_type is None:
        errs.append(field.required(f"{path}.pathType", "pathType must be specified"))
    elif path_type not in PATH_TYPES:
        errs.append(field.not_supported(f"{path}.pathType", path_type, list(PATH_TYPES)))
    elif path_type in ("Exact", "Prefix") or value:
        if not str(value).startswith("/"):
            errs.append(field.invalid(f"{path}.path", value, "must be an absolute path"))
        elif path_type != "ImplementationSpecific":
            for seq in _INVALID_SEQUENCES:
                if seq in value:
                    errs.append(field.invalid(f"{path}.path", value, f"must not contain '{seq}'"))
            for suffix in _INVALID_SUFFIXES:
                if value.endswith(suffix):
                    errs.append(field.invalid(f"{path}.path", value, f"cannot end with '{suffix}'"))
    errs += validate_backend(as_dict(p.get("backend")), f"{path}.backend")
    return errs


def validate_host(host: str, path: str) -> list[FieldError]:
    try:
        ipaddress.ip_address(host)
        return [field.invalid(path, host, "must be a DNS name, not an IP address")]
    except ValueError:
        pass
    name = host[2:] if host.startswith("*.") else host
    return [field.invalid(path, host, m) for m in is_dns1123_subdomain(name)]


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateIngressSpec``: a default backend or rules; hosts, paths, path types and backends."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    rules = spec.get("rules") or []
    if spec.get("defaultBackend") is not None:
        errs += validate_backend(as_dict(spec["defaultBackend"]), "spec.defaultBackend")
    elif not rules:
        errs.append(field.invalid("spec", spec, "either `defaultBackend` or `rules` must be specified"))
    for i, rule in enumerate(rules):
        rule, path = as_dict(rule), f"spec.rules[{i}]"
        if rule.get("host"):
            errs += validate_host(str(rule["host"]), f"{path}.host")
        http = rule.get("http")
        if http is None:
            continue
        paths = as_dict(http).get("paths") or []
        if not paths:
            errs.append(field.required(f"{path}.http.paths"))
        for j, p in enumerate(paths):
            errs += validate_http_path(as_dict(p), f"{path}.http.paths[{j}]")
    class_name = spec.get("ingressClassName")
    if class_name is not None:
        errs += [
            field.invalid("spec.ingressClassName", class_name, m)
            for m in is_dns1123_subdomain(str(class_name))
        ]
    return errs


def _hosts(rules: list) -> str:
    hosts = [as_dict(r).get("host") or "*" for r in rules]
    if not hosts:
        return "*"
    text = ",".join(hosts[:4])
    return text + (f" + {len(hosts) - 4} more..." if len(hosts) > 4 else "")


def _cells(ing: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(ing.get("spec")), as_dict(ing.get("status"))
    addresses = [
        as_dict(i).get("ip") or as_dict(i).get("hostname") or ""
        for i in as_dict(status.get("loadBalancer")).get("ingress") or []
    ]
    return [
        printing.name(ing),
        spec.get("ingressClassName") or "<none>",
        _hosts(spec.get("rules") or []),
        ",".join(addresses),
        "80, 443" if spec.get("tls") else "80",
        printing.age(ing, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Class", "The name of the IngressClass resource that should be used"),
        printing.col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
        printing.col("Address", "Address is a list containing ingress points for the load-balancer"),
        printing.col("Ports", "Ports of TLS configurations that open"),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "networking.k8s.io",
        "v1",
        "ingresses",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
