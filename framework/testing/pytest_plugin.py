"""pytest plugin (entry point ``gcm_apiserver``): an ``apiserver`` fixture per test.

Each test gets a fresh :class:`~framework.testing.APIServer` over HTTPS with its own kubeconfig, so
tests never see each other's objects or injected faults.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from framework.apiserver import APIServer


@pytest.fixture
def apiserver() -> Iterator[APIServer]:
    with APIServer() as server:
        yield server
