"""Answers that third-party suites (the official client's e2e tests, kopf, kubectl) compare with
kube-apiserver's: response shapes, error texts and query decoding (gcm issue 21).

Each test goes through the official ``kubernetes`` client, kubectl, or plain HTTP where the client
cannot express the request.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

NS = "default"


def service(name: str, **spec) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec},
    }


def error_of(e: pytest.ExceptionInfo) -> dict:
    return json.loads(e.value.body)


# -- item 2: stores with ReturnDeletedObject -------------------------------------------------------


def test_delete_service_returns_the_deleted_service(core):
    """Service storage sets ReturnDeletedObject: the official client decodes a V1Service."""
    created = core.create_namespaced_service(NS, service("web"))
    deleted = core.delete_namespaced_service("web", NS)
    assert isinstance(deleted, client.V1Service)
    assert deleted.metadata.uid == created.metadata.uid
    assert int(deleted.metadata.resource_version) > int(created.metadata.resource_version)
    with pytest.raises(ApiException) as e:
        core.read_namespaced_service("web", NS)
    assert e.value.status == 404


def test_delete_service_account_and_quota_return_the_objects(core):
    core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    sa = core.delete_namespaced_service_account("robot", NS)
    assert isinstance(sa, client.V1ServiceAccount) and sa.metadata.name == "robot"
    core.create_namespaced_resource_quota(NS, {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}})
    rq = core.delete_namespaced_resource_quota("q", NS)
    assert isinstance(rq, client.V1ResourceQuota) and rq.spec.hard == {"pods": "1"}


def test_delete_configmap_still_returns_a_status(raw, core):
    core.create_namespaced_config_map(NS, {"metadata": {"name": "c"}})
    code, body = raw.json("DELETE", f"/api/v1/namespaces/{NS}/configmaps/c")
    assert code == 200 and body["kind"] == "Status" and body["status"] == "Success"


# -- item 3: JSON bodies end with a newline ---------------------------------------------------------


def test_json_bodies_end_with_a_newline_like_go(raw, core):
    ok = raw.request("GET", f"/api/v1/namespaces/{NS}")
    assert ok.status == 200 and ok.data.endswith(b"}\n")
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("missing", NS)
    assert e.value.body.endswith("}\n")


# -- item 6: Service names are DNS-1035 labels -----------------------------------------------------


@pytest.mark.parametrize("name", ["a.b", "1abc"])
def test_service_name_must_be_dns1035_label(core, name):
    with pytest.raises(ApiException) as e:
        core.create_namespaced_service(NS, service(name))
    assert e.value.status == 422
    st = error_of(e)
    assert st["message"] == (
        f'Service "{name}" is invalid: metadata.name: Invalid value: "{name}": a DNS-1035 label must '
        "consist of lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')"
    )


# -- item 7: no deletecollection on namespaces ----------------------------------------------------


def test_namespaces_have_no_deletecollection(core, raw):
    core.create_namespace({"metadata": {"name": "keep-me"}})
    verbs = {r.name: r.verbs for r in core.get_api_resources().resources}
    assert "deletecollection" not in verbs["namespaces"]
    assert "deletecollection" in verbs["configmaps"]
    code, body = raw.json("DELETE", "/api/v1/namespaces")
    assert code == 405 and body["reason"] == "MethodNotAllowed"
    assert core.read_namespace("keep-me").status.phase == "Active"


# -- item 8: field selector errors ----------------------------------------------------------------


def test_field_selector_error_for_kinds_without_own_rules(core):
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map(NS, field_selector="spec.foo=bar")
    assert e.value.status == 400
    assert error_of(e)["message"] == (
        '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ("list_namespaced_secret", "spec.foo"),
        ("list_namespaced_event", "spec.foo"),
        ("list_namespaced_service", "spec.ports"),
    ],
)
def test_field_selector_error_for_kinds_with_own_rules(core, call, field):
    with pytest.raises(ApiException) as e:
        getattr(core, call)(NS, field_selector=f"{field}=x")
    assert e.value.status == 400
    assert error_of(e)["message"] == f"field label not supported: {field}"


def test_namespace_field_selector_has_no_metadata_namespace(core):
    with pytest.raises(ApiException) as e:
        core.list_namespace(field_selector="metadata.namespace=x")
    assert error_of(e)["message"] == "field label not supported: metadata.namespace"


def test_service_field_selectors_spec_type_and_cluster_ip(core):
    core.create_namespaced_service(NS, service("np", type="NodePort"))
    core.create_namespaced_service(NS, service("cip"))
    node_ports = core.list_namespaced_service(NS, field_selector="spec.type=NodePort").items
    assert [s.metadata.name for s in node_ports] == ["np"]
    ip = core.read_namespaced_service("cip", NS).spec.cluster_ip
    by_ip = core.list_namespaced_service(NS, field_selector=f"spec.clusterIP={ip}").items
    assert [s.metadata.name for s in by_ip] == ["cip"]


# -- item 9: base64 of []byte fields fails decoding -----------------------------------------------


def test_invalid_base64_in_secret_data_is_a_decode_error(core):
    with pytest.raises(ApiException) as e:
        core.create_namespaced_secret(NS, {"metadata": {"name": "s"}, "data": {"k": "abc!"}})
    assert e.value.status == 400
    assert error_of(e)["message"] == (
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'
    )


def test_invalid_base64_in_configmap_binary_data_is_a_decode_error(core):
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(NS, {"metadata": {"name": "c"}, "binaryData": {"b": "abc"}})
    assert e.value.status == 400
    assert error_of(e)["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0'
    )
    with pytest.raises(ApiException):
        core.read_namespaced_config_map("c", NS)


# -- item 10: boolean and integer query parameters -----------------------------------------------


def test_watch_with_any_truthy_value_watches(raw, core):
    core.create_namespaced_config_map(NS, {"metadata": {"name": "w"}})
    r = raw.stream(f"/api/v1/namespaces/{NS}/configmaps?watch=maybe&timeoutSeconds=1")
    lines = [json.loads(line) for line in r.read().splitlines() if line]
    assert {e["type"] for e in lines} == {"ADDED"}
    assert "w" in {e["object"]["metadata"]["name"] for e in lines}
    code, body = raw.json("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=false")
    assert code == 200 and body["kind"] == "ConfigMapList"
    code, body = raw.json("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=0")
    assert code == 200 and body["kind"] == "ConfigMapList"


@pytest.mark.parametrize("param", ["timeoutSeconds=abc", "limit=1x"])
def test_bad_integer_on_list_is_400(raw, param):
    code, body = raw.json("GET", f"/api/v1/namespaces/{NS}/configmaps?{param}")
    value = param.split("=")[1]
    assert code == 400
    assert body["message"] == f'strconv.ParseInt: parsing "{value}": invalid syntax'


# -- item 4: kubectl auth whoami ------------------------------------------------------------------


def test_kubectl_auth_whoami(kubectl):
    out = kubectl.ok("auth", "whoami")
    assert out.split("\n")[1].split() == ["Username", "admin"]
    assert "[system:masters system:authenticated]" in out


def test_self_subject_review_through_the_client(apiserver):
    api = client.AuthenticationV1Api(apiserver.api_client())
    review = api.create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    )
    assert review.status.user_info.username == "admin"
    assert "system:authenticated" in review.status.user_info.groups


# -- item 5: kubectl create deployment|service|quota (protobuf bodies), Service and pod defaults ----


def test_kubectl_create_deployment_service_quota(kubectl, apiserver, core):
    assert kubectl.ok(
        "create", "deployment", "web", "--image=nginx:1.27", "--port=80", "--replicas=2"
    ).strip() == ("deployment.apps/web created")
    kubectl.ok("create", "service", "clusterip", "web", "--tcp=5678:8080")
    kubectl.ok("create", "service", "nodeport", "np", "--tcp=80:8080")
    kubectl.ok("create", "quota", "q", "--hard=cpu=1,pods=2", "--scopes=BestEffort")
    apps = client.AppsV1Api(apiserver.api_client())
    dep = apps.read_namespaced_deployment("web", NS)
    assert dep.spec.replicas == 2 and dep.spec.selector.match_labels == {"app": "web"}
    pod = dep.spec.template.spec
    assert (pod.restart_policy, pod.dns_policy, pod.scheduler_name) == (
        "Always",
        "ClusterFirst",
        "default-scheduler",
    )
    assert pod.termination_grace_period_seconds == 30
    (c,) = pod.containers
    assert (c.name, c.image, c.image_pull_policy) == ("nginx", "nginx:1.27", "IfNotPresent")
    assert [(p.container_port, p.protocol) for p in c.ports] == [(80, "TCP")]
    assert c.termination_message_path == "/dev/termination-log" and c.termination_message_policy == "File"
    svc = core.read_namespaced_service("web", NS)
    assert [(p.name, p.port, p.target_port, p.protocol) for p in svc.spec.ports] == [
        ("5678-8080", 5678, 8080, "TCP")
    ]
    assert svc.spec.cluster_ip.startswith("10.") and svc.spec.cluster_ips == [svc.spec.cluster_ip]
    assert svc.spec.ip_families == ["IPv4"] and svc.spec.ip_family_policy == "SingleStack"
    assert svc.spec.internal_traffic_policy == "Cluster"
    np = core.read_namespaced_service("np", NS)
    assert 30000 <= np.spec.ports[0].node_port <= 32767 and np.spec.external_traffic_policy == "Cluster"
    quota = core.read_namespaced_resource_quota("q", NS)
    assert quota.spec.hard == {"cpu": "1", "pods": "2"} and quota.spec.scopes == ["BestEffort"]
    described = kubectl.ok("describe", "deployment", "web")
    assert "Port:          80/TCP" in described
    rows = [line.split() for line in kubectl.ok("get", "service", "web").splitlines()]
    assert rows[1][:3] == ["web", "ClusterIP", svc.spec.cluster_ip]


def test_cluster_ips_are_unique_kept_on_update_and_immutable(core):
    a = core.create_namespaced_service(NS, service("a"))
    b = core.create_namespaced_service(NS, service("b"))
    assert a.spec.cluster_ip != b.spec.cluster_ip
    # A PUT without clusterIP (what a manifest re-sent looks like) keeps the allocated address.
    body = service("a")
    body["metadata"]["resourceVersion"] = a.metadata.resource_version
    assert core.replace_namespaced_service("a", NS, body).spec.cluster_ip == a.spec.cluster_ip
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_service(
            "a", NS, {"spec": {"clusterIP": "10.96.0.77", "clusterIPs": ["10.96.0.77"]}}
        )
    assert e.value.status == 422 and "may not change once set" in error_of(e)["message"]
    with pytest.raises(ApiException) as e:
        core.create_namespaced_service(NS, service("c", clusterIP=a.spec.cluster_ip))
    assert e.value.status == 422 and "provided IP is already allocated" in error_of(e)["message"]
    with pytest.raises(ApiException) as e:
        core.create_namespaced_service(NS, service("d", clusterIP="192.168.0.1"))
    assert (
        "provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        in error_of(e)["message"]
    )


def test_headless_and_external_name_services_get_no_address(core):
    headless = core.create_namespaced_service(NS, service("h", clusterIP="None"))
    assert headless.spec.cluster_ip == "None" and headless.spec.cluster_ips == ["None"]
    ext = core.create_namespaced_service(
        NS, {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}}
    )
    assert ext.spec.cluster_ip is None and ext.spec.ip_families is None


# -- item 13: default/kubernetes ------------------------------------------------------------------


def test_default_kubernetes_service(core, apiserver):
    svc = core.read_namespaced_service("kubernetes", "default")
    assert svc.spec.cluster_ip == "10.96.0.1"
    assert [(p.name, p.port, p.target_port) for p in svc.spec.ports] == [("https", 443, apiserver.port)]
    assert svc.metadata.labels == {"component": "apiserver", "provider": "kubernetes"}


# -- item 11: zero-valued Event fields Go always writes -------------------------------------------


def test_core_event_serves_go_zero_fields(core, raw):
    core.create_namespaced_event(
        NS,
        {
            "metadata": {"name": "e"},
            "involvedObject": {"kind": "ConfigMap", "name": "c", "namespace": NS},
            "reason": "Made",
            "message": "m",
        },
    )
    code, ev = raw.json("GET", f"/api/v1/namespaces/{NS}/events/e")
    assert code == 200
    assert ev["eventTime"] is None and ev["firstTimestamp"] is None and ev["lastTimestamp"] is None
    assert ev["reportingComponent"] == "" and ev["reportingInstance"] == "" and ev["source"] == {}
    code, v1 = raw.json("GET", f"/apis/events.k8s.io/v1/namespaces/{NS}/events/e")
    assert v1["eventTime"] is None and v1["deprecatedFirstTimestamp"] is None
    assert v1["deprecatedSource"] == {} and "reportingController" not in v1
    # Sending the object back unchanged is a no-op (no new resourceVersion).
    put = raw.json("PUT", f"/api/v1/namespaces/{NS}/events/e", ev)[1]
    assert put["metadata"]["resourceVersion"] == ev["metadata"]["resourceVersion"]


# -- item 12: TokenRequest answers a JWT with the server's audiences -------------------------------


def _claims(token: str) -> dict:
    import base64

    header, payload, signature = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "=="))["alg"] == "ES256" and signature
    return json.loads(base64.urlsafe_b64decode(payload + "=="))


def test_token_request_is_a_jwt_with_default_audiences(core, apiserver, kubectl):
    sa = core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    tr = core.create_namespaced_service_account_token("robot", NS, {"spec": {}})
    assert tr.spec.audiences == ["https://kubernetes.default.svc.cluster.local"]
    assert tr.spec.expiration_seconds == 3600
    claims = _claims(tr.status.token)
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert claims["kubernetes.io"]["serviceaccount"] == {"name": "robot", "uid": sa.metadata.uid}
    assert claims["exp"] - claims["iat"] == 3600
    assert int(tr.status.expiration_timestamp.timestamp()) == claims["exp"]
    # The token authenticates, and kubectl create token hands out the same kind of token.
    review = client.AuthenticationV1Api(apiserver.api_client()).create_token_review(
        {"spec": {"token": tr.status.token}}
    )
    assert review.status.authenticated and review.status.audiences == claims["aud"]
    token = kubectl.ok("create", "token", "robot", "--audience=vault", "--duration=20m").strip()
    assert _claims(token)["aud"] == ["vault"]


def test_token_request_shorter_than_ten_minutes_is_422(core):
    core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    with pytest.raises(ApiException) as e:
        core.create_namespaced_service_account_token("robot", NS, {"spec": {"expirationSeconds": 60}})
    assert e.value.status == 422
    assert (
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
        in (error_of(e)["message"])
    )


# -- item 14: error shapes ------------------------------------------------------------------------

GENERIC_405 = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server does not allow this method on the requested resource",
    "reason": "MethodNotAllowed",
    "details": {},
    "code": 405,
}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", f"/api/v1/namespaces/{NS}/configmaps"),
        ("PATCH", f"/api/v1/namespaces/{NS}/configmaps"),
        ("POST", f"/api/v1/namespaces/{NS}/configmaps/x"),
        ("POST", "/api/v1/configmaps"),
        ("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
    ],
)
def test_method_without_a_route_is_the_routers_405(raw, method, path):
    code, body = raw.json(method, path, {})
    assert (code, body) == (405, GENERIC_405)


def test_malformed_json_body_is_gos_decode_error(raw):
    r = raw.request(
        "POST",
        f"/api/v1/namespaces/{NS}/configmaps",
        raw=b"{bad",
        headers={"Content-Type": "application/json"},
    )
    assert r.status == 400
    assert json.loads(r.data)["message"] == (
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; "
        "json parse error: invalid character 'b' looking for beginning of object key string ({bad)"
    )


def test_malformed_merge_patch_is_gos_decode_error(raw, core):
    core.create_namespaced_config_map(NS, {"metadata": {"name": "p"}})
    r = raw.request(
        "PATCH",
        f"/api/v1/namespaces/{NS}/configmaps/p",
        raw=b'{"data": [1 2]}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status == 400
    assert json.loads(r.data)["message"] == "error decoding patch: invalid character '2' after array element"


def test_kind_mismatch_is_a_decode_error(core):
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(
            NS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}
        )
    assert e.value.status == 400
    assert error_of(e)["message"] == (
        'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to '
        "(core.ConfigMap): unknown conversion"
    )
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(
            NS, {"apiVersion": "v1", "kind": "Gizmo", "metadata": {"name": "x"}}
        )
    assert error_of(e)["message"] == (
        'Gizmo in version "v1" cannot be handled as a ConfigMap: no kind "Gizmo" is registered for '
        'version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )


def test_unknown_json_patch_op_is_422(core):
    core.create_namespaced_config_map(NS, {"metadata": {"name": "j"}})
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map("j", NS, [{"op": "frobnicate", "path": "/data"}])
    assert e.value.status == 422
    assert error_of(e)["message"] == "the server rejected our request due to an error in our request"


@pytest.mark.parametrize(
    ("method", "kind"),
    [("POST", "CreateOptions"), ("PUT", "UpdateOptions"), ("PATCH", "PatchOptions")],
)
def test_invalid_dry_run_and_field_validation_are_422(raw, core, method, kind):
    core.create_namespaced_config_map(NS, {"metadata": {"name": "o"}})
    path = f"/api/v1/namespaces/{NS}/configmaps" + ("" if method == "POST" else "/o")
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    body = json.dumps({"metadata": {"name": "o"}}).encode()
    r = raw.request(method, path + "?dryRun=Maybe&fieldValidation=Loose", raw=body, headers=headers)
    st = json.loads(r.data)
    assert r.status == 422 and st["details"]["kind"] == kind
    assert st["message"] == (
        f'{kind}.meta.k8s.io "" is invalid: [dryRun: Unsupported value: []string{{"Maybe"}}: supported '
        'values: "All", fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", '
        '"Strict", "Warn"]'
    )


# -- stored-only workload kinds the client's e2e suite creates -----------------------------------


def test_pods_are_stored_pending_and_deleted_at_once(core):
    pod = core.create_namespaced_pod(
        NS, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    )
    assert pod.status.phase == "Pending" and pod.status.qos_class == "BestEffort"
    assert pod.spec.enable_service_links is True and pod.spec.containers[0].image_pull_policy == "Always"
    pending = core.list_namespaced_pod(NS, field_selector="status.phase=Pending").items
    assert [p.metadata.name for p in pending] == ["p"]
    deleted = core.delete_namespaced_pod("p", NS)
    assert isinstance(deleted, client.V1Pod) and deleted.metadata.uid == pod.metadata.uid
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("p", NS)
    assert e.value.status == 404
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod(NS, {"metadata": {"name": "q"}, "spec": {"containers": []}})
    assert e.value.status == 422 and "spec.containers: Required value" in error_of(e)["message"]


def test_workload_kinds_and_nodes_are_served(apiserver, core):
    api = apiserver.api_client()
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
    rc = core.create_namespaced_replication_controller(
        NS, {"metadata": {"name": "rc"}, "spec": {"template": template}}
    )
    assert rc.spec.replicas == 1 and rc.spec.selector == {"a": "b"}
    job = client.BatchV1Api(api).create_namespaced_job(
        NS,
        {
            "metadata": {"name": "j"},
            "spec": {"template": {**template, "spec": {**template["spec"], "restartPolicy": "Never"}}},
        },
    )
    assert (job.spec.completions, job.spec.parallelism, job.spec.backoff_limit) == (1, 1, 6)
    ds = client.AppsV1Api(api).create_namespaced_daemon_set(
        NS,
        {"metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template}},
    )
    assert ds.spec.update_strategy.type == "RollingUpdate" and ds.status.desired_number_scheduled == 0
    assert core.list_node().items == []
