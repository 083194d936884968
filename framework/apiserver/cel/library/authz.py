"""k8s.io/apiserver/pkg/cel/library/authz.go: the ``authorizer`` of admission expressions.

``authorizer.path(p).check(verb)``, ``authorizer.group(g).resource(r)[.subresource(s)][.namespace(n)]
[.name(n)].check(verb)``, ``authorizer.serviceAccount(ns, name)`` (the same checks for that
ServiceAccount) and ``authorizer.requestResource`` (the request's resource, ready to ``check``) give a
Decision: ``allowed()``, ``reason()``, ``errored()``, ``error()``.

A value holds its state as JSON text (the user, the attributes so far). Checks are answered by the
function in :data:`AUTHORIZE`, which the admission code sets for the evaluations of one request (the
server's authorizer); without it a Decision is an error (``no authorizer``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library import objects
from framework.apiserver.cel.library.common import function, overload
from framework.meta.validation import is_dns1123_label, is_dns1123_subdomain

PACKAGE = "kubernetes.authorization"
AUTHORIZER_NAME = f"{PACKAGE}.Authorizer"
AUTHORIZER = cel.Type(AUTHORIZER_NAME)
PATH_CHECK = cel.Type(f"{PACKAGE}.PathCheck")
GROUP_CHECK = cel.Type(f"{PACKAGE}.GroupCheck")
RESOURCE_CHECK = cel.Type(f"{PACKAGE}.ResourceCheck")
DECISION = cel.Type(f"{PACKAGE}.Decision")

# (the user as {"name", "uid", "groups", "extra"}, the attributes) -> (allowed, reason)
Authorize = Callable[[dict, dict], tuple[bool, str]]
AUTHORIZE: ContextVar[Authorize | None] = ContextVar("cel_authorize", default=None)


def _state(v: Any) -> dict:
    state: dict = json.loads(v.value)
    return state


def _make(kind: str, state: dict) -> Any:
    return objects.make(f"{PACKAGE}.{kind}", json.dumps(state, separators=(",", ":")))


def authorizer_value(user: dict, resource: dict) -> Any:
    """The ``authorizer`` variable for ``user``, its ``requestResource`` the request's ``resource``
    (``group``, ``resource``, ``subresource``, ``namespace``, ``name``)."""
    value = _make("Authorizer", {"user": user})
    value.requestResource.CopyFrom(_make("ResourceCheck", {"user": user, **resource}))
    return value


def _path(a: Any, path: str) -> Any:
    if not path.strip():
        raise ValueError("path must not be empty")
    return _make("PathCheck", {"user": _state(a)["user"], "path": path})


def _group(a: Any, group: str) -> Any:
    return _make("GroupCheck", {"user": _state(a)["user"], "group": group})


def _service_account(a: Any, namespace: str, name: str) -> Any:
    if not name or is_dns1123_subdomain(name):
        raise ValueError("Invalid service account name")
    if not namespace or is_dns1123_label(namespace):
        raise ValueError("Invalid service account namespace")
    user = {
        "name": f"system:serviceaccount:{namespace}:{name}",
        "uid": "",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
        "extra": {},
    }
    return _make("Authorizer", {"user": user})


def _resource(g: Any, resource: str) -> Any:
    if not resource.strip():
        raise ValueError("resource must not be empty")
    return _make("ResourceCheck", {**_state(g), "resource": resource})


def _setter(key: str) -> Callable[[Any, str], Any]:
    def set_(r: Any, text: str) -> Any:
        return _make("ResourceCheck", {**_state(r), key: text})

    return set_


def _decide(attributes: dict, user: dict) -> Any:
    authorize = AUTHORIZE.get()
    if authorize is None:
        return _make("Decision", {"allowed": False, "reason": "", "error": "no authorizer"})
    allowed, reason = authorize(user, attributes)
    return _make("Decision", {"allowed": allowed, "reason": reason, "error": ""})


def _path_check(p: Any, verb: str) -> Any:
    state = _state(p)
    return _decide({"resourceRequest": False, "path": state["path"], "verb": verb}, state["user"])


def _resource_check(r: Any, verb: str) -> Any:
    state = _state(r)
    attributes = {
        "resourceRequest": True,
        "group": state.get("group", ""),
        "version": "*",
        "resource": state.get("resource", ""),
        "subresource": state.get("subresource", ""),
        "namespace": state.get("namespace", ""),
        "name": state.get("name", ""),
        "verb": verb,
    }
    return _decide(attributes, state["user"])


def _field(key: str) -> Callable[[Any], Any]:
    return lambda d: _state(d)[key]


def declarations() -> list[tuple[str, list[Any]]]:
    s, b, r, m = cel.Type.STRING, cel.Type.BOOL, RESOURCE_CHECK, True
    return [
        function("path", overload("authorizer_path", PATH_CHECK, [AUTHORIZER, s], _path, member=m)),
        function("group", overload("authorizer_group", GROUP_CHECK, [AUTHORIZER, s], _group, member=m)),
        function(
            "serviceAccount",
            overload("authorizer_serviceaccount", AUTHORIZER, [AUTHORIZER, s, s], _service_account, member=m),
        ),
        function("resource", overload("groupcheck_resource", r, [GROUP_CHECK, s], _resource, member=m)),
        function(
            "subresource",
            overload("resourcecheck_subresource", r, [r, s], _setter("subresource"), member=m),
        ),
        function("namespace", overload("resourcecheck_namespace", r, [r, s], _setter("namespace"), member=m)),
        function("name", overload("resourcecheck_name", r, [r, s], _setter("name"), member=m)),
        function(
            "check",
            overload("pathcheck_check", DECISION, [PATH_CHECK, s], _path_check, member=m),
            overload("resourcecheck_check", DECISION, [r, s], _resource_check, member=m),
        ),
        function(
            "errored",
            overload("decision_errored", b, [DECISION], lambda d: bool(_state(d)["error"]), member=m),
        ),
        function("error", overload("decision_error", s, [DECISION], _field("error"), member=m)),
        function("allowed", overload("decision_allowed", b, [DECISION], _field("allowed"), member=m)),
        function("reason", overload("decision_reason", s, [DECISION], _field("reason"), member=m)),
    ]
