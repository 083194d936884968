"""``Client.write_guard``: asked before every attempt of a write and again as its first byte goes out
(a leader's lease check; framework.manager sets it), never for reads."""

from __future__ import annotations

import pytest

from framework.client import Client
from framework.leaderelection import LeaderElectionLost


class Guard:
    """Passes ``passes`` checks, then refuses every one (the lease runs out in between)."""

    def __init__(self, passes: int) -> None:
        self.passes = passes
        self.calls: list[tuple[str, str]] = []

    def __call__(self, method: str, path: str) -> None:
        self.calls.append((method, path))
        if len(self.calls) > self.passes:
            raise LeaderElectionLost(f"not writing {method} {path}")


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


@pytest.fixture
def clients(apiserver):
    with (
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as guarded,
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0) as reader,
    ):
        yield guarded, reader


def test_a_write_is_checked_before_and_again_at_the_socket(clients):
    guarded, reader = clients
    guard = guarded.write_guard = Guard(passes=2)
    guarded.create(_cm("checked"))
    path = "/api/v1/namespaces/default/configmaps"
    assert guard.calls == [("POST", path), ("POST", path)]
    assert reader.get("v1", "ConfigMap", "checked", "default")["metadata"]["name"] == "checked"


def test_a_write_refused_at_the_socket_never_reaches_the_server(clients):
    """The lease ran out between the first check and the send (a process paused in between): the
    second check refuses, nothing is written, and the client's pool still serves the next request."""
    guarded, reader = clients
    guarded.write_guard = Guard(passes=1)
    with pytest.raises(LeaderElectionLost):
        guarded.create(_cm("late"))
    names = [o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default")["items"]]
    assert "late" not in names
    guarded.write_guard = None
    assert guarded.create(_cm("after"))["metadata"]["name"] == "after"
    assert guarded.get("v1", "ConfigMap", "after", "default")["metadata"]["name"] == "after"


def test_reads_are_not_guarded(clients):
    guarded, _ = clients
    guard = guarded.write_guard = Guard(passes=0)
    assert guarded.list("v1", "ConfigMap", "default")["kind"] == "ConfigMapList"
    assert guard.calls == []
