"""The stale reconciler's status patch is locked to the Project it was computed from
(``with_optimistic_lock``): against the test API server, as gcm's ServiceAccount, a lock on an outdated
resourceVersion is refused with 409 and writes nothing, as kube-apiserver refuses it; the current one
applies."""

from __future__ import annotations

import pytest

from framework.client import Client, Conflict, with_optimistic_lock

CORE = "core.gardener.cloud/v1beta1"


def test_a_status_patch_locked_to_an_outdated_project_conflicts(env):
    env.project("lock")
    sa = Client.from_kubeconfig(env.embedded.gcm_kubeconfig, qps=0)
    try:
        read = sa.get(CORE, "Project", "lock")  # what a check decides from
        # Another write lands first (a fresh activity, or our own last status patch).
        newer = env.patch_status("lock", lastActivityTimestamp="2025-06-01T12:00:00Z")
        assert newer["metadata"]["resourceVersion"] != read["metadata"]["resourceVersion"]

        stale = {"status": {"staleSinceTimestamp": "2025-06-02T12:00:00Z"}}
        with pytest.raises(Conflict):
            sa.patch(CORE, "Project", "lock", with_optimistic_lock(stale, read), subresource="status")
        assert env.get_project("lock") == newer  # nothing written, resourceVersion unchanged

        done = sa.patch(CORE, "Project", "lock", with_optimistic_lock(stale, newer), subresource="status")
        assert done["status"]["staleSinceTimestamp"] == "2025-06-02T12:00:00Z"
        assert done["status"]["lastActivityTimestamp"] == "2025-06-01T12:00:00Z"
        assert int(done["metadata"]["resourceVersion"]) > int(newer["metadata"]["resourceVersion"])
    finally:
        sa.close()
