"""docs/examples/widget.py runs as the extension guide describes, with only the RBAC of
docs/examples/widget-rbac.yaml: finalizer, owned ConfigMap, conditions, Events, the field index."""

from __future__ import annotations

import threading

import pytest
import yaml

from framework.client import Client, NotFound
from framework.manager import Manager
from framework.testing import APIServer, eventually
from tests.docs.examples import EXAMPLES, load_example

SA_USER = "system:serviceaccount:default:widget-controller"
W = ("example.com/v1", "Widget")


@pytest.fixture
def rbac_server():
    with APIServer(authorization="RBAC") as server:
        yield server


def ready(widget: dict) -> tuple | None:
    for c in (widget.get("status") or {}).get("conditions") or ():
        if c["type"] == "Ready":
            return c["status"], c.get("reason"), c.get("observedGeneration")
    return None


def events(admin: Client, reason: str) -> list[dict]:
    items = admin.list("events.k8s.io/v1", "Event", "default")["items"]
    return [e for e in items if e.get("reason") == reason]


def test_widget_example_with_its_rbac(rbac_server):
    admin = Client.from_kubeconfig(rbac_server.kubeconfig, qps=0)
    rbac_server.install_crds(EXAMPLES / "widget.yaml")
    for doc in yaml.safe_load_all((EXAMPLES / "widget-rbac.yaml").read_text()):
        admin.create(doc)
    controller_client = Client.from_kubeconfig(rbac_server.kubeconfig_for(SA_USER), qps=0)
    mgr = Manager(controller_client)
    load_example("widget").setup(mgr)
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    try:
        admin.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "src", "namespace": "default"},
                "data": {"a": "1"},
            }
        )
        created = admin.create(
            {
                "apiVersion": W[0],
                "kind": W[1],
                "metadata": {"name": "w1", "namespace": "default"},
                "spec": {"size": 2, "source": "src"},
            }
        )

        config = eventually(lambda: admin.get("v1", "ConfigMap", "w1-config", "default"), ignore=(NotFound,))
        assert config["data"] == {"a": "1", "size": "2"}
        (owner,) = config["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "Widget",
            created["metadata"]["uid"],
            True,
        )
        eventually(
            lambda: ready(admin.get(*W, "w1", "default")) == ("True", "ConfigWritten", 1), message="Ready"
        )
        assert admin.get(*W, "w1", "default")["metadata"]["finalizers"] == ["example.com/widget-cleanup"]
        eventually(lambda: events(admin, "ConfigWritten"), message="ConfigWritten event")

        # The source changes: the field index maps it to w1, whose ConfigMap follows.
        admin.patch("v1", "ConfigMap", "src", {"data": {"a": "2"}}, "default")
        eventually(
            lambda: admin.get("v1", "ConfigMap", "w1-config", "default")["data"] == {"a": "2", "size": "2"}
        )

        # A missing source: Ready False and a Warning; creating the source heals it.
        admin.create(
            {
                "apiVersion": W[0],
                "kind": W[1],
                "metadata": {"name": "w2", "namespace": "default"},
                "spec": {"source": "later"},
            }
        )
        eventually(
            lambda: ready(admin.get(*W, "w2", "default")) == ("False", "SourceMissing", 1),
            message="w2 not ready",
        )
        assert eventually(lambda: events(admin, "SourceMissing"))[0]["type"] == "Warning"
        admin.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "later", "namespace": "default"},
                "data": {"b": "3"},
            }
        )
        eventually(
            lambda: ready(admin.get(*W, "w2", "default")) == ("True", "ConfigWritten", 1), message="w2 ready"
        )

        # Deletion runs the finalizer, then the Widget is gone.
        admin.delete(*W, "w1", "default")
        eventually(lambda: events(admin, "CleanedUp"), message="CleanedUp event")

        def gone() -> bool:
            try:
                admin.get(*W, "w1", "default")
            except NotFound:
                return True
            return False

        eventually(gone, message="w1 deleted")
    finally:
        mgr.stop()
        t.join(15)
    assert not t.is_alive()
    forbidden = [k for k, n in rbac_server.request_counts().items() if k.user == SA_USER and k.code == 403]
    assert forbidden == [], "the documented ClusterRole covers everything the controller does"
