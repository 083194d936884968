"""Multi-version CRDs (16-4, 16-10, 24-3): the ``Webhook`` conversion strategy with a conversion
webhook served by the framework (``WebhookBuilder.with_conversion``: hub and spokes, ``/convert``), over
real TLS; objects stored in the storage version and converted on every read, write, list and watch;
``status.storedVersions``; changing the storage version; kube-apiserver's errors for a webhook that is
down or answers badly; the ``None`` strategy and deprecated versions.

The CronTab kind has ``spec.cron`` (a string) in v1 and ``spec.schedule.cron`` in v2, so a client can
tell which version's shape it got.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.rest import ApiException
from prometheus_client import CollectorRegistry

from framework.certs import CertKeyPair, generate_ca, issue_serving_cert
from framework.client import Client
from framework.manager import Manager
from framework.testing import eventually
from framework.webhook import (
    AdmissionRequest,
    AdmissionResponse,
    WebhookBuilder,
    WebhookServer,
    denied,
    patched,
)
from tests.framework.apiserver.test_admission_webhooks import Hooks, RawHTTPS, register, webhook

GROUP = "conv.example.com"
CRD_NAME = f"crontabs.{GROUP}"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
HOSTS = ("127.0.0.1", "localhost", "convert.hooks.svc")


def _schema(v2: bool) -> dict:
    spec: dict[str, Any] = {"replicas": {"type": "integer"}}
    if v2:
        spec["schedule"] = {"type": "object", "properties": {"cron": {"type": "string"}}}
    else:
        spec["cron"] = {"type": "string"}
    return {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": spec},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
            },
        }
    }


def crontab_crd(conversion: dict | None, storage: str = "v1", v1: dict | None = None) -> dict:
    versions = [
        {"name": "v1", "served": True, "storage": storage == "v1", "schema": _schema(False), **(v1 or {})},
        {"name": "v2", "served": True, "storage": storage == "v2", "schema": _schema(True)},
    ]
    for v in versions:
        v["subresources"] = {"status": {}}
    spec: dict[str, Any] = {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "kind": "CronTab", "listKind": "CronTabList"},
        "versions": versions,
    }
    if conversion is not None:
        spec["conversion"] = conversion
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": spec,
    }


def webhook_conversion(url: str, ca: CertKeyPair, review_versions: tuple[str, ...] = ("v1",)) -> dict:
    return {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": url, "caBundle": base64.b64encode(ca.cert_pem).decode()},
            "conversionReviewVersions": list(review_versions),
        },
    }


class CronTabV1:
    """The v1 spoke; v2 is the hub."""

    def convert_to(self, obj: dict) -> dict:
        spec = dict(obj.get("spec") or {})
        if "cron" in spec:
            spec["schedule"] = {"cron": spec.pop("cron")}
        return {**obj, "spec": spec}

    def convert_from(self, hub: dict) -> dict:
        spec = dict(hub.get("spec") or {})
        if "schedule" in spec:
            spec["cron"] = spec.pop("schedule").get("cron")
        return {**hub, "spec": spec}


@pytest.fixture(scope="module")
def ca() -> CertKeyPair:
    return generate_ca("conversion-test-ca")


@pytest.fixture(scope="module")
def cert_dir(tmp_path_factory: pytest.TempPathFactory, ca: CertKeyPair) -> Path:
    d = tmp_path_factory.mktemp("convert-certs")
    issue_serving_cert(ca, HOSTS).write(d, "tls")
    return d


class Converter:
    """A manager whose webhook server converts CronTabs at ``/convert`` (run on its own thread)."""

    def __init__(self, apiserver, cert_dir: Path) -> None:
        self.registry = CollectorRegistry()
        self.server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=self.registry)
        self.mgr = Manager(
            Client.from_kubeconfig(apiserver.kubeconfig, qps=0), webhook_server=self.server, sync_period=0
        )
        WebhookBuilder(self.mgr).for_(f"{GROUP}/v2", "CronTab").with_conversion(
            hub="v2", spokes={"v1": CronTabV1()}
        ).complete()
        self.thread = threading.Thread(target=self.mgr.start, name="conversion-test-manager", daemon=True)
        self.thread.start()
        eventually(lambda: self.server.port != 0, timeout=30)

    @property
    def url(self) -> str:
        return f"{self.server.url}/convert"

    def calls(self) -> float:
        value = self.registry.get_sample_value(
            "controller_runtime_webhook_requests_total", {"webhook": "/convert", "code": "200"}
        )
        return value or 0.0

    def stop(self) -> None:
        self.mgr.stop()
        self.thread.join(30)
        assert not self.thread.is_alive()


@pytest.fixture
def converter(apiserver, cert_dir: Path, ca: CertKeyPair) -> Iterator[Converter]:
    conv = Converter(apiserver, cert_dir)
    apiserver.install_crds([crontab_crd(webhook_conversion(conv.url, ca))])
    yield conv
    conv.stop()


@pytest.fixture
def co(apiserver) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(apiserver.api_client())


def v1_tab(name: str, cron: str = "*/5 * * * *", **spec: Any) -> dict:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cron": cron, **spec},
    }


def v2_tab(name: str, cron: str = "*/5 * * * *", **spec: Any) -> dict:
    return {
        "apiVersion": f"{GROUP}/v2",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"schedule": {"cron": cron}, **spec},
    }


def get(co: client.CustomObjectsApi, version: str, name: str) -> dict:
    return co.get_namespaced_custom_object(GROUP, version, "default", "crontabs", name)


def status_of(e: ApiException) -> dict:
    return json.loads(e.body)


# --- round trips through a framework-served webhook ----------------------------------------------------


def test_create_in_v1_read_in_v2_update_in_v2_read_in_v1(apiserver, converter, co, raw) -> None:
    code, crd = raw.json("GET", f"{CRDS}/{CRD_NAME}")
    assert code == 200
    assert crd["status"]["storedVersions"] == ["v1"]
    created = co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("a", replicas=2))
    assert created["apiVersion"] == f"{GROUP}/v1" and created["spec"] == {
        "cron": "*/5 * * * *",
        "replicas": 2,
    }

    as_v2 = get(co, "v2", "a")
    assert as_v2["apiVersion"] == f"{GROUP}/v2" and as_v2["kind"] == "CronTab"
    assert as_v2["spec"] == {"schedule": {"cron": "*/5 * * * *"}, "replicas": 2}
    # The webhook may not change server-owned metadata: the same object, seen through another version.
    for k in ("uid", "resourceVersion", "creationTimestamp", "generation", "name", "namespace"):
        assert as_v2["metadata"][k] == created["metadata"][k]

    as_v2["spec"]["schedule"]["cron"] = "0 * * * *"
    updated = co.replace_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "a", as_v2)
    assert updated["apiVersion"] == f"{GROUP}/v2" and updated["spec"]["schedule"] == {"cron": "0 * * * *"}
    assert updated["metadata"]["generation"] == 2

    # Stored in v1 (the storage version): read through v1 without conversion.
    back = get(co, "v1", "a")
    assert back["spec"] == {"cron": "0 * * * *", "replicas": 2}
    assert back["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]

    # A create through v2 is stored as v1 too.
    co.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs", v2_tab("b", "1 1 * * *"))
    assert get(co, "v1", "b")["spec"] == {"cron": "1 1 * * *"}

    crd = client.ApiextensionsV1Api(apiserver.api_client()).read_custom_resource_definition(CRD_NAME)
    assert crd.status.stored_versions == ["v1"]
    assert converter.calls() >= 4


def test_webhook_reached_through_a_service_reference(apiserver, cert_dir, ca, co) -> None:
    conv = Converter(apiserver, cert_dir)
    try:
        apiserver.map_webhook_service("hooks", "convert", f"127.0.0.1:{conv.server.port}")
        conversion = webhook_conversion(conv.url, ca)
        conversion["webhook"]["clientConfig"] = {
            "service": {"namespace": "hooks", "name": "convert", "path": "/convert"},
            "caBundle": conversion["webhook"]["clientConfig"]["caBundle"],
        }
        apiserver.install_crds([crontab_crd(conversion)])
        co.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs", v2_tab("s", "8 8 * * *"))
        assert get(co, "v1", "s")["spec"] == {"cron": "8 8 * * *"}
        assert conv.calls() == 1
    finally:
        conv.stop()


def test_admission_webhooks_of_the_other_version_see_converted_objects(
    apiserver, converter, co, raw, cert_dir, ca
) -> None:
    hooks = Hooks(cert_dir)
    hooks.server.start()
    try:

        def validate(req: AdmissionRequest) -> AdmissionResponse:
            assert req.object is not None
            if req.object["spec"]["schedule"]["cron"] == "never":
                return denied("v2 says no")
            return AdmissionResponse(True)

        def mutate(req: AdmissionRequest) -> AdmissionResponse:
            return patched([{"op": "add", "path": "/spec/replicas", "value": 3}])

        common = {
            "groups": [GROUP],
            "versions": ["v2"],
            "resources": ["crontabs"],
            "match_policy": "Equivalent",
        }
        register(raw, webhook("v.conv.example.com", hooks.on("/validate", validate), ca, **common))
        register(raw, webhook("m.conv.example.com", hooks.on("/mutate", mutate), ca, **common), mutating=True)

        created = co.create_namespaced_custom_object(
            GROUP, "v1", "default", "crontabs", v1_tab("h", "1 2 3 4 5")
        )
        assert created["apiVersion"] == f"{GROUP}/v1" and created["spec"] == {
            "cron": "1 2 3 4 5",
            "replicas": 3,
        }
        seen = hooks.requests["/validate"][-1]
        assert seen.kind == (GROUP, "v2", "CronTab") and seen.request_kind == (GROUP, "v1", "CronTab")
        assert seen.object is not None and seen.object["apiVersion"] == f"{GROUP}/v2"
        assert seen.object["spec"] == {"schedule": {"cron": "1 2 3 4 5"}, "replicas": 3}
        # Never an object in the storage version's shape under the webhook's apiVersion.
        sent = [r.object for path in ("/validate", "/mutate") for r in hooks.requests[path]]
        assert sent and all(o is not None and "cron" not in o["spec"] for o in sent)

        with pytest.raises(ApiException) as e:
            co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("n", "never"))
        assert e.value.status == 403
        assert (
            status_of(e.value)["message"]
            == 'admission webhook "v.conv.example.com" denied the request: v2 says no'
        )
    finally:
        hooks.server.stop(5)


def test_every_served_version_is_discovered_with_its_schema(apiserver, converter, raw) -> None:
    code, group = raw.json("GET", f"/apis/{GROUP}")
    assert code == 200
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"]["version"] == "v2"
    for version, field in (("v1", "cron"), ("v2", "schedule")):
        code, resources = raw.json("GET", f"/apis/{GROUP}/{version}")
        assert code == 200 and {r["name"] for r in resources["resources"]} == {"crontabs", "crontabs/status"}
        code, doc = raw.json("GET", f"/openapi/v3/apis/{GROUP}/{version}")
        assert code == 200
        [name] = [n for n in doc["components"]["schemas"] if n.endswith(f".{version}.CronTab")]
        spec = doc["components"]["schemas"][name]["properties"]["spec"]
        assert field in spec["properties"]


def test_patch_apply_and_status_in_the_non_storage_version(apiserver, converter, co, raw) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("p", replicas=1))
    patched = co.patch_namespaced_custom_object(
        GROUP, "v2", "default", "crontabs", "p", {"spec": {"schedule": {"cron": "5 5 * * *"}}}
    )
    assert patched["spec"] == {"schedule": {"cron": "5 5 * * *"}, "replicas": 1}
    assert get(co, "v1", "p")["spec"] == {"cron": "5 5 * * *", "replicas": 1}

    r = raw.request(
        "PATCH",
        f"/apis/{GROUP}/v2/namespaces/default/crontabs/p?fieldManager=tester&force=true",
        raw=json.dumps(
            {
                "apiVersion": f"{GROUP}/v2",
                "kind": "CronTab",
                "metadata": {"name": "p"},
                "spec": {"replicas": 4},
            }
        ).encode(),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert r.status == 200, r.data
    applied = json.loads(r.data)
    assert applied["spec"] == {"schedule": {"cron": "5 5 * * *"}, "replicas": 4}
    managers = {m["manager"]: m["apiVersion"] for m in applied["metadata"]["managedFields"]}
    assert managers["tester"] == f"{GROUP}/v2"

    status = co.patch_namespaced_custom_object_status(
        GROUP, "v2", "default", "crontabs", "p", {"status": {"phase": "Running"}}
    )
    assert status["status"] == {"phase": "Running"} and status["apiVersion"] == f"{GROUP}/v2"
    assert get(co, "v1", "p")["status"] == {"phase": "Running"}

    # A DELETE held by a finalizer answers the object, in the request's version.
    co.patch_namespaced_custom_object(
        GROUP, "v1", "default", "crontabs", "p", {"metadata": {"finalizers": ["x/y"]}}
    )
    deleted = co.delete_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "p")
    assert deleted["apiVersion"] == f"{GROUP}/v2" and deleted["spec"]["schedule"] == {"cron": "5 5 * * *"}
    assert deleted["metadata"]["deletionTimestamp"]
    co.patch_namespaced_custom_object(
        GROUP, "v2", "default", "crontabs", "p", {"metadata": {"finalizers": None}}
    )
    with pytest.raises(ApiException) as e:
        get(co, "v1", "p")
    assert e.value.status == 404


def test_unknown_fields_in_the_non_storage_version(apiserver, converter, co, raw) -> None:
    body = v2_tab("u")
    body["spec"]["bogus"] = 1
    body["metadata"]["nope"] = 2
    r = raw.request("POST", f"/apis/{GROUP}/v2/namespaces/default/crontabs", body)
    assert r.status == 201
    assert (
        r.headers["Warning"]
        == '299 - "unknown field \\"metadata.nope\\"", 299 - "unknown field \\"spec.bogus\\""'
    )
    assert get(co, "v1", "u")["spec"] == {"cron": "*/5 * * * *"}
    body["metadata"]["name"] = "s"
    code, status = raw.json(
        "POST", f"/apis/{GROUP}/v2/namespaces/default/crontabs?fieldValidation=Strict", body
    )
    assert code == 400
    assert (
        status["message"]
        == 'strict decoding error: unknown field "metadata.nope", unknown field "spec.bogus"'
    )


def test_list_converts_in_one_review(apiserver, converter, co) -> None:
    for i in range(3):
        co.create_namespaced_custom_object(
            GROUP, "v1", "default", "crontabs", v1_tab(f"l{i}", f"{i} * * * *")
        )
    before = converter.calls()
    listed = co.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs")
    assert converter.calls() == before + 1  # kube sends a list's objects in one ConversionReview
    assert listed["apiVersion"] == f"{GROUP}/v2" and listed["kind"] == "CronTabList"
    assert [i["spec"] for i in listed["items"]] == [{"schedule": {"cron": f"{i} * * * *"}} for i in range(3)]
    assert all(i["apiVersion"] == f"{GROUP}/v2" for i in listed["items"])
    in_v1 = co.list_namespaced_custom_object(GROUP, "v1", "default", "crontabs")
    assert [i["spec"] for i in in_v1["items"]] == [{"cron": f"{i} * * * *"} for i in range(3)]


def test_watch_in_the_non_storage_version_gets_converted_events(apiserver, converter, co, raw) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("w0", "0 0 * * *"))
    stream = raw.stream(f"/apis/{GROUP}/v2/namespaces/default/crontabs?watch=1&timeoutSeconds=10")
    try:
        events: list[dict] = []
        buf = b""

        def read_event() -> dict:
            nonlocal buf
            while b"\n" not in buf:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(1)
                assert chunk, "watch ended early"
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            return json.loads(line)

        events.append(read_event())  # the initial ADDED
        co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("w1", "1 1 * * *"))
        events.append(read_event())
        co.patch_namespaced_custom_object(
            GROUP, "v1", "default", "crontabs", "w1", {"spec": {"cron": "2 2 * * *"}}
        )
        events.append(read_event())
        co.delete_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "w1")
        events.append(read_event())
    finally:
        stream.release_conn()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "w0"),
        ("ADDED", "w1"),
        ("MODIFIED", "w1"),
        ("DELETED", "w1"),
    ]
    assert all(e["object"]["apiVersion"] == f"{GROUP}/v2" for e in events)
    assert [e["object"]["spec"]["schedule"]["cron"] for e in events] == [
        "0 0 * * *",
        "1 1 * * *",
        "2 2 * * *",
        "2 2 * * *",
    ]


def test_table_watch_rows_show_converted_objects(apiserver, converter, co) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("t0", "9 9 * * *"))
    pool = urllib3.PoolManager(ca_certs=str(apiserver.ca_path))
    stream = pool.request(
        "GET",
        f"{apiserver.url}/apis/{GROUP}/v2/namespaces/default/crontabs?watch=1&timeoutSeconds=1&includeObject=Object",
        headers={
            "Authorization": f"Bearer {apiserver.token}",
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io",
        },
        preload_content=False,
    )
    try:
        lines = [json.loads(line) for line in stream.read().splitlines() if line]
    finally:
        stream.release_conn()
    assert [e["type"] for e in lines] == ["ADDED"]
    table = lines[0]["object"]
    assert table["kind"] == "Table" and [c["name"] for c in table["columnDefinitions"]][:1] == ["Name"]
    row = table["rows"][0]
    assert row["cells"][0] == "t0"
    assert row["object"]["apiVersion"] == f"{GROUP}/v2" and row["object"]["spec"]["schedule"] == {
        "cron": "9 9 * * *"
    }


def test_kubectl_reads_and_applies_either_version(apiserver, converter, co, kubectl) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("k", "3 3 * * *"))
    out = kubectl.json("get", f"crontabs.v2.{GROUP}", "k")
    assert out["apiVersion"] == f"{GROUP}/v2" and out["spec"]["schedule"] == {"cron": "3 3 * * *"}
    assert kubectl.json("get", f"crontabs.v1.{GROUP}", "k")["spec"]["cron"] == "3 3 * * *"
    manifest = kubectl.write("tab.yaml", v2_tab("kv2", "7 7 * * *"))
    assert kubectl.ok("apply", "--server-side", "-f", manifest) == f"crontab.{GROUP}/kv2 serverside-applied\n"
    assert get(co, "v1", "kv2")["spec"] == {"cron": "7 7 * * *"}
    listed = kubectl.json("get", f"crontabs.v2.{GROUP}")
    assert sorted(i["spec"]["schedule"]["cron"] for i in listed["items"]) == ["3 3 * * *", "7 7 * * *"]


def test_changing_the_storage_version_keeps_old_objects_readable(apiserver, converter, co, ca, raw) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("old", "4 4 * * *"))
    apiserver.install_crds([crontab_crd(webhook_conversion(converter.url, ca), storage="v2")])
    ext = client.ApiextensionsV1Api(apiserver.api_client())
    eventually(lambda: ext.read_custom_resource_definition(CRD_NAME).status.stored_versions == ["v1", "v2"])

    # The old object is still stored as v1 and read in v2 through the webhook.
    assert get(co, "v2", "old")["spec"] == {"schedule": {"cron": "4 4 * * *"}}
    assert get(co, "v1", "old")["spec"] == {"cron": "4 4 * * *"}
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("new", "5 5 * * *"))
    assert get(co, "v2", "new")["spec"] == {"schedule": {"cron": "5 5 * * *"}}
    # A write through v2 rewrites the old object in the new storage version.
    old = get(co, "v2", "old")
    old["spec"]["replicas"] = 7
    co.replace_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "old", old)
    assert get(co, "v1", "old")["spec"] == {"cron": "4 4 * * *", "replicas": 7}

    # A storage migration may drop v1 from storedVersions, never the storage version.
    crd = raw.json("GET", f"{CRDS}/{CRD_NAME}")[1]
    crd["status"]["storedVersions"] = ["v1"]
    code, body = raw.json("PUT", f"{CRDS}/{CRD_NAME}/status", crd)
    assert code == 422 and "status.storedVersions: Invalid value: " in body["message"], body
    assert body["message"].endswith("must have the storage version v2")

    # v1 may not leave spec.versions while it is in status.storedVersions.
    crd = raw.json("GET", f"{CRDS}/{CRD_NAME}")[1]
    crd["spec"]["versions"] = [v for v in crd["spec"]["versions"] if v["name"] == "v2"]
    code, body = raw.json("PUT", f"{CRDS}/{CRD_NAME}", crd)
    assert code == 422
    assert (
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a '
        "storage version, and must remain in spec.versions until a storage migration ensures no data "
        "remains persisted in v1 and removes v1 from status.storedVersions" in body["message"]
    )


def test_garbage_collector_leaves_old_objects_in_their_stored_version(apiserver, converter, co, ca) -> None:
    core = client.CoreV1Api(apiserver.api_client())
    owner = core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="o"))
    )
    body = v1_tab("old", "6 6 * * *")
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": owner.metadata.uid}
    ]
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", body)
    apiserver.install_crds([crontab_crd(webhook_conversion(converter.url, ca), storage="v2")])
    core.delete_namespaced_config_map("o", "default", propagation_policy="Orphan")
    eventually(lambda: not get(co, "v2", "old")["metadata"].get("ownerReferences"))
    calls = converter.calls()
    assert get(co, "v1", "old")["spec"] == {"cron": "6 6 * * *"}  # still stored as v1: no webhook call
    assert converter.calls() == calls
    assert get(co, "v2", "old")["spec"] == {"schedule": {"cron": "6 6 * * *"}}


# --- a webhook that fails ------------------------------------------------------------------------------


def test_webhook_down_is_reported_as_kube_apiserver_reports_it(apiserver, converter, co, raw) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("d"))
    port = converter.server.port
    converter.stop()
    refused = (
        f'Post "https://127.0.0.1:{port}/convert": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )

    code, body = raw.json("GET", f"/apis/{GROUP}/v2/namespaces/default/crontabs/d")
    assert code == 500 and body["kind"] == "Status" and body.get("reason", "") == ""
    assert body["message"] == f"conversion webhook for {GROUP}/v1, Kind=CronTab failed: {refused}"

    code, body = raw.json("GET", f"/apis/{GROUP}/v2/namespaces/default/crontabs")
    assert code == 500
    # A list is of the request's version already: only its items are converted.
    assert body["message"] == f"conversion webhook for {GROUP}/v2, Kind=CronTabList failed: {refused}"

    code, body = raw.json("POST", f"/apis/{GROUP}/v2/namespaces/default/crontabs", v2_tab("e"))
    assert code == 500
    assert body["message"] == f"conversion webhook for {GROUP}/v2, Kind=CronTab failed: {refused}"
    # A watch whose event cannot be converted ends, as kube-apiserver ends it.
    stream = raw.stream(f"/apis/{GROUP}/v2/namespaces/default/crontabs?watch=1&timeoutSeconds=10")
    try:
        assert stream.status == 200 and stream.read() == b""
    finally:
        stream.release_conn()
    # Metadata-only reads need no conversion.
    r = raw.request(
        "GET",
        f"/apis/{GROUP}/v2/namespaces/default/crontabs",
        headers={"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
    )
    assert r.status == 200 and [i["metadata"]["name"] for i in json.loads(r.data)["items"]] == ["d"]
    # Nothing was stored, and the storage version needs no webhook.
    assert [
        i["metadata"]["name"]
        for i in co.list_namespaced_custom_object(GROUP, "v1", "default", "crontabs")["items"]
    ] == ["d"]


class BadWebhook(RawHTTPS):
    """An HTTPS conversion webhook answering whatever ``answer(review)`` returns; reviews recorded."""

    def __init__(self, cert_dir: Path) -> None:
        super().__init__(cert_dir)
        self.respond: Callable[[dict], dict] = lambda review: {}
        self.reviews: list[dict] = []
        self.answer = self._record

    def _record(self, review: dict) -> tuple[int, bytes]:
        self.reviews.append(review)
        return 200, json.dumps(self.respond(review)).encode()


@pytest.fixture
def bad(apiserver, cert_dir: Path, ca: CertKeyPair) -> Iterator[BadWebhook]:
    hook = BadWebhook(cert_dir)
    apiserver.install_crds([crontab_crd(webhook_conversion(hook.url, ca, ("v1beta2", "v1")))])
    yield hook
    hook.close()


def _convert_spokes(review: dict) -> list[dict]:
    out = []
    for obj in review["request"]["objects"]:
        converted = (
            CronTabV1().convert_to if obj["apiVersion"].endswith("v1") else CronTabV1().convert_from
        )(obj)
        out.append({**converted, "apiVersion": review["request"]["desiredAPIVersion"]})
    return out


def _ok(review: dict, objects: list[dict], uid: str | None = None) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {
            "uid": review["request"]["uid"] if uid is None else uid,
            "convertedObjects": objects,
            "result": {"status": "Success"},
        },
    }


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            lambda r: _ok(r, _convert_spokes(r), uid="wrong"),
            r'failed: expected response\.uid="[0-9a-f-]{36}", got "wrong"$',
        ),
        (lambda r: _ok(r, []), r"returned 0 objects, expected 1$"),
        (
            lambda r: _ok(
                r, [{**o, "metadata": {**o["metadata"], "name": "other"}} for o in _convert_spokes(r)]
            ),
            r"returned invalid object: must have the same name: d != other$",
        ),
        (
            lambda r: _ok(r, [{**o, "apiVersion": f"{GROUP}/v1"} for o in _convert_spokes(r)]),
            rf"returned invalid object at index 0: invalid groupVersion "
            rf"\(expected {GROUP}/v2, received {GROUP}/v1\)$",
        ),
        (
            lambda r: {
                **_ok(r, []),
                "response": {
                    "uid": r["request"]["uid"],
                    "result": {"status": "Failure", "message": "no way"},
                },
            },
            r"failed: no way$",
        ),
        (
            lambda r: {**_ok(r, []), "kind": "AdmissionReview"},
            r"failed: expected webhook response of apiextensions\.k8s\.io/v1, Kind=ConversionReview, got "
            r"apiextensions\.k8s\.io/v1, Kind=AdmissionReview$",
        ),
    ],
    ids=["wrong-uid", "wrong-count", "changed-name", "wrong-version", "failure-result", "wrong-kind"],
)
def test_bad_webhook_answers_are_refused(apiserver, bad, co, raw, answer, message) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("d"))
    bad.respond = answer
    code, body = raw.json("GET", f"/apis/{GROUP}/v2/namespaces/default/crontabs/d")
    assert code == 500, body
    assert body["message"].startswith(f"conversion webhook for {GROUP}/v1, Kind=CronTab ")
    assert re.search(message, body["message"]), body["message"]
    review = bad.reviews[-1]
    assert review["apiVersion"] == "apiextensions.k8s.io/v1"  # v1beta2 is unknown: the next offered
    assert review["request"]["desiredAPIVersion"] == f"{GROUP}/v2"
    assert [o["metadata"]["name"] for o in review["request"]["objects"]] == ["d"]


def test_a_list_sends_only_the_objects_stored_in_another_version(apiserver, bad, co, ca) -> None:
    bad.respond = lambda r: _ok(r, _convert_spokes(r))
    for name in ("a", "c"):  # alike but for their names: both are sent
        co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab(name, "1 * * * *"))
    apiserver.install_crds([crontab_crd(webhook_conversion(bad.url, ca), storage="v2")])
    co.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs", v2_tab("b", "2 * * * *"))
    bad.reviews.clear()
    listed = co.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs")
    assert [i["spec"]["schedule"]["cron"] for i in listed["items"]] == ["1 * * * *", "2 * * * *", "1 * * * *"]
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a", "b", "c"]
    assert [[o["metadata"]["name"] for o in r["request"]["objects"]] for r in bad.reviews] == [["a", "c"]]

    bad.respond = lambda r: _ok(
        r, [{**o, "metadata": {**o["metadata"], "name": "x"}} for o in _convert_spokes(r)]
    )
    with pytest.raises(ApiException) as e:
        co.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs")
    assert status_of(e.value)["message"] == (
        f"conversion webhook for {GROUP}/v2, Kind=CronTabList returned invalid converted object at index 1: "
        "must have the same name: a != x"
    )


def test_webhook_may_change_labels_and_annotations_only(apiserver, bad, co) -> None:
    co.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs", v1_tab("m"))

    def answer(r: dict) -> dict:
        objs = _convert_spokes(r)
        for o in objs:
            o["metadata"] = {
                **o["metadata"],
                "labels": {"converted": "yes"},
                "generation": 99,
                "finalizers": ["x/y"],
            }
        return _ok(r, objs)

    bad.respond = answer
    got = get(co, "v2", "m")
    assert got["metadata"]["labels"] == {"converted": "yes"}
    assert got["metadata"]["generation"] == 1 and "finalizers" not in got["metadata"]

    def bad_label(r: dict) -> dict:
        objs = _convert_spokes(r)
        for o in objs:
            o["metadata"] = {**o["metadata"], "labels": {"bad key!": "x"}}
        return _ok(r, objs)

    bad.respond = bad_label
    with pytest.raises(ApiException) as e:
        get(co, "v2", "m")
    assert e.value.status == 500
    assert status_of(e.value)["message"].startswith(
        f"conversion webhook for {GROUP}/v1, Kind=CronTab returned invalid metadata: metadata.labels: "
        'Invalid value: "bad key!": name part must consist of alphanumeric characters'
    )

    def number_annotation(r: dict) -> dict:
        objs = _convert_spokes(r)
        for o in objs:
            o["metadata"] = {**o["metadata"], "annotations": {"a": 1}}
        return _ok(r, objs)

    bad.respond = number_annotation
    with pytest.raises(ApiException) as e:
        get(co, "v2", "m")
    assert status_of(e.value)["message"] == (
        f"conversion webhook for {GROUP}/v1, Kind=CronTab returned invalid metadata: "
        "metadata.annotations[a] must be a string, but is int64 in converted object"
    )


def test_v1beta1_reviews_when_only_v1beta1_is_offered(apiserver, cert_dir, ca, co) -> None:
    hook = BadWebhook(cert_dir)
    try:
        apiserver.install_crds([crontab_crd(webhook_conversion(hook.url, ca, ("v1beta1",)))])

        def answer(r: dict) -> dict:
            # v1beta1 answers are not checked for their uid or kind (kube keeps that leniency)
            return {"response": {"convertedObjects": _convert_spokes(r), "result": {"status": "Success"}}}

        hook.respond = answer
        co.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs", v2_tab("b1", "6 6 * * *"))
        assert get(co, "v1", "b1")["spec"] == {"cron": "6 6 * * *"}
        assert {r["apiVersion"] for r in hook.reviews} == {"apiextensions.k8s.io/v1beta1"}
    finally:
        hook.close()


# --- None strategy, deprecation, CRD validation --------------------------------------------------------


def test_none_strategy_changes_only_the_api_version(apiserver, co, raw, kubectl) -> None:
    crd = crontab_crd(None, v1={"deprecated": True})
    crd["spec"]["versions"][1]["schema"] = _schema(False)  # one shape: None conversion changes nothing else
    apiserver.install_crds([crd])
    created = co.create_namespaced_custom_object(
        GROUP, "v2", "default", "crontabs", {**v1_tab("n"), "apiVersion": f"{GROUP}/v2"}
    )
    r = raw.request("GET", f"/apis/{GROUP}/v1/namespaces/default/crontabs/n")
    assert r.status == 200
    got = json.loads(r.data)
    assert got["apiVersion"] == f"{GROUP}/v1" and got["spec"] == created["spec"]
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    assert r.headers["Warning"] == f'299 - "{GROUP}/v1 CronTab is deprecated; use {GROUP}/v2 CronTab"'
    assert "Warning" not in raw.request("GET", f"/apis/{GROUP}/v2/namespaces/default/crontabs/n").headers
    r = kubectl.run("get", f"crontabs.v1.{GROUP}", "n")
    assert (
        r.returncode == 0 and f"Warning: {GROUP}/v1 CronTab is deprecated; use {GROUP}/v2 CronTab" in r.stderr
    )


def test_garbage_collector_writes_keep_the_storage_versions_fields(apiserver, co) -> None:
    # v1 comes first in spec.versions but v2 stores: the collector's write must not prune by v1's schema.
    apiserver.install_crds([crontab_crd(None, storage="v2")])
    core = client.CoreV1Api(apiserver.api_client())
    owner = core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner"))
    )
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    body = v2_tab("dep", "3 3 * * *")
    body["metadata"]["ownerReferences"] = [ref]
    co.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs", body)
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Orphan")
    eventually(lambda: not get(co, "v2", "dep")["metadata"].get("ownerReferences"))
    assert get(co, "v2", "dep")["spec"] == {"schedule": {"cron": "3 3 * * *"}}


def test_deprecation_warning_text_of_the_crd(apiserver, raw) -> None:
    apiserver.install_crds(
        [crontab_crd(None, v1={"deprecated": True, "deprecationWarning": "v1 goes away in 2027"})]
    )
    r = raw.request("GET", f"/apis/{GROUP}/v1/namespaces/default/crontabs")
    assert r.status == 200 and r.headers["Warning"] == '299 - "v1 goes away in 2027"'


@pytest.mark.parametrize(
    ("conversion", "message"),
    [
        (
            {"strategy": "Webhook"},
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        ),
        (
            {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x/convert"}}},
            "spec.conversion.conversionReviewVersions: Required value",
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "http://x/convert"}, "conversionReviewVersions": ["v1"]},
            },
            'spec.conversion.webhookClientConfig.url: Invalid value: "http": '
            "'https' is the only allowed URL scheme",
        ),
        (
            {"strategy": "Webhook", "webhook": {"clientConfig": {}, "conversionReviewVersions": ["v1"]}},
            "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required",
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "https://x/c"}, "conversionReviewVersions": ["v2"]},
            },
            'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: '
            "must include at least one of v1, v1beta1",
        ),
        (
            {"strategy": "None", "webhook": {"clientConfig": {"url": "https://x/c"}}},
            "spec.conversion.webhookClientConfig: Forbidden: "
            "should not be set when strategy is not set to Webhook",
        ),
        (
            {"strategy": "Other"},
            'spec.conversion.strategy: Unsupported value: "Other": supported values: "None", "Webhook"',
        ),
    ],
    ids=[
        "no-client-config",
        "no-review-versions",
        "http-url",
        "no-url-or-service",
        "unknown-review-version",
        "none-with-webhook",
        "unknown-strategy",
    ],
)
def test_crd_conversion_settings_are_validated(apiserver, raw, conversion, message) -> None:
    code, body = raw.json("POST", CRDS, crontab_crd(conversion))
    assert code == 422, body
    assert message in body["message"], body["message"]


def test_webhook_conversion_needs_pruning(apiserver, raw) -> None:
    conversion = {
        "strategy": "Webhook",
        "webhook": {"clientConfig": {"url": "https://x/c"}, "conversionReviewVersions": ["v1"]},
    }
    crd = crontab_crd(conversion)
    crd["spec"]["preserveUnknownFields"] = True
    code, body = raw.json("POST", CRDS, crd)
    assert code == 422
    assert (
        'spec.conversion.strategy: Invalid value: "Webhook": '
        "must be None if spec.preserveUnknownFields is true" in body["message"]
    )

    conversion["webhook"]["clientConfig"] = {"service": {"namespace": "", "name": "x", "port": 70000}}
    code, body = raw.json("POST", CRDS, crontab_crd(conversion))
    assert code == 422
    assert body["message"].endswith(
        "[spec.conversion.webhookClientConfig.service.namespace: Required value: "
        "service namespace is required, "
        "spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be "
        "between 1 and 65535, inclusive]"
    )
