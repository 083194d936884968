"""authentication.k8s.io/v1 SelfSubjectReview (``kubectl auth whoami``): create-only, answered with the
requester as authenticated and never stored."""

from __future__ import annotations

from typing import Any

from framework.apiserver.encoding import timefmt
from framework.apiserver.registry.strategy import review_strategy


def whoami(server: Any, body: dict, requester: Any, namespace: str | None) -> dict:
    return {
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": timefmt.now_time()},
        "status": {"userInfo": requester.as_dict()},
    }


STRATEGIES = [
    review_strategy("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", False, whoami),
]
