"""apps/v1 ControllerRevision: the generic strategy with kubectl's printer columns."""

from __future__ import annotations

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing


def _controller(obj: dict) -> str:
    """``kind.group/name`` of the controller owner (``formatResourceName`` with the kind), or ``<none>``."""
    for ref in as_dict(obj.get("metadata")).get("ownerReferences") or []:
        ref = as_dict(ref)
        if ref.get("controller") is True:
            api_version = str(ref.get("apiVersion") or "")
            group = api_version.rpartition("/")[0]
            kind = f"{ref.get('kind', '')}.{group}" if group else str(ref.get("kind", ""))
            return f"{kind.lower()}/{ref.get('name', '')}"
    return "<none>"


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Controller", "Controller of the object"),
        printing.col("Revision", "Revision indicates the revision of the state represented by Data."),
        printing.AGE,
    ],
    lambda o, now: [printing.name(o), _controller(o), o.get("revision", 0), printing.age(o, now)],
)

STRATEGIES = [strategy("apps", "v1", "controllerrevisions", printer=PRINTER)]
