"""In-process admission plugins (``APIServer(admission_plugins=[...])``, ``--admission-plugin``), as
kube-apiserver's ``--enable-admission-plugins``: they mutate and refuse writes and deletes, after the
built-in ones, over real HTTP with the official client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.apiserver.admission.plugins import AdmissionPlugin, default_plugins, load
from framework.apiserver.machinery import errors
from framework.testing import APIServer

KEEP = "example.com/keep"


class StampOwner(AdmissionPlugin):
    """Labels every ConfigMap with who created it; refuses a ``forbidden`` key in its data."""

    name = "StampOwner"

    def admit(self, server, rt, new, old, opts) -> None:
        if rt.kind != "ConfigMap":
            return
        if "forbidden" in (new.get("data") or {}):
            raise errors.invalid(
                rt.kind, rt.group, new["metadata"]["name"], [errors.forbidden("data.forbidden", "no")]
            )
        if old is None and opts.user is not None:
            new["metadata"].setdefault("labels", {})["created-by"] = opts.user.name


class KeepAnnotated(AdmissionPlugin):
    """Refuses deleting a ConfigMap annotated ``example.com/keep``."""

    name = "KeepAnnotated"

    def admit_delete(self, server, rt, obj) -> None:
        if rt.kind == "ConfigMap" and KEEP in (obj["metadata"].get("annotations") or {}):
            raise errors.forbidden_error(rt.resource, rt.group, obj["metadata"]["name"], "kept")


def plugins() -> list[AdmissionPlugin]:
    return [StampOwner(), KeepAnnotated()]


@pytest.fixture(scope="module")
def core() -> Iterator[client.CoreV1Api]:
    with APIServer(admission_plugins=plugins()) as server:
        yield client.CoreV1Api(server.api_client())


def test_the_built_in_plugins_come_first() -> None:
    server = APIServer(admission_plugins=plugins())
    try:
        names = [p.name for p in server.admission_plugins]
    finally:
        server.stop()
    assert names == [*(p.name for p in default_plugins()), "StampOwner", "KeepAnnotated"]


def test_a_plugin_mutates_a_create(core: client.CoreV1Api) -> None:
    cm = core.create_namespaced_config_map("default", {"metadata": {"name": "stamped"}})
    assert cm.metadata.labels == {"created-by": "admin"}
    cm = core.patch_namespaced_config_map("stamped", "default", {"data": {"a": "b"}})
    assert cm.metadata.labels == {"created-by": "admin"} and cm.data == {"a": "b"}


def test_a_plugin_refuses_a_write_with_its_status(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(
            "default", {"metadata": {"name": "bad"}, "data": {"forbidden": "x"}}
        )
    assert e.value.status == 422 and "data.forbidden: Forbidden: no" in e.value.body
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("bad", "default")
    assert e.value.status == 404  # nothing was stored


def test_a_plugin_refuses_a_delete_and_a_deletecollection(core: client.CoreV1Api) -> None:
    core.create_namespace({"metadata": {"name": "keepers"}})
    meta = {"name": "kept", "annotations": {KEEP: "yes"}}
    core.create_namespaced_config_map("keepers", {"metadata": meta})
    core.create_namespaced_config_map("keepers", {"metadata": {"name": "loose"}})
    with pytest.raises(ApiException) as e:
        core.delete_namespaced_config_map("kept", "keepers")
    status = json.loads(e.value.body)
    assert (status["code"], status["reason"]) == (403, "Forbidden")
    assert status["message"] == 'configmaps "kept" is forbidden: kept'
    with pytest.raises(ApiException) as e:
        core.delete_collection_namespaced_config_map("keepers")
    assert e.value.status == 403
    assert "kept" in {c.metadata.name for c in core.list_namespaced_config_map("keepers").items}
    core.delete_namespaced_config_map("loose", "keepers")  # the plugin leaves the others alone


def test_the_plain_server_runs_only_the_built_in_plugins(apiserver: APIServer) -> None:
    assert [p.name for p in apiserver.admission_plugins] == [p.name for p in default_plugins()]
    core = client.CoreV1Api(apiserver.api_client())
    cm = core.create_namespaced_config_map(
        "default", {"metadata": {"name": "plain"}, "data": {"forbidden": "x"}}
    )
    assert cm.metadata.labels is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-colon", "expected MODULE:FACTORY"),
        ("framework.nope:plugins", "No module named 'framework.nope'"),
        ("framework.apiserver.admission.plugins:nope", "has no attribute 'nope'"),
        ("builtins:list", "list() returned no AdmissionPlugin"),
        ("builtins:object", "object() returned no AdmissionPlugin"),
        ("json:dumps", "dumps() failed: "),
    ],
)
def test_load_names_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        load(spec)
    assert message in str(e.value) and repr(spec) in str(e.value)


def test_load_takes_one_plugin_or_a_list() -> None:
    assert [p.name for p in load("framework.apiserver.admission.plugins:default_plugins")] == [
        "ServiceAccount",
        "Priority",
        "DefaultTolerationSeconds",
        "RBACEscalation",
        "ValidatingAdmissionPolicy",
    ]
    assert [p.name for p in load("framework.apiserver.admission.plugins:RBACEscalation")] == [
        "RBACEscalation"
    ]


def test_the_cli_refuses_a_bad_plugin_in_one_line(tmp_path) -> None:
    cmd = [sys.executable, "-m", "framework.apiserver", "--kubeconfig", str(tmp_path / "kc")]
    res = subprocess.run(
        [*cmd, "--admission-plugin", "framework.nope:plugins"], capture_output=True, text=True
    )
    assert res.returncode == 2 and "--admission-plugin" not in res.stdout
    assert "error: 'framework.nope:plugins': No module named 'framework.nope'" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "kc").exists()
    res = subprocess.run(
        [*cmd, "--request-log-field", "leases.coordination.k8s.io"], capture_output=True, text=True
    )
    assert res.returncode == 2 and "expected RESOURCE:NAME=PATH" in res.stderr
