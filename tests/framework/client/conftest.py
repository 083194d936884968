"""Fixtures for the client tests: a :class:`Client` bound to the per-test ``apiserver``, a fake clock
and the ``Widget`` custom resource (helpers are fixtures because tests run with importlib imports)."""

from __future__ import annotations

import pytest

from framework.client import Client

GROUP = "example.com"


class StepClock:
    """A clock whose ``sleep`` returns at once and advances ``monotonic`` (records every sleep)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def widget_crd(status: bool = True) -> dict:
    version: dict = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}},
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                },
            }
        },
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [version],
        },
    }


@pytest.fixture
def step_clock() -> StepClock:
    return StepClock()


@pytest.fixture
def client(apiserver) -> Client:
    """A client over HTTPS from the server's kubeconfig, unthrottled so tests stay fast."""
    c = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    yield c
    c.close()


@pytest.fixture
def widget_crd_manifest() -> dict:
    """The ``widgets.example.com`` CRD (namespaced, ``/status`` subresource, ``spec.size >= 1``)."""
    return widget_crd()
