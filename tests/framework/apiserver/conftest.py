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


# --- one server per module, for the per-kind tests (each test uses its own object names) -------------


@pytest.fixture(scope="module")
def module_server() -> Iterator[Any]:
    from framework.apiserver import APIServer

    with APIServer() as s:
        yield s


@pytest.fixture(scope="module")
def module_api(module_server) -> client.ApiClient:
    return module_server.api_client()


@pytest.fixture(scope="module")
def module_kubectl(module_server, tmp_path_factory) -> Iterator[Kubectl]:
    if not os.access(KUBECTL, os.X_OK):
        pytest.skip("kubectl is not installed")
    k = Kubectl(module_server.kubeconfig, tmp_path_factory.mktemp("kubectl"), timeout=60)
    yield k
    k.close()


@pytest.fixture(scope="module")
def module_dyn(module_api) -> dynamic.DynamicClient:
    """The dynamic client: it sends bodies the typed client's models would refuse before sending."""
    return dynamic.DynamicClient(module_api)


@pytest.fixture
def plain(module_api):
    """A typed client's model as the plain JSON dict the server sent (times back in RFC 3339 ``Z`` form:
    the client's models parse them into datetimes)."""

    def convert(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, str) and value.endswith("+00:00") and "T" in value:
            return value[: -len("+00:00")] + "Z"
        return value

    return lambda model: convert(module_api.sanitize_for_serialization(model))


@pytest.fixture
def invalid():
    """``invalid(call, *args)``: the message of the 422 the call must answer."""
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic.exceptions import DynamicApiError

    def run(call, *args, **kw) -> str:
        with pytest.raises((ApiException, DynamicApiError)) as e:
            call(*args, **kw)
        assert e.value.status == 422, e.value.body
        return json.loads(e.value.body)["message"]

    return run
