"""client-go's ``rest_client_*`` metrics as the client counts them: per attempt (codes, sizes sent,
throttling) and per call (latency, the final answer's size), ``<error>`` when no answer came."""

from __future__ import annotations

import socket

import pytest
from prometheus_client import CollectorRegistry

from framework.client import Client, NetworkError, NotFound, TooManyRequests
from framework.client.rate_limit import TokenBucket


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def host_of(client: Client) -> str:
    return client.host.removeprefix("https://").removeprefix("http://")


def test_a_client_without_a_registry_counts_nothing(apiserver):
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    assert client.metrics_registry is None
    client.list("v1", "ConfigMap", "default")  # nothing to look at, nothing raised


def test_codes_sizes_and_latency_per_call(apiserver):
    registry = CollectorRegistry()
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, registry=registry)
    host = host_of(client)
    created = client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "m", "namespace": "default"},
            "data": {"k": "v"},
        }
    )
    with pytest.raises(NotFound):
        client.get("v1", "ConfigMap", "missing", "default")
    assert sample(registry, "rest_client_requests_total", code="201", method="POST", host=host) == 1
    assert sample(registry, "rest_client_requests_total", code="404", method="GET", host=host) == 1
    # The POST's body went out once; its answer (the created object) came back once.
    assert sample(registry, "rest_client_request_size_bytes_count", verb="POST", host=host) == 1
    assert 0 < sample(registry, "rest_client_request_size_bytes_sum", verb="POST", host=host) < 256
    assert sample(registry, "rest_client_response_size_bytes_count", verb="POST", host=host) == 1
    assert sample(registry, "rest_client_response_size_bytes_sum", verb="POST", host=host) >= len(
        created["metadata"]["uid"]
    )
    # A GET sends no body: size 0, in the first bucket.
    assert sample(
        registry, "rest_client_request_size_bytes_bucket", verb="GET", host=host, le="64.0"
    ) == sample(registry, "rest_client_request_size_bytes_count", verb="GET", host=host)
    # The 404's Status body is a final answer too.
    gets = sample(registry, "rest_client_request_duration_seconds_count", verb="GET", host=host)
    assert sample(registry, "rest_client_response_size_bytes_count", verb="GET", host=host) == gets >= 2


def test_a_retried_429_is_two_attempts_and_one_call(apiserver, step_clock):
    registry = CollectorRegistry()
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, clock=step_clock, registry=registry)
    host = host_of(client)
    client.list("v1", "ConfigMap", "default")  # discovery and one list, before the fault
    before = sample(registry, "rest_client_request_duration_seconds_count", verb="GET", host=host)
    apiserver.inject_failure("list", "configmaps", 429, count=1, retry_after=3)
    client.list("v1", "ConfigMap", "default")
    assert step_clock.sleeps == [3]
    assert sample(registry, "rest_client_requests_total", code="429", method="GET", host=host) == 1
    assert sample(registry, "rest_client_request_duration_seconds_count", verb="GET", host=host) == before + 1
    # Every attempt passes the rate limiter, as client-go's retries do.
    assert (
        sample(registry, "rest_client_rate_limiter_duration_seconds_count", verb="GET", host=host)
        == before + 2
    )


def test_exhausted_retries_count_every_attempt(apiserver, step_clock):
    registry = CollectorRegistry()
    client = Client.from_kubeconfig(
        apiserver.kubeconfig, qps=0, max_retries=2, clock=step_clock, registry=registry
    )
    host = host_of(client)
    client.get("v1", "Namespace", "default")
    apiserver.inject_failure("get", "configmaps", 429, count=None, retry_after=1)
    try:
        with pytest.raises(TooManyRequests):
            client.get("v1", "ConfigMap", "x", "default")
    finally:
        apiserver.clear_failures()
    assert sample(registry, "rest_client_requests_total", code="429", method="GET", host=host) == 3


def test_no_answer_is_counted_as_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    registry = CollectorRegistry()
    client = Client(cfg, qps=0, max_retries=0, registry=registry)
    with pytest.raises(NetworkError):
        client.request("GET", "/version")
    host = f"127.0.0.1:{port}"
    assert sample(registry, "rest_client_requests_total", code="<error>", method="GET", host=host) == 1
    assert sample(registry, "rest_client_request_duration_seconds_count", verb="GET", host=host) == 1
    assert sample(registry, "rest_client_response_size_bytes_count", verb="GET", host=host) == 0


def test_throttling_shows_in_the_rate_limiter_histogram(apiserver, step_clock):
    registry = CollectorRegistry()
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=1, burst=1, clock=step_clock, registry=registry)
    client.rate_limiter = TokenBucket(1, 1, step_clock)
    host = host_of(client)
    for _ in range(3):
        client.request("GET", "/version")
    # The bucket held one token: the second and third requests waited a second each.
    assert step_clock.sleeps == [1.0, 1.0]
    assert sample(
        registry, "rest_client_rate_limiter_duration_seconds_sum", verb="GET", host=host
    ) == pytest.approx(2.0)
    assert (
        sample(registry, "rest_client_rate_limiter_duration_seconds_bucket", verb="GET", host=host, le="0.5")
        == 1
    )
