"""What the three access-review kinds share: evaluating the review against the server's authorizer
(``pkg/registry/authorization``)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.auth.authorizer import Attributes, access_review
from framework.apiserver.registry.strategy import Review


def access_reviewer(kind: str, *, self_subject: bool = False, local: bool = False) -> Review:
    """The review function of an access-review ``kind`` (see :func:`~...auth.access_review`)."""

    def review(server: Any, body: dict, requester: Any, namespace: str | None) -> dict:
        def decide(a: Attributes) -> bool:
            return server.authorization == "AlwaysAllow" or server.authorizer.allowed(a)

        def explain(a: Attributes) -> str | None:
            return None if server.authorization == "AlwaysAllow" else server.authorizer.allowed_by(a)

        return access_review(
            kind, body, requester, namespace, decide, self_subject=self_subject, local=local, explain=explain
        )

    return review
