"""The create-only review APIs and the ServiceAccount ``token`` subresource (TokenRequest, 10-6, 22-3):
answered at once, never stored. Each review kind's strategy evaluates it (``ResourceType.review``: the
kinds of ``registry/authentication`` and ``registry/authorization``, the catalog's echo for the rest)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from framework.apiserver.auth import tokens
from framework.apiserver.auth.authenticator import UserInfo
from framework.apiserver.encoding import decoding, timefmt
from framework.apiserver.machinery import errors
from framework.apiserver.registry.rest.options import Result
from framework.apiserver.registry.rest.typed import decode_builtin
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.time import format_time

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer


def create_review(
    server: APIServer, rt: ResourceType, namespace: str | None, name: str | None, body: Any, user: UserInfo
) -> Result:
    """The create-only review APIs and the ServiceAccount TokenRequest (10-6, 22-3)."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"{rt.kind} must be a JSON object")
    if rt.resource == "serviceaccounts":
        decoding.decode(rt.subresource_null_shapes["token"], body)
        decode_builtin(rt, body, model="AuthenticationV1TokenRequest", kind="TokenRequest")
    else:
        decoding.decode(rt.null_shape, body)
        decode_builtin(rt, body)
    if rt.resource == "serviceaccounts":
        _check_token_request_meta(body, namespace or "", name or "")
        sa = server.api.get_stored(rt, namespace, name or "")
        spec = dict(body.get("spec") or {})
        seconds = spec.get("expirationSeconds")
        seconds = 3600 if seconds is None else seconds
        # ValidateTokenRequest: at least 10 minutes, at most 2^32 seconds.
        too = (
            "less than 10 minutes"
            if not isinstance(seconds, int) or seconds < 600
            else "larger than 2^32 seconds"
            if seconds > 1 << 32
            else None
        )
        if too:
            detail = f"may not specify a duration {too}"
            raise errors.invalid(
                "TokenRequest",
                "authentication.k8s.io",
                name or "",
                [errors.invalid_value("spec.expirationSeconds", seconds, detail)],
            )
        spec["expirationSeconds"] = seconds
        spec["audiences"] = list(spec.get("audiences") or tokens.API_AUDIENCES)
        private = {"namespace": namespace or "", "serviceaccount": tokens.ref(sa)}
        private.update(_bound_claims(server, namespace or "", name or "", spec.get("boundObjectRef")))
        token, claims = server.authenticator.mint_service_account_token(private, spec["audiences"], seconds)
        exp = claims.exp
        if server.store is not None:
            server.store.add_token(token, "serviceaccount", claims.as_stored())
        expires = format_time(datetime.fromtimestamp(exp, UTC))
        return Result(
            201,
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "creationTimestamp": timefmt.now_time(),
                },
                "spec": spec,
                "status": {"token": token, "expirationTimestamp": expires},
            },
        )
    assert rt.review is not None  # every create-only kind has one (review_strategy, the catalog's echo)
    return Result(201, rt.review(server, body, user, namespace))


def _bound_claims(server: APIServer, namespace: str, sa_name: str, ref: Any) -> dict[str, Any]:
    """The private claims naming the object a TokenRequest binds its token to (``boundObjectRef``), as
    ``pkg/registry/core/serviceaccount/storage/token.go`` checks it: a Pod (running as this
    ServiceAccount; its Node is named too), a Secret or a Node, which must exist (404) and, when the
    reference carries a UID, have it (409)."""
    if not isinstance(ref, dict):
        return {}
    api_version, kind, obj_name = ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or ""
    group, _, version = api_version.rpartition("/")
    resource = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}.get(kind) if not group else None
    if resource is None:
        raise errors.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    obj = server.storage.get(resource, ("" if kind == "Node" else namespace, obj_name))
    if obj is None:
        raise errors.not_found(resource, "", obj_name)
    claims: dict[str, Any] = {kind.lower(): tokens.ref(obj)}
    if kind == "Pod":
        if (obj.get("spec") or {}).get("serviceAccountName") != sa_name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{sa_name}" to pod running with different '
                "serviceaccount name."
            )
        node_name = (obj.get("spec") or {}).get("nodeName")
        if node_name:  # ServiceAccountTokenPodNodeInfo: the node's name, and its UID if it exists
            node = server.storage.get("nodes", ("", node_name))
            claims["node"] = tokens.ref(node) if node is not None else {"name": node_name}
    uid = ref.get("uid") or ""
    if uid and uid != claims[kind.lower()]["uid"]:
        raise errors.conflict(
            kind,
            "",
            obj_name,
            f"the UID in the bound object reference ({uid}) does not match the UID in record. "
            "The object might have been deleted and then recreated",
        )
    return claims


SA_NAME_MISMATCH = "must match the service account name if specified"


def _check_token_request_meta(body: dict, namespace: str, name: str) -> None:
    """A TokenRequest's own name and namespace, when it gives them, are the URL's: a namespace that
    differs is the create handler's 400 (``EnsureObjectNamespaceMatchesRequestNamespace``), a name that
    differs the TokenREST's 422 (``pkg/registry/core/serviceaccount/storage/token.go``)."""
    meta = body.get("metadata") or {}
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    if meta.get("name") and meta["name"] != name:
        raise errors.invalid(
            "TokenRequest",
            "authentication.k8s.io",
            name,
            [errors.invalid_value("metadata.name", meta["name"], SA_NAME_MISMATCH)],
        )
