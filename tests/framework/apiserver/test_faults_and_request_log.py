"""The chaos controls of the API server: ``POST /debug/faults`` (admins only, off by default) and the
write request log, over real HTTP with the official client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from framework.testing import APIServer


@pytest.fixture(scope="module")
def chaos_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    log = tmp_path_factory.mktemp("chaos") / "requests.jsonl"
    fields = {
        "leases.coordination.k8s.io": {
            "holder": "spec.holderIdentity",
            "duration": "spec.leaseDurationSeconds",
        },
        "namespaces": {"labels": "metadata.labels", "missing": "status.nothing.here"},
    }
    with APIServer(fault_injection=True, request_log=log, request_log_fields=fields) as server:
        yield server


def _control(api: client.ApiClient, body: dict) -> dict:
    cfg = api.configuration
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    token = cfg.get_api_key_with_prefix("authorization") or cfg.get_api_key_with_prefix("BearerToken")
    if token:
        headers["Authorization"] = token
    resp = api.call_api("POST", cfg.host + "/debug/faults", header_params=headers, body=body)
    resp.read()
    if not 200 <= resp.status < 300:
        raise ApiException(http_resp=resp)
    return json.loads(resp.data)


def _core(server: APIServer, user: str | None = None) -> client.CoreV1Api:
    if user is None:
        return client.CoreV1Api(server.api_client())
    kc = server.kubeconfig_for(user, path=Path(server.ca_path).parent / f"{user}.kubeconfig")
    return client.CoreV1Api(config.new_client_from_config(kc))


def _log_lines(server: APIServer) -> list[dict]:
    assert server.request_log is not None
    return [json.loads(line) for line in Path(server.request_log.path).read_text().splitlines()]


def test_fail_rule_hits_only_the_chosen_users_and_verbs(chaos_server: APIServer) -> None:
    admin = chaos_server.api_client()
    victim = _core(chaos_server, "gcm-victim")
    answer = _control(
        admin,
        {
            "action": "fail",
            "status": 500,
            "verbs": ["list"],
            "resources": ["configmaps"],
            "user_prefix": "gcm-",
            "seconds": 30,
        },
    )
    assert answer["rules"] == 1
    try:
        with pytest.raises(ApiException) as e:
            victim.list_namespaced_config_map("default")
        assert e.value.status == 500
        assert "injected fault" in e.value.body
        _core(chaos_server).list_namespaced_config_map("default")  # the admin is not hit
        victim.list_namespaced_secret("default")  # another resource is not hit
    finally:
        assert _control(admin, {"action": "clear"})["rules"] == 0
    victim.list_namespaced_config_map("default")  # cleared


def test_count_limited_429_carries_retry_after(chaos_server: APIServer) -> None:
    admin = chaos_server.api_client()
    before = _control(admin, {"action": "clear"})["injected"]
    _control(admin, {"action": "fail", "status": 429, "retryAfter": 1, "resources": ["services"], "count": 1})
    started = time.monotonic()
    # urllib3 retries a 429 that says Retry-After: the one injected failure costs the client 1 s.
    _core(chaos_server).list_namespaced_service("default")
    assert time.monotonic() - started >= 1.0
    answer = _control(admin, {"action": "clear"})
    assert answer["injected"] == before + 1


def test_delay_rule_holds_requests(chaos_server: APIServer) -> None:
    admin = chaos_server.api_client()
    _control(
        admin, {"action": "delay", "delay": 0.5, "verbs": ["get"], "resources": ["namespaces"], "count": 1}
    )
    started = time.monotonic()
    _core(chaos_server).read_namespace("default")
    assert time.monotonic() - started >= 0.5


def test_non_admins_are_refused_and_bad_actions_are_400(chaos_server: APIServer) -> None:
    stranger = _core(chaos_server, "stranger").api_client
    with pytest.raises(ApiException) as e:
        _control(stranger, {"action": "clear"})
    assert e.value.status == 403
    admin = chaos_server.api_client()
    for body in (
        {"action": "explode"},
        {"action": "fail", "status": 200, "seconds": 1},
        {"action": "fail", "status": 500},
    ):
        with pytest.raises(ApiException) as e:
            _control(admin, body)
        assert e.value.status == 400, body


def test_compact_and_drop_watches_actions(chaos_server: APIServer) -> None:
    admin = chaos_server.api_client()
    core = _core(chaos_server)
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", {"metadata": {"name": "before-compact"}})
    _control(admin, {"action": "compact"})
    _control(admin, {"action": "drop-watches"})
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default", resource_version=rv, resource_version_match="Exact")
    assert e.value.status == 410


def test_request_log_names_who_wrote_what(chaos_server: APIServer) -> None:
    core = _core(chaos_server)
    core.create_namespace({"metadata": {"name": "logged", "labels": {"a": "b"}}})
    client.CoordinationV1Api(chaos_server.api_client()).create_namespaced_lease(
        "default",
        {"metadata": {"name": "lock"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}},
    )
    with pytest.raises(ApiException):
        core.create_namespace({"metadata": {"name": "logged"}})  # 409, logged too
    core.read_namespace("logged")  # reads are not logged
    lines = _log_lines(chaos_server)
    ns = [e for e in lines if e["resource"] == "namespaces" and e["name"] == "logged"]
    assert [(e["verb"], e["code"]) for e in ns] == [("create", 201), ("create", 409)]
    assert ns[0]["user"] == "admin" and ns[0]["labels"]["a"] == "b" and ns[0]["t"] <= ns[0]["end"]
    assert ns[0]["missing"] is None  # a named field the object lacks is null
    assert "labels" not in ns[1]  # a refused write has no stored object to take fields from
    lease = next(e for e in lines if e["resource"] == "leases.coordination.k8s.io")
    assert (lease["ns"], lease["name"], lease["holder"], lease["duration"]) == ("default", "lock", "me", 15)
    assert all(e["verb"] != "get" for e in lines)


def test_controls_are_off_by_default(apiserver: APIServer) -> None:
    with pytest.raises(ApiException) as e:
        _control(apiserver.api_client(), {"action": "clear"})
    assert e.value.status == 404
    assert apiserver.request_log is None
