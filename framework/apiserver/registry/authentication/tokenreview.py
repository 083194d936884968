"""authentication.k8s.io/v1 TokenReview: create-only, evaluated by the server and never stored: is the
token one this server authenticates, and as whom (``pkg/registry/authentication/tokenreview``)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.auth import tokens
from framework.apiserver.encoding import decoding
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry.strategy import review_strategy
from framework.meta.object import get_metadata


def token_review(server: Any, body: dict, requester: Any, namespace: str | None) -> dict:
    """The review answered: the token's user and the audiences asked about that the token is good for,
    or ``authenticated: false`` with upstream's error. An empty token is a 400."""
    spec = as_dict(body.get("spec"))
    token = spec.get("token") or ""
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    audiences = list(spec.get("audiences") or tokens.API_AUDIENCES)
    user, error, good = server.authenticator.check_token(token, audiences)
    # TokenReviewStatus.Authenticated is `omitempty`: kube leaves it out of a refusal; `user` is a
    # struct, never left out by Go's encoder, so a refusal carries `"user": {}`.
    status: dict[str, Any] = {"user": user.as_dict() if user else {}}
    if user is None:
        status["error"] = error
    else:  # the audiences asked about that the token is good for (authenticator.Audiences.Intersect)
        status = {"authenticated": True, **status, "audiences": good}
    return {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "metadata": dict(get_metadata(body)),
        "spec": spec,
        "status": status,
    }


STRATEGIES = [
    review_strategy(
        "authentication.k8s.io",
        "tokenreviews",
        "TokenReview",
        False,
        token_review,
        decoding.shape(decoding.strings("spec.audiences[]")),
    ),
]
