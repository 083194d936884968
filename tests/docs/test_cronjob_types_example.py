"""``docs/examples/cronjob_types.py`` through ``framework.generate.crd``: the kubebuilder CronJob
tutorial's types make a CRD that inlines the built-in JobTemplateSpec as controller-gen does, installs
on the test API server, documents its fields in ``kubectl explain`` and has the server refuse objects
its schema refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.dynamic.exceptions import UnprocessibleEntityError

from framework.generate.crd import generate_crds
from framework.testing.kubectl import KUBECTL, Kubectl
from tests.docs.examples import EXAMPLES, load_example

ROOT = Path(__file__).resolve().parents[2]
PATH = "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"


@pytest.fixture(scope="module")
def cronjob_types() -> Iterator[ModuleType]:
    """The example, imported as a module (the generator reads its source and resolves its names)."""
    module = load_example("cronjob_types")
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


@pytest.fixture(scope="module")
def crd_text(cronjob_types) -> str:
    out = generate_crds([cronjob_types])
    assert list(out) == [PATH]
    return out[PATH]


@pytest.fixture(scope="module")
def crd(crd_text) -> dict:
    return yaml.safe_load(crd_text)


def _schema(crd: dict) -> dict:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _at(schema: dict, path: str) -> dict:
    """The schema at a dotted path; ``[]`` steps into a list's items."""
    for part in path.split("."):
        schema = schema["items"] if part == "[]" else schema["properties"][part]
    return schema


def test_crd_envelope_as_controller_gen(crd, crd_text) -> None:
    assert crd_text.startswith("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")
    assert crd["metadata"] == {"name": "cronjobs.batch.tutorial.kubebuilder.io"}
    assert crd["spec"]["names"] == {
        "kind": "CronJob",
        "listKind": "CronJobList",
        "plural": "cronjobs",
        "singular": "cronjob",
    }
    assert crd["spec"]["scope"] == "Namespaced"
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)
    assert version["subresources"] == {"status": {}}
    root = _schema(crd)
    assert root["type"] == "object" and root["required"] == ["spec"]
    assert root["description"] == "CronJob is the Schema for the cronjobs API"
    assert root["properties"]["metadata"]["type"] == "object"
    assert "properties" not in root["properties"]["metadata"]
    assert root["properties"]["apiVersion"]["type"] == "string"
    assert root["properties"]["apiVersion"]["description"].startswith(
        "APIVersion defines the versioned schema"
    )


def test_markers_map_as_in_the_tutorials_crd(crd) -> None:
    spec = _at(_schema(crd), "spec")
    assert spec["required"] == ["jobTemplate", "schedule"]
    props = spec["properties"]
    assert props["schedule"] == {
        "description": "schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
        "minLength": 0,
        "type": "string",
    }
    assert {k: v for k, v in props["startingDeadlineSeconds"].items() if k != "description"} == {
        "format": "int64",
        "minimum": 0,
        "type": "integer",
    }
    # Go doc comments keep their line breaks in controller-gen's descriptions; so do docstrings.
    assert props["startingDeadlineSeconds"]["description"] == (
        "startingDeadlineSeconds defines in seconds for starting the job if it misses scheduled\n"
        "time for any reason.  Missed jobs executions will be counted as failed ones."
    )
    assert {k: v for k, v in props["concurrencyPolicy"].items() if k != "description"} == {
        "default": "Allow",
        "enum": ["Allow", "Forbid", "Replace"],
        "type": "string",
    }
    assert props["suspend"]["type"] == "boolean"
    for limit in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        assert (props[limit]["format"], props[limit]["minimum"], props[limit]["type"]) == (
            "int32",
            0,
            "integer",
        )
    status = _at(_schema(crd), "status")
    assert "required" not in status
    active = status["properties"]["active"]
    assert (active["type"], active["x-kubernetes-list-type"], active["minItems"], active["maxItems"]) == (
        "array",
        "atomic",
        1,
        10,
    )
    assert sorted(active["items"]["properties"]) == [
        "apiVersion",
        "fieldPath",
        "kind",
        "name",
        "namespace",
        "resourceVersion",
        "uid",
    ]
    assert {k: v for k, v in status["properties"]["lastScheduleTime"].items() if k != "description"} == {
        "format": "date-time",
        "type": "string",
    }


# Facts of controller-gen's output for the tutorial (kubebuilder docs/book/src/cronjob-tutorial/testdata/
# project/config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml): required lists and types deep
# inside the inlined JobTemplateSpec.
_JOB_TEMPLATE_REQUIRED = {
    "spec.jobTemplate.spec": ["template"],
    "spec.jobTemplate.spec.podFailurePolicy": ["rules"],
    "spec.jobTemplate.spec.podFailurePolicy.rules.[]": ["action"],
    "spec.jobTemplate.spec.podFailurePolicy.rules.[].onExitCodes": ["operator", "values"],
    "spec.jobTemplate.spec.template.spec": ["containers"],
    "spec.jobTemplate.spec.template.spec.containers.[]": ["name"],
    "spec.jobTemplate.spec.template.spec.containers.[].ports.[]": ["containerPort"],
    "spec.jobTemplate.spec.template.spec.containers.[].env.[]": ["name"],
    "spec.jobTemplate.spec.template.spec.volumes.[]": ["name"],
    "spec.jobTemplate.spec.template.spec.containers.[].livenessProbe.httpGet": ["port"],
    "spec.jobTemplate.spec.selector.matchExpressions.[]": ["key", "operator"],
}


def test_job_template_is_inlined_in_full(crd) -> None:
    root = _schema(crd)
    template = _at(root, "spec.jobTemplate")
    assert (
        template["description"]
        == "jobTemplate defines the job that will be created when executing a CronJob."
    )
    assert sorted(template["properties"]) == ["metadata", "spec"]
    job_metadata = template["properties"]["metadata"]  # nested ObjectMeta: type object, as controller-gen
    assert job_metadata == {"description": job_metadata["description"], "type": "object"}
    assert job_metadata["description"].startswith("Standard object's metadata of the jobs created")
    pod_metadata = _at(root, "spec.jobTemplate.spec.template.metadata")
    assert pod_metadata["type"] == "object" and "properties" not in pod_metadata
    for path, required in _JOB_TEMPLATE_REQUIRED.items():
        assert _at(root, path)["required"] == required, path
    container = _at(root, "spec.jobTemplate.spec.template.spec.containers.[]")
    for name in ("image", "command", "args", "env", "ports", "resources", "volumeMounts", "securityContext"):
        assert name in container["properties"], name
    port = _at(root, "spec.jobTemplate.spec.template.spec.containers.[].livenessProbe.httpGet.port")
    assert port == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
        **({"description": port["description"]} if "description" in port else {}),
    }
    limits = _at(root, "spec.jobTemplate.spec.template.spec.containers.[].resources.limits")
    assert limits["type"] == "object"
    assert limits["additionalProperties"]["x-kubernetes-int-or-string"] is True
    assert limits["additionalProperties"]["pattern"].startswith(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))")
    # The Go types' own markers, as controller-gen copies them from k8s.io/api.
    containers = _at(root, "spec.jobTemplate.spec.template.spec.containers")
    assert (containers["x-kubernetes-list-type"], containers["x-kubernetes-list-map-keys"]) == (
        "map",
        ["name"],
    )
    ports = _at(root, "spec.jobTemplate.spec.template.spec.containers.[].ports")
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert (
        _at(root, "spec.jobTemplate.spec.template.spec.containers.[].ports.[].protocol")["default"] == "TCP"
    )
    assert _at(root, "spec.jobTemplate.spec.selector")["x-kubernetes-map-type"] == "atomic"
    secret_ref = _at(root, "spec.jobTemplate.spec.template.spec.containers.[].envFrom.[].secretRef")
    assert secret_ref["x-kubernetes-map-type"] == "atomic"  # inherited from the inlined LocalObjectReference
    assert secret_ref["properties"]["name"]["default"] == ""
    run_as = _at(root, "spec.jobTemplate.spec.template.spec.securityContext.runAsUser")
    assert (run_as["type"], run_as["format"]) == ("integer", "int64")
    assert _at(root, "spec.jobTemplate.spec.backoffLimit")["format"] == "int32"
    # Structural: every node names its type, or is int-or-string / preserves unknown fields.
    _assert_structural(root, "")


def _assert_structural(schema: dict, path: str) -> None:
    assert (
        "type" in schema
        or schema.get("x-kubernetes-int-or-string")
        or schema.get("x-kubernetes-preserve-unknown-fields")
    ), path
    for name, prop in schema.get("properties", {}).items():
        _assert_structural(prop, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        _assert_structural(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):
        _assert_structural(schema["additionalProperties"], path + "{}")


def test_output_is_deterministic(cronjob_types, crd_text) -> None:
    assert generate_crds([cronjob_types])[PATH] == crd_text
    # Another interpreter with another hash seed writes the same bytes.
    code = (
        "import sys; from framework.generate.crd import generate_crds; "
        f"sys.path.insert(0, {str(EXAMPLES)!r}); import cronjob_types; "
        f"sys.stdout.write(generate_crds([cronjob_types])[{PATH!r}])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == crd_text


def _message(error: Exception) -> str:
    return json.loads(error.body)["message"]  # type: ignore[attr-defined]


def _cronjob(name: str, spec: dict) -> dict:
    return {
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": spec,
    }


_JOB_TEMPLATE = {
    "spec": {
        "template": {
            "spec": {"containers": [{"name": "hello", "image": "busybox"}], "restartPolicy": "OnFailure"}
        }
    }
}


def test_crd_installs_and_the_server_validates_with_it(apiserver, crd) -> None:
    apiserver.install_crds([crd])
    dyn = dynamic.DynamicClient(apiserver.api_client())
    api = dyn.resources.get(api_version="batch.tutorial.kubebuilder.io/v1", kind="CronJob")
    created = api.create(
        body=_cronjob("ok", {"schedule": "*/1 * * * *", "jobTemplate": _JOB_TEMPLATE}), namespace="default"
    )
    assert created.spec.concurrencyPolicy == "Allow"  # the Default marker, applied by the server
    assert created.spec.jobTemplate.spec.template.spec.containers[0].image == "busybox"

    # A template the built-in Job schema refuses is refused at the CronJob already (the reason to inline).
    bad_template = {"spec": {"template": {"spec": {"containers": [{"image": "busybox"}]}}}}
    with pytest.raises(UnprocessibleEntityError) as e:
        api.create(body=_cronjob("bad1", {"schedule": "x", "jobTemplate": bad_template}), namespace="default")
    assert "spec.jobTemplate.spec.template.spec.containers[0].name: Required value" in _message(e.value)

    with pytest.raises(UnprocessibleEntityError) as e:
        api.create(
            body=_cronjob(
                "bad2",
                {
                    "schedule": "x",
                    "jobTemplate": _JOB_TEMPLATE,
                    "concurrencyPolicy": "Sometimes",
                    "suspend": "yes",
                },
            ),
            namespace="default",
        )
    assert 'spec.concurrencyPolicy: Unsupported value: "Sometimes"' in _message(e.value)
    assert 'spec.suspend: Invalid value: "string"' in _message(e.value)

    with pytest.raises(UnprocessibleEntityError) as e:
        api.create(
            body=_cronjob(
                "bad3", {"schedule": "x", "jobTemplate": _JOB_TEMPLATE, "startingDeadlineSeconds": -1}
            ),
            namespace="default",
        )
    assert "spec.startingDeadlineSeconds: Invalid value: -1" in _message(e.value)

    with pytest.raises(UnprocessibleEntityError) as e:
        api.create(body=_cronjob("bad4", {"jobTemplate": _JOB_TEMPLATE}), namespace="default")
    assert "spec.schedule: Required value" in _message(e.value)


@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")
def test_kubectl_explain_shows_the_docstrings(apiserver, crd, tmp_path) -> None:
    apiserver.install_crds([crd])
    kubectl = Kubectl(apiserver.kubeconfig, tmp_path, timeout=60)
    try:
        out = " ".join(
            kubectl.ok("explain", "cronjob.spec", "--api-version=batch.tutorial.kubebuilder.io/v1").split()
        )
        assert "GROUP: batch.tutorial.kubebuilder.io" in out and "KIND: CronJob" in out
        assert "spec defines the desired state of CronJob" in out
        assert "schedule in Cron format, see https://en.wikipedia.org/wiki/Cron." in out
        assert "jobTemplate defines the job that will be created when executing a CronJob." in out
        assert "concurrencyPolicy <string>" in out and "enum: Allow, Forbid, Replace" in out
        # The inlined built-in type keeps its own documentation.
        out = " ".join(
            kubectl.ok(
                "explain",
                "cronjob.spec.jobTemplate.spec.template.spec.containers",
                "--api-version=batch.tutorial.kubebuilder.io/v1",
            ).split()
        )
        assert "List of containers belonging to the pod." in out
    finally:
        kubectl.close()


def test_typed_read(cronjob_types) -> None:
    obj = _cronjob("x", {"schedule": "@daily", "jobTemplate": _JOB_TEMPLATE, "failedJobsHistoryLimit": 0})
    assert cronjob_types.history_limits(obj) == (3, 0)
