"""Networking kinds with their own strategy (issue 18 item 2): networking.k8s.io Ingress and
NetworkPolicy, v1 Endpoints, discovery.k8s.io EndpointSlice. Defaults, validation with Go's field paths
and messages, and kubectl's printer columns, through the official typed client and kubectl."""

from __future__ import annotations

import json

from kubernetes import client


def ingress(name: str, path: dict) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name},
        "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": "shop.example.com", "http": {"paths": [path]}}],
        },
    }


BACKEND = {"service": {"name": "web", "port": {"number": 80}}}


def test_ingress_status_validation_and_printer(module_api, module_dyn, module_kubectl, plain, invalid):
    net = client.NetworkingV1Api(module_api)
    made = plain(
        net.create_namespaced_ingress(
            "default", ingress("shop", {"path": "/", "pathType": "Prefix", "backend": BACKEND})
        )
    )
    assert made["status"] == {"loadBalancer": {}}
    assert invalid(
        module_dyn.resources.get(api_version="networking.k8s.io/v1", kind="Ingress").create,
        body=ingress("notype", {"path": "/", "backend": BACKEND}),
        namespace="default",
    ) == (
        'Ingress.networking.k8s.io "notype" is invalid: '
        "spec.rules[0].http.paths[0].pathType: Required value: "
        "pathType must be specified"
    )
    rel = ingress("rel", {"path": "cart", "pathType": "Prefix", "backend": BACKEND})
    assert 'spec.rules[0].http.paths[0].path: Invalid value: "cart": must be an absolute path' in invalid(
        net.create_namespaced_ingress, "default", rel
    )
    noport = ingress("noport", {"path": "/", "pathType": "Exact", "backend": {"service": {"name": "web"}}})
    assert "spec.rules[0].http.paths[0].backend: Required value: port name or number is required" in invalid(
        net.create_namespaced_ingress, "default", noport
    )
    empty = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "empty"},
        "spec": {},
    }
    assert "either `defaultBackend` or `rules` must be specified" in invalid(
        net.create_namespaced_ingress, "default", empty
    )
    net.patch_namespaced_ingress_status(
        "shop", "default", {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}}
    )
    rows = [line.split() for line in module_kubectl.ok("get", "ing", "shop").splitlines()]
    assert rows[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert rows[1][:5] == ["shop", "nginx", "shop.example.com", "203.0.113.7", "80"]
    net.delete_namespaced_ingress("shop", "default")


def test_networkpolicy_defaults_validation_and_printer(module_api, module_kubectl, plain, invalid):
    net = client.NetworkingV1Api(module_api)
    body = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "db"},
        "spec": {
            "podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [
                {"from": [{"podSelector": {"matchLabels": {"app": "web"}}}], "ports": [{"port": 5432}]}
            ],
            "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}],
        },
    }
    made = plain(net.create_namespaced_network_policy("default", body))
    assert made["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert made["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"
    bad = json.loads(json.dumps(body))
    bad["metadata"]["name"] = "bad"
    bad["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"] = "10.0.0.0/33"
    assert (
        'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, '
        "(e.g. 10.9.8.0/24 or 2001:db8::/64)"
    ) in invalid(net.create_namespaced_network_policy, "default", bad)
    bad["spec"]["egress"][0]["to"][0] = {}
    assert "spec.egress[0].to[0]: Required value: must specify a peer" in invalid(
        net.create_namespaced_network_policy, "default", bad
    )
    rows = [line.split() for line in module_kubectl.ok("get", "netpol", "db").splitlines()]
    assert rows[0] == ["NAME", "POD-SELECTOR", "AGE"] and rows[1][:2] == ["db", "app=db"]
    net.delete_namespaced_network_policy("db", "default")


def test_endpoints_and_endpointslices(module_api, module_kubectl, plain, invalid):
    core = client.CoreV1Api(module_api)
    discovery = client.DiscoveryV1Api(module_api)
    ep = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web"},
        "subsets": [
            {"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 6)], "ports": [{"port": 8080}]},
        ],
    }
    made = plain(core.create_namespaced_endpoints("default", ep))
    assert made["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
    bad = {
        **ep,
        "metadata": {"name": "bad"},
        "subsets": [{"addresses": [{"ip": "ten"}], "ports": [{"port": 0}]}],
    }
    message = invalid(core.create_namespaced_endpoints, "default", bad)
    assert 'subsets[0].addresses[0].ip: Invalid value: "ten": must be a valid IP address' in message
    assert "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive" in message
    rows = [line.split() for line in module_kubectl.ok("get", "ep", "web").splitlines()]
    assert rows[0] == ["NAME", "ENDPOINTS", "AGE"]
    assert rows[1][:5] == ["web", "10.0.0.1:8080,10.0.0.2:8080,10.0.0.3:8080", "+", "2", "more..."]
    eps = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}],
        "ports": [{"port": 8080}],
    }
    made = plain(discovery.create_namespaced_endpoint_slice("default", eps))
    assert made["ports"] == [{"name": "", "port": 8080, "protocol": "TCP"}]
    wrong = {**eps, "metadata": {"name": "v6"}, "addressType": "IPv6"}
    assert 'endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address' in invalid(
        discovery.create_namespaced_endpoint_slice, "default", wrong
    )
    assert "addressType: Invalid value:" in invalid(
        discovery.patch_namespaced_endpoint_slice, "web-abc", "default", {"addressType": "FQDN"}
    )
    listed = discovery.list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=web"
    )
    assert [s.metadata.name for s in listed.items] == ["web-abc"]
    rows = [line.split() for line in module_kubectl.ok("get", "endpointslices").splitlines()]
    assert rows[0] == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert rows[1][:4] == ["web-abc", "IPv4", "8080", "10.0.0.1,10.0.0.2"]
