"""The Project-activity reconciler: records that something
happened in a Project's namespace by setting ``status.lastActivityTimestamp`` to now (whole seconds)."""

from __future__ import annotations

from typing import cast

import structlog

from framework.client import NotFound, ReaderWriter
from framework.clock import Clock
from framework.markers.rbac import rbac
from framework.meta.time import format_time, parse_time_or_none, rfc3339_copy
from framework.reconcile import Request, Result
from gcm.apis.constants import GROUP_CORE, PROJECT
from gcm.apis.constants import PROJECT_STATUS_LAST_ACTIVITY_TIMESTAMP as LAST_ACTIVITY
from gcm.apis.core_v1beta1 import Project

log = structlog.get_logger("gcm.controllers.project.activity")


# status.lastActivityTimestamp (status patch).
@rbac(groups=GROUP_CORE, resources="projects/status", verbs="patch")
class ActivityReconciler:
    """Patches the Project's status subresource; a patch is skipped when the value would not change."""

    def __init__(self, client: ReaderWriter, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    def reconcile(self, request: Request) -> Result | None:
        try:
            project = self.client.get(*PROJECT, request.name)
        except NotFound:
            return None
        now = rfc3339_copy(self.clock.now())
        if parse_time_or_none((cast(Project, project).get("status") or {}).get(LAST_ACTIVITY)) == now:
            return None
        self.client.patch(
            *PROJECT, request.name, {"status": {LAST_ACTIVITY: format_time(now)}}, subresource="status"
        )
        log.debug("project activity recorded", project=request.name, at=format_time(now))
        return None
