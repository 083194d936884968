"""kopf's 02-children example against the test server (issue 18): a create handler renders a Pod from
the object's spec, makes it a child with ``kopf.adopt`` (owner reference, namespace, generated name,
the owner's labels) and creates it; the handler's result (the children's uids) lands in the parent's
status. Deleting the parent deletes the Pod (garbage collection by ownerReferences, spec §13).

kopf's example creates the Pod with pykube-ng, which is not a dependency here; the handler below does
the same with the official client. The example file itself runs in ``test_kopf_examples.py`` (slow,
``KOPF_SRC``) when pykube-ng is installed.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Iterator
from typing import Any

import kopf
import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.testing import APIServer, eventually

GROUP, VERSION, PLURAL = "kopf.dev", "v1", "kopfexamples"
PRESERVE = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "scope": "Namespaced",
        "group": GROUP,
        "names": {"kind": "KopfExample", "plural": PLURAL, "singular": "kopfexample"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": PRESERVE, "status": PRESERVE},
                    }
                },
            }
        ],
    },
}


@pytest.fixture
def operator(monkeypatch, no_leaked_threads) -> Iterator[tuple[APIServer, client.CoreV1Api]]:
    with APIServer() as server:
        monkeypatch.setenv("KUBECONFIG", server.kubeconfig)
        server.install_crds([CRD])
        core = client.CoreV1Api(server.api_client())
        registry = kopf.OperatorRegistry()
        settings = kopf.OperatorSettings()
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="kopf-handler")
        settings.execution.executor = executor

        @kopf.on.login(registry=registry)
        def login(**kwargs: Any) -> Any:
            return kopf.login_with_kubeconfig(**kwargs)

        @kopf.on.create(GROUP, VERSION, PLURAL, id="create_fn", registry=registry)
        def create_fn(spec: Any, **kwargs: Any) -> dict:
            doc = yaml.safe_load(
                f"""
                apiVersion: v1
                kind: Pod
                spec:
                  containers:
                  - name: the-only-one
                    image: busybox
                    command: ["sh", "-x", "-c"]
                    args: ["echo FIELD=$FIELD; sleep {spec.get("duration", 0)}"]
                    env:
                    - name: FIELD
                      value: {spec.get("field", "default-value")}
                """
            )
            kopf.adopt(doc)  # the owner is the object being handled
            pod = core.create_namespaced_pod(doc["metadata"]["namespace"], doc)
            return {"children": [pod.metadata.uid]}

        stop, ready = threading.Event(), threading.Event()
        thread = threading.Thread(
            target=kopf.run,
            kwargs={
                "registry": registry,
                "settings": settings,
                "namespaces": ["default"],
                "standalone": True,
                "stop_flag": stop,
                "ready_flag": ready,
            },
            name="kopf-operator",
            daemon=True,
        )
        thread.start()
        assert ready.wait(10), "kopf did not start"
        try:
            yield server, core
        finally:
            stop.set()
            thread.join(20)
            executor.shutdown(wait=True)
        assert not thread.is_alive()


def test_kopf_children_example_creates_an_adopted_pod(operator):
    server, core = operator
    crs = client.CustomObjectsApi(server.api_client())
    parent = crs.create_namespaced_custom_object(
        GROUP,
        VERSION,
        "default",
        PLURAL,
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "KopfExample",
            "metadata": {"name": "kopf-example-1", "labels": {"somelabel": "somevalue"}},
            "spec": {"duration": "1m", "field": "value"},
        },
    )

    def children() -> list | None:
        obj = crs.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "kopf-example-1")
        return (obj.get("status") or {}).get("create_fn", {}).get("children")

    (uid,) = eventually(children, message="the handler's result in the parent's status")
    (pod,) = core.list_namespaced_pod("default").items
    assert pod.metadata.uid == uid
    assert pod.metadata.name.startswith("kopf-example-1-")  # kopf.adopt: generateName from the owner
    assert pod.metadata.labels == {"somelabel": "somevalue"}
    (ref,) = pod.metadata.owner_references
    assert (ref.kind, ref.name, ref.uid, ref.controller) == (
        "KopfExample",
        "kopf-example-1",
        parent["metadata"]["uid"],
        True,
    )
    # Stored as a real cluster stores a Pod (nothing runs it: no kubelet).
    assert pod.spec.containers[0].env[0].value == "value"
    assert (pod.spec.restart_policy, pod.status.phase) == ("Always", "Pending")

    crs.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "kopf-example-1")

    def pod_gone() -> bool:
        try:
            core.read_namespaced_pod(pod.metadata.name, "default")
        except ApiException as e:
            return e.status == 404
        return False

    eventually(pod_gone, message="the child Pod garbage-collected with its parent")
