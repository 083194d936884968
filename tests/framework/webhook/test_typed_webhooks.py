"""Typed admission through the test API server: a Memcached defaulter and validator registered with
WebhookBuilder, called by the API server for create, update, delete and dry-run, refusing with field
causes and warning through kubectl (controller-runtime's CustomDefaulter / CustomValidator)."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from prometheus_client import CollectorRegistry

from framework.client import Client
from framework.manager import Manager
from framework.meta import field
from framework.testing import eventually
from framework.testing.kubectl import KUBECTL, Kubectl
from framework.webhook import (
    AdmissionDenied,
    Invalid,
    WebhookBuilder,
    WebhookServer,
    current_request,
    self_signed_cert,
)

GROUP, VERSION, KIND, PLURAL = "cache.example.com", "v1alpha1", "Memcached", "memcacheds"
API_VERSION = f"{GROUP}/{VERSION}"
ADMISSION = "admissionregistration.k8s.io/v1"

MEMCACHED_CRD = Path(__file__).resolve().parents[3] / "docs" / "examples" / "memcached-crd.yaml"


class Memcached:
    """The webhook functions under test, recording what they saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool, str]] = []  # (hook, operation, dry_run, username)

    def _record(self, hook: str) -> None:
        req = current_request()
        self.seen.append((hook, req.operation, req.dry_run, req.username))

    def default(self, obj: dict[str, Any]) -> None:
        self._record("default")
        spec = obj.setdefault("spec", {})
        spec.setdefault("size", 1)
        spec.setdefault("containerPort", 11211)
        if current_request().operation == "CREATE":
            obj["metadata"].setdefault("annotations", {})["cache.example.com/created-by"] = (
                current_request().username
            )

    def _check(self, obj: dict[str, Any]) -> list[str]:
        size = obj["spec"]["size"]
        errs = field.ErrorList()
        if size > 5:
            errs.append(field.invalid(field.new_path("spec", "size"), size, "must be at most 5"))
        if obj["spec"]["containerPort"] < 1024:
            errs.append(field.invalid("spec.containerPort", obj["spec"]["containerPort"], "must be >= 1024"))
        if errs:
            raise Invalid(errs)
        return [f"size {size} is more than 3 replicas; is that intended?"] if size > 3 else []

    def on_create(self, obj: dict[str, Any]) -> list[str]:
        self._record("create")
        return self._check(obj)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
        self._record("update")
        warnings = self._check(new)
        if new["spec"]["containerPort"] != old["spec"]["containerPort"]:
            raise Invalid(
                field.forbidden("spec.containerPort", "may not change"),
                warnings=warnings,
            )
        return warnings

    def on_delete(self, obj: dict[str, Any]) -> None:
        self._record("delete")
        if (obj["metadata"].get("annotations") or {}).get("cache.example.com/protected") == "true":
            raise AdmissionDenied(f'memcached "{obj["metadata"]["name"]}" is protected')


class Running:
    """A manager with a webhook server, run on its own thread until ``stop()``."""

    def __init__(self, apiserver, cert_dir: Path) -> None:
        self.server = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir, registry=CollectorRegistry())
        self.mgr = Manager(
            Client.from_kubeconfig(apiserver.kubeconfig, qps=0), webhook_server=self.server, sync_period=0
        )
        self.thread = threading.Thread(target=self.mgr.start, name="webhook-test-manager", daemon=True)

    def start(self) -> None:
        self.thread.start()
        eventually(lambda: self.server.port != 0, timeout=30)

    def stop(self) -> None:
        self.mgr.stop()
        self.thread.join(30)
        assert not self.thread.is_alive()


@pytest.fixture
def certs(tmp_path: Path) -> tuple[Path, bytes]:
    cert_path, _, ca_pem = self_signed_cert(tmp_path / "certs")
    return cert_path.parent, ca_pem


@pytest.fixture
def memcached(apiserver, certs) -> Iterator[tuple[Memcached, Running]]:
    apiserver.install_crds(MEMCACHED_CRD)
    hooks = Memcached()
    run = Running(apiserver, certs[0])
    paths = (
        WebhookBuilder(run.mgr)
        .for_(API_VERSION, KIND)
        .with_defaulter(hooks.default)
        .with_validator(on_create=hooks.on_create, on_update=hooks.on_update, on_delete=hooks.on_delete)
        .complete()
    )
    assert sorted(paths) == [
        "/mutate-cache-example-com-v1alpha1-memcached",
        "/validate-cache-example-com-v1alpha1-memcached",
    ]
    run.start()
    register(apiserver, run.server.url, certs[1])
    yield hooks, run
    run.stop()


def register(apiserver, base_url: str, ca_pem: bytes, review_versions: list[str] | None = None) -> None:
    admin = client.ApiClient(apiserver.api_client().configuration)
    api = client.AdmissionregistrationV1Api(admin)
    for mutating in (True, False):
        prefix = "mutate" if mutating else "validate"
        hook = {
            "name": f"{prefix[0]}memcached.{GROUP}",
            "clientConfig": {
                "url": f"{base_url}/{prefix}-cache-example-com-v1alpha1-memcached",
                "caBundle": base64.b64encode(ca_pem).decode(),
            },
            "rules": [
                {
                    "operations": ["CREATE", "UPDATE"] + ([] if mutating else ["DELETE"]),
                    "apiGroups": [GROUP],
                    "apiVersions": [VERSION],
                    "resources": [PLURAL],
                }
            ],
            "sideEffects": "None",
            "admissionReviewVersions": review_versions or ["v1"],
            "failurePolicy": "Fail",
        }
        body = {"metadata": {"name": f"{prefix}-memcached"}, "webhooks": [hook]}
        if mutating:
            api.create_mutating_webhook_configuration(body)
        else:
            api.create_validating_webhook_configuration(body)


def custom(apiserver) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(apiserver.api_client())


def memcached_obj(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}, "spec": spec}


def create(apiserver, obj: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return custom(apiserver).create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, obj, **kw)


def get(apiserver, name: str) -> dict[str, Any]:
    return custom(apiserver).get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)


def status_of(e: client.ApiException) -> dict[str, Any]:
    return json.loads(e.body)


def test_create_is_defaulted_and_validated(apiserver, memcached):
    hooks, _ = memcached
    created = create(apiserver, memcached_obj("m1"))
    assert created["spec"] == {"size": 1, "containerPort": 11211}
    assert created["metadata"]["annotations"] == {"cache.example.com/created-by": "admin"}
    assert get(apiserver, "m1")["spec"] == {"size": 1, "containerPort": 11211}
    # Mutation runs before validation, and the validator sees the defaulted object.
    assert [h[:3] for h in hooks.seen] == [("default", "CREATE", False), ("create", "CREATE", False)]
    assert {h[3] for h in hooks.seen} == {"admin"}


def test_given_fields_are_kept(apiserver, memcached):
    created = create(apiserver, memcached_obj("m2", size=3, containerPort=2000))
    assert created["spec"] == {"size": 3, "containerPort": 2000}
    assert created["metadata"]["annotations"]["cache.example.com/created-by"] == "admin"


def test_denial_with_field_causes(apiserver, memcached):
    with pytest.raises(client.ApiException) as e:
        create(apiserver, memcached_obj("big", size=9, containerPort=80))
    assert e.value.status == 422
    status = status_of(e.value)
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        'admission webhook "vmemcached.cache.example.com" denied the request: '
        'Memcached.cache.example.com "big" is invalid: [spec.size: Invalid value: 9: must be at most 5, '
        "spec.containerPort: Invalid value: 80: must be >= 1024]"
    )
    assert status["details"] == {
        "name": "big",
        "group": GROUP,
        "kind": KIND,
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 9: must be at most 5",
                "field": "spec.size",
            },
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 80: must be >= 1024",
                "field": "spec.containerPort",
            },
        ],
    }
    with pytest.raises(client.ApiException) as gone:
        get(apiserver, "big")
    assert gone.value.status == 404


def test_update_is_validated_against_the_old_object(apiserver, memcached):
    hooks, _ = memcached
    create(apiserver, memcached_obj("m3", size=2))
    api = custom(apiserver)
    patched = api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "m3", {"spec": {"size": 4}}
    )
    assert patched["spec"]["size"] == 4
    with pytest.raises(client.ApiException) as e:
        api.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "m3", {"spec": {"containerPort": 5000}}
        )
    assert e.value.status == 422
    assert status_of(e.value)["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: may not change",
            "field": "spec.containerPort",
        }
    ]
    assert get(apiserver, "m3")["spec"] == {"size": 4, "containerPort": 11211}
    assert ("update", "UPDATE", False, "admin") in hooks.seen
    # A defaulter for UPDATE that changes nothing answers without a patch: the object is as sent.
    assert ("default", "UPDATE", False, "admin") in hooks.seen


def test_delete_refused_then_allowed(apiserver, memcached):
    hooks, _ = memcached
    obj = memcached_obj("m4")
    obj["metadata"]["annotations"] = {"cache.example.com/protected": "true"}
    create(apiserver, obj)
    api = custom(apiserver)
    with pytest.raises(client.ApiException) as e:
        api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "m4")
    assert e.value.status == 403
    status = status_of(e.value)
    assert status["reason"] == "Forbidden"
    assert status["message"].endswith('denied the request: memcached "m4" is protected')
    assert get(apiserver, "m4")["metadata"]["name"] == "m4"
    api.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        PLURAL,
        "m4",
        {"metadata": {"annotations": {"cache.example.com/protected": None}}},
    )
    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "m4")
    with pytest.raises(client.ApiException) as gone:
        get(apiserver, "m4")
    assert gone.value.status == 404
    # The defaulter is not called for DELETE (it is not in the mutating rule, and would admit it).
    assert [h[0] for h in hooks.seen if h[1] == "DELETE"] == ["delete", "delete"]


def test_dry_run_is_passed_through_and_persists_nothing(apiserver, memcached):
    hooks, _ = memcached
    created = create(apiserver, memcached_obj("dry"), dry_run="All")
    assert created["spec"] == {"size": 1, "containerPort": 11211}
    assert [h[:3] for h in hooks.seen] == [("default", "CREATE", True), ("create", "CREATE", True)]
    with pytest.raises(client.ApiException) as gone:
        get(apiserver, "dry")
    assert gone.value.status == 404
    with pytest.raises(client.ApiException) as e:
        create(apiserver, memcached_obj("dry-big", size=6), dry_run="All")
    assert e.value.status == 422


def test_user_info_of_another_user(apiserver, memcached):
    hooks, _ = memcached
    alice = Client.from_kubeconfig(apiserver.kubeconfig_for("alice", groups=["system:masters"]), qps=0)
    obj = memcached_obj("by-alice")
    obj["metadata"]["namespace"] = "default"
    created = alice.create(obj)
    assert created["metadata"]["annotations"]["cache.example.com/created-by"] == "alice"
    assert ("create", "CREATE", False, "alice") in hooks.seen


def test_kubectl_shows_warnings_and_denials(apiserver, memcached, tmp_path):
    if not os.access(KUBECTL, os.X_OK):
        pytest.skip("kubectl is not installed")
    k = Kubectl(apiserver.kubeconfig, tmp_path, timeout=60)
    try:
        manifest = json.dumps(
            memcached_obj("warned", size=4) | {"metadata": {"name": "warned", "namespace": "default"}}
        )
        r = k.run("create", "-f", "-", input=manifest)
        assert r.returncode == 0, r.stderr
        assert "Warning: size 4 is more than 3 replicas; is that intended?" in r.stderr
        bad = json.dumps(memcached_obj("bad", size=7) | {"metadata": {"name": "bad", "namespace": "default"}})
        r = k.run("create", "-f", "-", input=bad)
        assert r.returncode == 1
        # kubectl prints a 422 with causes in its own words, one line per cause.
        assert r.stderr == 'The Memcached "bad" is invalid: spec.size: Invalid value: 7: must be at most 5\n'
        r = k.run("get", "memcached", "bad")
        assert r.returncode == 1 and "NotFound" in r.stderr
    finally:
        k.close()


def test_admission_review_v1beta1(apiserver, certs):
    apiserver.install_crds(MEMCACHED_CRD)
    hooks = Memcached()
    run = Running(apiserver, certs[0])
    WebhookBuilder(run.mgr).for_(API_VERSION, KIND).with_defaulter(hooks.default).with_validator(
        on_create=hooks.on_create
    ).complete()
    run.start()
    try:
        register(apiserver, run.server.url, certs[1], review_versions=["v1beta1"])
        assert create(apiserver, memcached_obj("beta"))["spec"] == {"size": 1, "containerPort": 11211}
        with pytest.raises(client.ApiException) as e:
            create(apiserver, memcached_obj("beta-big", size=8))
        assert e.value.status == 422
        # No on_update: updates are admitted unvalidated.
        api = custom(apiserver)
        assert (
            api.patch_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL, "beta", {"spec": {"containerPort": 3000}}
            )["spec"]["containerPort"]
            == 3000
        )
    finally:
        run.stop()
