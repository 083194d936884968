"""authentication.k8s.io/v1 TokenReview: create-only, evaluated by the server and never stored: is the
token one this server authenticates, and as whom (``pkg/registry/authentication/tokenreview``)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.auth import tokens
from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry.strategy import review_strategy
from framework.meta.object import get_metadata


def token_review(server: Any, body: dict, requester: Any, namespace: str | None) -> dict:
    """The review answered: the token's user, or ``authenticated: false`` with upstream's error."""
    spec = as_dict(body.get("spec"))
    token = spec.get("token") or ""
    user, error = server.authenticator.check_token(token) if token else (None, "invalid bearer token")
    # TokenReviewStatus.Authenticated is `omitempty`: kube leaves it out of a refusal; `user` is a
    # struct, never left out by Go's encoder, so a refusal carries `"user": {}`.
    status: dict[str, Any] = {"user": user.as_dict() if user else {}}
    if user is None:
        status["error"] = error
    else:  # the audiences the token is good for among those asked about (default: the API's)
        status = {"authenticated": True, **status}
        status["audiences"] = list(spec.get("audiences") or tokens.API_AUDIENCES)
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
