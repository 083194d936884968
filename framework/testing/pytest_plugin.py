"""pytest plugin (entry point ``gcm_apiserver``): an ``apiserver`` fixture per test.

Each test gets a fresh :class:`~framework.testing.APIServer` over HTTPS with its own kubeconfig, so
tests never see each other's objects or injected faults. A test marked
``@pytest.mark.simulated_nodes(N)`` gets a server with N simulated nodes (Pods run, workloads become
available; docs/apiserver.md, "Simulated nodes").
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from framework.apiserver import APIServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "simulated_nodes(n): the apiserver fixture simulates n Ready nodes (KWOK-like)"
    )


@pytest.fixture
def apiserver(request: pytest.FixtureRequest) -> Iterator[APIServer]:
    marker = request.node.get_closest_marker("simulated_nodes")
    nodes = int(marker.args[0]) if marker is not None and marker.args else 1 if marker is not None else 0
    with APIServer(nodes=nodes) as server:
        yield server
