"""The Job controller (``pkg/controller/job``, simplified) and the TTL-after-finished controller: up to
``parallelism`` Pods at a time until ``completions`` succeeded (``Indexed`` Jobs: one per index, with
the completion-index annotation, label, hostname and ``JOB_COMPLETION_INDEX``), ``suspend``; then
``SuccessCriteriaMet`` and, once no Pod is left running, ``Complete`` with ``completionTime`` (the
order and fields kube-apiserver's Job status validation requires). Simulated Pods never fail, so
``backoffLimit``, ``podFailurePolicy`` and ``activeDeadlineSeconds`` never act; Pods carry no
``batch.kubernetes.io/job-tracking`` finalizer."""

from __future__ import annotations

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import CONTROLLER_MANAGER, Context, owner_reference
from framework.apiserver.controllers.simulated.pods import is_active, is_ready, phase, pod_from_template
from framework.apiserver.encoding import timefmt
from framework.apiserver.registry.rest.objects import deep_copy
from framework.meta.time import now, parse_time

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPONENT = "job-controller"
REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")


def _index(pod: dict) -> int | None:
    value = (pod["metadata"].get("annotations") or {}).get(COMPLETION_INDEX)
    return int(value) if value is not None and value.isdigit() else None


def format_indexes(indexes: set[int]) -> str:
    """``completedIndexes``: ascending, runs as ``first-last`` (``1,3-5``)."""
    parts: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def set_job_condition(status: dict, ctype: str, value: str, reason: str, message: str) -> bool:
    conditions = status.setdefault("conditions", [])
    at = timefmt.now_time()
    for c in conditions:
        if c.get("type") == ctype:
            if c.get("status") == value:
                return False
            c.update(
                {
                    "status": value,
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": at,
                    "lastTransitionTime": at,
                }
            )
            return True
    conditions.append(
        {
            "type": ctype,
            "status": value,
            "lastProbeTime": at,
            "lastTransitionTime": at,
            "reason": reason,
            "message": message,
        }
    )
    return True


def is_finished(job: dict) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


class JobController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("simulated-job-controller", self.sync)
        self.ttl_queue = WorkQueue("simulated-ttl-after-finished-controller", self.expire)
        self.queues = [self.queue, self.ttl_queue]

    def sync(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        job = ctx.get(ctx.jobs, *key)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        if is_finished(job):
            self.ttl_queue.add(key)
            return
        spec = job.get("spec") or {}
        status = deep_copy(job.get("status") or {})
        pods = ctx.owned(ctx.pods, job)
        active = [p for p in pods if is_active(p)]
        succeeded_pods = [p for p in pods if phase(p) == "Succeeded"]
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        done_indexes = {i for p in succeeded_pods if (i := _index(p)) is not None}
        succeeded = len(done_indexes) if indexed else len(succeeded_pods)
        succeeded = max(succeeded, int(status.get("succeeded") or 0))
        if spec.get("suspend"):
            for pod in active:
                ctx.delete(ctx.pods, pod)
            status.pop("startTime", None)
            set_job_condition(status, "Suspended", "True", "JobSuspended", "Job suspended")
            active = []
        else:
            if any(
                c.get("type") == "Suspended" and c.get("status") == "True"
                for c in status.get("conditions") or []
            ):
                set_job_condition(status, "Suspended", "False", "JobResumed", "Job resumed")
            status.setdefault("startTime", timefmt.now_time())
        reached = (completions is not None and succeeded >= completions) or (
            completions is None and succeeded > 0
        )
        met = any(
            c.get("type") == "SuccessCriteriaMet" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        if reached:
            for pod in active:
                ctx.delete(ctx.pods, pod)  # the rest of a work queue's Pods stop
            if not met:
                set_job_condition(status, "SuccessCriteriaMet", "True", *REACHED)
                self.queue.add(key)
        elif not spec.get("suspend"):
            active += self._start_pods(job, active, succeeded, done_indexes)
        still = [p for p in ctx.owned(ctx.pods, job) if phase(p) not in ("Succeeded", "Failed")]
        status.update(
            {
                "active": len([p for p in still if is_active(p)]),
                "ready": sum(1 for p in still if is_active(p) and is_ready(p)),
                "succeeded": succeeded,
                "terminating": len([p for p in still if p["metadata"].get("deletionTimestamp")]),
                "uncountedTerminatedPods": {},
            }
        )
        for k in ("active", "succeeded"):
            if not status[k]:
                del status[k]
        if indexed and done_indexes:
            status["completedIndexes"] = format_indexes(done_indexes)
        if reached and met and not still:  # a sync after SuccessCriteriaMet, as kube's controller
            status["completionTime"] = timefmt.now_time()
            set_job_condition(status, "Complete", "True", *REACHED)
        if ctx.write_status(ctx.jobs, job, status, CONTROLLER_MANAGER) and is_finished({"status": status}):
            ctx.event(job, ctx.jobs, "Normal", "Completed", "Job completed", COMPONENT)
            self.ttl_queue.add(key)

    def _start_pods(self, job: dict, active: list[dict], succeeded: int, done: set[int]) -> list[dict]:
        ctx = self.ctx
        meta, spec = job["metadata"], job.get("spec") or {}
        completions = spec.get("completions")
        parallelism = spec.get("parallelism", 1)
        wanted = parallelism if completions is None else min(parallelism, completions - succeeded)
        count = max(wanted - len(active), 0)
        indexes: list[int | None] = [None] * count
        if spec.get("completionMode") == "Indexed":
            busy = {_index(p) for p in active}
            free = [i for i in range(completions or 0) if i not in done and i not in busy]
            indexes = list[int | None](free[:count])
        created = []
        for index in indexes:
            body = pod_from_template(
                spec.get("template") or {}, owner_reference(ctx.jobs, job), meta["namespace"]
            )
            body["metadata"]["generateName"] = f"{meta['name']}-"
            if index is not None:
                body["metadata"]["generateName"] = f"{meta['name']}-{index}-"
                body["metadata"].setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
                body["metadata"].setdefault("labels", {})[COMPLETION_INDEX] = str(index)
                body["spec"]["hostname"] = f"{meta['name']}-{index}"
                for c in body["spec"].get("containers") or []:
                    env = c.setdefault("env", [])
                    env.append(
                        {
                            "name": "JOB_COMPLETION_INDEX",
                            "valueFrom": {
                                "fieldRef": {
                                    "apiVersion": "v1",
                                    "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']",
                                }
                            },
                        }
                    )
            retry = (self.queue, (meta["namespace"], meta["name"]))
            pod = ctx.create(ctx.pods, meta["namespace"], body, CONTROLLER_MANAGER, retry)
            if pod is None:
                break
            created.append(pod)
            ctx.event(
                job,
                ctx.jobs,
                "Normal",
                "SuccessfulCreate",
                f"Created pod: {pod['metadata']['name']}",
                COMPONENT,
            )
        return created

    def expire(self, key: tuple[str, str]) -> None:
        """``ttlSecondsAfterFinished``: a finished Job is deleted (with its Pods) that long after."""
        ctx = self.ctx
        job = ctx.get(ctx.jobs, *key)
        if job is None or job["metadata"].get("deletionTimestamp") or not is_finished(job):
            return
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        finished = parse_time((job.get("status") or {}).get("completionTime"))
        if ttl is None or finished is None:
            return
        left = ttl - (now() - finished).total_seconds()
        if left > 0:
            self.ttl_queue.add_later(key, left)
            return
        ctx.delete(ctx.jobs, job)
