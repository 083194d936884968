"""Every field index gcm's controllers look up, added to the Manager's cache once, where the Manager is
built (Gardener's ``AddAllFieldIndexes`` in ``pkg/controllermanager/controller/add.go``, called by
``cmd/gardener-controller-manager/app``): controllers only read them.

Adding an index also requests its kind's informer, so the cache lists and watches Projects,
SecretBindings, CredentialsBindings and Shoots from the start (every Project controller reads them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from framework.manager import Manager
from gcm.apis.constants import PROJECT
from gcm.controllers.project.indexes import PROJECT_NAMESPACE_INDEX, project_namespace
from gcm.controllers.project.stale.cache import INDEXES as STALE_INDEXES

IndexFunc = Callable[[dict], list[str]]

FIELD_INDEXES: Mapping[tuple[str, str], Mapping[str, IndexFunc]] = {
    # project, project-resourcequota, project-stale, project-activity: a namespace's Project.
    PROJECT: {PROJECT_NAMESPACE_INDEX: project_namespace},
    # project-stale: the bindings that reference a Secret or Quota, the Shoots that use a binding.
    **STALE_INDEXES,
}
"""Index functions by kind (``(apiVersion, kind)``) and index name."""


def add_all_field_indexes(mgr: Manager) -> None:
    """Register every index of :data:`FIELD_INDEXES` with ``mgr``'s cache; call it once, before the
    Manager starts (``gcm.cmd.app.build_manager``, and test harnesses building their own Manager)."""
    for (api_version, kind), indexes in FIELD_INDEXES.items():
        for name, func in indexes.items():
            mgr.add_field_index(api_version, kind, name, func)
