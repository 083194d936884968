"""The framework's CRD conversion webhook (``framework.webhook.conversion``): hub and spokes served at
``/convert`` over TLS, ConversionReviews answered as controller-runtime answers them (spoke to spoke
through the hub, failures as ``result.status: Failure`` with a message, malformed bodies as HTTP 400),
registered by ``WebhookBuilder.with_conversion`` once per server, with the webhook metrics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import urllib3
from prometheus_client import CollectorRegistry

from framework.certs import self_signed_cert
from framework.webhook import ConversionScheme, Spoke, WebhookBuilder, WebhookServer

GROUP = "ships.example.com"


def _rename(obj: dict, old: str, new: str) -> dict:
    spec = dict(obj.get("spec") or {})
    if old in spec:
        spec[new] = spec.pop(old)
    return {**obj, "spec": spec}


# v3 is the hub (``crew``); v2 calls it ``sailors``, v1 ``hands``.
V1 = Spoke(to_hub=lambda o: _rename(o, "hands", "crew"), from_hub=lambda h: _rename(h, "crew", "hands"))
V2 = Spoke(to_hub=lambda o: _rename(o, "sailors", "crew"), from_hub=lambda h: _rename(h, "crew", "sailors"))


class Boom:
    def convert_to(self, obj: dict) -> dict:
        raise RuntimeError("the v0 converter is broken")

    def convert_from(self, hub: dict) -> dict:
        raise RuntimeError("the v0 converter is broken")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[WebhookServer, CollectorRegistry, urllib3.PoolManager]]:
    cert, _, ca_pem = self_signed_cert(tmp_path / "certs")
    (tmp_path / "ca.crt").write_bytes(ca_pem)
    registry = CollectorRegistry()
    server = WebhookServer("127.0.0.1", 0, cert_dir=cert.parent, registry=registry)
    mgr = SimpleNamespace(webhook_server=server)
    WebhookBuilder(mgr).for_(f"{GROUP}/v3", "Ship").with_conversion(
        hub="v3", spokes={"v1": V1, "v2": V2}
    ).complete()
    WebhookBuilder(mgr).for_(f"{GROUP}/v1", "Boat").with_conversion(
        hub="v1", spokes={"v0": Boom()}
    ).complete()
    server.start()
    http = urllib3.PoolManager(ca_certs=str(tmp_path / "ca.crt"), retries=False)
    yield server, registry, http
    server.stop(5)


def ship(version: str, **spec: Any) -> dict:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Ship",
        "metadata": {"name": "s", "namespace": "default", "uid": "u-1", "labels": {"a": "b"}},
        "spec": spec,
    }


def post(served, body: Any, api_version: str = "apiextensions.k8s.io/v1") -> tuple[int, Any]:
    server, _, http = served
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = http.request("POST", f"{server.url}/convert", body=raw, headers={"Content-Type": "application/json"})
    try:
        return r.status, json.loads(r.data)
    except ValueError:
        return r.status, r.data.decode()


def review(objects: list[dict], desired: str, api_version: str = "apiextensions.k8s.io/v1") -> dict:
    return {
        "apiVersion": api_version,
        "kind": "ConversionReview",
        "request": {"uid": "req-1", "desiredAPIVersion": desired, "objects": objects},
    }


def test_spokes_convert_through_the_hub_and_back(served) -> None:
    code, doc = post(served, review([ship("v1", hands=3), ship("v3", crew=4)], f"{GROUP}/v2"))
    assert code == 200
    assert doc["apiVersion"] == "apiextensions.k8s.io/v1" and doc["kind"] == "ConversionReview"
    response = doc["response"]
    assert response["uid"] == "req-1" and response["result"]["status"] == "Success"
    assert [o["spec"] for o in response["convertedObjects"]] == [{"sailors": 3}, {"sailors": 4}]
    assert {o["apiVersion"] for o in response["convertedObjects"]} == {f"{GROUP}/v2"}
    # Metadata travels unchanged unless a converter changes it.
    assert response["convertedObjects"][0]["metadata"] == ship("v1")["metadata"]

    code, doc = post(served, review([ship("v2", sailors=5)], f"{GROUP}/v3"))
    assert doc["response"]["convertedObjects"][0]["spec"] == {"crew": 5}


def test_v1beta1_reviews_are_answered_in_v1beta1(served) -> None:
    code, doc = post(served, review([ship("v1", hands=1)], f"{GROUP}/v3", "apiextensions.k8s.io/v1beta1"))
    assert code == 200 and doc["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert doc["response"]["convertedObjects"][0]["spec"] == {"crew": 1}


@pytest.mark.parametrize(
    ("objects", "desired", "message"),
    [
        ([ship("v1")], f"{GROUP}/v9", f'no kind "Ship" is registered for version "{GROUP}/v9"'),
        ([ship("v7")], f"{GROUP}/v3", f'no kind "Ship" is registered for version "{GROUP}/v7"'),
        (
            [{**ship("v1"), "kind": "Plane"}],
            f"{GROUP}/v3",
            f'no kind "Plane" is registered for version "{GROUP}/v1"',
        ),
        ([ship("v3")], f"{GROUP}/v3", f"conversion is not allowed between same type Ship ({GROUP}/v3)"),
        (
            [{**ship("v0"), "kind": "Boat"}],
            f"{GROUP}/v1",
            "conversion failed: RuntimeError: the v0 converter is broken",
        ),
    ],
    ids=[
        "unknown-desired-version",
        "unknown-source-version",
        "unknown-kind",
        "same-version",
        "converter-raises",
    ],
)
def test_failures_are_failure_results(served, objects, desired, message) -> None:
    code, doc = post(served, review(objects, desired))
    assert code == 200
    assert doc["response"]["uid"] == "req-1"
    assert doc["response"]["result"] == {"metadata": {}, "status": "Failure", "message": message}
    assert doc["response"]["convertedObjects"] == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "expected a ConversionReview"),
        (b"{not json", "couldn't decode the ConversionReview"),
        (
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}},
            "expected a ConversionReview",
        ),
        ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}, "conversion request is nil"),
    ],
    ids=["empty", "not-json", "admission-review", "no-request"],
)
def test_malformed_reviews_get_400(served, body, reason) -> None:
    code, text = post(served, body)
    assert code == 400 and isinstance(text, str) and reason in text


def test_metrics_count_conversions_by_code(served) -> None:
    _, registry, _ = served
    post(served, review([ship("v1", hands=1)], f"{GROUP}/v3"))
    post(served, b"")

    def sample(code: str) -> float | None:
        return registry.get_sample_value(
            "controller_runtime_webhook_requests_total", {"webhook": "/convert", "code": code}
        )

    assert sample("200") == 1.0 and sample("400") == 1.0
    assert (
        registry.get_sample_value("controller_runtime_webhook_latency_seconds_count", {"webhook": "/convert"})
        == 2.0
    )


def test_builder_registers_convert_once_and_refuses_a_kind_twice(served) -> None:
    server, _, _ = served
    assert list(server.conversions) == ["/convert"]
    scheme = server.conversions["/convert"]
    assert sorted(scheme.kinds()) == [(GROUP, "Boat"), (GROUP, "Ship")]
    with pytest.raises(ValueError, match="already registered for conversion"):
        WebhookBuilder(SimpleNamespace(webhook_server=server)).for_(f"{GROUP}/v3", "Ship").with_conversion(
            hub="v3", spokes={"v1": V1}
        ).complete()
    with pytest.raises(ValueError, match="already registered"):
        server.register("/convert", lambda req: None)  # type: ignore[arg-type,return-value]


def test_scheme_refuses_bad_registrations() -> None:
    scheme = ConversionScheme()
    with pytest.raises(ValueError, match="at least one spoke"):
        scheme.add(GROUP, "Ship", "v3", {})
    with pytest.raises(ValueError, match="is the hub and cannot be a spoke"):
        scheme.add(GROUP, "Ship", "v3", {"v3": V1})
    with pytest.raises(TypeError, match="convert_to"):
        scheme.add(GROUP, "Ship", "v3", {"v1": object()})  # type: ignore[dict-item]
