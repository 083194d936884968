"""Job status transitions as kube-apiserver 1.32 checks them on ``jobs/status`` writes.

``pkg/registry/batch/job/strategy.go`` (``getStatusValidationOptions``, with ``JobManagedBy`` and
``JobPodReplacementPolicy`` on, as in 1.32) chooses which rules apply: most only when the fields they
concern changed, so a status update unrelated to an old inconsistency still passes.
``pkg/apis/batch/validation`` (``validateJobStatus``, ``ValidateJobStatusUpdate``) words them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.registry.podtemplate import as_dict
from framework.meta import field
from framework.meta.time import parse_time_or_none

S = "status"


def _true(status: dict, kind: str) -> bool:
    return any(
        as_dict(c).get("type") == kind and as_dict(c).get("status") == "True"
        for c in status.get("conditions") or []
    )


def _finished(status: dict) -> bool:
    return _true(status, "Complete") or _true(status, "Failed")


def _time(value: Any) -> datetime | None:
    return parse_time_or_none(value)


def _shown(value: Any) -> Any:
    """A ``*metav1.Time`` bad value as the field error prints it: ``time.Time.String()``."""
    t = _time(value)
    return value if t is None else field.GoText(t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC"))


def _nonnegative(status: dict, key: str) -> list[FieldError]:
    value = status.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [field.invalid(f"{S}.{key}", value, "must be greater than or equal to 0")]
    return []


def validate_status_update(job: dict, old_job: dict) -> list[FieldError]:
    """``ValidateJobStatusUpdate`` with the options 1.32 derives from what changed."""
    new, old = as_dict(job.get("status")), as_dict(old_job.get("status"))
    spec = as_dict(job.get("spec"))
    indexed = spec.get("completionMode") == "Indexed"
    complete, old_complete = _true(new, "Complete"), _true(old, "Complete")
    failed, old_failed = _true(new, "Failed"), _true(old, "Failed")
    failure_target = _true(new, "FailureTarget")
    criteria_met, old_criteria_met = _true(new, "SuccessCriteriaMet"), _true(old, "SuccessCriteriaMet")
    finished = complete or failed
    finished_changed = finished != _finished(old)
    complete_changed = complete != old_complete
    failed_changed = failed != old_failed
    failure_target_changed = failure_target != _true(old, "FailureTarget")
    criteria_changed = criteria_met != old_criteria_met
    failed_indexes_changed = new.get("failedIndexes") != old.get("failedIndexes")
    active_changed = (new.get("active") or 0) != (old.get("active") or 0)
    start, old_start = new.get("startTime"), old.get("startTime")
    start_changed = start != old_start
    completion, old_completion = new.get("completionTime"), old.get("completionTime")
    completion_changed = completion != old_completion
    uncounted_changed = new.get("uncountedTerminatedPods") != old.get("uncountedTerminatedPods")
    ready_changed = new.get("ready") != old.get("ready")
    terminating_changed = new.get("terminating") != old.get("terminating")
    active = new.get("active") or 0

    errs: list[FieldError] = []
    for key in ("active", "succeeded", "failed", "ready", "terminating"):
        errs += _nonnegative(new, key)
    conditions = f"{S}.conditions"
    if (complete_changed or failed_changed) and complete and failed:
        errs.append(
            field.invalid(conditions, field.OMIT, "cannot set Complete=True and Failed=true conditions")
        )
    if (complete_changed or failure_target_changed) and complete and failure_target:
        errs.append(
            field.invalid(
                conditions, field.OMIT, "cannot set Complete=True and FailureTarget=true conditions"
            )
        )
    if (complete_changed or completion_changed) and completion is not None and not complete:
        errs.append(
            field.invalid(
                f"{S}.completionTime",
                _shown(completion),
                "cannot set completionTime when there is no Complete=True condition",
            )
        )
    if (complete_changed or completion_changed) and completion is None and complete:
        errs.append(field.required(f"{S}.completionTime", "completionTime is required for Complete jobs"))
    if start_changed or completion_changed:
        started, ended = _time(start), _time(completion)
        if started is not None and ended is not None and ended < started:
            errs.append(
                field.invalid(
                    f"{S}.completionTime", _shown(completion), "completionTime cannot be set before startTime"
                )
            )
    if (failed_changed or failed_indexes_changed) and failed and not failure_target:
        errs.append(
            field.invalid(
                conditions,
                field.OMIT,
                "cannot set Failed=True condition without the FailureTarget=true condition",
            )
        )
    if (complete_changed or criteria_changed) and complete and not criteria_met:
        errs.append(
            field.invalid(
                conditions,
                field.OMIT,
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            )
        )
    if (finished_changed or active_changed) and active > 0 and finished:
        errs.append(field.invalid(f"{S}.active", active, "active>0 is invalid for finished job"))
    terminating = new.get("terminating")
    if (
        (finished_changed or terminating_changed)
        and isinstance(terminating, int)
        and terminating > 0
        and finished
    ):
        errs.append(
            field.invalid(f"{S}.terminating", terminating, "terminating>0 is invalid for finished job")
        )
    ready = new.get("ready")
    if (ready_changed or active_changed) and isinstance(ready, int) and ready > active:
        errs.append(field.invalid(f"{S}.ready", ready, "cannot set more ready pods than active"))
    if criteria_met and failed:
        errs.append(
            field.invalid(
                conditions, field.OMIT, "cannot set SuccessCriteriaMet=True and Failed=true conditions"
            )
        )
    if criteria_met and failure_target:
        errs.append(
            field.invalid(
                conditions, field.OMIT, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"
            )
        )
    if spec.get("successPolicy") is not None and not criteria_met and complete:
        errs.append(
            field.invalid(
                conditions,
                field.OMIT,
                "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
            )
        )
    uncounted = as_dict(new.get("uncountedTerminatedPods"))
    if (
        (finished_changed or uncounted_changed)
        and finished
        and (uncounted.get("failed") or uncounted.get("succeeded"))
    ):
        errs.append(
            field.invalid(f"{S}.uncountedTerminatedPods", uncounted, "pods must be empty for finished job")
        )
    if (finished_changed or start_changed) and start is None and finished:
        errs.append(field.required(f"{S}.startTime", "startTime is required for finished job"))

    # ValidateJobStatusUpdate's own rules, comparing with the stored status.
    succeeded, old_succeeded = new.get("succeeded") or 0, old.get("succeeded") or 0
    scalable = indexed and spec.get("completions") == spec.get("parallelism")
    if not scalable and succeeded < old_succeeded:
        errs.append(field.invalid(f"{S}.succeeded", succeeded, "cannot decrease the succeeded counter"))
    if (new.get("failed") or 0) < (old.get("failed") or 0):
        errs.append(
            field.invalid(f"{S}.failed", new.get("failed") or 0, "cannot decrease the failed counter")
        )
    for kind in ("Failed", "Complete", "FailureTarget"):
        if _true(old, kind) and not _true(new, kind):
            errs.append(
                field.invalid(conditions, field.OMIT, f"cannot disable the terminal {kind}=True condition")
            )
    if completion is not None and old_completion is not None and _time(completion) != _time(old_completion):
        errs.append(
            field.invalid(f"{S}.completionTime", _shown(completion), "completionTime cannot be mutated")
        )
    if old_start is not None and _time(old_start) != _time(start) and not spec.get("suspend"):
        errs.append(field.required(f"{S}.startTime", "startTime cannot be removed for unsuspended job"))
    if old_criteria_met and not criteria_met:
        errs.append(
            field.invalid(conditions, field.OMIT, "cannot disable the SuccessCriteriaMet=True condition")
        )
    if old_complete and not old_criteria_met and criteria_met:
        errs.append(
            field.invalid(
                conditions,
                field.OMIT,
                "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
            )
        )
    return errs
