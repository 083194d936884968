"""End to end: the real ``kubectl`` binary against the emulator (spec 0-2, 0-3, §3, §4, 11-10, 15-9, 23-1).

``/usr/bin/kubectl`` is the Google Cloud SDK dispatcher: it reads ``/version`` and runs kubectl 1.32 for
our server. Every test gets its own server and its own ``HOME`` (so kubectl's discovery cache under
``~/.kube/cache`` starts empty), and every kubectl run is bounded by a timeout.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from kubernetes import client

from framework.testing import eventually
from framework.testing.kubectl import KUBECTL, TIMEOUT

CRD_REF = "customresourcedefinition.apiextensions.k8s.io/widgets.example.com"
NONE_IN_DEFAULT = "No resources found in default namespace.\n"

pytestmark = pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")

WIDGET_CRD: dict = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer"},
                                    "color": {"type": "string", "enum": ["red", "green", "blue"]},
                                },
                            },
                            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str, spec: dict, **meta: Any) -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, **meta},
        "spec": spec,
    }


def configmap(name: str, data: dict, **meta: Any) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data}


@pytest.fixture
def widgets(apiserver) -> None:
    """The Widget CRD installed directly (tests of the CRD install itself go through kubectl)."""
    apiserver.install_crds([copy.deepcopy(WIDGET_CRD)])


@pytest.fixture
def custom(apiserver) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(apiserver.api_client())


def table(out: str) -> list[list[str]]:
    """kubectl's column output (server-side printing, 4-3) as split rows."""
    return [line.split() for line in out.splitlines() if line.strip()]


def names_of(lst: dict) -> set[str]:
    return {item["metadata"]["name"] for item in lst["items"]}


class Stream:
    """stdout of a long-running kubectl, pumped by a thread; ``-o json`` documents are decoded as they end."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.chunks: queue.Queue[str | None] = queue.Queue()
        self.buf = ""
        self.docs: list[Any] = []
        self.lines: list[str] = []
        self.pos = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.chunks.put(line)
        self.chunks.put(None)

    def _read(self, deadline: float) -> None:
        try:
            chunk = self.chunks.get(timeout=max(0.01, min(0.2, deadline - time.monotonic())))
        except queue.Empty:
            return
        if chunk is None:
            self.chunks.put(None)
            stderr = self.proc.stderr.read() if self.proc.stderr else ""
            rc = self.proc.wait(timeout=TIMEOUT)
            pytest.fail(f"kubectl ended (rc={rc}) before the expected output:\n{stderr}")
        self.lines.append(chunk)
        self.buf += chunk
        decoder = json.JSONDecoder()
        while self.buf.strip():
            text = self.buf.lstrip()
            try:
                doc, end = decoder.raw_decode(text)
            except json.JSONDecodeError:
                break  # document not complete yet
            self.docs.append(doc)
            self.buf = text[end:]

    def next_doc(self, pred: Callable[[Any], bool], timeout: float = 10.0) -> Any:
        """The next decoded document (after the last one returned) that satisfies ``pred``."""
        deadline = time.monotonic() + timeout
        while True:
            while self.pos < len(self.docs):
                doc = self.docs[self.pos]
                self.pos += 1
                if pred(doc):
                    return doc
            if time.monotonic() > deadline:
                pytest.fail(f"no matching document within {timeout}s; got {self.docs}")
            self._read(deadline)

    def wait_line(self, pred: Callable[[str], bool], timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for line in self.lines[seen:]:
                if pred(line):
                    return line
            seen = len(self.lines)
            if time.monotonic() > deadline:
                pytest.fail(f"no matching line within {timeout}s; got {self.lines}")
            self._read(deadline)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.communicate(timeout=TIMEOUT)


def poll_until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


# --- discovery and version ---------------------------------------------------------------------------


def test_version_reports_server_minor_32(kubectl):
    """0-3, 3-1: the dispatcher reads /version and runs kubectl 1.32 without a skew warning."""
    r = kubectl.run("version", "-o", "json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    server = v["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "32")
    assert server["gitVersion"].startswith("v1.32.")
    assert v["clientVersion"]["gitVersion"].startswith("v1.32.")
    assert "skew" not in r.stderr.lower()


def test_api_resources(kubectl):
    """3-5, 3-6: legacy discovery documents are enough for ``kubectl api-resources``."""
    rows = {row[0] + " " + row[-3]: row for row in table(kubectl.ok("api-resources"))[1:]}
    assert rows["configmaps v1"] == ["configmaps", "cm", "v1", "true", "ConfigMap"]
    assert rows["namespaces v1"] == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert rows["leases coordination.k8s.io/v1"] == ["leases", "coordination.k8s.io/v1", "true", "Lease"]
    assert rows["customresourcedefinitions apiextensions.k8s.io/v1"] == [
        "customresourcedefinitions",
        "crd,crds",
        "apiextensions.k8s.io/v1",
        "false",
        "CustomResourceDefinition",
    ]
    names = kubectl.ok("api-resources", "-o", "name").split()
    for name in ("configmaps", "namespaces", "leases.coordination.k8s.io"):
        assert name in names
    assert "customresourcedefinitions.apiextensions.k8s.io" in names


# --- CRDs and custom objects -------------------------------------------------------------------------


def test_crd_and_custom_object_lifecycle(kubectl):
    """16-3, 16-8, 23-1: apply a CRD, wait for Established, then get/apply/patch/wait/delete a Widget."""
    crd = kubectl.write("crd.yaml", WIDGET_CRD)
    assert kubectl.ok("apply", "-f", crd) == f"{CRD_REF} created\n"
    out = kubectl.ok("wait", "--for=condition=established", "crd/widgets.example.com", "--timeout=10s")
    assert out == f"{CRD_REF} condition met\n"
    assert table(kubectl.ok("api-resources", "--api-group=example.com")) == [
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
        ["widgets", "wd", "example.com/v1", "true", "Widget"],
    ]

    w1 = kubectl.write("w1.yaml", widget("w1", {"size": 3, "color": "red"}, labels={"app": "x"}))
    assert kubectl.ok("apply", "-f", w1) == "widget.example.com/w1 created\n"
    assert kubectl.ok("apply", "-f", w1) == "widget.example.com/w1 unchanged\n"

    rows = table(kubectl.ok("get", "widgets"))
    assert rows[0] == ["NAME", "AGE"] and [r[0] for r in rows[1:]] == ["w1"]

    got = kubectl.json("get", "wd", "w1")
    assert (got["apiVersion"], got["kind"]) == ("example.com/v1", "Widget")
    assert got["spec"] == {"size": 3, "color": "red"}
    meta = got["metadata"]
    assert meta["namespace"] == "default" and meta["labels"] == {"app": "x"} and meta["generation"] == 1
    assert meta["resourceVersion"].isdigit()
    last_applied = json.loads(meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last_applied["spec"] == {"size": 3, "color": "red"}

    assert kubectl.ok("get", "widgets", "-l", "app=x", "-o", "name") == "widget.example.com/w1\n"
    r = kubectl.run("get", "widgets", "-l", "app=y")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", NONE_IN_DEFAULT)

    # kubectl patch sends a merge patch with fieldManager=kubectl-patch (23-1); spec changes bump generation
    out = kubectl.ok("patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":5}}')
    assert out == "widget.example.com/w1 patched\n"
    out = kubectl.ok("wait", "--for=jsonpath={.spec.size}=5", "widget/w1", "--timeout=10s")
    assert out == "widget.example.com/w1 condition met\n"
    got = kubectl.json("get", "widget.example.com", "w1")
    assert got["spec"] == {"size": 5, "color": "red"} and got["metadata"]["generation"] == 2

    # a changed manifest becomes a merge patch computed from last-applied (23-1): color is removed
    w1 = kubectl.write("w1.yaml", widget("w1", {"size": 3}, labels={"app": "x"}))
    assert kubectl.ok("apply", "-f", w1) == "widget.example.com/w1 configured\n"
    assert kubectl.json("get", "wd", "w1")["spec"] == {"size": 3}

    assert kubectl.ok("delete", "widget", "w1") == 'widget.example.com "w1" deleted\n'
    err = kubectl.fails("get", "wd", "w1")
    assert err == 'Error from server (NotFound): widgets.example.com "w1" not found\n'


def test_status_subresource(kubectl, widgets):
    """10-1, 10-2, 16-8: status changes only through /status; the main endpoint ignores it."""
    kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", {"size": 1})))
    ready = '{"status":{"phase":"Ready"}}'
    out = kubectl.ok("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", ready)
    assert out == "widget.example.com/w1 patched\n"
    got = kubectl.json("get", "wd", "w1")
    assert got["status"] == {"phase": "Ready"} and got["metadata"]["generation"] == 1
    out = kubectl.ok("patch", "widget", "w1", "--type=merge", "-p", '{"status":{"phase":"Other"}}')
    assert out == "widget.example.com/w1 patched (no change)\n"
    assert kubectl.json("get", "wd", "w1")["status"] == {"phase": "Ready"}


def test_wait_for_delete_and_delete_wait_on_finalizers(kubectl, widgets, custom, apiserver):
    """11-3, 11-5, 11-10, 15-9: ``wait --for=delete`` and plain ``delete`` block until finalizers are gone."""

    def lists() -> int:
        counts = apiserver.request_counts()
        return sum(n for k, n in counts.items() if k.verb == "list" and k.resource == "widgets.example.com")

    def listed_after(before: int) -> None:
        # kubectl lists, then watches from the list's resourceVersion (11-10): once its list is done,
        # the release below cannot be missed, however slowly kubectl started.
        eventually(lambda: lists() > before, timeout=TIMEOUT, message="kubectl listing widgets")

    def release(name: str, proc: subprocess.Popen) -> Callable[[], None]:
        def fn() -> None:
            assert proc.poll() is None, f"kubectl returned while {name} still existed"
            custom.patch_namespaced_custom_object(
                "example.com",
                "v1",
                "default",
                "widgets",
                name,
                {"metadata": {"finalizers": None}},
                _content_type="application/merge-patch+json",
            )

        return fn

    held = {"finalizers": ["example.com/hold"]}
    manifest = kubectl.write("w.yaml", widget("w2", {"size": 1}, **held), widget("w3", {}, **held))
    kubectl.ok("apply", "-f", manifest)

    assert kubectl.ok("delete", "widget", "w2", "--wait=false") == 'widget.example.com "w2" deleted\n'
    marked = kubectl.json("get", "wd", "w2")["metadata"]
    assert marked["deletionTimestamp"] and marked["finalizers"] == ["example.com/hold"]

    before = lists()
    proc = kubectl.popen("wait", "--for=delete", "widget/w2", "--timeout=20s")
    listed_after(before)
    release("w2", proc)()
    out, err = proc.communicate(timeout=TIMEOUT)
    assert (proc.returncode, out) == (0, "widget.example.com/w2 condition met\n"), err

    # kubectl delete waits for the object to be gone by default (11-10)
    before = lists()
    proc = kubectl.popen("delete", "widget", "w3", "--timeout=20s")
    listed_after(before)
    release("w3", proc)()
    out, err = proc.communicate(timeout=TIMEOUT)
    assert (proc.returncode, out) == (0, 'widget.example.com "w3" deleted\n'), err
    r = kubectl.run("get", "widgets")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", NONE_IN_DEFAULT)


def test_delete_crd_removes_its_objects(kubectl, widgets, apiserver):
    """16-9: deleting the CRD deletes its custom objects and drops the resource from discovery."""
    kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", {"size": 1})))
    kubectl.ok("get", "wd", "w1")  # fills the discovery cache with widgets
    out = kubectl.ok("delete", "crd", "widgets.example.com", "--timeout=20s")
    assert out == 'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted\n'
    assert table(kubectl.ok("api-resources", "--api-group=example.com")) == [
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    ]
    r = kubectl.run("get", "crd")
    # Server-side printing (Table) tells kubectl the kind is cluster-scoped: no namespace named.
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "No resources found\n")
    assert kubectl.fails("get", "widgets") == 'error: the server doesn\'t have a resource type "widgets"\n'
    # the objects went with it: a re-created CRD starts empty
    apiserver.install_crds([copy.deepcopy(WIDGET_CRD)])
    r = kubectl.run("get", "widgets")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", NONE_IN_DEFAULT)


# --- built-in kinds ----------------------------------------------------------------------------------


def test_configmap_apply_label_annotate_delete(kubectl):
    """8 (SMP), 23-1: client-side apply creates, then no-ops, then patches; label/annotate/delete/get."""
    path = kubectl.write("cm.yaml", configmap("c1", {"a": "1", "b": "2"}, labels={"tier": "web"}))
    assert kubectl.ok("apply", "-f", path) == "configmap/c1 created\n"
    rv = kubectl.json("get", "cm", "c1")["metadata"]["resourceVersion"]
    assert kubectl.ok("apply", "-f", path) == "configmap/c1 unchanged\n"
    assert kubectl.json("get", "cm", "c1")["metadata"]["resourceVersion"] == rv  # no-op: nothing written

    assert kubectl.ok("label", "cm", "c1", "env=prod") == "configmap/c1 labeled\n"
    assert kubectl.ok("annotate", "cm", "c1", "note=hello") == "configmap/c1 annotated\n"
    err = kubectl.fails("label", "cm", "c1", "env=dev")
    assert err == "error: 'env' already has a value (prod), and --overwrite is false\n"
    assert kubectl.ok("label", "cm", "c1", "env=dev", "--overwrite") == "configmap/c1 labeled\n"

    # three-way strategic merge from last-applied: b removed, c added, out-of-band label/annotation kept
    path = kubectl.write("cm.yaml", configmap("c1", {"a": "2", "c": "3"}, labels={"tier": "web"}))
    assert kubectl.ok("apply", "-f", path) == "configmap/c1 configured\n"

    lst = yaml.safe_load(kubectl.ok("get", "cm", "-o", "yaml"))
    assert lst["kind"] == "List" and lst["apiVersion"] == "v1"
    assert names_of(lst) == {"c1", "kube-root-ca.crt"}
    c1 = next(i for i in lst["items"] if i["metadata"]["name"] == "c1")
    assert c1["data"] == {"a": "2", "c": "3"}
    assert c1["metadata"]["labels"] == {"tier": "web", "env": "dev"}
    assert c1["metadata"]["annotations"]["note"] == "hello"
    assert "kubectl.kubernetes.io/last-applied-configuration" in c1["metadata"]["annotations"]

    assert kubectl.ok("label", "cm", "c1", "env-") == "configmap/c1 unlabeled\n"
    assert kubectl.ok("get", "cm", "-l", "env", "-o", "name") == ""
    assert kubectl.ok("get", "cm", "-l", "tier=web", "-o", "name") == "configmap/c1\n"
    assert kubectl.ok("get", "cm", "--field-selector", "metadata.name=c1", "-o", "name") == "configmap/c1\n"

    assert kubectl.ok("delete", "cm", "c1") == 'configmap "c1" deleted\n'
    assert kubectl.fails("get", "cm", "c1") == 'Error from server (NotFound): configmaps "c1" not found\n'


def test_get_namespaces(kubectl):
    """12, 4-3: the built-in namespaces, in kube-apiserver's Namespace columns (Table) and as JSON."""
    rows = table(kubectl.ok("get", "ns"))
    assert rows[0] == ["NAME", "STATUS", "AGE"]
    assert {r[0] for r in rows[1:]} == {"default", "kube-node-lease", "kube-public", "kube-system"}
    assert {r[1] for r in rows[1:]} == {"Active"}
    assert all(r[2].endswith("s") or r[2].endswith("m") for r in rows[1:])  # an age, e.g. "3s"
    lst = kubectl.json("get", "namespaces")
    assert names_of(lst) == {"default", "kube-node-lease", "kube-public", "kube-system"}
    assert all(ns["status"]["phase"] == "Active" for ns in lst["items"])
    assert kubectl.json("get", "ns", "default")["kind"] == "Namespace"


# --- watch -------------------------------------------------------------------------------------------


def test_get_watch_output_watch_events(kubectl, apiserver):
    """15-1..15-5, 23-1: ``get -w --output-watch-events`` streams ADDED / MODIFIED / DELETED live."""
    core = client.CoreV1Api(apiserver.api_client())
    stream = Stream(kubectl.popen("get", "configmaps", "-w", "--output-watch-events", "-o", "json"))
    try:
        first = stream.next_doc(lambda d: True)
        assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "kube-root-ca.crt"

        def of(name: str, kind: str) -> Callable[[Any], bool]:
            return lambda d: d["object"]["metadata"]["name"] == name and d["type"] == kind

        core.create_namespaced_config_map("default", configmap("w1", {"k": "v"}))
        added = stream.next_doc(of("w1", "ADDED"))
        assert added["object"]["data"] == {"k": "v"} and added["object"]["kind"] == "ConfigMap"

        core.patch_namespaced_config_map("w1", "default", {"metadata": {"labels": {"seen": "yes"}}})
        modified = stream.next_doc(of("w1", "MODIFIED"))
        assert modified["object"]["metadata"]["labels"] == {"seen": "yes"}

        core.delete_namespaced_config_map("w1", "default")
        deleted = stream.next_doc(of("w1", "DELETED"))
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in (added, modified, deleted)]
        assert rvs == sorted(rvs) and len(set(rvs)) == 3
        assert [d["type"] for d in stream.docs] == ["ADDED", "ADDED", "MODIFIED", "DELETED"]
    finally:
        stream.stop()


def test_get_watch_json_and_columns(kubectl, apiserver):
    """15-1, 4-3: ``get -w -o json`` streams objects; plain ``get -w`` prints Table rows for changes
    (column definitions with the first event only, as kube-apiserver)."""
    core = client.CoreV1Api(apiserver.api_client())
    objects = Stream(kubectl.popen("get", "configmaps", "-w", "-o", "json"))
    rows = Stream(kubectl.popen("get", "configmaps", "--watch"))
    try:
        objects.next_doc(lambda d: d["metadata"]["name"] == "kube-root-ca.crt")
        rows.wait_line(lambda line: line.split()[0] == "kube-root-ca.crt")
        assert rows.lines[0].split() == ["NAME", "DATA", "AGE"]

        core.create_namespaced_config_map("default", configmap("late", {"k": "v1"}))
        core.replace_namespaced_config_map("late", "default", configmap("late", {"k": "v2"}))
        assert objects.next_doc(lambda d: d["metadata"]["name"] == "late")["data"] == {"k": "v1"}
        assert objects.next_doc(lambda d: d["metadata"]["name"] == "late")["data"] == {"k": "v2"}
        rows.wait_line(lambda line: line.split()[:2] == ["late", "1"])
        assert sum(1 for line in rows.lines if line.split()[0] == "NAME") == 1  # one header only
    finally:
        objects.stop()
        rows.stop()


# --- errors ------------------------------------------------------------------------------------------


def test_get_missing_is_not_found(kubectl):
    """5, 23-1: kubectl renders the NotFound Status."""
    r = kubectl.run("get", "cm", "nope")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == 'Error from server (NotFound): configmaps "nope" not found\n'
    assert kubectl.ok("get", "cm", "nope", "--ignore-not-found") == ""
    assert kubectl.fails("delete", "cm", "nope") == r.stderr
    assert kubectl.fails("get", "ns", "nope") == 'Error from server (NotFound): namespaces "nope" not found\n'


def test_invalid_custom_object_is_422(kubectl, widgets):
    """16-5: schema errors are 422 Invalid with causes; kubectl prints them per field."""
    bad = kubectl.write("bad.yaml", widget("bad", {"size": "big"}))
    err = kubectl.fails("apply", "-f", bad)
    assert err == (
        'The Widget "bad" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"\n'
    )
    worse = kubectl.write("worse.yaml", widget("worse", {"size": 1.5, "color": "pink"}))
    first, *causes = kubectl.fails("apply", "-f", worse).splitlines()
    assert first == 'The Widget "worse" is invalid: '
    assert sorted(causes) == [  # one bullet per cause; the real server's order follows Go map iteration
        '* spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"',
        '* spec.size: Invalid value: "number": spec.size in body must be of type integer: "number"',
    ]
    r = kubectl.run("get", "widgets")
    assert (r.returncode, r.stdout) == (0, "")  # nothing was created

    # the same validation on a patch of an existing object
    kubectl.ok("apply", "-f", kubectl.write("ok.yaml", widget("ok", {"size": 1})))
    err = kubectl.fails("patch", "wd", "ok", "--type=merge", "-p", '{"spec":{"size":"big"}}')
    assert 'The Widget "ok" is invalid: spec.size: Invalid value: "string"' in err
    assert kubectl.json("get", "wd", "ok")["spec"] == {"size": 1}


def test_unknown_field_strict_validation(kubectl, widgets):
    """4-4, 4-5, 4-6, 16-6: ``apply`` sends fieldValidation=Strict; ``patch`` gets the Warn default."""
    unk = kubectl.write("unk.yaml", widget("unk", {"size": 1, "foo": "bar"}))
    err = kubectl.fails("apply", "-f", unk)
    assert err == (
        'Error from server (BadRequest): error when creating "unk.yaml": '
        'strict decoding error: unknown field "spec.foo"\n'
    )
    assert kubectl.fails("get", "wd", "unk").startswith("Error from server (NotFound)")

    # on an existing object apply is a merge patch, refused by the patch handler: a 422 quoting the
    # patched object, which kubectl prints as it prints any Invalid without a kind
    kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", {"size": 1})))
    err = kubectl.fails("apply", "-f", kubectl.write("w.yaml", widget("w1", {"size": 2, "foo": "bar"})))
    assert err.startswith('The request is invalid: patch: Invalid value: "{')
    assert err.endswith('": strict decoding error: unknown field "spec.foo"\n')
    assert kubectl.json("get", "wd", "w1")["spec"] == {"size": 1}

    # kubectl patch sends no fieldValidation: the field is pruned and kubectl prints the server's warning
    r = kubectl.run("patch", "wd", "w1", "--type=merge", "-p", '{"spec":{"size":3,"foo":"bar"}}')
    assert (r.returncode, r.stdout) == (0, "widget.example.com/w1 patched\n"), r.stderr
    assert r.stderr == 'Warning: unknown field "spec.foo"\n'
    assert kubectl.json("get", "wd", "w1")["spec"] == {"size": 3}
