"""networking.k8s.io/v1 IngressClass: the generic strategy with kubectl's printer columns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing


def _cells(ic: dict, now: datetime) -> list[Any]:
    spec = as_dict(ic.get("spec"))
    parameters = "<none>"
    if isinstance(spec.get("parameters"), dict):
        ref = spec["parameters"]
        group = f".{ref['apiGroup']}" if isinstance(ref.get("apiGroup"), str) else ""
        parameters = f"{ref.get('kind', '')}{group}/{ref.get('name', '')}"
    return [printing.name(ic), spec.get("controller", ""), parameters, printing.age(ic, now)]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Controller", "Controller that is responsible for handling this class"),
        printing.col("Parameters", "A reference to a resource with additional parameters"),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [strategy("networking.k8s.io", "v1", "ingressclasses", printer=PRINTER)]
