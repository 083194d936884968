"""``ValidatePodSpec``: the parts of a Pod's (or pod template's) spec a manifest most often gets wrong,
with Go's field paths and messages (``pkg/apis/core/validation/validation.go``). Used by Pods and every
workload's template."""

from __future__ import annotations

from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.meta import field
from framework.meta.quantity import quantity_from_json
from framework.meta.validation import is_dns1123_label, is_valid_port_name

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PROTOCOLS = ("SCTP", "TCP", "UDP")
_PORT_RANGE = "must be between 1 and 65535, inclusive"


def validate_pod_spec(
    pod: Any, path: str, restart_policies: tuple[str, ...] | None = None
) -> list[FieldError]:
    """Containers (names, images, ports, pull policy, mounts of declared volumes, requests within
    limits), volumes (names), restart and DNS policies of the PodSpec at ``path``; a workload's
    template passes the ``restart_policies`` its kind allows (then an unset one is refused too)."""
    pod = as_dict(pod)
    errs: list[FieldError] = []
    volumes: set[str] = set()
    for i, volume in enumerate(pod.get("volumes") or []):
        name = as_dict(volume).get("name")
        vpath = f"{path}.volumes[{i}].name"
        if not name:
            errs.append(field.required(vpath))
        elif name in volumes:
            errs.append(field.duplicate(vpath, name))
        else:
            errs += [field.invalid(vpath, name, m) for m in is_dns1123_label(str(name))]
            volumes.add(str(name))
    names: set[str] = set()
    containers = pod.get("containers")
    if not containers or not isinstance(containers, list):
        errs.append(field.required(f"{path}.containers"))
        containers = []
    for key, items in (("initContainers", pod.get("initContainers") or []), ("containers", containers)):
        for i, c in enumerate(items if isinstance(items, list) else []):
            errs += _container_errors(as_dict(c), f"{path}.{key}[{i}]", names, volumes)
    policy = pod.get("restartPolicy")
    allowed = restart_policies or RESTART_POLICIES
    if (policy is not None or restart_policies) and policy not in allowed:
        errs.append(field.not_supported(f"{path}.restartPolicy", policy, list(allowed)))
    dns = pod.get("dnsPolicy")
    if dns is not None and dns not in DNS_POLICIES:
        errs.append(field.not_supported(f"{path}.dnsPolicy", dns, list(DNS_POLICIES)))
    return errs


def _container_errors(c: dict, path: str, names: set[str], volumes: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    name = c.get("name")
    if not name:
        errs.append(field.required(f"{path}.name"))
    elif name in names:
        errs.append(field.duplicate(f"{path}.name", name))
    else:
        names.add(str(name))
        errs += [field.invalid(f"{path}.name", name, m) for m in is_dns1123_label(str(name))]
    if not c.get("image"):
        errs.append(field.required(f"{path}.image"))
    pull = c.get("imagePullPolicy")
    if pull is not None and pull not in PULL_POLICIES:
        errs.append(field.not_supported(f"{path}.imagePullPolicy", pull, list(PULL_POLICIES)))
    port_names: set[str] = set()
    for j, port in enumerate(c.get("ports") or []):
        port, ppath = as_dict(port), f"{path}.ports[{j}]"
        number = port.get("containerPort")
        if not is_int(number) or not 0 < number < 65536:
            errs.append(field.invalid(f"{ppath}.containerPort", number, _PORT_RANGE))
        host = port.get("hostPort")
        if host not in (None, 0) and (not is_int(host) or not 0 < host < 65536):
            errs.append(field.invalid(f"{ppath}.hostPort", host, _PORT_RANGE))
        if port.get("protocol") not in PROTOCOLS:
            errs.append(field.not_supported(f"{ppath}.protocol", port.get("protocol"), list(PROTOCOLS)))
        port_name = port.get("name")
        if port_name:
            if port_name in port_names:
                errs.append(field.duplicate(f"{ppath}.name", port_name))
            port_names.add(str(port_name))
            errs += [field.invalid(f"{ppath}.name", port_name, m) for m in is_valid_port_name(str(port_name))]
    for j, mount in enumerate(c.get("volumeMounts") or []):
        mount, mpath = as_dict(mount), f"{path}.volumeMounts[{j}]"
        mount_name = mount.get("name")
        if not mount_name:
            errs.append(field.required(f"{mpath}.name"))
        elif mount_name not in volumes:
            errs.append(field.not_found(f"{mpath}.name", mount_name))
        if not mount.get("mountPath"):
            errs.append(field.required(f"{mpath}.mountPath"))
    errs += _resources_errors(as_dict(c.get("resources")), f"{path}.resources")
    return errs


def _resources_errors(resources: dict, path: str) -> list[FieldError]:
    """Requests may not exceed limits (``ValidateResourceRequirements``)."""
    errs: list[FieldError] = []
    limits, requests = as_dict(resources.get("limits")), as_dict(resources.get("requests"))
    for resource, value in requests.items():
        if resource not in limits:
            continue
        try:
            request, limit = quantity_from_json(value), quantity_from_json(limits[resource])
        except ValueError:
            continue  # the quantity's own error is decoding's
        if request > limit:
            detail = f"must be less than or equal to {resource} limit of {limits[resource]}"
            errs.append(field.invalid(f"{path}.requests", str(value), detail))
    return errs
