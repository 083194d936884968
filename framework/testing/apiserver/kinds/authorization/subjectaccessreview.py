"""authorization.k8s.io/v1 SubjectAccessReview: create-only, evaluated by the server and never stored."""

from __future__ import annotations

from ... import decoding
from ..strategy import review_strategy

STRATEGIES = [
    review_strategy(
        "authorization.k8s.io",
        "subjectaccessreviews",
        "SubjectAccessReview",
        False,
        decoding.shape(decoding.strings("spec.groups[]")),
    ),
]
