"""CEL validation rules of CRDs (x-kubernetes-validations; docs/apiserver.md "CEL"), through the
official client and kubectl: kube-apiserver's messages, field paths, reasons and transition rules."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

GROUP = "batch.tutorial.kubebuilder.io"


def cronjob_crd(extra_spec_rules: list | None = None) -> dict:
    """The kubebuilder tutorial's CronJob with the kinds of rules its markers generate."""
    spec_schema = {
        "type": "object",
        "required": ["schedule"],
        "properties": {
            "schedule": {"type": "string", "maxLength": 64},
            "startingDeadlineSeconds": {"type": "integer", "format": "int64", "minimum": 0},
            "concurrencyPolicy": {"type": "string", "enum": ["Allow", "Forbid", "Replace"]},
            "suspend": {"type": "boolean"},
            "successfulJobsHistoryLimit": {"type": "integer", "format": "int32", "minimum": 0},
            "failedJobsHistoryLimit": {"type": "integer", "format": "int32", "minimum": 0},
            "minReplicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"},
            "jobTemplateName": {
                "type": "string",
                "maxLength": 63,
                "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "jobTemplateName is immutable"}
                ],
            },
            "ports": {
                "type": "array",
                "maxItems": 16,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name", "port"],
                    "properties": {
                        "name": {"type": "string", "maxLength": 15},
                        "port": {"type": "integer"},
                        "protocol": {"type": "string", "maxLength": 8},
                    },
                    "x-kubernetes-validations": [
                        {"rule": "self.port > 0 && self.port < 65536", "message": "port out of range"},
                        {
                            "rule": "!has(oldSelf.protocol) || self.protocol == oldSelf.protocol",
                            "message": "protocol is immutable",
                        },
                    ],
                },
                "x-kubernetes-validations": [
                    {
                        "rule": "self.all(p, p.name.matches('^[a-z]+$'))",
                        "message": "port names are lower case",
                    }
                ],
            },
            "labels": {
                "type": "object",
                "maxProperties": 8,
                "additionalProperties": {"type": "string", "maxLength": 63},
                "x-kubernetes-validations": [
                    {
                        "rule": "self.all(k, k.size() <= 16)",
                        "messageExpression": "'label key too long: ' + self.filter(k, k.size() > 16)[0]",
                    }
                ],
            },
            "memory": {
                "x-kubernetes-int-or-string": True,
                "x-kubernetes-validations": [
                    {
                        "rule": "isQuantity(string(self)) && quantity(string(self)).isLessThan(quantity('1Gi'))",
                        "message": "memory must be below 1Gi",
                    }
                ],
            },
        },
        "x-kubernetes-validations": [
            {
                "rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
                "message": "minReplicas must not exceed maxReplicas",
                "fieldPath": ".minReplicas",
            },
            {
                "rule": "self.schedule.split(' ').size() == 5",
                "messageExpression": "'schedule ' + self.schedule + ' must have five fields'",
                "reason": "FieldValueForbidden",
            },
            *(extra_spec_rules or []),
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"cronjobs.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": "cronjobs",
                "singular": "cronjob",
                "kind": "CronJob",
                "listKind": "CronJobList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": spec_schema,
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "active": {"type": "integer"},
                                        "phase": {"type": "string", "maxLength": 32},
                                    },
                                    "x-kubernetes-validations": [
                                        {
                                            "rule": "!has(self.active) || self.active >= 0",
                                            "message": "active must not be negative",
                                        },
                                        {
                                            "rule": "!has(oldSelf.phase) || oldSelf.phase != 'Done' || self.phase == 'Done'",
                                            "message": "a Done cron job stays Done",
                                            "reason": "FieldValueForbidden",
                                        },
                                    ],
                                },
                            },
                            "x-kubernetes-validations": [
                                {"rule": "self.metadata.name.size() <= 20", "message": "name too long"}
                            ],
                        }
                    },
                }
            ],
        },
    }


def cronjob(name: str = "nightly", **spec) -> dict:
    body = {"schedule": "*/1 * * * *", **spec}
    return {"apiVersion": f"{GROUP}/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


@pytest.fixture
def co(apiserver) -> client.CustomObjectsApi:
    apiserver.install_crds([cronjob_crd()])
    return client.CustomObjectsApi(apiserver.api_client())


def create(co, body):
    return co.create_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", body)


def refused(fn, *args) -> dict:
    with pytest.raises(ApiException) as e:
        fn(*args)
    assert e.value.status == 422, e.value.body
    return json.loads(e.value.body)


def test_good_object_is_accepted(co) -> None:
    got = create(
        co,
        cronjob(
            minReplicas=1,
            maxReplicas=3,
            ports=[{"name": "http", "port": 80}],
            labels={"app": "x"},
            memory="512Mi",
        ),
    )
    assert got["spec"]["maxReplicas"] == 3


def test_bad_object_is_refused_with_kube_message(co) -> None:
    status = refused(create, co, cronjob(minReplicas=5, maxReplicas=3))
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f'CronJob.{GROUP} "nightly" is invalid: spec.minReplicas: Invalid value: "object": '
        "minReplicas must not exceed maxReplicas"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "object": minReplicas must not exceed maxReplicas',
            "field": "spec.minReplicas",
        }
    ]
