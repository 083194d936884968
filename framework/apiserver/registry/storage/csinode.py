"""storage.k8s.io/v1 CSINode: the generic strategy with kubectl's printer columns."""

from __future__ import annotations

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing

PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col(
            "Drivers", "Drivers indicates the number of CSI drivers registered on the node", "integer"
        ),
        printing.AGE,
    ],
    lambda o, now: [
        printing.name(o),
        len(as_dict(o.get("spec")).get("drivers") or []),
        printing.age(o, now),
    ],
)

STRATEGIES = [strategy("storage.k8s.io", "v1", "csinodes", printer=PRINTER)]
