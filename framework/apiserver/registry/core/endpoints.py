"""v1 Endpoints: stored only (no endpoints controller fills them from Services); upstream's defaults,
validation and printer columns."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.meta import field
from framework.meta.validation import is_dns1123_label

PROTOCOLS = ("SCTP", "TCP", "UDP")
_IP_DETAIL = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_PORT_RANGE = "must be between 1 and 65535, inclusive"


def default_ports(ports: Any) -> None:
    """``SetDefaults_EndpointPort``: TCP."""
    for port in ports or []:
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"


def normalize(obj: dict, old: dict | None) -> None:
    for subset in obj.get("subsets") or []:
        if isinstance(subset, dict):
            default_ports(subset.get("ports"))


def validate_port(port: dict, path: str, require_name: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    name = port.get("name")
    if require_name and not name:
        errs.append(field.required(f"{path}.name"))
    elif name:
        errs += [field.invalid(f"{path}.name", name, msg) for msg in is_dns1123_label(str(name))]
    number = port.get("port")
    if not is_int(number) or not 0 < number < 65536:
        errs.append(field.invalid(f"{path}.port", number, _PORT_RANGE))
    protocol = port.get("protocol")
    if protocol not in PROTOCOLS:
        errs.append(field.not_supported(f"{path}.protocol", protocol, list(PROTOCOLS)))
    return errs


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateEndpoints``: addresses are IPs, ports in range with a protocol (named when several)."""
    errs: list[FieldError] = []
    for i, subset in enumerate(obj.get("subsets") or []):
        subset = as_dict(subset)
        path = f"subsets[{i}]"
        for key in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(key) or []):
                ip = as_dict(address).get("ip")
                try:
                    ipaddress.ip_address(ip if isinstance(ip, str) else "")
                except ValueError:
                    errs.append(field.invalid(f"{path}.{key}[{j}].ip", ip, _IP_DETAIL))
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs += validate_port(as_dict(port), f"{path}.ports[{j}]", len(ports) > 1)
    return errs


def endpoints_text(addresses: list[str], limit: int = 3) -> str:
    """``formatEndpoints``/``formatDiscoveryEndpoints``: the first three, then ``+ N more...``."""
    if not addresses:
        return "<none>"
    text = ",".join(addresses[:limit])
    return text + (f" + {len(addresses) - limit} more..." if len(addresses) > limit else "")


def _cells(ep: dict, now: datetime) -> list[Any]:
    out: list[str] = []
    for subset in ep.get("subsets") or []:
        subset = as_dict(subset)
        ports = subset.get("ports") or [{}]
        for port in ports:
            for address in subset.get("addresses") or []:
                ip = as_dict(address).get("ip", "")
                number = as_dict(port).get("port")
                out.append(f"{ip}:{number}" if number is not None else ip)
    return [printing.name(ep), endpoints_text(out), printing.age(ep, now)]


PRINTER: printing.Printer = (
    [printing.NAME, printing.col("Endpoints", "Endpoints of the service"), printing.AGE],
    _cells,
)

STRATEGIES = [
    strategy(
        "",
        "v1",
        "endpoints",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
