"""docs/examples/cronjob.py, a kubebuilder-tutorial-style controller on the framework's Builder, runs
unchanged against the test API server's built-in batch/v1 CronJobs and Jobs (issue 18): a Job per
activation, status.active and lastScheduleTime, concurrencyPolicy Forbid, history limits, suspend.
Time is a FakeClock the test moves; a touch of the CronJob makes the controller look again."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from framework.client import Client
from framework.clock import FakeClock
from framework.manager import Manager
from framework.testing import APIServer, consistently, eventually
from tests.docs.examples import load_example

CJ = ("batch/v1", "CronJob")
JOB = ("batch/v1", "Job")


def jobs(admin: Client) -> list[str]:
    return sorted(j["metadata"]["name"] for j in admin.list(*JOB, "default")["items"])


def touch(admin: Client, n: int) -> None:
    admin.patch(*CJ, "tick", {"metadata": {"annotations": {"touched": str(n)}}}, "default")


def settled(mgr: Manager, **annotations: str) -> None:
    """Wait until the manager's cache holds the CronJob with ``annotations`` and the controller is idle
    (nothing queued, no reconcile running): every later reconcile starts from that CronJob. A reconcile
    already running on an older copy (one woken by a Job's event) could otherwise look at the clock
    after the test moved it."""

    def cached() -> bool:
        meta = mgr.client.get(*CJ, "tick", "default")["metadata"]
        return (meta.get("annotations") or {}).items() >= annotations.items()

    def idle() -> bool:
        active = mgr.registry.get_sample_value("controller_runtime_active_workers", {"controller": "cronjob"})
        queued = mgr.registry.get_sample_value("workqueue_depth", {"name": "cronjob"})
        return active == 0 and queued == 0

    eventually(cached, message=f"the CronJob with {annotations} in the manager's cache")
    eventually(idle, message="the cronjob controller idle")


def complete(admin: Client, name: str) -> None:
    """The status the Job controller writes for a finished Job (kube-apiserver 1.32 requires its fields)."""
    at = "2026-01-01T00:00:00Z"
    status = {
        "startTime": at,
        "completionTime": at,
        "succeeded": 1,
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": at}
            for t in ("SuccessCriteriaMet", "Complete")
        ],
    }
    admin.patch(*JOB, name, {"status": status}, "default", subresource="status")


def test_cronjob_controller_creates_jobs_on_schedule():
    with APIServer() as server:
        admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
        example = load_example("cronjob")
        clock = FakeClock(datetime.now(UTC))
        mgr = Manager(Client.from_kubeconfig(server.kubeconfig, qps=0))
        example.setup(mgr, clock)
        t = threading.Thread(target=mgr.start, name="manager", daemon=True)
        t.start()
        try:
            template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
            admin.create(
                {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "metadata": {"name": "tick", "namespace": "default"},
                    "spec": {
                        "schedule": "* * * * *",
                        "concurrencyPolicy": "Forbid",
                        "successfulJobsHistoryLimit": 1,
                        "jobTemplate": {
                            "metadata": {"labels": {"app": "tick"}},
                            "spec": {"template": template},
                        },
                    },
                }
            )
            # Nothing is due yet: the schedule's first activation is after the creation.
            eventually(lambda: admin.get(*CJ, "tick", "default")["status"] == {}, message="first reconcile")
            assert jobs(admin) == []

            clock.step(61)
            touch(admin, 1)
            (first,) = eventually(lambda: jobs(admin), message="a Job for the missed minute")
            job = admin.get(*JOB, first, "default")
            (owner,) = job["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "tick", True)
            assert job["metadata"]["labels"] == {"app": "tick"}
            assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
            status = eventually(
                lambda: (s := admin.get(*CJ, "tick", "default")["status"]).get("active") and s,
                message="status.active",
            )
            assert [a["name"] for a in status["active"]] == [first]
            assert status["lastScheduleTime"] == job["metadata"]["annotations"][example.SCHEDULED_AT]

            # Forbid: the next minute waits while the first Job runs.
            clock.step(60)
            touch(admin, 2)
            settled(mgr, touched="2")
            assert jobs(admin) == [first]

            # The first Job completes (an owned-object event): active is emptied, the due minute runs.
            complete(admin, first)
            second = eventually(
                lambda: [n for n in jobs(admin) if n != first] or None,
                message="a Job once the first finished",
            )[0]
            eventually(
                lambda: (
                    [a["name"] for a in admin.get(*CJ, "tick", "default")["status"].get("active", [])]
                    == [second]
                ),
                message="only the second Job active",
            )

            # History limit 1: when the second completes, the first (older) successful Job is deleted.
            complete(admin, second)
            eventually(lambda: jobs(admin) == [second], message="the older successful Job pruned")

            # Suspended: time passes, nothing is created. The clock moves only once the controller has
            # seen the suspension (the pruning reconcile may still be running on the unsuspended copy).
            admin.patch(
                *CJ,
                "tick",
                {"metadata": {"annotations": {"suspended": "yes"}}, "spec": {"suspend": True}},
                "default",
            )
            settled(mgr, suspended="yes")
            clock.step(600)
            touch(admin, 3)
            settled(mgr, touched="3")
            consistently(lambda: jobs(admin) == [second], duration=1.0, message="no Job while suspended")
        finally:
            mgr.stop()
            t.join(15)
        assert not t.is_alive()
