"""What a Pod update may change: ``ValidatePodUpdate`` of kube-apiserver 1.32
(``pkg/apis/core/validation/validation.go``).

Only container and init-container images, ``activeDeadlineSeconds`` (set once, then only lowered),
tolerations (additions, and ``tolerationSeconds`` of existing ones), ``terminationGracePeriodSeconds``
(to 1 from a negative value), removals of scheduling gates and, while the Pod is gated, additions to
its ``nodeSelector``. Anything else is the 422 ``spec: Forbidden: pod updates may not change fields
other than ...`` followed by a diff of the specs. Upstream prints that diff with go-cmp on the internal
``core.PodSpec``, whose output go-cmp deliberately keeps unstable (it varies its whitespace at random);
ours has its layout (``-``/``+`` lines with Go field names, runs of equal fields elided) and names the
same fields, and the sentence before it is exact.
"""

from __future__ import annotations

from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry.rest.objects import deep_copy
from framework.meta import field
from framework.meta.strconv import quote

UPDATABLE = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )
)

MAX_INT32 = 2**31 - 1

# core.PodSpec's fields in declaration order (the internal type go-cmp prints), by their v1 JSON name.
# The v1 host namespace flags live in the internal PodSecurityContext.
GO_FIELDS = (
    ("volumes", "Volumes"),
    ("initContainers", "InitContainers"),
    ("containers", "Containers"),
    ("ephemeralContainers", "EphemeralContainers"),
    ("restartPolicy", "RestartPolicy"),
    ("terminationGracePeriodSeconds", "TerminationGracePeriodSeconds"),
    ("activeDeadlineSeconds", "ActiveDeadlineSeconds"),
    ("dnsPolicy", "DNSPolicy"),
    ("nodeSelector", "NodeSelector"),
    ("serviceAccountName", "ServiceAccountName"),
    ("automountServiceAccountToken", "AutomountServiceAccountToken"),
    ("nodeName", "NodeName"),
    ("securityContext", "SecurityContext"),
    ("imagePullSecrets", "ImagePullSecrets"),
    ("hostname", "Hostname"),
    ("subdomain", "Subdomain"),
    ("setHostnameAsFQDN", "SetHostnameAsFQDN"),
    ("affinity", "Affinity"),
    ("schedulerName", "SchedulerName"),
    ("tolerations", "Tolerations"),
    ("hostAliases", "HostAliases"),
    ("priorityClassName", "PriorityClassName"),
    ("priority", "Priority"),
    ("preemptionPolicy", "PreemptionPolicy"),
    ("dnsConfig", "DNSConfig"),
    ("readinessGates", "ReadinessGates"),
    ("runtimeClassName", "RuntimeClassName"),
    ("overhead", "Overhead"),
    ("enableServiceLinks", "EnableServiceLinks"),
    ("topologySpreadConstraints", "TopologySpreadConstraints"),
    ("os", "OS"),
    ("schedulingGates", "SchedulingGates"),
    ("resourceClaims", "ResourceClaims"),
    ("resources", "Resources"),
)
HOST_FLAGS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers")
POINTERS = frozenset(
    {
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "automountServiceAccountToken",
        "setHostnameAsFQDN",
        "priority",
        "preemptionPolicy",
        "runtimeClassName",
        "enableServiceLinks",
        "securityContext",
        "affinity",
        "dnsConfig",
        "os",
        "resources",
    }
)


def validate_pod_update(new: dict, old: dict) -> list[FieldError]:
    """The update rules of ``ValidatePodUpdate`` on the specs of ``new`` and the stored ``old``."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    errs: list[FieldError] = []
    for key in ("containers", "initContainers"):
        found, stop = _container_updates(spec.get(key) or [], old_spec.get(key) or [], f"spec.{key}")
        errs += found
        if stop:
            return errs
    deadline, old_deadline = spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        if isinstance(deadline, int) and not 0 <= deadline <= MAX_INT32:
            errs.append(
                field.invalid(
                    "spec.activeDeadlineSeconds", deadline, f"must be between 0 and {MAX_INT32}, inclusive"
                )
            )
            return errs
        if isinstance(old_deadline, int) and isinstance(deadline, int) and old_deadline < deadline:
            errs.append(
                field.invalid(
                    "spec.activeDeadlineSeconds", deadline, "must be less than or equal to previous value"
                )
            )
            return errs
    elif old_deadline is not None:
        errs.append(
            field.invalid(
                "spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"
            )
        )
    errs += _only_added_tolerations(spec.get("tolerations") or [], old_spec.get("tolerations") or [])
    errs += _only_deleted_gates(spec.get("schedulingGates") or [], old_spec.get("schedulingGates") or [])
    if spec == old_spec:
        return errs
    munged = deep_copy(spec)
    for key in ("containers", "initContainers"):
        for c, o in zip(munged.get(key) or [], old_spec.get(key) or [], strict=False):
            if isinstance(c, dict) and isinstance(o, dict):
                _put(c, "image", o)
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _put(munged, key, old_spec)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if old_spec.get("schedulingGates"):  # a gated Pod may gain node selector terms
        selector, old_selector = as_dict(munged.get("nodeSelector")), as_dict(old_spec.get("nodeSelector"))
        if selector != old_selector:
            if any(selector.get(k) != v for k, v in old_selector.items()):
                errs.append(
                    field.invalid(
                        "spec.nodeSelector",
                        munged.get("nodeSelector"),
                        "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                    )
                )
            _put(munged, "nodeSelector", old_spec)
    if munged != old_spec:
        text = f"pod updates may not change fields other than {UPDATABLE}\n{spec_diff(old_spec, munged)}"
        errs.append(field.forbidden("spec", text))
    return errs


def _put(target: dict, key: str, source: dict) -> None:
    if key in source:
        target[key] = deep_copy(source[key])
    else:
        target.pop(key, None)


def _container_updates(new: list, old: list, path: str) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [field.forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, c in enumerate(as_dict(c) for c in new):
        image = c.get("image") or ""
        if not image:
            errs.append(field.required(f"{path}[{i}].image"))
        if isinstance(image, str) and image.strip() != image:
            errs.append(
                field.invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace")
            )
    return errs, False


def _only_added_tolerations(new: list, old: list) -> list[FieldError]:
    for existing in old:
        base = {k: v for k, v in as_dict(existing).items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in as_dict(t).items() if k != "tolerationSeconds"} == base for t in new):
            return [
                field.forbidden(
                    "spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"
                )
            ]
    return []


def _only_deleted_gates(new: list, old: list) -> list[FieldError]:
    old_names = {as_dict(g).get("name") for g in old}
    added: dict[Any, int] = {}
    for i, gate in enumerate(new):
        added[as_dict(gate).get("name")] = i
    return [
        field.forbidden(
            f"spec.schedulingGates[{i}].name",
            f"only deletion is allowed, but found new scheduling gate '{name}'",
        )
        for name, i in added.items()
        if name not in old_names
    ]


# --- the diff ------------------------------------------------------------------------------------


def _internal(spec: dict) -> dict:
    """The v1 spec in the internal type's shape: the host flags inside the security context."""
    out = {k: v for k, v in spec.items() if k not in HOST_FLAGS and k != "serviceAccount"}
    flags = {k: spec[k] for k in HOST_FLAGS if spec.get(k) is not None}
    if flags:
        out["securityContext"] = {**flags, **as_dict(spec.get("securityContext"))}
    return out


def _go_name(key: str) -> str:
    return key[:1].upper() + key[1:]


def go_text(value: Any) -> str:
    """A value in the spirit of go-cmp's ``%v`` of a Go value: strings quoted, structs and lists in
    braces with Go field names, absent composite values ``nil``."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "{" + ", ".join(go_text(v) for v in value) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_go_name(k)}: {go_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _field_text(key: str, value: Any) -> str:
    if value is None:
        return '""' if key not in POINTERS and key in _STRINGS else "nil"
    text = go_text(value)
    return "&" + text if key in POINTERS else text


# String fields of core.PodSpec: absent reads as "" rather than nil.
_STRINGS = frozenset(
    {
        "restartPolicy",
        "dnsPolicy",
        "serviceAccountName",
        "nodeName",
        "hostname",
        "subdomain",
        "schedulerName",
        "priorityClassName",
    }
)


def spec_diff(old: dict, new: dict) -> str:
    """The two specs side by side: changed fields as ``-``/``+`` lines, equal runs elided."""
    a, b = _internal(old), _internal(new)
    lines = ["  core.PodSpec{"]
    equal = 0
    for key, name in GO_FIELDS:
        if a.get(key) == b.get(key):
            equal += 1
            continue
        if equal:
            lines.append(f"  \t... // {equal} identical fields")
            equal = 0
        lines.append(f"- \t{name}: {_field_text(key, a.get(key))},")
        lines.append(f"+ \t{name}: {_field_text(key, b.get(key))},")
    if equal:
        lines.append(f"  \t... // {equal} identical fields")
    lines.append("  }")
    return "\n".join(lines) + "\n"
