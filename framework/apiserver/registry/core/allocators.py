"""Service cluster IPs and node ports, allocated as kube-apiserver's Service registry does.

kube-apiserver gives every Service but ``ExternalName`` and headless ones (``clusterIP: None``) an
address from ``--service-cluster-ip-range`` (default ``10.96.0.0/12``, the first address going to
``default/kubernetes``), and ``NodePort``/``LoadBalancer`` ports a node port from
``--service-node-port-range`` (30000-32767) — ``pkg/registry/core/service/storage/alloc.go``. Nothing
routes to these addresses here; they exist so Services look as they do in a cluster (``kubectl get
svc`` shows a CLUSTER-IP, clients reading ``spec.clusterIP`` get one).

What is taken is read from the stored Services, so a restart or a delete frees addresses without any
bookkeeping of its own.
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from framework.apiserver.machinery.errors import FieldError, invalid_value

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
KUBERNETES_SERVICE_IP = "10.96.0.1"  # the first address: default/kubernetes
NODE_PORTS = range(30000, 32768)


def _taken(services: dict[Any, dict], skip: Any) -> tuple[set[str], set[int]]:
    ips: set[str] = set()
    ports: set[int] = set()
    for key, svc in services.items():
        if key == skip:
            continue
        spec = svc.get("spec") or {}
        ips.update(ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip and ip != "None")
        ports.update(
            p["nodePort"] for p in spec.get("ports") or [] if isinstance(p, dict) and p.get("nodePort")
        )
    return ips, ports


def allocate(services: dict[Any, dict], key: Any, obj: dict, old: dict | None) -> list[FieldError]:
    """Fill ``spec.clusterIP(s)``, IP families and node ports of a Service being written.

    ``services`` are the stored Services (``key`` is this one's, skipped); on update the allocated
    values of ``old`` are kept when the new spec leaves them out (kube-apiserver's
    ``patchAllocatedValues``) and may not change. Returns field errors for addresses that cannot be had.
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    old_spec = (old or {}).get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    errs: list[FieldError] = []
    ips, ports = _taken(services, key)
    if kind == "ExternalName":
        return errs
    if old is not None and old_spec.get("type") != "ExternalName":
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
        for field in ("ipFamilies", "ipFamilyPolicy"):
            if not spec.get(field) and old_spec.get(field):
                spec[field] = old_spec[field]
        if (old_spec.get("clusterIP") or "") != (spec.get("clusterIP") or ""):
            errs.append(
                invalid_value("spec.clusterIPs[0]", spec.get("clusterIP") or "", "may not change once set")
            )
            return errs
    ip = spec.get("clusterIP") or (spec.get("clusterIPs") or [""])[0]
    if not ip:
        ip = _free_ip(ips)
    elif ip != "None" and (old is None or old_spec.get("clusterIP") != ip):
        errs.extend(_check_ip(ip, ips))
    spec["clusterIP"] = ip
    spec["clusterIPs"] = [ip]
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    if kind in ("NodePort", "LoadBalancer"):
        old_ports = {
            (p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_spec.get("ports") or []
        }
        for i, port in enumerate(spec.get("ports") or []):
            if not isinstance(port, dict):
                continue
            node_port = port.get("nodePort") or old_ports.get((port.get("port"), port.get("protocol")))
            if not node_port:
                node_port = _free_port(ports)
            elif node_port not in NODE_PORTS:
                errs.append(
                    invalid_value(
                        f"spec.ports[{i}].nodePort",
                        node_port,
                        f"provided port is not in the valid range. The range of valid ports is "
                        f"{NODE_PORTS.start}-{NODE_PORTS.stop - 1}",
                    )
                )
            elif node_port in ports and node_port != old_ports.get((port.get("port"), port.get("protocol"))):
                errs.append(
                    invalid_value(
                        f"spec.ports[{i}].nodePort", node_port, "provided port is already allocated"
                    )
                )
            port["nodePort"] = node_port
            ports.add(node_port)
    return errs


def _check_ip(ip: str, taken: set[str]) -> list[FieldError]:
    field = "spec.clusterIPs"
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return [
            invalid_value(f"{field}[0]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
        ]
    if addr not in SERVICE_CIDR:
        return [
            invalid_value(
                field,
                [ip],
                f"failed to allocate IP {ip}: provided IP is not in the valid range. The range of valid IPs "
                f"is {SERVICE_CIDR}",
            )
        ]
    if ip in taken:
        return [invalid_value(field, [ip], f"failed to allocate IP {ip}: provided IP is already allocated")]
    return []


def _free_ip(taken: set[str]) -> str:
    first, size = int(SERVICE_CIDR.network_address), SERVICE_CIDR.num_addresses
    while True:  # a /12 has a million addresses: a random pick almost never collides
        ip = str(ipaddress.ip_address(first + random.randrange(2, size - 1)))
        if ip not in taken:
            return ip


def _free_port(taken: set[int]) -> int:
    free = [p for p in NODE_PORTS if p not in taken]
    return random.choice(free) if free else NODE_PORTS.start
