"""A CronJob controller in the style of the kubebuilder tutorial, on the built-in ``batch/v1`` CronJob.

The test API server stores CronJobs but runs no controller for them; this one creates a Job for each
activation of ``spec.schedule``. Each reconcile:

1. lists the CronJob's Jobs (a field index on their controller) and sorts them into active, successful
   and failed by their ``Complete``/``Failed`` conditions;
2. writes ``status.active`` and ``status.lastScheduleTime`` (from the Jobs' scheduled-at annotation);
3. deletes the oldest finished Jobs beyond ``successfulJobsHistoryLimit``/``failedJobsHistoryLimit``;
4. unless suspended, finds the latest missed activation since the last one (or the CronJob's creation),
   skips it when it is older than ``startingDeadlineSeconds``, applies ``concurrencyPolicy`` (``Forbid``
   waits for the active Jobs, ``Replace`` deletes them) and creates the Job ``<name>-<unix minutes>``;
5. requeues for the next activation.

Time comes from a ``Clock`` so tests can move it.
"""

from datetime import UTC, datetime, timedelta

import structlog

from framework.apiserver.registry.batch.cron import parse_standard
from framework.builder import Builder
from framework.client import AlreadyExists, NotFound, ReaderWriter
from framework.clock import Clock, RealClock
from framework.controllerutil import get_controller_of, set_controller_reference
from framework.manager import Manager
from framework.meta.time import format_time, parse_time
from framework.reconcile import Request, Result

CRONJOB = ("batch/v1", "CronJob")
JOB = ("batch/v1", "Job")
SCHEDULED_AT = "batch.tutorial.kubebuilder.io/scheduled-at"
OWNER_INDEX = ".metadata.controller"  # Jobs by the name of the CronJob controlling them
MAX_MISSED = 100  # more missed activations than this: the clock is off, as the tutorial says

log = structlog.get_logger("cronjob-controller")


def finished(job: dict) -> str | None:
    """``Complete`` or ``Failed`` when the Job has that condition set to True."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return None


def scheduled_time(job: dict) -> datetime | None:
    return parse_time((job["metadata"].get("annotations") or {}).get(SCHEDULED_AT))


class CronJobReconciler:
    def __init__(self, client: ReaderWriter, clock: Clock | None = None) -> None:
        self.client = client
        self.clock = clock or RealClock()

    def reconcile(self, request: Request) -> Result | None:
        try:
            cronjob = self.client.get(*CRONJOB, request.name, request.namespace)
        except NotFound:
            return None
        jobs = self.client.list(*JOB, request.namespace, field_selector={OWNER_INDEX: request.name})["items"]
        active = [j for j in jobs if finished(j) is None]
        successful = [j for j in jobs if finished(j) == "Complete"]
        failed = [j for j in jobs if finished(j) == "Failed"]

        times = [t for t in map(scheduled_time, jobs) if t is not None]
        status = cronjob.setdefault("status", {})
        status["active"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": j["metadata"]["name"],
                "namespace": request.namespace,
                "uid": j["metadata"]["uid"],
                "resourceVersion": j["metadata"]["resourceVersion"],
            }
            for j in active
        ] or None
        if times:
            status["lastScheduleTime"] = format_time(max(times))
        status = {k: v for k, v in status.items() if v is not None}
        cronjob["status"] = status
        cronjob = self.client.update_status(cronjob)

        spec = cronjob["spec"]
        self.prune(failed, spec.get("failedJobsHistoryLimit"))
        self.prune(successful, spec.get("successfulJobsHistoryLimit"))
        if spec.get("suspend"):
            return None

        now = self.clock.now()
        missed, upcoming = self.activations(cronjob, now)
        result = Result(requeue_after=max((upcoming - now).total_seconds(), 0.0))
        if missed is None:
            return result
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and missed + timedelta(seconds=deadline) < now:
            log.info("missed the starting deadline", scheduled=format_time(missed))
            return result
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and active:
            return result
        if policy == "Replace":
            for job in active:
                self.delete(job)
        job = self.job_for(cronjob, missed)
        try:
            self.client.create(job)
            log.info("created job", job=job["metadata"]["name"])
        except AlreadyExists:
            pass  # created by an earlier reconcile that did not see it in the cache yet
        return result

    def activations(self, cronjob: dict, now: datetime) -> tuple[datetime | None, datetime]:
        """The latest activation at or before ``now`` not yet run, and the next one after ``now``."""
        schedule = parse_standard(cronjob["spec"]["schedule"])
        meta, status = cronjob["metadata"], cronjob.get("status") or {}
        earliest = parse_time(status.get("lastScheduleTime")) or parse_time(meta["creationTimestamp"])
        assert earliest is not None
        deadline = cronjob["spec"].get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - timedelta(seconds=deadline))
        missed = None
        t = schedule.next_after(earliest)
        for _ in range(MAX_MISSED):
            if t > now:
                break
            missed, t = t, schedule.next_after(t)
        else:
            raise RuntimeError(f"more than {MAX_MISSED} missed start times: check the clock")
        return missed, schedule.next_after(now)

    def job_for(self, cronjob: dict, when: datetime) -> dict:
        template = cronjob["spec"]["jobTemplate"]
        meta = template.get("metadata") or {}
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{cronjob['metadata']['name']}-{int(when.timestamp()) // 60}",
                "namespace": cronjob["metadata"]["namespace"],
                "labels": dict(meta.get("labels") or {}),
                "annotations": {**(meta.get("annotations") or {}), SCHEDULED_AT: format_time(when)},
            },
            "spec": template["spec"],
        }
        set_controller_reference(cronjob, job)
        return job

    def prune(self, jobs: list[dict], limit: int | None) -> None:
        if limit is None:
            return
        oldest_first = sorted(jobs, key=lambda j: scheduled_time(j) or datetime.min.replace(tzinfo=UTC))
        for job in oldest_first[: max(len(jobs) - limit, 0)]:
            self.delete(job)

    def delete(self, job: dict) -> None:
        try:
            meta = job["metadata"]
            self.client.delete(*JOB, meta["name"], meta["namespace"], propagation_policy="Background")
        except NotFound:
            pass


def setup(mgr: Manager, clock: Clock | None = None) -> None:
    """Register the controller with ``mgr``."""

    def controller_name(job: dict) -> list[str]:
        owner = get_controller_of(job)
        return [owner["name"]] if owner and owner.get("kind") == "CronJob" else []

    mgr.add_field_index(*JOB, OWNER_INDEX, controller_name)
    Builder(mgr).named("cronjob").for_(*CRONJOB).owns(*JOB).complete(CronJobReconciler(mgr.client, clock))


if __name__ == "__main__":
    from framework.client import Client, get_config

    mgr = Manager(Client.from_config(get_config()), health_probe_bind_address=":8081")
    setup(mgr)
    mgr.start()
