"""Typed defaulters and validators answering AdmissionReview bodies (framework.webhook.review), and the
builder's checks: the failure paths that the API server tests do not reach."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry

from framework.meta import field
from framework.webhook import (
    AdmissionDenied,
    Invalid,
    WebhookBuilder,
    WebhookServer,
    current_request,
    defaulter,
    review,
    validator,
)

AV = "cache.example.com/v1alpha1"
KIND = {"group": "cache.example.com", "version": "v1alpha1", "kind": "Memcached"}


def body(
    operation: str, obj: Any = None, old: Any = None, *, kind: dict | None = None, version: str = "v1"
) -> bytes:
    request = {
        "uid": "u-1",
        "kind": kind or KIND,
        "resource": {"group": "cache.example.com", "version": "v1alpha1", "resource": "memcacheds"},
        "name": "m",
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": "bob", "groups": ["devs"]},
        "object": obj,
        "oldObject": old,
        "dryRun": True,
    }
    return orjson.dumps(
        {"apiVersion": f"admission.k8s.io/{version}", "kind": "AdmissionReview", "request": request}
    )


def answer(handler, *args: Any, **kw: Any) -> dict[str, Any]:
    doc = review(body(*args, **kw), "application/json", handler)
    assert doc["response"]["uid"] == "u-1"
    return doc["response"]


def mc(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": AV, "kind": "Memcached", "metadata": {"name": "m"}, "spec": spec}


def patch_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response["patchType"] == "JSONPatch"
    return orjson.loads(base64.b64decode(response["patch"]))


def test_defaulter_patch_and_request_context():
    seen = []

    def default(obj: dict) -> None:
        req = current_request()
        seen.append((req.username, req.user_info["groups"], req.dry_run, req.operation))
        obj["spec"].setdefault("size", 1)

    hook = defaulter(AV, "Memcached", default)
    r = answer(hook, "CREATE", mc())
    assert r["allowed"] is True and patch_of(r) == [{"op": "add", "path": "/spec/size", "value": 1}]
    assert seen == [("bob", ["devs"], True, "CREATE")]
    unchanged = answer(hook, "UPDATE", mc(size=2), mc(size=2))
    assert unchanged["allowed"] is True and "patch" not in unchanged
    with pytest.raises(LookupError):
        current_request()  # only inside a webhook function


def test_defaulter_skips_delete_and_refuses_missing_object_or_wrong_kind():
    calls = []
    hook = defaulter(AV, "Memcached", calls.append)
    assert answer(hook, "DELETE", None, mc())["allowed"] is True
    assert calls == []
    r = answer(hook, "CREATE", None)
    assert r["allowed"] is False and r["status"]["code"] == 400
    r = answer(hook, "CREATE", mc(), kind={"group": "apps", "version": "v1", "kind": "Deployment"})
    assert r["allowed"] is False and r["status"]["code"] == 400
    assert (
        r["status"]["message"]
        == "this webhook serves Memcached.cache.example.com, got a request for Deployment.apps"
    )
    assert calls == []


def test_defaulter_that_returns_an_object_or_raises_is_a_500():
    r = answer(defaulter(AV, "Memcached", lambda obj: obj), "CREATE", mc())
    assert r["allowed"] is False and r["status"]["code"] == 500
    assert "must change the object it is given in place and return None" in r["status"]["message"]
    r = answer(defaulter(AV, "Memcached", lambda obj: obj["nope"]), "CREATE", mc())
    assert r["allowed"] is False and r["status"]["code"] == 500 and "KeyError" in r["status"]["message"]


def test_defaulter_may_deny():
    def default(obj: dict) -> None:
        raise AdmissionDenied("no defaults for you", code=400, reason="BadRequest")

    r = answer(defaulter(AV, "Memcached", default), "CREATE", mc())
    assert r["allowed"] is False
    assert r["status"] == {
        "metadata": {},
        "status": "Failure",
        "code": 400,
        "reason": "BadRequest",
        "message": "no defaults for you",
    }


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_validator_operations_warnings_and_invalid(version: str):
    calls = []

    def on_create(obj: dict) -> str:
        calls.append(("create", obj["spec"]))
        return "one warning"

    def on_update(old: dict, new: dict) -> list[str]:
        calls.append(("update", old["spec"], new["spec"]))
        raise Invalid(field.invalid("spec.size", new["spec"]["size"], "too big"), warnings=["careful"])

    hook = validator(AV, "Memcached", on_create=on_create, on_update=on_update)
    assert hook.operations == ["CREATE", "UPDATE"]
    r = answer(hook, "CREATE", mc(size=1), version=version)
    assert r["allowed"] is True and r["warnings"] == ["one warning"]
    r = answer(hook, "UPDATE", mc(size=9), mc(size=1), version=version)
    assert r["allowed"] is False and r["warnings"] == ["careful"]
    assert r["status"] == {
        "metadata": {},
        "status": "Failure",
        "code": 422,
        "reason": "Invalid",
        "message": 'Memcached.cache.example.com "m" is invalid: spec.size: Invalid value: 9: too big',
        "details": {
            "name": "m",
            "group": "cache.example.com",
            "kind": "Memcached",
            "causes": [
                {"reason": "FieldValueInvalid", "message": "Invalid value: 9: too big", "field": "spec.size"}
            ],
        },
    }
    # No on_delete: DELETE is admitted; CONNECT is never validated; other operations are bad requests.
    assert answer(hook, "DELETE", None, mc())["allowed"] is True
    assert answer(hook, "CONNECT", None)["allowed"] is True
    bad = answer(hook, "PATCH", mc())
    assert bad["allowed"] is False and bad["status"]["code"] == 400
    assert calls == [("create", {"size": 1}), ("update", {"size": 1}, {"size": 9})]


def test_validator_delete_sees_the_old_object_and_bad_warnings_are_a_500():
    seen = []
    hook = validator(AV, "Memcached", on_delete=lambda old: seen.append(old["spec"]))
    assert answer(hook, "DELETE", None, mc(size=3))["allowed"] is True
    assert seen == [{"size": 3}]
    r = answer(hook, "DELETE", None, None)
    assert r["allowed"] is False and r["status"]["code"] == 400
    r = answer(validator(AV, "Memcached", on_create=lambda obj: [1]), "CREATE", mc())
    assert r["allowed"] is False and r["status"]["code"] == 500
    assert "a warning must be a string" in r["status"]["message"]


def test_constructors_refuse_what_cannot_work():
    with pytest.raises(ValueError, match="on_create, on_update or on_delete"):
        validator(AV, "Memcached")
    with pytest.raises(TypeError):
        defaulter(AV, "Memcached", "not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        defaulter("a/b/c", "Memcached", lambda obj: None)
    with pytest.raises(ValueError):
        defaulter(AV, "", lambda obj: None)
    with pytest.raises(ValueError):
        Invalid(field.ErrorList())


class _Mgr:
    def __init__(self, server: Any) -> None:
        self.webhook_server = server


def test_builder_paths_and_errors(tmp_path):
    server = WebhookServer("127.0.0.1", 0, cert_dir=tmp_path, registry=CollectorRegistry())
    mgr = _Mgr(server)
    paths = WebhookBuilder(mgr).for_("v1", "ConfigMap").with_validator(on_delete=lambda o: None).complete()
    assert list(paths) == ["/validate--v1-configmap"]  # the core group is empty, as controller-runtime's
    assert sorted(server.webhooks) == ["/validate--v1-configmap"]
    with pytest.raises(ValueError, match="already registered"):
        WebhookBuilder(mgr).for_("v1", "ConfigMap").with_validator(on_delete=lambda o: None).complete()
    custom = (
        WebhookBuilder(mgr)
        .for_(AV, "Memcached")
        .with_defaulter(lambda o: None)
        .with_defaulter_custom_path("/custom/mutate")
        .with_validator(on_create=lambda o: None)
        .with_validator_custom_path("/custom/validate")
        .complete()
    )
    assert sorted(custom) == ["/custom/mutate", "/custom/validate"]
    with pytest.raises(ValueError, match="does not match"):
        WebhookBuilder(mgr).with_defaulter_custom_path("no-slash")
    with pytest.raises(ValueError, match="for_"):
        WebhookBuilder(mgr).with_defaulter(lambda o: None).complete()
    with pytest.raises(ValueError, match="nothing to register"):
        WebhookBuilder(mgr).for_(AV, "Memcached").complete()
    with pytest.raises(ValueError, match="no webhook server"):
        WebhookBuilder(_Mgr(None)).for_(AV, "Memcached").with_defaulter(lambda o: None).complete()
