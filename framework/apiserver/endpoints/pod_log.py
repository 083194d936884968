"""``GET pods/NAME/log`` query options (``PodLogOptions``, ``ValidatePodLogOptions``): only served
with simulated nodes, whose kubelets answer it (``controllers/simulated/kubelet.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from framework.apiserver.endpoints.params import parse_int64, query_bool
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.meta import field


@dataclass(frozen=True)
class PodLogOptions:
    container: str | None
    previous: bool
    follow: bool


def pod_log_options(q: Any, name: str) -> PodLogOptions:
    """The options of a log request for Pod ``name``; 422 as ``PodLogOptions`` validation words a bad
    count."""
    errs = []
    for option, minimum, detail in (
        ("tailLines", 0, "must be greater than or equal to 0"),
        ("limitBytes", 1, "must be greater than 0"),
        ("sinceSeconds", 1, "must be greater than 0"),
    ):
        if option in q:
            value = parse_int64(q[option])
            if value < minimum:
                errs.append(errors.invalid_value(option, value, detail))
    if "sinceSeconds" in q and "sinceTime" in q:
        errs.append(errors.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    if errs:
        text = field.aggregate(e.message() for e in errs)
        raise StatusError(
            422,
            "Invalid",
            f'PodLogOptions "{name}" is invalid: {text}',
            {"name": name, "kind": "PodLogOptions", "causes": [e.cause() for e in errs]},
        )
    return PodLogOptions(
        q.get("container") or None, bool(query_bool(q, "previous")), bool(query_bool(q, "follow"))
    )
