"""discovery.k8s.io/v1 EndpointSlice: stored only (no EndpointSlice controller); upstream's defaults,
validation and printer columns (``pkg/apis/discovery/validation``)."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.endpoints import endpoints_text, validate_port
from framework.apiserver.registry.podtemplate import immutable
from framework.meta import field
from framework.meta.validation import is_dns1123_subdomain

ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_ADDRESSES = 100
MAX_ENDPOINTS = 1000
MAX_PORTS = 100


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_EndpointPort``: an empty name and TCP."""
    for port in obj.get("ports") or []:
        if isinstance(port, dict):
            if port.get("name") is None:
                port["name"] = ""
            if port.get("protocol") is None:
                port["protocol"] = "TCP"


def _address_errors(address: Any, kind: str, path: str) -> list[FieldError]:
    text = address if isinstance(address, str) else ""
    if kind == "FQDN":
        return [field.invalid(path, address, m) for m in is_dns1123_subdomain(text)]
    try:
        parsed = ipaddress.ip_address(text)
    except ValueError:
        parsed = None
    if parsed is None or (kind == "IPv4") != (parsed.version == 4):
        return [field.invalid(path, address, f"must be a valid {kind} address")]
    return []


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateEndpointSlice``: address type, endpoints' addresses of that type, ports."""
    errs: list[FieldError] = []
    kind = obj.get("addressType")
    if not kind:
        errs.append(field.required("addressType"))
    elif kind not in ADDRESS_TYPES:
        errs.append(field.not_supported("addressType", kind, list(ADDRESS_TYPES)))
    endpoints = obj.get("endpoints") or []
    if len(endpoints) > MAX_ENDPOINTS:
        errs.append(field.too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    for i, ep in enumerate(endpoints):
        addresses = as_dict(ep).get("addresses") or []
        path = f"endpoints[{i}].addresses"
        if not addresses:
            errs.append(field.required(path, "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            errs.append(field.too_many(path, len(addresses), MAX_ADDRESSES))
        elif kind in ADDRESS_TYPES:
            for j, address in enumerate(addresses):
                errs += _address_errors(address, kind, f"{path}[{j}]")
    ports = obj.get("ports") or []
    if len(ports) > MAX_PORTS:
        errs.append(field.too_many("ports", len(ports), MAX_PORTS))
    for i, port in enumerate(ports):
        port = as_dict(port)
        path = f"ports[{i}]"
        if port.get("port") is None:  # a slice may leave the port open (all ports)
            port = {**port, "port": 1}
        errs += validate_port(port, path, False)
    if old is not None and kind:
        errs += immutable(kind, old.get("addressType"), "addressType")
    return errs


def _cells(slice_: dict, now: datetime) -> list[Any]:
    ports = [as_dict(p).get("port") for p in slice_.get("ports") or []]
    if not ports:
        port_text = "<unset>"
    else:
        shown = ",".join("<unset>" if p is None else str(p) for p in ports[:3])
        port_text = shown + (f" + {len(ports) - 3} more..." if len(ports) > 3 else "")
    addresses = [a for ep in slice_.get("endpoints") or [] for a in as_dict(ep).get("addresses") or []]
    return [
        printing.name(slice_),
        slice_.get("addressType", ""),
        port_text,
        endpoints_text(addresses),
        printing.age(slice_, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("AddressType", "The type of address held by the EndpointSlice"),
        printing.col("Ports", "The ports of the EndpointSlice"),
        printing.col("Endpoints", "The addresses of the endpoints"),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
