"""Who a request is and whether it may do what it asks: authentication, impersonation and
authorization of one HTTP request, as k8s.io/apiserver's ``pkg/endpoints/filters`` (``authentication.go``,
``impersonation.go``, ``authorization.go``) do before any handler runs.

The authenticators and the RBAC authorizer themselves are in ``auth.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from framework.apiserver.accounting.requests import REQUEST_INFO, RequestInfo
from framework.apiserver.auth import rbac_escalation
from framework.apiserver.auth.authenticator import UserInfo
from framework.apiserver.auth.authorizer import Attributes, forbidden_message
from framework.apiserver.endpoints.routing import Target
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.machinery.selectors import parse_field_selector, single_name
from framework.apiserver.registry.strategy import ResourceType

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer


class RequestAuth:
    """Authenticates requests and authorizes their paths and resources against one server's policy."""

    def __init__(self, server: APIServer) -> None:
        self.server = server

    def authenticate(self, request: web.Request) -> UserInfo:
        """The requesting user: the authenticated one, or whom it impersonates if allowed to."""
        peercert = request.transport.get_extra_info("peercert") if request.transport else None
        user = self.server.authenticator.authenticate(request.headers, peercert)
        as_user = request.headers.get("Impersonate-User")
        as_groups = request.headers.getall("Impersonate-Group", [])
        if not as_user:
            if as_groups:
                raise errors.bad_request("requested impersonation of groups without impersonating a user")
            return user
        targets = [("users", "", as_user)] + [("groups", "", g) for g in as_groups]
        if as_user.startswith("system:serviceaccount:") and as_user.count(":") == 3:
            _, _, sa_ns, sa_name = as_user.split(":")
            targets[0] = ("serviceaccounts", sa_ns, sa_name)
        for resource, ns, name in targets:
            a = Attributes(user, "impersonate", True, "", "v1", resource, "", name, ns)
            if not self.allowed(a):
                raise errors.forbidden_error(resource, "", name, forbidden_message(a))
        groups = tuple(as_groups)
        if as_user.startswith("system:serviceaccount:") and not groups:
            sa_ns = as_user.split(":")[2]
            groups = ("system:serviceaccounts", f"system:serviceaccounts:{sa_ns}")
        return UserInfo(as_user, "", groups).with_authenticated()

    def allowed(self, a: Attributes) -> bool:
        """Whether the server's authorization mode allows ``a``."""
        return self.server.authorization == "AlwaysAllow" or self.server.authorizer.allowed(a)

    def authorize_path(self, request: web.Request) -> None:
        """403 unless the user may use the request's method on its (non-resource) path."""
        info: RequestInfo = request[REQUEST_INFO]
        a = Attributes(info.user, request.method.lower(), False, path=request.path)
        if not self.allowed(a):
            raise StatusError(403, "Forbidden", "forbidden: " + forbidden_message(a), {})

    def authorize_resource(self, request: web.Request, t: Target, verb: str) -> None:
        """403 unless the user may ``verb`` the resource ``t`` addresses; records verb and resource."""
        info: RequestInfo = request[REQUEST_INFO]
        rt = t.rt
        info.verb, info.resource = verb, rt.qualified + (f"/{t.subresource}" if t.subresource else "")
        # Role writes authorize ``escalate`` against the URL's name, as RoleEscalationAuthorized does.
        rbac_escalation.REQUEST_NAME.set(t.name or "")
        name = t.name or ""
        if verb in ("list", "watch") and not name:
            # A field selector pinning metadata.name authorizes like a request for that name.
            name = _pinned_name(rt, request.query.get("fieldSelector"))
        namespace = t.namespace or ""
        if not namespace and t.name and rt.group == "" and rt.resource == "namespaces":
            # apiserver's RequestInfoFactory reads /api/v1/namespaces/NAME[/status|/finalize] as a
            # request in namespace NAME: a RoleBinding there may grant reading its own Namespace.
            namespace = t.name
        a = Attributes(
            info.user,
            verb,
            True,
            rt.group,
            rt.version,
            rt.resource,
            t.subresource or "",
            name,
            namespace,
        )
        if not self.allowed(a):
            raise errors.forbidden_error(rt.resource, rt.group, t.name or "", forbidden_message(a))


def _pinned_name(rt: ResourceType, field_selector: str | None) -> str:
    if not field_selector:
        return ""
    try:
        return single_name(parse_field_selector(field_selector, rt.selectable_fields(), True)) or ""
    except StatusError:
        return ""  # a bad selector is answered after authorization, as 400
