"""The generated protobuf catalog (``catalog/protobuf.json``) and what it makes work through kubectl.

- the committed file is well-formed (every field type is a scalar or a message of the catalog, modes are
  the four the decoder knows) and covers every kind of ``catalog/resources.json``;
- regenerating it from the kubernetes/api and apimachinery mirrors gives the committed file. CI has no
  mirror (``/work/.mirror``), so there that check is skipped; everything else runs;
- kubectl's typed ``create`` commands for kinds outside the old hand-written table (Job, CronJob,
  Ingress, PodDisruptionBudget, PriorityClass, Deployment) and ``kubectl autoscale`` send protobuf and
  succeed; the stored objects read back right through the official client;
- a GET/LIST preferring protobuf is answered in JSON, which the client decodes.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from kubernetes import client

from framework.apiserver.catalog import builtin_resources
from framework.apiserver.encoding.protobuf import messages

ROOT = Path(__file__).resolve().parents[3]
CATALOG = ROOT / "framework/apiserver/catalog/protobuf.json"
MIRRORS = Path("/work/.mirror")
SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"}
PB = "application/vnd.kubernetes.protobuf"


def _catalog() -> dict:
    return json.loads(CATALOG.read_text())


def test_catalog_is_well_formed() -> None:
    catalog = _catalog()
    msgs = catalog["messages"]
    assert catalog["kinds"] and msgs
    for name, message in msgs.items():
        assert set(message) <= {"fields", "slice"}, name
        for num, (json_name, type_, label, mode) in message["fields"].items():
            assert int(num) > 0 and json_name, (name, num)
            assert type_ in SCALARS or type_ in msgs, (name, num, type_)
            assert label in ("", "repeated", "map"), (name, num)
            assert mode in ("omitempty", "always", "pointer", "inline"), (name, num)
            assert mode != "inline" or type_ in msgs, (name, num)
        if message.get("slice"):
            assert [f[2] for f in message["fields"].values()] == ["repeated"], name
    for key, message in catalog["kinds"].items():
        kind = key.split(" ")[1]
        assert message.endswith("." + kind) and message in msgs, key
    # The loader agrees with the file.
    assert messages.message_of("batch/v1", "Job") == "k8s.io.api.batch.v1.Job"
    job_spec = messages.fields("k8s.io.api.batch.v1.JobSpec")
    assert (job_spec[6].name, job_spec[6].mode) == ("template", "always")
    assert (job_spec[1].name, job_spec[1].mode) == ("parallelism", "pointer")


def test_catalog_covers_every_builtin_kind() -> None:
    """Every resource of resources.json, and every subresource that takes an object, has a message."""
    kinds = messages.kinds()
    missing = set()
    for r in builtin_resources():
        if (r.api_version, r.kind) not in kinds:
            missing.add((r.api_version, r.kind))
        for sub in r.subresources:
            if sub.kind:
                group = r.group if sub.group is None else sub.group
                version = sub.version or r.version
                api_version = f"{group}/{version}" if group else version
                if (api_version, sub.kind) not in kinds:
                    missing.add((api_version, sub.kind))
    assert not missing


@pytest.mark.skipif(not (MIRRORS / "kubernetes+api/repo").is_dir(), reason="no kubernetes/api mirror (CI)")
def test_catalog_regenerates_to_the_committed_file() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_protobuf_catalog", ROOT / "hack/gen-protobuf-catalog.py"
    )
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen  # its dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(gen)
    try:
        fresh = gen.render(gen.generate(MIRRORS))
    except FileNotFoundError as e:
        pytest.skip(f"a mirror is missing: {e}")
    assert fresh == CATALOG.read_text(), "stale: run hack/gen-protobuf-catalog.py"


def test_kubectl_creates_every_kind_in_protobuf(apiserver, kubectl) -> None:
    """kubectl 1.32's typed commands send these bodies in protobuf (415 before the catalog)."""
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80")
    kubectl.ok("create", "job", "once", "--image=busybox", "--", "echo", "hi")
    kubectl.ok("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--", "date")
    kubectl.ok("create", "job", "from-cron", "--from=cronjob/tick")
    kubectl.ok("create", "ingress", "ing", "--class=nginx", "--rule=foo.example.com/bar*=svc:8080,tls=cert")
    kubectl.ok("create", "poddisruptionbudget", "pdb", "--selector=app=web", "--min-available=1")
    kubectl.ok("create", "priorityclass", "high", "--value=1000", "--description=important")
    kubectl.ok("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")

    api = apiserver.api_client()
    deploy = client.AppsV1Api(api).read_namespaced_deployment("web", "default")
    assert deploy.spec.replicas == 2 and deploy.spec.selector.match_labels == {"app": "web"}
    (container,) = deploy.spec.template.spec.containers
    assert container.image == "nginx:1.27" and container.ports[0].container_port == 80

    batch = client.BatchV1Api(api)
    job = batch.read_namespaced_job("once", "default")
    (container,) = job.spec.template.spec.containers
    assert (container.name, container.image, container.command) == ("once", "busybox", ["echo", "hi"])
    assert job.spec.template.spec.restart_policy == "Never"
    cron = batch.read_namespaced_cron_job("tick", "default")
    assert cron.spec.schedule == "*/5 * * * *"
    (container,) = cron.spec.job_template.spec.template.spec.containers
    assert (
        container.command == ["date"]
        and cron.spec.job_template.spec.template.spec.restart_policy == "OnFailure"
    )
    from_cron = batch.read_namespaced_job("from-cron", "default")
    assert from_cron.metadata.annotations["cronjob.kubernetes.io/instantiate"] == "manual"
    assert from_cron.metadata.owner_references[0].kind == "CronJob"
    assert from_cron.spec.template.spec.containers[0].command == ["date"]

    ing = client.NetworkingV1Api(api).read_namespaced_ingress("ing", "default")
    assert ing.spec.ingress_class_name == "nginx"
    (rule,) = ing.spec.rules
    (path,) = rule.http.paths
    assert (rule.host, path.path, path.path_type) == ("foo.example.com", "/bar", "Prefix")
    assert (path.backend.service.name, path.backend.service.port.number) == ("svc", 8080)
    assert ing.spec.tls[0].hosts == ["foo.example.com"] and ing.spec.tls[0].secret_name == "cert"

    pdb = client.PolicyV1Api(api).read_namespaced_pod_disruption_budget("pdb", "default")
    assert pdb.spec.min_available == 1 and pdb.spec.selector.match_labels == {"app": "web"}

    pc = client.SchedulingV1Api(api).read_priority_class("high")
    assert (pc.value, pc.description) == (1000, "important")

    hpa = client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler("web", "default")
    assert (hpa.spec.min_replicas, hpa.spec.max_replicas) == (2, 5)
    assert (hpa.spec.scale_target_ref.kind, hpa.spec.scale_target_ref.name) == ("Deployment", "web")
    (metric,) = hpa.spec.metrics
    assert (metric.resource.name, metric.resource.target.average_utilization) == ("cpu", 80)

    # Failure path: a bad object in protobuf gets the kind's validation error, and nothing is stored.
    err = kubectl.fails("create", "priorityclass", "Bad_Name", "--value=1")
    assert "Invalid value" in err and "Bad_Name" in err
    assert "Bad_Name" not in [
        p.metadata.name for p in client.SchedulingV1Api(api).list_priority_class().items
    ]


def test_get_and_list_preferring_protobuf_answer_json(apiserver, raw, kubectl) -> None:
    """client-go asks ``Accept: protobuf,json``; the JSON answer decodes into the client's models."""
    kubectl.ok("create", "job", "j", "--image=busybox")
    kubectl.ok("create", "priorityclass", "p", "--value=7")
    headers = {"Accept": f"{PB},application/json"}
    for path in (
        "/apis/batch/v1/namespaces/default/jobs/j",
        "/apis/batch/v1/namespaces/default/jobs",
        "/apis/scheduling.k8s.io/v1/priorityclasses/p",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
    ):
        r = raw.request("GET", path, headers=headers)
        assert r.status == 200 and r.headers["Content-Type"] == "application/json", path
    api = apiserver.api_client()
    jobs = client.BatchV1Api(api).list_namespaced_job("default", _preload_content=False)
    assert [j["metadata"]["name"] for j in json.loads(jobs.data)["items"]] == ["j"]
    got = kubectl.json("get", "priorityclass", "p")
    assert got["value"] == 7 and got["kind"] == "PriorityClass"
