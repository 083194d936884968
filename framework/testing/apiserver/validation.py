"""Field validation of the built-in kinds, with kube-apiserver 1.32's rules and message texts.

Every validator is pure: it takes JSON-shaped dicts (already defaulted and with times normalized)
and returns a list of :class:`FieldError`; the caller turns a non-empty list into ``422 Invalid``
(spec 5-3). Rules and texts follow ``k8s.io/apimachinery/pkg/util/validation``,
``pkg/api/validation/objectmeta.go`` and the per-group ``pkg/apis/*/validation`` packages.

Metadata is validated separately from the kind rules: the caller runs
:func:`validate_object_meta` (create) or :func:`validate_object_meta_update` (update) with the
kind's name rule next to ``validate_<kind>``. Upstream's generic registry runs the kind's own
validation first and the common metadata pass (path-segment name rule) only if that passed; Events
rely on this, because core/v1 Events do not validate their metadata in the kind strategy at all.

Where Go prints a value with ``%#v`` or a ``String()`` method (structs, quantities, times), the
error carries that rendering verbatim (:class:`~framework.meta.field.GoText`); pointers inside
structs are shown as ``(*bool)(true)`` rather than a memory address.
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from framework.meta import time as meta_time
from framework.meta.field import GoText
from framework.meta.labels import validate_label_selector, validate_labels
from framework.meta.object import get_metadata, get_namespace
from framework.meta.quantity import ERR_FORMAT_WRONG, parse_quantity
from framework.meta.validation import (
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_path_segment_prefix,
    is_qualified_name,
)
from framework.testing.apiserver.errors import (
    FieldError,
    duplicate,
    forbidden,
    go_value,
    invalid_value,
    not_supported,
    required,
    too_long,
    type_invalid,
)
from framework.testing.apiserver.jsonvalues import is_int

FIELD_IMMUTABLE = "field is immutable"
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
MAX_SECRET_SIZE = 1024 * 1024  # also the ConfigMap limit
RBAC_GROUP = "rbac.authorization.k8s.io"
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")


def _go_invalid(field: str, rendered: str, detail: str) -> FieldError:
    """An ``Invalid value`` error whose value is already Go-rendered text, printed unquoted."""
    return invalid_value(field, GoText(rendered), detail)


# --- Go value renderings ---------------------------------------------------------------------------


def go_time_string(value: str | None) -> str:
    """``time.Time.String()`` of a normalized RFC 3339 value (UTC), as field errors print times."""
    return meta_time.go_time_string(meta_time.parse_time(value))


def _go_struct(type_name: str, fields: list[tuple[str, str]]) -> str:
    return type_name + "{" + ", ".join(f"{k}:{v}" for k, v in fields) + "}"


def _go_bool_ptr(value: Any) -> str:
    return "(*bool)(nil)" if value is None else f"(*bool)({'true' if value else 'false'})"


def _go_str_field(obj: dict, key: str) -> str:
    return go_value(str(obj.get(key) or ""))


def _go_owner_reference(ref: dict) -> str:
    return _go_struct(
        "v1.OwnerReference",
        [
            ("APIVersion", _go_str_field(ref, "apiVersion")),
            ("Kind", _go_str_field(ref, "kind")),
            ("Name", _go_str_field(ref, "name")),
            ("UID", _go_str_field(ref, "uid")),
            ("Controller", _go_bool_ptr(ref.get("controller"))),
            ("BlockOwnerDeletion", _go_bool_ptr(ref.get("blockOwnerDeletion"))),
        ],
    )


_OBJECT_REFERENCE_FIELDS = [
    ("Kind", "kind"),
    ("Namespace", "namespace"),
    ("Name", "name"),
    ("UID", "uid"),
    ("APIVersion", "apiVersion"),
    ("ResourceVersion", "resourceVersion"),
    ("FieldPath", "fieldPath"),
]


def _go_object_reference(ref: dict | None) -> str:
    ref = ref or {}
    return _go_struct(
        "core.ObjectReference", [(g, _go_str_field(ref, j)) for g, j in _OBJECT_REFERENCE_FIELDS]
    )


# --- name rules (the rules themselves are framework.meta.validation's) ---------------------------------


def _mask_trailing_dash(name: str) -> str:
    """Upstream's ``maskTrailingDash`` (generateName prefixes may end in ``-``), bug included."""
    return name[:-2] + "a" if name.endswith("-") else name


_NAME_RULES = {
    "subdomain": (is_dns1123_subdomain, lambda p: is_dns1123_subdomain(_mask_trailing_dash(p))),
    "label": (is_dns1123_label, lambda p: is_dns1123_label(_mask_trailing_dash(p))),
    "dns1035": (is_dns1035_label, lambda p: is_dns1035_label(_mask_trailing_dash(p))),  # Service
    "path": (is_path_segment_name, is_path_segment_prefix),
}


# --- metadata ----------------------------------------------------------------------------------------


def validate_annotations(annotations: dict | None, field: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys like label keys (case-insensitive), ≤256 KiB in total."""
    errs: list[FieldError] = []
    total = 0
    for key, value in (annotations or {}).items():
        errs.extend(invalid_value(field, key, m) for m in is_qualified_name(key.lower()))
        total += len(key.encode()) + len(str(value or "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _api_version_has_version(api_version: str) -> bool:
    """Whether ``schema.ParseGroupVersion`` yields a non-empty version."""
    if api_version in ("", "/"):
        return False
    parts = api_version.split("/")
    if len(parts) == 1:
        return True
    return len(parts) == 2 and parts[1] != ""


def validate_owner_references(refs: list | None, field: str) -> list[FieldError]:
    """``ValidateOwnerReferences`` (spec 6-8): required fields, core Events banned, one controller."""
    errs: list[FieldError] = []
    refs = refs or []
    first_controller = ""
    for ref in refs:
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        if not _api_version_has_version(api_version):
            errs.append(invalid_value(f"{field}.apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(invalid_value(f"{field}.{key}", str(ref.get(key) or ""), "must not be empty"))
        if api_version == "v1" and kind == "Event":
            errs.append(
                _go_invalid(
                    field, _go_owner_reference(ref), "/v1, Kind=Event is disallowed from being an owner"
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                rendered = "[]v1.OwnerReference{" + ", ".join(_go_owner_reference(r) for r in refs) + "}"
                errs.append(
                    _go_invalid(
                        field,
                        rendered,
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: list | None, field: str) -> list[FieldError]:
    """``ValidateFinalizers``: qualified names; ``orphan`` and ``foregroundDeletion`` exclude each other.

    Upstream additionally *warns* about names without a domain; warnings are not produced here.
    """
    finalizers = finalizers or []
    errs = [invalid_value(field, f, m) for f in finalizers for m in is_qualified_name(f)]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            invalid_value(field, finalizers, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    return errs


def validate_object_meta(
    meta: Mapping[str, Any], *, namespaced: bool, name_rule: str, generate_name_used: bool
) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create, after name generation.

    ``name_rule`` is ``"subdomain"`` (most kinds), ``"label"`` (Namespace) or ``"path"`` (RBAC,
    and the generic pass every kind gets). ``generate_name_used`` makes ``metadata.generateName``
    checked as a name prefix too; upstream does that whenever generateName is set, so a bad prefix
    is reported on both ``generateName`` and the generated ``name``.
    """
    errs: list[FieldError] = []
    full_rule, prefix_rule = _NAME_RULES[name_rule]
    generate_name = meta.get("generateName") or ""
    if generate_name_used and generate_name:
        errs.extend(
            invalid_value("metadata.generateName", generate_name, m) for m in prefix_rule(generate_name)
        )
    name = meta.get("name") or ""
    if not name:
        errs.append(required("metadata.name", "name or generateName is required"))
    else:
        errs.extend(invalid_value("metadata.name", name, m) for m in full_rule(name))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        else:
            errs.extend(
                invalid_value("metadata.namespace", namespace, m) for m in is_dns1123_label(namespace)
            )
    elif namespace:
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    errs.extend(validate_labels(meta.get("labels"), "metadata.labels"))
    errs.extend(validate_annotations(meta.get("annotations"), "metadata.annotations"))
    errs.extend(validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences"))
    errs.extend(validate_finalizers(meta.get("finalizers"), "metadata.finalizers"))
    return errs


def validate_object_meta_update(new_meta: Mapping[str, Any], old_meta: Mapping[str, Any]) -> list[FieldError]:
    """The immutability part of ``ValidateObjectMetaUpdate``.

    Checks ``name``, ``namespace``, ``uid``, ``creationTimestamp``, ``deletionTimestamp`` (which a
    client may not set, spec 6-5) and ``deletionGracePeriodSeconds`` and, while the old object is
    being deleted, that no finalizer is added (spec 11-5). The caller copies server-owned fields
    first (6-1, 6-2, 6-5), so only genuine client changes reach these checks.
    """
    errs: list[FieldError] = []
    if old_meta.get("deletionTimestamp"):
        old_finalizers = set(old_meta.get("finalizers") or [])
        added = sorted(set(new_meta.get("finalizers") or []) - old_finalizers)
        if added:
            errs.append(
                forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {go_value(added)}",
                )
            )
    for key in ("name", "namespace", "uid"):
        new, old = new_meta.get(key) or "", old_meta.get(key) or ""
        if new != old:
            errs.append(invalid_value(f"metadata.{key}", new, FIELD_IMMUTABLE))
    for key in ("creationTimestamp", "deletionTimestamp"):
        new, old = new_meta.get(key), old_meta.get(key)
        if (new or None) != (old or None):
            # metav1.Time prints through its String() method; a nil *Time prints as null.
            rendered = "null" if not new and key == "deletionTimestamp" else go_time_string(new)
            errs.append(_go_invalid(f"metadata.{key}", rendered, FIELD_IMMUTABLE))
    grace = new_meta.get("deletionGracePeriodSeconds")
    if grace != old_meta.get("deletionGracePeriodSeconds"):
        errs.append(invalid_value("metadata.deletionGracePeriodSeconds", grace, FIELD_IMMUTABLE))
    return errs


# --- ConfigMap / Secret ----------------------------------------------------------------------------

_B64_ALPHABET = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


class _Base64Error(ValueError):
    """``base64.CorruptInputError``."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")


def go_base64_decode(src: str) -> bytes:
    """``base64.StdEncoding.DecodeString``, as ``encoding/json`` decodes ``[]byte`` fields.

    Raises ValueError with Go's ``illegal base64 data at input byte N`` text (CR/LF are skipped).
    """
    data = src.encode()
    out = bytearray()
    si = 0
    n = len(data)
    while si < n:
        quantum = [0, 0, 0, 0]
        dlen = 4
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return bytes(out)
                raise _Base64Error(si - j)
            ch = data[si]
            si += 1
            value = _B64_ALPHABET.get(chr(ch))
            if value is not None:
                quantum[j] = value
                j += 1
                continue
            if ch in (0x0A, 0x0D):
                continue
            if ch != 0x3D:  # '='
                raise _Base64Error(si - 1)
            if j in (0, 1):
                raise _Base64Error(si - 1)
            if j == 2:
                while si < n and data[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    raise _Base64Error(n)
                if data[si] != 0x3D:
                    raise _Base64Error(si - 1)
                si += 1
            while si < n and data[si] in (0x0A, 0x0D):
                si += 1
            if si < n:
                raise _Base64Error(si)
            dlen = j
            break
        val = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
        out.extend(val.to_bytes(3, "big")[: dlen - 1])
    return bytes(out)


def _validate_data_keys(data: dict | None, field: str) -> list[FieldError]:
    return [invalid_value(f"{field}[{k}]", k, m) for k in (data or {}) for m in is_config_map_key(k)]


def _decoded_sizes(data: dict | None, field: str, redact: bool) -> tuple[int, list[FieldError]]:
    """Total decoded size of a ``map[string][]byte`` and the base64 errors in it."""
    total, errs = 0, []
    for key, value in (data or {}).items():
        if value is None:
            continue
        shown = "<secret contents redacted>" if redact else value
        if not isinstance(value, str):
            errs.append(invalid_value(f"{field}[{key}]", shown, "must be a base64-encoded string"))
            continue
        try:
            total += len(go_base64_decode(value))
        except _Base64Error as exc:
            errs.append(invalid_value(f"{field}[{key}]", shown, str(exc)))
    return total, errs


def _immutable_data_errors(obj: dict, old: dict, fields: tuple[str, ...]) -> list[FieldError]:
    """The ``immutable: true`` rules shared by ConfigMap and Secret updates."""
    if old.get("immutable") is not True:
        return []
    errs = []
    if obj.get("immutable") is not True:
        errs.append(forbidden("immutable", IMMUTABLE_WHEN_SET))
    for key in fields:
        if (obj.get(key) or {}) != (old.get(key) or {}):
            errs.append(forbidden(key, IMMUTABLE_WHEN_SET))
    return errs


def validate_configmap(obj: dict, old: dict | None = None) -> list[FieldError]:
    """``ValidateConfigMap`` / ``ValidateConfigMapUpdate`` without the metadata part."""
    errs = _immutable_data_errors(obj, old, ("data", "binaryData")) if old is not None else []
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    total = 0
    for key, value in data.items():
        errs.extend(invalid_value(f"data[{key}]", key, m) for m in is_config_map_key(key))
        if key in binary:
            errs.append(invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value or "").encode())
    errs.extend(_validate_data_keys(binary, "binaryData"))
    binary_total, b64_errs = _decoded_sizes(binary, "binaryData", redact=False)
    errs.extend(b64_errs)
    if total + binary_total > MAX_SECRET_SIZE:
        # Upstream reports this on the empty path: the whole object is too large.
        errs.append(too_long("", MAX_SECRET_SIZE))
    return errs


def normalize_secret(obj: dict) -> None:
    """Merge ``stringData`` into ``data`` (base64; stringData wins) and default ``type`` (spec 17)."""
    string_data = obj.pop("stringData", None) or {}
    if string_data:
        data = obj["data"] = obj.get("data") or {}
        for key, value in string_data.items():
            data[key] = b64encode(str(value).encode()).decode()
    if not obj.get("type"):
        obj["type"] = "Opaque"


def validate_secret(obj: dict, old: dict | None = None) -> list[FieldError]:
    """``ValidateSecret`` / ``ValidateSecretUpdate`` without metadata and type-specific rules.

    Call after :func:`normalize_secret`. Upstream rejects bad base64 while decoding (400); here it
    is a field error at ``data[KEY]`` carrying Go's ``illegal base64 data at input byte N`` text.
    """
    errs: list[FieldError] = []
    if old is not None:
        if (obj.get("type") or "") != (old.get("type") or ""):
            errs.append(invalid_value("type", obj.get("type") or "", FIELD_IMMUTABLE))
        errs.extend(_immutable_data_errors(obj, old, ("data",)))
    errs.extend(_validate_data_keys(obj.get("data"), "data"))
    total, b64_errs = _decoded_sizes(obj.get("data"), "data", redact=True)
    errs.extend(b64_errs)
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("data", MAX_SECRET_SIZE))
    return errs


# --- Namespace / ServiceAccount / ResourceQuota ---------------------------------------------------


def validate_namespace(obj: dict) -> list[FieldError]:
    """``ValidateNamespace`` beyond metadata: ``spec.finalizers`` are qualified or standard names."""
    errs: list[FieldError] = []
    for name in (obj.get("spec") or {}).get("finalizers") or []:
        errs.extend(invalid_value("spec.finalizers", name, m) for m in is_qualified_name(name))
        if "/" not in name and name not in STANDARD_FINALIZERS:
            errs.append(
                invalid_value(
                    "spec.finalizers",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errs


def validate_service_account(obj: dict) -> list[FieldError]:
    """``ValidateServiceAccount``: upstream has no rules beyond metadata, so this is always empty.

    Kept so every served kind has a validator of the same shape.
    """
    del obj
    return []


def normalize_service_account(obj: dict) -> None:
    """Reduce ``secrets[]`` entries to their ``name`` like the ServiceAccount strategy does."""
    if isinstance(obj.get("secrets"), list):
        obj["secrets"] = [{"name": s["name"]} if s.get("name") else {} for s in obj["secrets"]]


# helper.IsIntegerResourceName: object counts and the standard integer resources.
_INTEGER_RESOURCES = {
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
}


def validate_resource_quota(obj: dict) -> list[FieldError]:
    """``ValidateResourceQuotaSpec`` for ``spec.hard``: valid, non-negative, integral counts."""
    errs: list[FieldError] = []
    for name, raw in ((obj.get("spec") or {}).get("hard") or {}).items():
        path = f"spec.hard[{name}]"
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            errs.append(invalid_value(path, raw, ERR_FORMAT_WRONG))
            continue
        text = raw.strip() if isinstance(raw, str) else str(raw)
        try:
            value = parse_quantity(text)
        except ValueError as exc:
            errs.append(invalid_value(path, raw, str(exc)))
            continue
        if value.sign() < 0:
            errs.append(invalid_value(path, text, "must be greater than or equal to 0"))
        integer = name in _INTEGER_RESOURCES or name.startswith("count/")
        # MilliValue rounds up, so anything not a whole number of units is rejected.
        if integer and value.milli_value() % 1000 != 0:
            errs.append(_go_invalid(path, text, "must be an integer"))
    return errs


# --- RBAC (spec 19-1) --------------------------------------------------------------------------


def validate_role(obj: dict, cluster: bool) -> list[FieldError]:
    """``ValidateRole`` / ``ValidateClusterRole`` beyond metadata: each rule of ``rules[]``."""
    errs: list[FieldError] = []
    for i, rule in enumerate(obj.get("rules") or []):
        path = f"rules[{i}]"
        if not rule.get("verbs"):
            errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if not cluster:
                errs.append(
                    invalid_value(
                        f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"
                    )
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.append(
                    invalid_value(
                        f"{path}.nonResourceURLs",
                        urls,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not rule.get("apiGroups"):
            errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
        if rule.get("resourceNames") and len(rule.get("resources") or []) > 1:
            errs.append(
                required(f"{path}.resourceNames", "resource names cannot apply to multiple resources")
            )
    return errs


def _go_role_ref(ref: dict) -> str:
    return _go_struct(
        "rbac.RoleRef",
        [
            ("APIGroup", _go_str_field(ref, "apiGroup")),
            ("Kind", _go_str_field(ref, "kind")),
            ("Name", _go_str_field(ref, "name")),
        ],
    )


def _validate_subject(subject: dict, cluster: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name, kind, api_group = (
        subject.get("name") or "",
        subject.get("kind") or "",
        subject.get("apiGroup") or "",
    )
    if not name:
        errs.append(required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            errs.extend(invalid_value(f"{path}.name", name, m) for m in is_dns1123_subdomain(name))
        if api_group:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [""]))
        if cluster and not subject.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if not name:
            errs.append(invalid_value(f"{path}.name", name, f"{kind.lower()} name cannot be empty"))
        if api_group != RBAC_GROUP:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [RBAC_GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return errs


def validate_binding(obj: dict, cluster: bool, old: dict | None = None) -> list[FieldError]:
    """``Validate(Cluster)RoleBinding(Update)`` beyond metadata: roleRef, subjects, roleRef immutability."""
    errs: list[FieldError] = []
    ref = obj.get("roleRef") or {}
    if (ref.get("apiGroup") or "") != RBAC_GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [RBAC_GROUP]))
    kinds = ["ClusterRole"] if cluster else ["Role", "ClusterRole"]
    if (ref.get("kind") or "") not in kinds:
        errs.append(not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    ref_name = ref.get("name") or ""
    if not ref_name:
        errs.append(required("roleRef.name"))
    else:
        errs.extend(invalid_value("roleRef.name", ref_name, m) for m in is_path_segment_name(ref_name))
    for i, subject in enumerate(obj.get("subjects") or []):
        errs.extend(_validate_subject(subject, cluster, f"subjects[{i}]"))
    if old is not None:
        old_ref = old.get("roleRef") or {}
        keys = ("apiGroup", "kind", "name")
        if any((ref.get(k) or "") != (old_ref.get(k) or "") for k in keys):
            errs.append(_go_invalid("roleRef", _go_role_ref(ref), "cannot change roleRef"))
    return errs


# --- Lease (spec 20-1) -----------------------------------------------------------------------------


def validate_lease(obj: dict) -> list[FieldError]:
    """``ValidateLeaseSpec``: positive duration, non-negative transitions."""
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and not is_int(duration):
        errs.append(type_invalid("spec.leaseDurationSeconds", duration, "must be an integer"))
    elif duration is not None and duration <= 0:
        errs.append(invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and not is_int(transitions):
        errs.append(type_invalid("spec.leaseTransitions", transitions, "must be an integer"))
    elif transitions is not None and transitions < 0:
        errs.append(invalid_value("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    return errs


# --- admission webhook configurations (spec 21-2) ---------------------------------------------------

_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]  # sets.List() order: sorted
_SCOPES = ["*", "Cluster", "Namespaced"]
_FAILURE_POLICIES = ["Fail", "Ignore"]
_MATCH_POLICIES = ["Equivalent", "Exact"]
_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
_REINVOCATION_POLICIES = ["IfNeeded", "Never"]
_REVIEW_VERSIONS = ["v1", "v1beta1"]
_URL_FORM = "; desired format: https://host[/path]"


def default_webhook_configuration(obj: dict, mutating: bool) -> None:
    """``admissionregistration/v1`` defaulting of every ``webhooks[]`` entry, in place (explicit nulls
    were already decoded as absent, ``decoding.py``: kopf's ``"objectSelector": null`` becomes ``{}``)."""
    for hook in obj.get("webhooks") or []:
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", 10)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or []:
            rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def _validate_fully_qualified_name(name: str, field: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain with at least three segments."""
    if not name:
        return [required(field)]
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid_value(field, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [
            invalid_value(field, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def _validate_resources(resources: list, field: str) -> list[FieldError]:
    """``validateResources``: ``res``, ``res/sub``, ``*``, ``*/*`` and their exclusions."""
    errs: list[FieldError] = []
    if not resources:
        errs.append(required(field))
    with_wildcard_sub: set[str] = set()
    sub_with_wildcard_res: set[str] = set()
    double_wildcard = single_wildcard = without_sub = False
    for i, res_sub in enumerate(resources):
        if res_sub == "":
            errs.append(required(f"{field}[{i}]"))
            continue
        double_wildcard = double_wildcard or res_sub == "*/*"
        single_wildcard = single_wildcard or res_sub == "*"
        if "/" not in res_sub:
            # Upstream assigns (not ORs) here, so only the last plain entry counts.
            without_sub = res_sub != "*"
            continue
        res, sub = res_sub.split("/", 1)
        if res in with_wildcard_sub:
            errs.append(
                invalid_value(
                    f"{field}[{i}]", res_sub, f"if '{res}/*' is present, must not specify {res_sub}"
                )
            )
        if sub in sub_with_wildcard_res:
            errs.append(
                invalid_value(
                    f"{field}[{i}]", res_sub, f"if '*/{sub}' is present, must not specify {res_sub}"
                )
            )
        if sub == "*":
            with_wildcard_sub.add(res)
        if res == "*":
            sub_with_wildcard_res.add(sub)
    if len(resources) > 1 and double_wildcard:
        errs.append(invalid_value(field, resources, "if '*/*' is present, must not specify other resources"))
    if single_wildcard and without_sub:
        errs.append(
            invalid_value(
                field, resources, "if '*' is present, must not specify other resources without subresources"
            )
        )
    return errs


def _validate_rule(rule: dict, field: str) -> list[FieldError]:
    """``validateRuleWithOperations`` + ``validateRule``."""
    errs: list[FieldError] = []
    operations = rule.get("operations") or []
    if not operations:
        errs.append(required(f"{field}.operations"))
    if len(operations) > 1 and "*" in operations:
        rendered = "[]admissionregistration.OperationType{" + ", ".join(go_value(o) for o in operations) + "}"
        errs.append(
            _go_invalid(
                f"{field}.operations", rendered, "if '*' is present, must not specify other operations"
            )
        )
    for i, op in enumerate(operations):
        if op not in _OPERATIONS:
            errs.append(not_supported(f"{field}.operations[{i}]", op, _OPERATIONS))
    groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
    if not groups:
        errs.append(required(f"{field}.apiGroups"))
    if len(groups) > 1 and "*" in groups:
        errs.append(
            invalid_value(
                f"{field}.apiGroups", groups, "if '*' is present, must not specify other API groups"
            )
        )
    if not versions:
        errs.append(required(f"{field}.apiVersions"))
    if len(versions) > 1 and "*" in versions:
        errs.append(
            invalid_value(
                f"{field}.apiVersions", versions, "if '*' is present, must not specify other API versions"
            )
        )
    errs.extend(required(f"{field}.apiVersions[{i}]") for i, v in enumerate(versions) if v == "")
    errs.extend(_validate_resources(rule.get("resources") or [], f"{field}.resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in _SCOPES:
        errs.append(not_supported(f"{field}.scope", scope, _SCOPES))
    return errs


def _validate_webhook_url(url: str, field: str) -> list[FieldError]:
    """``webhook.ValidateWebhookURL`` with https forced."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return [
            required(
                field,
                f'url must be a valid URL: parse "{url}": '
                f"net/url: invalid control character in URL{_URL_FORM}",
            )
        ]
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises for a malformed port, as Go's parser does
    except ValueError as exc:
        return [required(field, f'url must be a valid URL: parse "{url}": {exc}{_URL_FORM}')]
    user, _, host = parts.netloc.rpartition("@")
    errs: list[FieldError] = []
    if parts.scheme != "https":
        errs.append(invalid_value(field, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    if not host:
        errs.append(invalid_value(field, host, "host must be provided" + _URL_FORM))
    if "@" in parts.netloc:
        errs.append(invalid_value(field, user, "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid_value(field, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid_value(field, parts.query, "query parameters are not permitted in the URL"))
    return errs


def _validate_webhook_service(service: dict, field: str) -> list[FieldError]:
    """``webhook.ValidateWebhookService``."""
    errs: list[FieldError] = []
    if not service.get("name"):
        errs.append(required(f"{field}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(required(f"{field}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(
            invalid_value(f"{field}.port", port, "port is not valid: must be between 1 and 65535, inclusive")
        )
    path = service.get("path")
    if path is None or path in ("", "/"):
        return errs
    if path == "//":
        return [*errs, invalid_value(f"{field}.path", path, "segment[0] may not be empty")]
    if not path.startswith("/"):
        errs.append(invalid_value(f"{field}.path", path, "must start with a '/'"))
    steps = path[1:]
    if steps.endswith("/"):
        steps = steps[:-1]
    for i, step in enumerate(steps.split("/")):
        if not step:
            errs.append(invalid_value(f"{field}.path", path, f"segment[{i}] may not be empty"))
            continue
        errs.extend(
            invalid_value(f"{field}.path", path, f"segment[{i}]: {m}") for m in is_dns1123_subdomain(step)
        )
    return errs


def _validate_review_versions(versions: list, field: str) -> list[FieldError]:
    """``validateAdmissionReviewVersions`` (a recognized version required, as on create)."""
    if not versions:
        return [required(field, "must specify one of " + ", ".join(_REVIEW_VERSIONS))]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid_value(f"{field}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs.extend(invalid_value(f"{field}[{i}]", version, m) for m in is_dns1035_label(version))
    if not seen & set(_REVIEW_VERSIONS):
        errs.append(
            invalid_value(field, versions, "must include at least one of " + ", ".join(_REVIEW_VERSIONS))
        )
    return errs


def _validate_webhook(hook: dict, mutating: bool, path: str) -> list[FieldError]:
    errs = _validate_fully_qualified_name(hook.get("name") or "", f"{path}.name")
    for i, rule in enumerate(hook.get("rules") or []):
        errs.extend(_validate_rule(rule, f"{path}.rules[{i}]"))
    for key, allowed in (("failurePolicy", _FAILURE_POLICIES), ("matchPolicy", _MATCH_POLICIES)):
        if hook.get(key) is not None and hook[key] not in allowed:
            errs.append(not_supported(f"{path}.{key}", hook[key], allowed))
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        errs.append(required(f"{path}.sideEffects", "must specify one of " + ", ".join(_SIDE_EFFECTS)))
    elif side_effects not in _SIDE_EFFECTS:
        errs.append(not_supported(f"{path}.sideEffects", side_effects, _SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and not is_int(timeout):
        errs.append(type_invalid(f"{path}.timeoutSeconds", timeout, "must be an integer"))
    elif timeout is not None and not 1 <= timeout <= 30:
        errs.append(
            invalid_value(
                f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"
            )
        )
    errs.extend(validate_label_selector(hook.get("namespaceSelector"), f"{path}.namespaceSelector"))
    errs.extend(validate_label_selector(hook.get("objectSelector"), f"{path}.objectSelector"))
    if hook.get("matchConditions"):
        # 24-3, 24-6: no CEL here; calling the webhook regardless would silently differ from the real one.
        errs.append(
            forbidden(f"{path}.matchConditions", "matchConditions (CEL) are not supported by this API server")
        )
    policy = hook.get("reinvocationPolicy")
    if mutating and policy is not None and policy not in _REINVOCATION_POLICIES:
        errs.append(not_supported(f"{path}.reinvocationPolicy", policy, _REINVOCATION_POLICIES))
    client = hook.get("clientConfig") or {}
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        errs.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif url is not None:
        errs.extend(_validate_webhook_url(url, f"{path}.clientConfig.url"))
    elif service is not None:  # always, as exactly one of the two is set
        errs.extend(_validate_webhook_service(service, f"{path}.clientConfig.service"))
    return errs


def validate_webhook_configuration(obj: dict, mutating: bool) -> list[FieldError]:
    """``Validate{Validating,Mutating}WebhookConfiguration`` beyond metadata (after defaulting).

    matchConditions (CEL) are not supported by the emulator: a configuration using them is refused.
    """
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        path = f"webhooks[{i}]"
        errs.extend(_validate_webhook(hook, mutating, path))
        errs.extend(
            _validate_review_versions(
                hook.get("admissionReviewVersions") or [], f"{path}.admissionReviewVersions"
            )
        )
        name = hook.get("name") or ""
        if name:
            if name in names:
                errs.append(duplicate(f"{path}.name", name))
            names.add(name)
    return errs


# --- Events (spec 18-2) -----------------------------------------------------------------------------


def _legacy_validate_event(ev: dict) -> list[FieldError]:
    """``legacyValidateEvent``: applies to every Event write through either API version."""
    errs: list[FieldError] = []
    namespace = get_namespace(ev)
    involved_ns = (ev.get("involvedObject") or {}).get("namespace") or ""
    mismatch = invalid_value("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not ev.get("eventTime"):
        if (not involved_ns and namespace not in ("", "default")) or (
            involved_ns and namespace != involved_ns
        ):
            errs.append(mismatch)
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(mismatch)
        controller = ev.get("reportingComponent") or ""
        if not controller:
            errs.append(required("reportingController"))
        errs.extend(
            invalid_value("reportingController", controller, m) for m in is_qualified_name(controller)
        )
        for key, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
            value = ev.get(key) or ""
            if not value:
                errs.append(required(key))
            if len(value.encode()) > limit:  # Go's len() counts bytes
                errs.append(invalid_value(key, "", f"can have at most {limit} characters"))
        if len((ev.get("message") or "").encode()) > 1024:
            errs.append(invalid_value("message", "", "can have at most 1024 characters"))
    errs.extend(invalid_value("namespace", namespace, m) for m in is_dns1123_subdomain(namespace))
    return errs


def _event_series_errors(ev: dict) -> list[FieldError]:
    series = ev.get("series")
    if series is None:
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(invalid_value("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def _event_immutable_errors(new: dict, old: dict) -> list[FieldError]:
    """The ``ValidateImmutableField`` calls of ``ValidateEventUpdate``, in upstream order."""
    errs: list[FieldError] = []

    def ref_fields(ref: dict | None) -> tuple:
        return tuple((ref or {}).get(j) or "" for _, j in _OBJECT_REFERENCE_FIELDS)

    def source_fields(src: dict | None) -> tuple:
        return ((src or {}).get("component") or "", (src or {}).get("host") or "")

    def check_str(path: str, key: str) -> None:
        value = new.get(key) or ""
        if value != (old.get(key) or ""):
            errs.append(invalid_value(path, value, FIELD_IMMUTABLE))

    def check_time(path: str, key: str) -> None:
        if (new.get(key) or None) != (old.get(key) or None):
            errs.append(_go_invalid(path, go_time_string(new.get(key)), FIELD_IMMUTABLE))

    if ref_fields(new.get("involvedObject")) != ref_fields(old.get("involvedObject")):
        errs.append(
            _go_invalid("involvedObject", _go_object_reference(new.get("involvedObject")), FIELD_IMMUTABLE)
        )
    check_str("reason", "reason")
    check_str("message", "message")
    if source_fields(new.get("source")) != source_fields(old.get("source")):
        component, host = source_fields(new.get("source"))
        rendered = _go_struct(
            "core.EventSource", [("Component", go_value(component)), ("Host", go_value(host))]
        )
        errs.append(_go_invalid("source", rendered, FIELD_IMMUTABLE))
    check_time("firstTimestamp", "firstTimestamp")
    check_time("lastTimestamp", "lastTimestamp")
    if (new.get("count") or 0) != (old.get("count") or 0):
        errs.append(invalid_value("count", new.get("count") or 0, FIELD_IMMUTABLE))
    check_str("reason", "reason")  # upstream checks reason twice
    check_str("type", "type")
    check_time("eventTime", "eventTime")
    check_str("action", "action")
    if (ref_fields(new["related"]) if new.get("related") else None) != (
        ref_fields(old["related"]) if old.get("related") else None
    ):
        rendered = _go_object_reference(new["related"]) if new.get("related") else "null"
        errs.append(_go_invalid("related", rendered, FIELD_IMMUTABLE))
    check_str("reportingController", "reportingComponent")
    check_str("reportingInstance", "reportingInstance")
    return errs


def validate_event(
    core_obj: dict,
    *,
    created_via_events_v1: bool,
    old_core: dict | None = None,
    updated_via_events_v1: bool = False,
) -> list[FieldError]:
    """``ValidateEventCreate`` / ``ValidateEventUpdate`` on the core/v1 form of an Event.

    Field paths are upstream's hard-coded ones, identical for both API versions: the validation runs
    on the internal type, so even events.k8s.io requests see ``involvedObject.namespace``,
    ``reportingController``, ``firstTimestamp``, ``source`` … (never ``regarding``/``note``), and
    core requests see ``reportingController`` rather than the JSON name ``reportingComponent``.

    The strict rules (creates/updates through events.k8s.io/v1) include upstream's own metadata
    checks (DNS-subdomain name, update immutability); core/v1 Events only get the generic
    metadata pass the caller runs afterwards.
    """
    errs = _legacy_validate_event(core_obj)
    meta = get_metadata(core_obj)
    if old_core is None:
        if not created_via_events_v1:
            return errs
        errs.extend(
            validate_object_meta(
                meta,
                namespaced=True,
                name_rule="subdomain",
                generate_name_used=bool(meta.get("generateName")),
            )
        )
        errs.extend(_event_series_errors(core_obj))
        if not core_obj.get("eventTime"):
            errs.append(required("eventTime"))
        event_type = core_obj.get("type") or ""
        if event_type not in ("Normal", "Warning"):
            errs.append(invalid_value("type", "", f"has invalid value: {event_type}"))
        for key in ("firstTimestamp", "lastTimestamp"):
            if core_obj.get(key):
                errs.append(invalid_value(key, "", "needs to be unset"))
        if core_obj.get("count"):
            errs.append(invalid_value("count", "", "needs to be unset"))
        source = core_obj.get("source") or {}
        if source.get("component") or source.get("host"):
            errs.append(invalid_value("source", "", "needs to be unset"))
        return errs
    if not updated_via_events_v1:
        return errs
    errs.extend(validate_object_meta_update(meta, get_metadata(old_core)))
    if core_obj.get("series") != old_core.get("series"):
        errs.extend(_event_series_errors(core_obj))
    errs.extend(_event_immutable_errors(core_obj, old_core))
    return errs
