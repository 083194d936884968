"""``gcm_projects{phase}``: the Projects in each phase, counted from the manager's Project cache when
scraped (nothing is recorded per reconcile, and a Project that is gone is gone from the count).

``phase`` is one of Gardener's four phases (``Pending``, ``Ready``, ``Failed``, ``Terminating``) or
``Unknown`` (no ``status.phase`` yet, or a value gcm does not know), every one exported even at zero
so that a dashboard or an alert always finds its series; the label set is fixed, whatever the Projects
hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from gcm.apis.constants import PROJECT_FAILED, PROJECT_PENDING, PROJECT_READY, PROJECT_TERMINATING

__all__ = ["PHASES", "UNKNOWN_PHASE", "ProjectPhaseCollector"]

PHASES = (PROJECT_PENDING, PROJECT_READY, PROJECT_FAILED, PROJECT_TERMINATING)
UNKNOWN_PHASE = "Unknown"

_NAME = "gcm_projects"
_HELP = "Projects by status.phase (Unknown: none yet, or not one of Gardener's phases)."


class ProjectPhaseCollector(Collector):
    """Counts the Projects of ``indexer`` (an informer's store: ``list()`` of Project dicts) by phase."""

    def __init__(self, indexer: Any) -> None:
        self._indexer = indexer

    def describe(self) -> Iterable[Any]:
        return [GaugeMetricFamily(_NAME, _HELP)]

    def collect(self) -> Iterable[Any]:
        counts = dict.fromkeys((*PHASES, UNKNOWN_PHASE), 0)
        for project in self._indexer.list():
            status = project.get("status")
            phase = status.get("phase") if isinstance(status, dict) else None
            counts[phase if phase in counts else UNKNOWN_PHASE] += 1
        family = GaugeMetricFamily(_NAME, _HELP, labels=["phase"])
        for phase, count in counts.items():
            family.add_metric([phase], count)
        return [family]
