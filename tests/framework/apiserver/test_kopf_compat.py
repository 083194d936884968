"""End to end: a real kopf 1.45 operator against the emulator, unpatched (spec 0-2, 23-3).

kopf runs in a background thread with its own event loop (``kopf.run``), watching one namespace, and
logs in with its own kubeconfig reader (``kopf.login_with_kubeconfig``) from the server's kubeconfig.
Its handlers live in a private ``OperatorRegistry``. What the operator did is checked through the
official client, never through kopf; and kopf must not have logged any error (a response it could not
parse or did not expect would show up there).

What kopf exercises: legacy discovery incl. ``kopfexamples/status`` (3-5, 23-3); list (also chunked,
14-3) or watch-list (15-8), then watch with bookmarks (15-6); JSON patch with a ``test`` op and merge
patches of the main resource and of ``/status`` (8-2, 8-4, 10-1); finalizers (§11); Events posted
without apiVersion/kind (18-5); exact ``Content-Type: application/json`` (1-3); re-watching after
dropped streams and relisting after 410 (15-2, 5-3a); peering objects without a status subresource
(10-3).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import kopf
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework import certs
from framework.apiserver.accounting.requests import RequestKey
from framework.testing import APIServer, eventually

NS = "kopf-test"
GROUP, VERSION, PLURAL = "kopf.dev", "v1", "kopfexamples"
FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
LAST_HANDLED = "kopf.zalando.org/last-handled-configuration"
PRESERVE = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

# kopf's examples/crd.yaml: a status subresource, a schema preserving unknown fields.
KOPFEXAMPLE_CRD: dict = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kopfexamples.kopf.dev"},
    "spec": {
        "scope": "Namespaced",
        "group": GROUP,
        "names": {
            "kind": "KopfExample",
            "plural": PLURAL,
            "singular": "kopfexample",
            "shortNames": ["kopfexes", "kopfex", "kexes", "kex"],
        },
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
                "additionalPrinterColumns": [
                    {"name": "Duration", "type": "string", "priority": 0, "jsonPath": ".spec.duration"},
                    {"name": "Children", "type": "string", "priority": 0, "jsonPath": ".status.children"},
                ],
            }
        ],
    },
}

# kopf's peering.yaml (namespaced half): no status subresource, peers are kept in ``status`` (10-3).
KOPFPEERING_CRD: dict = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kopfpeerings.kopf.dev"},
    "spec": {
        "scope": "Namespaced",
        "group": GROUP,
        "names": {"kind": "KopfPeering", "plural": "kopfpeerings", "singular": "kopfpeering"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"status": PRESERVE}}},
            }
        ],
    },
}


class Records(logging.Handler):
    """Every record of the ``kopf`` logger hierarchy, kept for assertions."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.expected_errors: str | None = None  # a regex of errors a test provokes on purpose

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def at_least(self, level: int, expected: str | None = None) -> list[str]:
        """Records of ``level`` or above, except those matching the regex ``expected``."""
        return [
            f"{r.levelname} {r.name}: {r.getMessage()}"
            for r in self.records
            if r.levelno >= level and not (expected and re.search(expected, r.getMessage()))
        ]

    def messages(self) -> list[str]:
        return [r.getMessage() for r in self.records]


class Operator:
    """A kopf operator for KopfExamples in ``NS``, in its own thread, with its own event loop."""

    def __init__(
        self,
        core: client.CoreV1Api,
        watching: dict,
        run: dict,
        webhooks: kopf.WebhookServer | None = None,
        touch_on_delete: bool = False,
    ) -> None:
        self.core = core
        self.touch_on_delete = touch_on_delete
        self.run_kwargs = {"standalone": True, **run}
        self.calls: list[tuple[str, str, Any]] = []  # (handler, object name, detail)
        self.registry = kopf.OperatorRegistry()
        self.settings = kopf.OperatorSettings()
        for key, value in watching.items():
            setattr(self.settings.watching, key, value)
        # Sync handlers run here; shut down with the operator so no worker thread outlives the test.
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=2, thread_name_prefix="kopf-handler"
        )
        self.settings.execution.executor = self.executor
        self.settings.admission.executor = self.executor
        # Log messages about objects (e.g. "Handler 'create_fn' succeeded.") become Events (18-5).
        self.settings.posting.loggers = True
        self.settings.posting.level = logging.INFO
        if webhooks is not None:
            # kopf serves admission webhooks and manages their configurations itself (21-8).
            self.settings.admission.server = webhooks
            self.settings.admission.managed = "auto.kopf.dev"
        self.stop_flag = threading.Event()
        self.ready_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, name="kopf-operator", daemon=True)
        self._register()

    def _register(self) -> None:
        reg = self.registry

        @kopf.on.login(id="login", registry=reg)
        def login(**kwargs: Any) -> Any:
            # kopf's own kubeconfig reader, on the server's kubeconfig ($KUBECONFIG, set by the fixture).
            return kopf.login_with_kubeconfig(**kwargs)

        @kopf.on.create(GROUP, VERSION, PLURAL, id="create_fn", registry=reg)
        def create_fn(body: Any, spec: Any, name: str, namespace: str, **_: Any) -> dict:
            child = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-child"},
                "data": {"field": str(spec.get("field", ""))},
            }
            kopf.adopt(child, owner=body)  # ownerReference + namespace of the owner
            self.core.create_namespaced_config_map(namespace, child)
            kopf.info(body, reason="ChildCreated", message=f"ConfigMap {child['metadata']['name']}")
            self.calls.append(("create", name, dict(spec)))
            return {"child": child["metadata"]["name"]}

        @kopf.on.update(GROUP, VERSION, PLURAL, id="update_fn", field="spec", registry=reg)
        def update_fn(name: str, old: Any, new: Any, **_: Any) -> None:
            self.calls.append(("update", name, (old, new)))

        @kopf.on.delete(GROUP, VERSION, PLURAL, id="delete_fn", registry=reg)
        def delete_fn(name: str, namespace: str, **_: Any) -> None:
            if self.touch_on_delete:  # a change kopf does not know of when it removes its finalizer
                body = {"metadata": {"labels": {"cleaned-up": "true"}}}
                client.CustomObjectsApi(self.core.api_client).patch_namespaced_custom_object(
                    GROUP, VERSION, namespace, PLURAL, name, body
                )
            self.calls.append(("delete", name, None))

        if self.settings.admission.server is None:
            return

        @kopf.on.validate(GROUP, VERSION, PLURAL, id="check_field", registry=reg)
        def check_field(spec: Any, **_: Any) -> None:
            if spec.get("field") == "forbidden":
                raise kopf.AdmissionError("field must not be 'forbidden'", code=422)

        @kopf.on.mutate(GROUP, VERSION, PLURAL, id="stamp", operations=["CREATE"], registry=reg)
        def stamp(patch: Any, **_: Any) -> None:
            patch.metadata.setdefault("labels", {})["stamped-by"] = "kopf"

    def _run(self) -> None:
        kopf.run(
            registry=self.registry,
            settings=self.settings,
            namespaces=[NS],
            stop_flag=self.stop_flag,
            ready_flag=self.ready_flag,
            **self.run_kwargs,
        )

    def start(self) -> Operator:
        self.thread.start()
        assert self.ready_flag.wait(10), "kopf did not start"
        return self

    def stop(self) -> None:
        self.stop_flag.set()
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "kopf did not stop"
        self.executor.shutdown(wait=True)

    def handled(self, kind: str, name: str) -> list:
        return [c for c in self.calls if c[0] == kind and c[1] == name]


@pytest.fixture
def kopf_logs() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger("kopf")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)  # kopf posts Events from the INFO records about objects (18-5)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def apiserver(request) -> Iterator[APIServer]:
    """The plugin's fixture, over plain HTTP when parametrized (indirectly) with ``"http"`` (1-1)."""
    with APIServer(scheme=getattr(request, "param", "https")) as server:
        yield server


@pytest.fixture
def start_operator(apiserver, kopf_logs, monkeypatch, no_leaked_threads) -> Iterator[Callable[..., Operator]]:
    """Prepare the cluster (KopfExample CRD, namespace ``NS``, ``$KUBECONFIG`` for kopf's login) and
    give a function that starts an operator; operators are stopped and joined before the thread-leak
    check, and must not have logged errors."""
    monkeypatch.setenv("KUBECONFIG", apiserver.kubeconfig)
    apiserver.install_crds([KOPFEXAMPLE_CRD])
    core = client.CoreV1Api(apiserver.api_client())
    core.create_namespace({"metadata": {"name": NS}})
    running: list[Operator] = []

    def start(
        watching: dict | None = None,
        webhooks: kopf.WebhookServer | None = None,
        touch_on_delete: bool = False,
        **run: Any,
    ) -> Operator:
        op = Operator(core, watching or {}, run, webhooks, touch_on_delete)
        running.append(op)
        return op.start()

    yield start
    for op in running:
        op.stop()
    assert kopf_logs.at_least(logging.ERROR, kopf_logs.expected_errors) == []


def kopf_example(name: str, **spec: Any) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KopfExample",
        "metadata": {"name": name, "labels": {"somelabel": "somevalue"}},
        "spec": spec,
    }


def get_or_none(crs: client.CustomObjectsApi, name: str) -> dict | None:
    try:
        return crs.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def handled(crs: client.CustomObjectsApi, name: str) -> dict:
    """The object once kopf stored the create handler's result in its status (via ``/status``, 10-1)."""
    return eventually(
        lambda: (o := get_or_none(crs, name)) and o.get("status", {}).get("create_fn") and o,
        message=f"kopf stored create_fn's result in the status of {name}",
    )


def last_handled(obj: dict | None) -> dict | None:
    raw = ((obj or {}).get("metadata", {}).get("annotations") or {}).get(LAST_HANDLED)
    return json.loads(raw) if raw else None


WATCHING = {
    "list-then-watch": {},
    # limit/continue on kopf's lists of namespaces, CRDs and KopfExamples (14-3)
    "chunked-list": {"chunk_size": 1},
    # sendInitialEvents=true&resourceVersionMatch=NotOlderThan, ended by a bookmark (15-8)
    "watch-list": {"initial_streaming": True},
}


@pytest.mark.parametrize(
    ("apiserver", "watching"),
    [
        pytest.param("https", "list-then-watch", id="list-then-watch"),
        pytest.param("https", "chunked-list", id="chunked-list"),
        pytest.param("https", "watch-list", id="watch-list"),
        pytest.param("http", "list-then-watch", id="plain-http"),
    ],
    indirect=["apiserver"],
)
def test_kopf_operator_lifecycle(apiserver, start_operator, watching):
    """0-2, 23-3: objects existing before kopf starts (found by its initial list) and one created
    while it watches: finalizer, handler result in status, diff-base annotation, adopted child, Events;
    an update of spec runs the update handler; delete runs the delete handler, kopf removes its
    finalizer and the object goes away (its child with it, by the garbage collector, §13)."""
    crs = client.CustomObjectsApi(apiserver.api_client())
    core = client.CoreV1Api(apiserver.api_client())
    for name in ("before-1", "before-2"):
        crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example(name, field=name))
    operator = start_operator(WATCHING[watching])
    body = kopf_example("example", duration="1m", field="value", items=["item1", "item2"])
    uid = crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)["metadata"]["uid"]

    # Creation: the handler's result in status (kopf writes it through /status), finalizer, diff-base.
    for name in ("before-1", "before-2", "example"):
        obj = handled(crs, name)
        assert obj["status"]["create_fn"] == {"child": f"{name}-child"}
        assert FINALIZER in obj["metadata"]["finalizers"]
        eventually(
            lambda name=name: last_handled(get_or_none(crs, name)), message=f"{LAST_HANDLED} on {name}"
        )
    last = last_handled(get_or_none(crs, "example"))
    assert last == {"spec": body["spec"], "metadata": {"labels": {"somelabel": "somevalue"}}}
    assert operator.handled("create", "example") == [("create", "example", body["spec"])]
    assert operator.handled("create", "before-1") == [("create", "before-1", {"field": "before-1"})]

    child = core.read_namespaced_config_map("example-child", NS)
    assert child.data == {"field": "value"}
    [ref] = child.metadata.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid) == (
        f"{GROUP}/{VERSION}",
        "KopfExample",
        "example",
        uid,
    )
    assert ref.controller is True and ref.block_owner_deletion is True

    # kopf's Events about the object: an explicit kopf.info() and its handler log lines (18-5).
    wanted = [
        ("ChildCreated", "ConfigMap example-child"),
        ("Logging", "Handler 'create_fn' succeeded."),
        ("Logging", "Creation is processed: 1 succeeded; 0 failed."),
    ]

    def posted() -> dict[tuple, client.CoreV1Event] | None:
        items = core.list_namespaced_event(NS, field_selector="involvedObject.name=example").items
        found = {(e.reason, e.message): e for e in items}
        return found if all(w in found for w in wanted) else None

    events = eventually(posted, message="kopf posted its Events")
    for ev in (events[w] for w in wanted):
        assert ev.type == "Normal" and ev.source.component == "kopf" and ev.reporting_component == "kopf"
        assert ev.event_time is not None and ev.first_timestamp is not None
        ref = ev.involved_object
        assert (ref.api_version, ref.kind, ref.name, ref.namespace, ref.uid) == (
            f"{GROUP}/{VERSION}",
            "KopfExample",
            "example",
            NS,
            uid,
        )
        assert ev.metadata.name.startswith("kopf-event-")

    # Update of spec (merge patch through the official client): the update handler sees old and new.
    crs.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "example", {"spec": {"field": "changed"}})
    [(_, _, (old, new))] = eventually(
        lambda: operator.handled("update", "example"), message="kopf ran the update handler"
    )
    assert old["field"] == "value" and new["field"] == "changed"
    eventually(
        lambda: last_handled(get_or_none(crs, "example"))["spec"]["field"] == "changed",
        message="kopf updated its last-handled-configuration annotation",
    )

    # Deletion: held by kopf's finalizer until the delete handler ran, then the object goes away.
    crs.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "example")
    eventually(lambda: operator.handled("delete", "example"), message="kopf ran the delete handler")
    eventually(lambda: get_or_none(crs, "example") is None, message="the KopfExample is gone")
    eventually(
        lambda: not core.list_namespaced_config_map(NS, field_selector="metadata.name=example-child").items,
        message="the child ConfigMap was garbage-collected",
    )
    assert len(operator.handled("create", "example")) == 1
    assert len(operator.handled("update", "before-1")) == 0


def test_kopf_survives_dropped_watches_compaction_and_restart(apiserver, start_operator, kopf_logs):
    """15-2, 5-3a, 23-3: kopf re-watches from its last resourceVersion after a dropped stream, relists
    after an ``ERROR`` 410 event, reconnects after a server restart, and keeps handling objects."""
    crs = client.CustomObjectsApi(apiserver.api_client())
    operator = start_operator()
    crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("a", field="1"))
    handled(crs, "a")

    apiserver.drop_watches()
    crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("b", field="1"))
    handled(crs, "b")

    # Make kopf's last resourceVersion of kopfexamples too old, then make it watch again from there.
    client.CoreV1Api(apiserver.api_client()).create_namespaced_config_map(NS, {"metadata": {"name": "x"}})
    apiserver.compact()
    apiserver.drop_watches()
    eventually(
        lambda: any(
            m.startswith("Restarting the watch-stream for kopfexamples") for m in kopf_logs.messages()
        ),
        message="kopf restarted its watch after 410",
    )
    crs.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "a", {"spec": {"field": "2"}})
    eventually(lambda: operator.handled("update", "a"), message="kopf handled an update after 410")

    # While the server restarts, kopf's requests fail (refused, or cut if in flight): kopf logs each
    # failed attempt as an error and retries, as it would in a real outage.
    kopf_logs.expected_errors = r"^Request attempt #\d+/\d+ failed; will retry: "
    apiserver.restart()
    crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("c", field="1"))
    handled(crs, "c")
    # Every object was handled exactly once: relisting did not make kopf treat them as new.
    assert [c[1] for c in operator.calls if c[0] == "create"] == ["a", "b", "c"]


def test_kopf_retries_a_stale_json_patch(apiserver, start_operator, kopf_logs):
    """8-4, 23-3: kopf removes its finalizer with a JSON patch led by a ``test`` op on the
    resourceVersion it last saw; when the object changed meanwhile (here: by the delete handler),
    that op fails with 422, kopf keeps the finalizer and retries on the next watch event."""
    crs = client.CustomObjectsApi(apiserver.api_client())
    operator = start_operator(touch_on_delete=True)
    crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("t", field="1"))
    handled(crs, "t")
    crs.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "t")
    eventually(lambda: get_or_none(crs, "t") is None, message="the KopfExample is gone")
    assert any(
        m.startswith("Could not apply the patch in full due to conflicts") for m in kopf_logs.messages()
    )
    assert operator.handled("delete", "t") == [("delete", "t", None)]
    assert apiserver.request_counts()[RequestKey("admin", "patch", f"{PLURAL}.{GROUP}", 422)] == 1


def test_kopf_peering(apiserver, start_operator):
    """10-3, 23-3: with peering, kopf merge-patches ``status.<identity>`` of a KopfPeering (a CRD
    without status subresource) and removes its entry (``null``) when it stops."""
    apiserver.install_crds([KOPFPEERING_CRD])
    crs = client.CustomObjectsApi(apiserver.api_client())
    peering = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KopfPeering", "metadata": {"name": "example"}}
    crs.create_namespaced_custom_object(GROUP, VERSION, NS, "kopfpeerings", peering)

    def peers() -> dict:
        return crs.get_namespaced_custom_object(GROUP, VERSION, NS, "kopfpeerings", "example").get(
            "status", {}
        )

    operator = start_operator(standalone=False, peering_name="example", priority=7)
    [(identity, peer)] = eventually(lambda: list(peers().items()), message="kopf registered as a peer")
    assert peer["priority"] == 7 and peer["lifetime"] == 60 and peer["lastseen"]

    # The operator is not paused by its own peering entry: it handles objects.
    crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("p", field="1"))
    handled(crs, "p")

    operator.stop()
    assert identity not in peers()


def test_kopf_admission_webhooks(apiserver, start_operator, kopf_logs, tmp_path):
    """21-8, 21-4, 21-5: kopf creates its managed Validating/MutatingWebhookConfiguration (url +
    caBundle, ``objectSelector: null``, both review versions); the server calls kopf's webhook server:
    a mutating patch is applied, a denial is the client's error."""
    ca = certs.generate_ca("kopf-webhook-ca")
    cert, key = certs.issue_serving_cert(ca, ["127.0.0.1"]).write(tmp_path, "webhook")
    ca_path, _ = ca.write(tmp_path, "ca")
    server = kopf.WebhookServer(
        addr="127.0.0.1", host="127.0.0.1", certfile=cert, pkeyfile=key, cafile=ca_path
    )
    start_operator(webhooks=server)
    admission = client.AdmissionregistrationV1Api(apiserver.api_client())
    # kopf creates the configuration empty, then merge-patches its webhooks in once its server listens.
    config = eventually(
        lambda: [c for c in admission.list_validating_webhook_configuration().items if c.webhooks],
        message="kopf registered its validating webhook",
    )[0]
    assert config.metadata.name == "auto.kopf.dev"
    [hook] = config.webhooks
    assert hook.name == "check-field.auto.kopf.dev" and hook.client_config.url.startswith(
        "https://127.0.0.1:"
    )
    assert hook.admission_review_versions == ["v1", "v1beta1"] and hook.timeout_seconds == 30
    # kopf sends "objectSelector": null; stored as kube-apiserver does, defaulted to {} (21-2).
    assert hook.object_selector == client.V1LabelSelector() and hook.match_policy == "Equivalent"
    eventually(
        lambda: [c for c in admission.list_mutating_webhook_configuration().items if c.webhooks],
        message="kopf registered its mutating webhook",
    )

    crs = client.CustomObjectsApi(apiserver.api_client())
    created = crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("ok", field="1"))
    assert created["metadata"]["labels"] == {"somelabel": "somevalue", "stamped-by": "kopf"}
    handled(crs, "ok")

    kopf_logs.expected_errors = r"^Webhook 'check_field' failed permanently: field must not be 'forbidden'$"
    with pytest.raises(ApiException) as denied:
        crs.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, kopf_example("no", field="forbidden"))
    status = json.loads(denied.value.body)
    assert denied.value.status == 422 and status["code"] == 422
    assert status["message"] == (
        "admission webhook \"check-field.auto.kopf.dev\" denied the request: field must not be 'forbidden'"
    )
    assert get_or_none(crs, "no") is None
