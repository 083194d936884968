"""authorization.k8s.io/v1 SubjectAccessReview: create-only, evaluated by the server and never stored."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.registry.authorization.accessreview import access_reviewer
from framework.apiserver.registry.strategy import review_strategy

STRATEGIES = [
    review_strategy(
        "authorization.k8s.io",
        "subjectaccessreviews",
        "SubjectAccessReview",
        False,
        access_reviewer("SubjectAccessReview"),
        decoding.shape(decoding.strings("spec.groups[]")),
    ),
]
