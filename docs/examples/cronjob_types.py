"""The kubebuilder CronJob tutorial's ``api/v1`` types as typed declarations: ``TypedDict`` views with
controller-gen's markers, from which ``framework.generate.crd`` writes the CustomResourceDefinition
(``spec.jobTemplate`` inlines the built-in JobTemplateSpec's schema, as controller-gen does)."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypedDict, cast

from framework.markers import (
    Default,
    Int32,
    Int64,
    ListType,
    MaxItems,
    Minimum,
    MinItems,
    MinLength,
    resource,
)
from framework.types import batch_v1, core_v1, meta_v1

ConcurrencyPolicy = Annotated[Literal["Allow", "Forbid", "Replace"], Default("Allow")]


class CronJobSpec(TypedDict):
    """CronJobSpec defines the desired state of CronJob."""

    schedule: Annotated[str, MinLength(0)]
    """schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."""
    startingDeadlineSeconds: NotRequired[Annotated[Int64, Minimum(0)]]
    """startingDeadlineSeconds defines in seconds for starting the job if it misses scheduled
    time for any reason.  Missed jobs executions will be counted as failed ones."""
    concurrencyPolicy: NotRequired[ConcurrencyPolicy]
    """concurrencyPolicy specifies how to treat concurrent executions of a Job."""
    suspend: NotRequired[bool]
    """suspend tells the controller to suspend subsequent executions, it does
    not apply to already started executions.  Defaults to false."""
    jobTemplate: batch_v1.JobTemplateSpec
    """jobTemplate defines the job that will be created when executing a CronJob."""
    successfulJobsHistoryLimit: NotRequired[Annotated[Int32, Minimum(0)]]
    """successfulJobsHistoryLimit defines the number of successful finished jobs to retain."""
    failedJobsHistoryLimit: NotRequired[Annotated[Int32, Minimum(0)]]
    """failedJobsHistoryLimit defines the number of failed finished jobs to retain."""


class CronJobStatus(TypedDict, total=False):
    """CronJobStatus defines the observed state of CronJob."""

    active: Annotated[list[core_v1.ObjectReference], ListType("atomic"), MinItems(1), MaxItems(10)]
    """active defines a list of pointers to currently running jobs."""
    lastScheduleTime: meta_v1.Time
    """lastScheduleTime defines when was the last time the job was successfully scheduled."""


@resource(group="batch.tutorial.kubebuilder.io", version="v1", kind="CronJob")
class CronJob(TypedDict):
    """CronJob is the Schema for the cronjobs API"""

    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: NotRequired[meta_v1.ObjectMeta]
    spec: CronJobSpec
    """spec defines the desired state of CronJob"""
    status: NotRequired[CronJobStatus]
    """status defines the observed state of CronJob"""


def history_limits(obj: dict) -> tuple[int, int]:
    """The successful and failed Job history limits of a CronJob read from the API server."""
    cronjob = cast(CronJob, obj)  # a static view: obj is still the same dict
    spec = cronjob["spec"]
    return spec.get("successfulJobsHistoryLimit", 3), spec.get("failedJobsHistoryLimit", 1)
