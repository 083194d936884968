"""authentication.k8s.io/v1 TokenReview: create-only, evaluated by the server and never stored."""

from __future__ import annotations

from ... import decoding
from ..strategy import review_strategy

STRATEGIES = [
    review_strategy(
        "authentication.k8s.io",
        "tokenreviews",
        "TokenReview",
        False,
        decoding.shape(decoding.strings("spec.audiences[]")),
    ),
]
