"""networking.k8s.io/v1 NetworkPolicy: stored only (no network plugin enforces it); upstream's
defaults, validation and printer columns."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.meta import field
from framework.meta.labels import validate_label_selector

POLICY_TYPES = ("Egress", "Ingress")
PROTOCOLS = ("SCTP", "TCP", "UDP")
_CIDR_DETAIL = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_NetworkPolicy``: TCP ports; policy types Ingress, plus Egress when there are
    egress rules."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in as_dict(rule).get("ports") or []:
                if isinstance(port, dict) and not port.get("protocol"):
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])


def _peer_errors(peer: dict, path: str) -> list[FieldError]:
    selectors = [k for k in ("podSelector", "namespaceSelector") if peer.get(k) is not None]
    errs: list[FieldError] = []
    for key in selectors:
        errs += list(validate_label_selector(peer[key], f"{path}.{key}"))
    block = peer.get("ipBlock")
    if block is not None:
        if selectors:
            errs.append(field.forbidden(path, "may not specify both ipBlock and another peer"))
        cidr = as_dict(block).get("cidr")
        if not cidr:
            errs.append(field.required(f"{path}.ipBlock.cidr"))
        else:
            try:
                network = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                errs.append(field.invalid(f"{path}.ipBlock.cidr", cidr, _CIDR_DETAIL))
            else:
                for k, ex in enumerate(as_dict(block).get("except") or []):
                    try:
                        inner = ipaddress.ip_network(ex, strict=False)
                    except ValueError:
                        errs.append(field.invalid(f"{path}.ipBlock.except[{k}]", ex, _CIDR_DETAIL))
                        continue
                    if inner.version != network.version or not inner.subnet_of(network):  # type: ignore[arg-type]
                        errs.append(
                            field.invalid(
                                f"{path}.ipBlock.except[{k}]", ex, "must be a strict subset of `cidr`"
                            )
                        )
    elif not selectors:
        errs.append(field.required(path, "must specify a peer"))
    return errs


def _port_errors(port: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol not in PROTOCOLS:
        errs.append(field.not_supported(f"{path}.protocol", protocol, list(PROTOCOLS)))
    number, end = port.get("port"), port.get("endPort")
    if is_int(number) and not 0 < number < 65536:
        errs.append(field.invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
    if end is not None:
        if not is_int(number):
            errs.append(field.required(f"{path}.port", "must be specified when endPort is specified"))
        elif not is_int(end) or end < number:
            errs.append(field.invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
    return errs


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``: selectors, peers, ports and policy types."""
    spec = as_dict(obj.get("spec"))
    errs = list(validate_label_selector(as_dict(spec.get("podSelector")), "spec.podSelector"))
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            rule, path = as_dict(rule), f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.get("ports") or []):
                errs += _port_errors(as_dict(port), f"{path}.ports[{j}]")
            for j, peer in enumerate(rule.get(peers_key) or []):
                errs += _peer_errors(as_dict(peer), f"{path}.{peers_key}[{j}]")
    types = spec.get("policyTypes") or []
    for i, t in enumerate(types):
        if t not in POLICY_TYPES:
            errs.append(field.not_supported(f"spec.policyTypes[{i}]", t, list(POLICY_TYPES)))
    if len(types) > 2:
        errs.append(field.invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return errs


def _cells(np: dict, now: datetime) -> list[Any]:
    selector = as_dict(as_dict(np.get("spec")).get("podSelector"))
    text = printing.selector_text(selector) if selector else ""
    return [printing.name(np), text or "<none>", printing.age(np, now)]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Pod-Selector", "Select the pods this network policy applies to"),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
