"""Defaulting and validation of admission webhook configurations (spec 21-2), shared by the
Validating and Mutating kinds: ``pkg/apis/admissionregistration/v1/defaults.go`` and
``pkg/apis/admissionregistration/validation/validation.go``."""

from __future__ import annotations

from urllib.parse import urlsplit

from framework.apiserver.admission.expressions import WEBHOOK_VARIABLES
from framework.apiserver.encoding import decoding
from framework.apiserver.encoding.gorender import go_invalid
from framework.apiserver.machinery.errors import (
    FieldError,
    duplicate,
    go_value,
    invalid_value,
    not_supported,
    required,
    type_invalid,
)
from framework.apiserver.machinery.jsonvalues import is_int
from framework.apiserver.registry import printing
from framework.apiserver.registry.admissionregistration.conditions import validate_match_conditions
from framework.meta.labels import validate_label_selector
from framework.meta.validation import is_dns1035_label, is_dns1123_subdomain

# ``Name``, the number of webhooks, ``Age`` (``printMutatingWebhook``, ``printValidatingWebhook``).
WEBHOOKS_PRINTER = printing.count_printer(
    "Webhooks", "Webhooks indicates the number of webhooks registered in this configuration", "webhooks"
)

_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]  # sets.List() order: sorted
_SCOPES = ["*", "Cluster", "Namespaced"]
_FAILURE_POLICIES = ["Fail", "Ignore"]
_MATCH_POLICIES = ["Equivalent", "Exact"]
_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
_REINVOCATION_POLICIES = ["IfNeeded", "Never"]
_REVIEW_VERSIONS = ["v1", "v1beta1"]
_URL_FORM = "; desired format: https://host[/path]"

# The webhooks' null shape (``decoding``) and their atomic structs for server-side apply.
WEBHOOK_NULLS = decoding.shape(
    {
        **decoding.structs("webhooks[]", "webhooks[].rules[]", "webhooks[].matchConditions[]"),
        **decoding.strings(
            "webhooks[].admissionReviewVersions[]",
            *(f"webhooks[].rules[].{k}[]" for k in ("operations", "apiGroups", "apiVersions", "resources")),
        ),
        **decoding.selector("webhooks[].namespaceSelector"),
        **decoding.selector("webhooks[].objectSelector"),
    }
)
WEBHOOK_ATOMIC = frozenset({"webhooks[].namespaceSelector", "webhooks[].objectSelector"})


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


def validate_rule(rule: dict, field: str) -> list[FieldError]:
    """``validateRuleWithOperations`` + ``validateRule``."""
    errs: list[FieldError] = []
    operations = rule.get("operations") or []
    if not operations:
        errs.append(required(f"{field}.operations"))
    if len(operations) > 1 and "*" in operations:
        rendered = "[]admissionregistration.OperationType{" + ", ".join(go_value(o) for o in operations) + "}"
        errs.append(
            go_invalid(
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
        errs.extend(validate_rule(rule, f"{path}.rules[{i}]"))
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
    errs.extend(
        validate_match_conditions(hook.get("matchConditions"), f"{path}.matchConditions", WEBHOOK_VARIABLES)
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

    ``matchConditions`` must compile (as ``admission/expressions.py`` compiles them).
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
