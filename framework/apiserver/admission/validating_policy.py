"""The ``ValidatingAdmissionPolicy`` admission plugin: ValidatingAdmissionPolicies and their bindings
(admissionregistration.k8s.io/v1) evaluated on every write, as k8s.io/apiserver's
``pkg/admission/plugin/policy/validating`` (dispatcher, validator) and ``.../policy/generic``
(matching, params) do it.

For each binding whose policy exists: the policy's ``matchConstraints`` and the binding's
``matchResources`` must match the request (rules, exclusions, resource names, namespace and object
selectors, ``matchPolicy``), then the params are resolved (``paramKind``/``paramRef``), the
``matchConditions`` filter, and ``variables``, ``validations`` and ``auditAnnotations`` are evaluated
per param, with their cost budgets (``policy_validator``). A failed validation is handled by the
binding's ``validationActions``: ``Deny`` refuses the request (``<resource> "name" is forbidden:
ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>``, code from ``reason``, 422
``Invalid`` by default), ``Warn`` adds a ``Warning`` header, ``Audit`` records it (this server keeps
no audit log, so nothing shows). An expression error is a failure under ``failurePolicy`` (``Fail``:
handled like a failed validation; ``Ignore``: none); a configuration error (params, selectors) and an
audit annotation's error refuse the request under ``Fail`` whatever the actions (the dispatcher's
``addConfigError``).
Policies and bindings are read from storage on each request, so changes apply at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from framework.apiserver.admission.client import admission_request
from framework.apiserver.admission.configuration import rule_matches
from framework.apiserver.admission.expressions import authorizer, authorizing
from framework.apiserver.admission.plugins import AdmissionPlugin
from framework.apiserver.admission.policy_validator import Decision, validate
from framework.apiserver.admission.review import DELETE_REQUESTER, Attributes
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.apiserver.registry.rest.objects import deep_copy, object_key
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.labels import label_selector_as_selector

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer

log = structlog.get_logger("framework.apiserver")

GROUP = "admissionregistration.k8s.io"
POLICIES = f"validatingadmissionpolicies.{GROUP}"
BINDINGS = f"validatingadmissionpolicybindings.{GROUP}"
# rules.IsExemptAdmissionConfigurationResource: admission configuration is never subject to policies.
EXEMPT = frozenset(
    {
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
    }
)
REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


class ValidatingAdmissionPolicy(AdmissionPlugin):
    """Evaluates the stored policies and bindings (see the module docstring)."""

    name = "ValidatingAdmissionPolicy"

    def admit(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        if opts.user is None:  # in-process controllers' writes are not admitted (docs/apiserver.md)
            return
        meta = as_dict(new.get("metadata"))
        options: dict[str, Any] = {"fieldManager": opts.field_manager} if opts.field_manager else {}
        a = Attributes(
            rt,
            opts.subresource,
            "CREATE" if old is None else "UPDATE",
            meta.get("name") or "",
            _namespace(rt, meta),
            new,
            old,
            opts.user,
            opts.dry_run,
            options,
        )
        run(server, a, opts.admission_warnings)

    def admit_delete(self, server: APIServer, rt: ResourceType, obj: dict) -> None:
        user = DELETE_REQUESTER.get()
        if user is None:  # an in-process controller's delete
            return
        meta = as_dict(obj.get("metadata"))
        name, namespace = meta.get("name") or "", _namespace(rt, meta)
        a = Attributes(rt, "", "DELETE", name, namespace, None, obj, user, False, {})
        run(server, a, [])


def _namespace(rt: ResourceType, meta: dict) -> str:
    if rt.namespaced:
        return meta.get("namespace") or ""
    if rt.group == "" and rt.resource == "namespaces":
        return meta.get("name") or ""
    return ""


def run(server: APIServer, a: Attributes, warnings: list[str]) -> None:
    """Evaluate every binding for ``a``: the first ``Deny`` raises, ``Warn`` appends to ``warnings``."""
    if a.rt.group == GROUP and a.rt.resource in EXEMPT:
        return
    policies = _objects(server, POLICIES)
    bindings = _objects(server, BINDINGS)
    if not policies or not bindings:
        return
    with authorizing(server):
        denied = _decide(server, a, policies, bindings, warnings)
    if not denied:
        return
    first = denied[0]
    message = (
        f"ValidatingAdmissionPolicy '{first.policy}' with binding '{first.binding}' denied request: "
        f"{first.message}"
    )
    refusal = errors.forbidden_error(a.rt.resource, a.rt.group, a.name, message)
    code = REASON_CODES.get(first.reason, 422)
    details = dict(refusal.details or {})
    details["causes"] = [{"message": message}]
    raise StatusError(code, first.reason or "Invalid", refusal.message, details)


def _decide(
    server: APIServer,
    a: Attributes,
    policies: dict[str, dict],
    bindings: dict[str, dict],
    warnings: list[str],
) -> list[Decision]:
    """The decisions to deny with; ``Warn`` decisions appended to ``warnings``, ``Audit`` ones logged."""
    denied: list[Decision] = []
    for binding in sorted(bindings.values(), key=lambda b: b["metadata"]["name"]):
        spec = as_dict(binding.get("spec"))
        policy = policies.get(spec.get("policyName") or "")
        if policy is None:
            continue
        actions = [x for x in as_list(spec.get("validationActions")) if isinstance(x, str)]
        for decision in _evaluate(server, policy, binding, a):
            if decision.deny or "Deny" in actions:
                denied.append(decision)
            if "Warn" in actions and not decision.deny:
                warnings.append(
                    f"Validation failed for ValidatingAdmissionPolicy '{decision.policy}' with binding "
                    f"'{decision.binding}': {decision.message}"
                )
            if "Audit" in actions and not decision.deny:
                log.info(
                    "validating admission policy audit",
                    policy=decision.policy,
                    binding=decision.binding,
                    message=decision.message,
                )
    return denied


def _objects(server: APIServer, table_name: str) -> dict[str, dict]:
    table = server.storage.tables.get(table_name)  # not storage.table(): that would create it
    if table is None:
        return {}
    return {k[1]: o for k, o in table.objects.items()}


def _evaluate(server: APIServer, policy: dict, binding: dict, a: Attributes) -> list[Decision]:
    pname, bname = policy["metadata"]["name"], binding["metadata"]["name"]
    pspec, bspec = as_dict(policy.get("spec")), as_dict(binding.get("spec"))
    fail_closed = (pspec.get("failurePolicy") or "Fail") == "Fail"
    constraints = pspec.get("matchConstraints")
    if not isinstance(constraints, dict):
        return []
    try:
        matched = _match(server, constraints, a)
        if matched is None:
            return []
        if (
            isinstance(bspec.get("matchResources"), dict)
            and _match(server, bspec["matchResources"], a, False) is None
        ):
            return []
    except StatusError as e:
        message = f"failed to configure binding: {e.message}"
        return [Decision(pname, bname, message, deny=True)] if fail_closed else []
    try:
        params = _params(server, pspec.get("paramKind"), bspec.get("paramRef"), a)
    except _ConfigError as e:
        return [Decision(pname, bname, f"failed to configure binding: {e}", deny=True)] if fail_closed else []
    if params is None:
        return []
    activation: dict[str, Any] = {
        "object": _versioned(server, matched, a.obj),
        "oldObject": _versioned(server, matched, a.old),
        "request": admission_request(server.api, matched, a, False),
        "namespaceObject": _namespace_object(server, a),
        "variables": {},
        "authorizer": authorizer(a),
    }
    out: list[Decision] = []
    for param in params:
        out += validate(pspec, pname, bname, {**activation, "params": param})
    return out


def _versioned(server: APIServer, rt: ResourceType, stored: dict | None) -> dict | None:
    return None if stored is None else server.api.external(rt, deep_copy(stored))


def _namespace_object(server: APIServer, a: Attributes) -> dict | None:
    if not a.rt.namespaced or not a.namespace:
        return None
    ns = server.storage.get("namespaces", ("", a.namespace))
    return deep_copy(ns) if ns is not None else None


# --- matching ------------------------------------------------------------------------------------


def _match(server: APIServer, resources: dict, a: Attributes, for_policy: bool = True) -> ResourceType | None:
    """``matching.Matcher.Matches`` of one ``MatchResources``: the resource type matched, or None."""
    if not _namespace_matches(server, resources.get("namespaceSelector"), a):
        return None
    if not _object_matches(resources.get("objectSelector"), a):
        return None
    if _rules_match(resources.get("excludeResourceRules"), a, a.rt) is not None:
        return None
    if not as_list(resources.get("resourceRules")) and not for_policy:
        return a.rt  # a binding without resource rules takes every resource its policy matches
    matched = _rules_match(resources.get("resourceRules"), a, a.rt)
    if matched is None and (resources.get("matchPolicy") or "Equivalent") == "Equivalent":
        for eq in server.registry.all():
            if (
                eq.storage == a.rt.storage
                and eq is not a.rt
                and (not a.subresource or a.subresource in eq.subresources)
            ):
                matched = _rules_match(resources.get("resourceRules"), a, eq)
                if matched is not None:
                    break
    return matched


def _rules_match(rules: Any, a: Attributes, rt: ResourceType) -> ResourceType | None:
    for rule in as_list(rules):
        rule = as_dict(rule)
        names = as_list(rule.get("resourceNames"))
        if names and a.name not in names:
            continue
        if rule_matches(rule, a.operation, rt, a.subresource, a.namespace):
            return rt
    return None


def _selector(raw: Any, what: str) -> Any:
    try:
        return label_selector_as_selector({} if raw is None else raw)
    except (ValueError, AttributeError, TypeError):
        raise errors.internal_error(f"invalid {what}") from None


def _namespace_matches(server: APIServer, raw: Any, a: Attributes) -> bool:
    selector = _selector(raw, "namespaceSelector")
    is_namespace = a.rt.group == "" and a.rt.resource == "namespaces"
    if selector.empty or (not a.namespace and not is_namespace):
        return True  # cluster-scoped objects other than namespaces are not selected by namespace
    if is_namespace and a.obj is not None:
        labels = as_dict(a.obj.get("metadata")).get("labels") or {}
    else:
        ns = server.storage.get("namespaces", ("", a.namespace))
        if ns is None:
            raise errors.not_found("namespaces", "", a.namespace)
        labels = ns["metadata"].get("labels") or {}
    return bool(selector.matches(labels))


def _object_matches(raw: Any, a: Attributes) -> bool:
    selector = _selector(raw, "objectSelector")
    if selector.empty:
        return True
    return any(
        o is not None and selector.matches(as_dict(o.get("metadata")).get("labels")) for o in (a.obj, a.old)
    )


# --- params --------------------------------------------------------------------------------------


class _ConfigError(Exception):
    """A binding that cannot be evaluated (its params), with kube-apiserver's text."""


def _params(server: APIServer, kind: Any, ref: Any, a: Attributes) -> list[dict | None] | None:
    """The params to evaluate with: ``[None]`` without ``paramKind``; None when none are found and
    ``parameterNotFoundAction`` is ``Allow``; raises :class:`_ConfigError`."""
    if not isinstance(kind, dict):
        return [None]
    api_version, kind_name = kind.get("apiVersion") or "", kind.get("kind") or ""
    group, _, version = api_version.rpartition("/")
    rt = next(
        (
            r
            for r in server.registry.all()
            if r.group == group and r.version == version and r.kind == kind_name
        ),
        None,
    )
    if rt is None:
        raise _ConfigError(
            f"failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind_name}'"
        )
    if not isinstance(ref, dict):
        raise _ConfigError(f"paramKind kind `{kind_name}` is defined but paramRef is not set")
    namespace = ""
    if rt.namespaced:
        namespace = ref.get("namespace") or a.namespace
        if not namespace:
            raise _ConfigError(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
            )
    found: list[dict | None] = []
    if ref.get("name"):
        obj = server.storage.get(rt.storage, object_key(namespace, ref["name"]))
        if obj is not None:
            found.append(server.api.external(rt, deep_copy(obj)))
    else:
        selector = _selector(ref.get("selector"), "paramRef.selector")
        table = server.storage.tables.get(rt.storage)
        for key, obj in sorted((table.objects if table is not None else {}).items()):
            if key[0] == namespace and selector.matches(as_dict(obj.get("metadata")).get("labels") or {}):
                found.append(server.api.external(rt, deep_copy(obj)))
    if found:
        return found
    if ref.get("parameterNotFoundAction") == "Deny":
        raise _ConfigError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return None
