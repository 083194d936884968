"""Kind-specific REST rules the server takes from the kinds' strategies (issue 18), observed over HTTP:
what kube-apiserver's per-kind storage and decoding do for CRDs, events.k8s.io Events and Secrets."""

from __future__ import annotations

from .test_crd import GROUP, widget_crd

CRD_PATH = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}"


def test_a_deleted_crd_is_marked_terminating(apiserver, raw):
    apiserver.install_crds([widget_crd()])
    code, crd = raw.json("DELETE", CRD_PATH)
    assert code == 200
    assert crd["metadata"]["deletionTimestamp"]
    assert "customresourcecleanup.apiextensions.k8s.io" in crd["metadata"]["finalizers"]
    terminating = [c for c in crd["status"]["conditions"] if c["type"] == "Terminating"]
    assert [(c["status"], c["reason"], c["message"]) for c in terminating] == [
        (
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; instance deletion pending",
        )
    ]


def test_crd_status_written_in_process_is_kube_apiservers(apiserver, raw):
    # The apiextensions controllers run inside kube-apiserver: their status writes are its own.
    apiserver.install_crds([widget_crd()])
    code, crd = raw.json("GET", CRD_PATH)
    assert code == 200
    status_managers = {
        e["manager"] for e in crd["metadata"]["managedFields"] if e.get("subresource") == "status"
    }
    assert status_managers == {"kube-apiserver"}


def test_core_event_body_on_events_k8s_io_is_a_version_mismatch(raw):
    # events.k8s.io Events are core Events inside: a v1 Event decodes, then fails the version check,
    # where an unrelated kind would be an "unknown conversion".
    body = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}}
    code, st = raw.json("POST", "/apis/events.k8s.io/v1/namespaces/default/events", body)
    assert code == 400
    assert st["message"] == (
        "the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)"
    )


def test_a_non_string_secret_data_value_is_a_decode_error(raw):
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": 5}}
    code, st = raw.json("POST", "/api/v1/namespaces/default/secrets", body)
    assert code == 400
    assert "cannot unmarshal number into Go struct field Secret.data of type []uint8" in st["message"]
    assert raw.json("GET", "/api/v1/namespaces/default/secrets/s")[0] == 404
