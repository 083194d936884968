"""batch/v1 CronJob: stored only (no CronJob controller creates Jobs); upstream's defaults, validation
and printer columns (``pkg/apis/batch/v1/defaults.go``, ``pkg/apis/batch/validation``)."""

from __future__ import annotations

import zoneinfo
from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.batch.cron import CronError, parse_standard
from framework.apiserver.registry.podtemplate import default_template, nonnegative, validate_template_spec
from framework.meta import field

CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
JOB_RESTART_POLICIES = ("OnFailure", "Never")
# A CronJob's name plus the 11 characters of a scheduled Job's suffix must be a valid label.
MAX_NAME_LENGTH = 52


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_CronJob`` and the job template's pod defaults; status starts empty."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for key, default in (
            ("concurrencyPolicy", "Allow"),
            ("suspend", False),
            ("successfulJobsHistoryLimit", 3),
            ("failedJobsHistoryLimit", 1),
        ):
            if spec.get(key) is None or (key == "concurrencyPolicy" and spec.get(key) == ""):
                spec[key] = default
        job = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
        default_template(job.get("template"))
    if old is None:
        obj["status"] = {}


def validate_schedule(schedule: Any, path: str) -> list[FieldError]:
    if not schedule:
        return [field.required(path)]
    if not isinstance(schedule, str):
        return [field.invalid(path, schedule, "must be a string")]
    if "TZ" in schedule:
        return [
            field.invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
        ]
    try:
        parse_standard(schedule)
    except CronError as e:
        return [field.invalid(path, schedule, str(e))]
    return []


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateCronJobCreate``/``Update``: name length, schedule, time zone, policy, job template."""
    errs: list[FieldError] = []
    name = as_dict(obj.get("metadata")).get("name") or ""
    if len(name) > MAX_NAME_LENGTH:
        errs.append(
            field.invalid("metadata.name", name, f"must be no more than {MAX_NAME_LENGTH} characters")
        )
    spec = as_dict(obj.get("spec"))
    errs += validate_schedule(spec.get("schedule"), "spec.schedule")
    tz = spec.get("timeZone")
    if tz is not None:
        try:
            if not isinstance(tz, str) or not tz or tz.startswith((".", "/")):
                raise zoneinfo.ZoneInfoNotFoundError(tz)
            zoneinfo.ZoneInfo(tz)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            errs.append(field.invalid("spec.timeZone", tz, f"unknown time zone {tz}"))
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errs.append(field.required("spec.concurrencyPolicy"))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(field.not_supported("spec.concurrencyPolicy", policy, list(CONCURRENCY_POLICIES)))
    errs += nonnegative(
        spec, "spec", "startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"
    )
    job = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    path = "spec.jobTemplate.spec"
    errs += nonnegative(job, path, "parallelism", "completions", "activeDeadlineSeconds", "backoffLimit")
    if job.get("selector") is not None:
        errs.append(field.invalid(f"{path}.selector", job["selector"], "`selector` will be auto-generated"))
    if job.get("manualSelector") is True:
        errs.append(field.not_supported(f"{path}.manualSelector", True, ["nil", "false"]))
    errs += validate_template_spec(as_dict(job.get("template")), f"{path}.template", JOB_RESTART_POLICIES)
    return errs


def _cells(cj: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(cj.get("spec")), as_dict(cj.get("status"))
    job = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    containers, images = printing.containers_and_images(job.get("template"))
    suspend = spec.get("suspend")
    selector = job.get("selector")
    return [
        printing.name(cj),
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "<unset>" if suspend is None else str(bool(suspend)),
        len(status.get("active") or []),
        printing.since(status.get("lastScheduleTime"), now),
        printing.age(cj, now),
        containers,
        images,
        printing.selector_text(selector) if selector else "<none>",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Schedule", "The schedule in Cron format"),
        printing.col("Timezone", "The time zone the schedule is interpreted in"),
        printing.col("Suspend", "Whether subsequent executions are suspended", "boolean"),
        printing.col("Active", "The number of running jobs", "integer"),
        printing.col("Last Schedule", "When the job was last successfully scheduled"),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "batch",
        "v1",
        "cronjobs",
        normalize=normalize,
        validate=validate,
        time_fields=("status.lastScheduleTime", "status.lastSuccessfulTime"),
        printer=PRINTER,
    )
]
