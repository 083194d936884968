"""A Project deleted by the stale controller goes through the Project controller's normal deletion
flow: confirmation annotation and DELETE by ``project-stale``; namespace deletion and finalizer removal
by ``project``. Runs when the Project controller is in the tree (else only the stale controller's part
is asserted, in test_stale_scenarios_e2e.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from framework.client import NotFound
from framework.meta.time import format_time

CORE = "core.gardener.cloud/v1beta1"
DAY = timedelta(hours=24)


def test_stale_deletion_runs_the_project_controllers_finalizer_flow(env):
    project_controller = pytest.importorskip("gcm.controllers.project.project")
    # The Project controller creates the namespace and adds its finalizer.
    env.admin.create(
        {
            "apiVersion": CORE,
            "kind": "Project",
            "metadata": {"name": "flow"},
            "spec": {"namespace": "garden-flow"},
        }
    )
    h = env.manager(minimum=5, grace=10, expiration=15, with_activity=False, also=(project_controller,))
    env.wait_for(
        lambda: (env.get_project("flow") or {}).get("metadata", {}).get("finalizers"),
        what="project finalizer",
    )

    def namespace() -> dict | None:
        try:
            return env.admin.get("v1", "Namespace", "garden-flow")
        except NotFound:
            return None  # not created yet: the Project controller adds the finalizer first

    ns = env.wait_for(namespace, what="project namespace")
    # The stale check waited for the namespace; its creation triggers another check. Let that one run
    # (cache has the namespace, controller idle), so no check still queued can run between the clock
    # change and the patch below and overwrite the patched staleSinceTimestamp with its own.
    h.seen(ns)
    h.idle("flow")
    assert all(not isinstance(outcome, Exception) for _, outcome in h.stale.finished["flow"])
    now = env.age("flow", 100)
    stale_since = format_time(now - 30 * DAY)
    env.patch_status("flow", staleSinceTimestamp=stale_since)
    # The check must see the patched status: wait until the manager's cache has it, unless the check
    # the patch itself triggers (a status change) got there first and the deletion already began, or
    # even ended (the whole flow can finish within one poll).

    def patched_or_acted_on() -> bool:
        cached = h.cached_project("flow")
        if cached is None or cached["metadata"].get("deletionTimestamp"):
            return True
        return (cached.get("status") or {}).get("staleSinceTimestamp") == stale_since

    env.wait_for(patched_or_acted_on, what="cached staleSinceTimestamp")
    h.check("flow")
    # Deleted by the stale controller, then finished by the Project controller: namespace and Project gone.
    env.wait_for(lambda: env.get_project("flow") is None, timeout=30, what="project gone")

    env.wait_for(lambda: namespace() is None, timeout=30, what="namespace gone")
    assert env.sa_requests("delete", "projects") == 1
