"""authorization.k8s.io/v1 SelfSubjectAccessReview: create-only, evaluated by the server and never stored."""

from __future__ import annotations

from framework.apiserver.registry.authorization.accessreview import access_reviewer
from framework.apiserver.registry.strategy import review_strategy

STRATEGIES = [
    review_strategy(
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        access_reviewer("SelfSubjectAccessReview", self_subject=True),
    ),
]
