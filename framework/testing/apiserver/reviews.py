"""The create-only review APIs and the ServiceAccount ``token`` subresource (TokenRequest, 10-6, 22-3):
answered at once, never stored. Each review kind's strategy evaluates it (``ResourceType.review``: the
kinds of ``kinds/authentication`` and ``kinds/authorization``, the catalog's echo for the rest)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from framework.meta.time import format_time

from . import decoding, errors, timefmt, tokens
from .auth import UserInfo
from .kinds.strategy import ResourceType
from .rest.options import Result
from .rest.typed import decode_builtin

if TYPE_CHECKING:
    from .server import APIServer


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
        token, exp = server.authenticator.mint_service_account_token(
            namespace or "",
            name or "",
            sa["metadata"]["uid"],
            spec["audiences"],
            seconds,
            spec.get("boundObjectRef"),
        )
        if server.store is not None:
            sa_ref = [namespace or "", name or "", sa["metadata"]["uid"]]
            server.store.add_token(token, "serviceaccount", sa_ref)
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
