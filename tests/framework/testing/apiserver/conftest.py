"""Shared helpers for the API server tests: clients bound to the per-test ``apiserver`` fixture."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3
from kubernetes import client, dynamic

from framework.testing.kubectl import KUBECTL, Kubectl


@pytest.fixture
def core(apiserver) -> client.CoreV1Api:
    return client.CoreV1Api(apiserver.api_client())


@pytest.fixture
def dyn(apiserver) -> dynamic.DynamicClient:
    return dynamic.DynamicClient(apiserver.api_client())


class Raw:
    """Plain HTTP against the server, for what the typed clients cannot express (bad bodies, headers)."""

    def __init__(self, server) -> None:
        self.server = server
        # No retries: tests must see exactly what the server answered (urllib3 retries 429 by default).
        self.http = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict | None = None,
        raw: bytes | None = None,
        **kw,
    ) -> urllib3.BaseHTTPResponse:
        h = {"Authorization": f"Bearer {self.server.token}"}
        if body is not None:
            raw = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        return self.http.request(method, self.server.url + path, body=raw, headers=h, **kw)

    def stream(self, path: str, timeout: float = 5.0) -> urllib3.BaseHTTPResponse:
        """A streaming GET on its own connection, so closing it early never poisons the pool."""
        pool = urllib3.PoolManager(ca_certs=str(self.server.ca_path))
        return pool.request(
            "GET",
            self.server.url + path,
            headers={"Authorization": f"Bearer {self.server.token}"},
            preload_content=False,
            timeout=timeout,
        )

    def json(self, method: str, path: str, body: Any = None, **kw) -> tuple[int, Any]:
        r = self.request(method, path, body, **kw)
        data = r.data
        return r.status, (json.loads(data) if data else None)


@pytest.fixture
def raw(apiserver) -> Raw:
    return Raw(apiserver)


@pytest.fixture
def kubectl(apiserver, tmp_path) -> Iterator[Kubectl]:
    """The installed kubectl against the test server (HOME and caches in ``tmp_path``)."""
    if not os.access(KUBECTL, os.X_OK):
        pytest.skip("kubectl is not installed")
    k = Kubectl(apiserver.kubeconfig, tmp_path, timeout=60)
    yield k
    k.close()
