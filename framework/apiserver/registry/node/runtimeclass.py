"""node.k8s.io/v1 RuntimeClass: the generic strategy with kubectl's printer columns."""

from __future__ import annotations

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.registry import printing

PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Handler", "Handler specifies the underlying runtime and configuration."),
        printing.AGE,
    ],
    lambda o, now: [printing.name(o), o.get("handler", ""), printing.age(o, now)],
)

STRATEGIES = [strategy("node.k8s.io", "v1", "runtimeclasses", printer=PRINTER)]
