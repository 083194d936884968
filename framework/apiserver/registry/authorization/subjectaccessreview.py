"""authorization.k8s.io/v1 SubjectAccessReview: create-only, evaluated by the server and never stored."""

from __future__ import annotations

from ... import decoding
from ..strategy import review_strategy
from .accessreview import access_reviewer

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
