"""batch/v1 Job: stored only (no Job controller creates Pods or writes status); upstream's defaults, the
generated selector and labels, validation and printer columns (``pkg/apis/batch/v1/defaults.go``,
``pkg/registry/batch/job/strategy.go``, ``pkg/apis/batch/validation``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.registry import printing
from framework.apiserver.registry.batch.job_status import validate_status_update
from framework.apiserver.registry.podtemplate import (
    as_dict,
    default_template,
    immutable,
    nonnegative,
    validate_selector_and_template,
)
from framework.meta import field
from framework.meta.time import parse_time

COMPLETION_MODES = ("Indexed", "NonIndexed")
RESTART_POLICIES = ("OnFailure", "Never")
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_Job``, the template's defaults and, on create, ``generateSelector``: without
    ``manualSelector`` the selector is the Job's uid and the template carries the uid and name labels
    (the legacy unprefixed ones too); a Job without labels takes the template's."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    for key, default in (
        ("parallelism", 1),
        ("backoffLimit", 6),
        ("completionMode", "NonIndexed"),
        ("suspend", False),
        ("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"),
    ):
        if spec.get(key) is None:
            spec[key] = default
    template = spec.get("template")
    default_template(template)
    meta = obj["metadata"]
    if old is None:
        if not spec.get("manualSelector") and isinstance(template, dict):
            uid, name = meta.get("uid", ""), meta.get("name", "")
            template_meta = template.get("metadata")
            if not isinstance(template_meta, dict):
                template_meta = template["metadata"] = {}
            labels = template_meta.get("labels")
            if not isinstance(labels, dict):
                labels = template_meta["labels"] = {}
            labels.update({CONTROLLER_UID: uid, JOB_NAME: name, "controller-uid": uid, "job-name": name})
            if spec.get("selector") is None:
                spec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}
        obj["status"] = {}
    template_labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    if not meta.get("labels") and template_labels:
        meta["labels"] = dict(template_labels)


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateJob``/``ValidateJobUpdate``: counts, completion mode, selector and template (restart
    policy ``OnFailure`` or ``Never``); selector, completion mode and (unless suspended) template are
    fixed once created."""
    spec = as_dict(obj.get("spec"))
    errs = nonnegative(spec, "spec", "parallelism", "completions", "backoffLimit")
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or deadline <= 0):
        errs.append(field.invalid("spec.activeDeadlineSeconds", deadline, "must be greater than 0"))
    mode = spec.get("completionMode")
    if mode not in COMPLETION_MODES:
        errs.append(field.not_supported("spec.completionMode", mode, list(COMPLETION_MODES)))
    elif mode == "Indexed" and spec.get("completions") is None:
        errs.append(field.required("spec.completions", "when completion mode is Indexed"))
    errs += validate_selector_and_template(spec, "spec", RESTART_POLICIES, empty_word="job")
    if old is not None:
        old_spec = as_dict(old.get("spec"))
        errs += immutable(spec.get("selector"), old_spec.get("selector"), "spec.selector")
        errs += immutable(spec.get("completionMode"), old_spec.get("completionMode"), "spec.completionMode")
        if not old_spec.get("suspend"):
            errs += immutable(spec.get("template"), old_spec.get("template"), "spec.template")
        if obj.get("status") != old.get("status"):  # only a jobs/status write changes it
            errs += validate_status_update(obj, old)
    return errs


def fields(obj: dict) -> dict[str, str]:
    return {"status.successful": str(as_dict(obj.get("status")).get("succeeded") or 0)}


def _condition(job: dict, kind: str) -> bool:
    return any(
        as_dict(c).get("type") == kind and as_dict(c).get("status") == "True"
        for c in as_dict(job.get("status")).get("conditions") or []
    )


def status_text(job: dict) -> str:
    """The STATUS column: Complete, Failed, Suspended, FailureTarget/SuccessCriteriaMet or Running."""
    for kind in ("Complete", "Failed", "Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _condition(job, kind):
            return kind
    return "Running"


def _cells(job: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(job.get("spec")), as_dict(job.get("status"))
    succeeded = status.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        completions = f"{succeeded}/1 of {spec.get('parallelism', 1)}"
    start, end = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = "" if start is None else printing.human_duration(((end or now) - start).total_seconds())
    containers, images = printing.containers_and_images(spec.get("template"))
    return [
        printing.name(job),
        status_text(job),
        completions,
        duration,
        printing.age(job, now),
        containers,
        images,
        printing.selector_text(spec.get("selector")),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Status", "Status of the job"),
        printing.col("Completions", "The completion status of the job"),
        printing.col("Duration", "Time required to complete the job"),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "batch",
        "v1",
        "jobs",
        normalize=normalize,
        validate=validate,
        fields=fields,
        field_names=("status.successful",),
        own_field_labels=True,
        time_fields=(
            "status.conditions[].lastTransitionTime",
            "status.conditions[].lastProbeTime",
            "status.startTime",
            "status.completionTime",
        ),
        printer=PRINTER,
    )
]
