"""The Gardener API server's Project and Shoot rules (``gcm.embedded.admission``'s plugins), via kubectl.

What gardener-apiserver does (gardener ``plugin/pkg/project/mutator``, ``pkg/api/core/validation/
project.go``, ``pkg/apiserver/registry/core/project/strategy.go``, ``plugin/pkg/global/
deletionconfirmation``), checked through kubectl as a user of a garden would see it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from framework.client import Client, Forbidden
from framework.testing import APIServer, eventually
from framework.testing.kubectl import KUBECTL, Kubectl
from gcm.apis.constants import ANNOTATION_CONFIRMATION_DELETION, CORE_V1BETA1, KIND_PROJECT
from gcm.embedded import admission

CRDS = Path(__file__).resolve().parents[3] / "manifests" / "crds"
RBAC = "rbac.authorization.k8s.io"
REFUSED = f'is forbidden: must have a "{ANNOTATION_CONFIRMATION_DELETION}" annotation to delete'


@pytest.fixture(scope="module")
def garden(tmp_path_factory) -> Iterator[APIServer]:
    with APIServer(admission_plugins=admission.plugins()) as server:
        server.install_crds(CRDS)
        yield server


@pytest.fixture
def home(tmp_path) -> Path:
    if not os.access(KUBECTL, os.X_OK):
        pytest.skip("kubectl is not installed")
    return tmp_path


@pytest.fixture
def alice(garden, home) -> Iterator[Kubectl]:
    k = Kubectl(garden.kubeconfig_for("alice@example.com", path=home / "alice.kubeconfig"), home, timeout=60)
    yield k
    k.close()


@pytest.fixture
def admin(garden, home) -> Iterator[Kubectl]:
    k = Kubectl(garden.kubeconfig, home, timeout=60)
    yield k
    k.close()


def user(name: str, **roles) -> dict:
    return {"apiGroup": RBAC, "kind": "User", "name": name, **roles}


def project(name: str, **spec) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Project",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


def test_created_by_owner_and_owner_membership_from_the_requesting_user(alice, admin):
    alice.ok("create", "-f", "-", input=project("p-self", namespace="garden-p-self"))
    spec = admin.json("get", "project", "p-self")["spec"]
    me = {"apiGroup": RBAC, "kind": "User", "name": "alice@example.com"}
    assert spec["createdBy"] == me and spec["owner"] == me
    assert spec["members"] == [{**me, "role": "admin", "roles": ["owner"]}]
    # kubectl's own columns show them (additionalPrinterColumns of the CRD).
    row = admin.ok("get", "project", "p-self", "--no-headers").split()
    assert row.count("alice@example.com") == 2, row


def test_a_client_supplied_created_by_is_replaced(alice, admin):
    alice.ok("create", "-f", "-", input=project("p-forge", createdBy=user("mallory")))
    assert admin.json("get", "project", "p-forge")["spec"]["createdBy"]["name"] == "alice@example.com"


def test_owner_defaults_to_the_member_with_the_owner_role(alice, admin):
    members = [user("bob", role="viewer"), user("carol", role="admin", roles=["owner"])]
    alice.ok("create", "-f", "-", input=project("p-member", members=members))
    spec = admin.json("get", "project", "p-member")["spec"]
    assert spec["owner"] == {"apiGroup": RBAC, "kind": "User", "name": "carol"}
    assert spec["members"] == members  # the owner is a member already: nothing added
    assert spec["createdBy"]["name"] == "alice@example.com"


def test_an_owner_who_is_no_member_becomes_one(alice, admin):
    alice.ok(
        "create", "-f", "-", input=project("p-add", owner=user("dave"), members=[user("bob", role="viewer")])
    )
    members = admin.json("get", "project", "p-add")["spec"]["members"]
    assert members == [user("bob", role="viewer"), user("dave", role="admin", roles=["owner"])]


def test_only_the_owner_carries_the_owner_role(alice, admin):
    """Canonicalisation: the owner gets the role, every other member loses it, on create and update."""
    members = [user("bob", role="viewer"), user("carol", role="owner")]
    alice.ok("create", "-f", "-", input=project("p-canon", owner=user("bob"), members=members))
    got = admin.json("get", "project", "p-canon")["spec"]["members"]
    assert got == [user("bob", role="viewer", roles=["owner"]), user("carol")]
    admin.ok("patch", "project", "p-canon", "--type=merge", "-p", '{"spec":{"owner":{"name":"carol"}}}')
    got = admin.json("get", "project", "p-canon")["spec"]["members"]
    assert got == [user("bob", role="viewer"), user("carol", role="owner")]


def _hand_over(admin: Kubectl, name: str, new_owner: dict) -> None:
    """What ``kubectl edit`` sends when only ``spec.owner`` is changed: the whole Project, the members
    (the old owner still with the owner role) as read."""
    obj = admin.json("get", "project", name)
    obj["spec"]["owner"] = new_owner
    admin.ok("replace", "-f", "-", input=yaml.safe_dump(obj))


def test_owner_handed_to_a_member_moves_the_owner_role(alice, admin):
    alice.ok("create", "-f", "-", input=project("p-give", members=[user("bob", role="viewer")]))
    _hand_over(admin, "p-give", user("bob"))
    spec = admin.json("get", "project", "p-give")["spec"]
    assert spec["owner"] == user("bob")
    assert spec["members"] == [
        user("bob", role="viewer", roles=["owner"]),
        user("alice@example.com", role="admin"),
    ]


def test_owner_handed_to_a_non_member_makes_them_a_member_with_the_owner_role(alice, admin):
    """The old owner's role is dropped before validation (gardener-apiserver up to v1.148): no
    "cannot have more than one member having the owner role" for an index the user never wrote."""
    alice.ok("create", "-f", "-", input=project("p-hand", members=[user("bob", role="viewer")]))
    _hand_over(admin, "p-hand", user("erin"))
    spec = admin.json("get", "project", "p-hand")["spec"]
    assert spec["owner"] == user("erin")
    assert spec["members"] == [
        user("bob", role="viewer"),
        user("alice@example.com", role="admin"),
        user("erin", role="admin", roles=["owner"]),
    ]
    # Handed back to the first owner, still a member: the role moves back, nobody is added.
    _hand_over(admin, "p-hand", user("alice@example.com"))
    members = admin.json("get", "project", "p-hand")["spec"]["members"]
    assert members == [
        user("bob", role="viewer"),
        user("alice@example.com", role="admin", roles=["owner"]),
        user("erin", role="admin"),
    ]


@pytest.mark.parametrize(
    ("name", "spec", "expected"),
    [
        ("elevenchars", {}, "metadata.name: Too long: may not be more than 10 bytes"),
        ("a--b", {}, 'metadata.name: Invalid value: "a--b": name may not contain two consecutive hyphens'),
        (
            "p-ns",
            {"namespace": "garden-UPPER"},
            'spec.namespace: Invalid value: "garden-UPPER": a lowercase RFC 1123',
        ),
        (
            "p-dup",
            {"members": [user("bob", role="viewer"), user("bob", role="admin")]},
            "spec.members[1]: Duplicate value",
        ),
        (
            "p-role",
            {"members": [user("bob", role="chef")]},
            'spec.members[0].roles[0]: Unsupported value: "chef"',
        ),
        (
            "p-twice",
            {"members": [user("bob", role="admin", roles=["viewer", "viewer"])]},
            'spec.members[0].roles[2]: Duplicate value: "viewer"',
        ),
        (
            "p-owners",
            {"members": [user("bob", role="owner"), user("carol", role="owner")]},
            "spec.members[1].roles[0]: Forbidden: cannot have more than one member having the owner role",
        ),
        (
            "p-kind",
            {"members": [{"apiGroup": RBAC, "kind": "Robot", "name": "r2", "role": "admin"}]},
            'spec.members[0].kind: Unsupported value: "Robot"',
        ),
        (
            "p-sa",
            {"members": [{"kind": "ServiceAccount", "name": "robot", "role": "admin"}]},
            "spec.members[0].namespace: Required value",
        ),
        (
            "p-sauser",
            {"members": [user("system:serviceaccount:x", role="admin")]},
            'unsupported service account user name: "system:serviceaccount:x"',
        ),
        (
            "p-ext",
            {"members": [user("bob", role="extension:" + "x" * 21)]},
            "spec.members[0].roles[0]: Too long: may not be more than 20 bytes",
        ),
        ("p-desc", {"description": ""}, "spec.description: Required value: must provide a description"),
    ],
)
def test_project_validation(alice, admin, name, spec, expected):
    err = alice.fails("create", "-f", "-", input=project(name, **spec))
    assert f'The Project "{name}" is invalid' in err and expected in err, err
    assert admin.run("get", "project", name).returncode != 0  # nothing stored


def test_namespace_created_by_and_owner_cannot_change_once_set(alice, admin):
    alice.ok("create", "-f", "-", input=project("p-immut", namespace="garden-p-immut"))
    for patch, expected in (
        ('{"spec":{"namespace":"garden-other"}}', "spec.namespace: Invalid value"),
        ('{"spec":{"createdBy":{"name":"mallory"}}}', "spec.createdBy: Invalid value"),
        ('{"spec":{"owner":null}}', 'spec.owner: Invalid value: "null": owner cannot be reset'),
    ):
        err = admin.fails("patch", "project", "p-immut", "--type=merge", "-p", patch)
        assert expected in err, err
    assert "field is immutable" in admin.fails(
        "patch", "project", "p-immut", "--type=merge", "-p", '{"spec":{"namespace":"garden-other"}}'
    )
    # A Project without a namespace gets one set later (by gcm); then it is fixed.
    alice.ok("create", "-f", "-", input=project("p-late"))
    admin.ok("patch", "project", "p-late", "--type=merge", "-p", '{"spec":{"namespace":"garden-p-late"}}')
    assert admin.json("get", "project", "p-late")["spec"]["namespace"] == "garden-p-late"


def test_project_deletion_needs_the_confirmation_annotation(alice, admin):
    alice.ok("create", "-f", "-", input=project("p-del"))
    err = alice.fails("delete", "project", "p-del")
    assert f'projects.core.gardener.cloud "p-del" {REFUSED}' in err, err
    admin.ok("annotate", "project", "p-del", "confirmation.gardener.cloud/deletion=false")
    assert REFUSED in alice.fails("delete", "project", "p-del")
    assert admin.json("get", "project", "p-del")["metadata"].get("deletionTimestamp") is None
    admin.ok("annotate", "--overwrite", "project", "p-del", "confirmation.gardener.cloud/deletion=true")
    alice.ok("delete", "project", "p-del", "--wait=false")
    eventually(lambda: admin.run("get", "project", "p-del").returncode != 0, message="p-del gone")


def test_deleting_all_projects_is_refused_while_one_is_unconfirmed(alice, admin):
    alice.ok("create", "-f", "-", input=project("p-all"))
    before = {p["metadata"]["name"] for p in admin.json("get", "projects")["items"]}
    assert REFUSED in admin.fails("delete", "projects", "--all", "--wait=false")
    after = {p["metadata"]["name"] for p in admin.json("get", "projects")["items"]}
    assert after == before  # nothing was deleted


def test_shoot_deletion_needs_the_confirmation_annotation_and_records_who_confirmed(alice, admin):
    admin.ok("create", "namespace", "garden-shoots")
    shoot = {
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": "s1", "namespace": "garden-shoots"},
        "spec": {},
    }
    alice.ok("create", "-f", "-", input=yaml.safe_dump(shoot))
    err = alice.fails("delete", "shoot", "s1", "-n", "garden-shoots")
    assert f'shoots.core.gardener.cloud "s1" {REFUSED}' in err, err
    alice.ok("annotate", "shoot", "s1", "-n", "garden-shoots", "confirmation.gardener.cloud/deletion=true")
    annotations = admin.json("get", "shoot", "s1", "-n", "garden-shoots")["metadata"]["annotations"]
    assert annotations["deletion.gardener.cloud/confirmed-by"] == "alice@example.com"
    admin.ok("delete", "shoot", "s1", "-n", "garden-shoots", "--wait=false")
    eventually(lambda: admin.run("get", "shoot", "s1", "-n", "garden-shoots").returncode != 0)


def test_the_plain_test_server_has_no_gardener_rules(apiserver, tmp_path):
    if not os.access(KUBECTL, os.X_OK):
        pytest.skip("kubectl is not installed")
    apiserver.install_crds(CRDS)
    k = Kubectl(apiserver.kubeconfig, tmp_path, timeout=60)
    k.ok("create", "-f", "-", input=project("plain-project-name"))
    assert "createdBy" not in k.json("get", "project", "plain-project-name")["spec"]
    k.ok("delete", "project", "plain-project-name")


def test_the_cli_loads_the_rules_as_admission_plugins(tmp_path):
    """``python -m framework.apiserver --admission-plugin gcm.embedded.admission:plugins`` (bench/chaos.py's
    server) runs the same rules; the plugins' names are Gardener's."""
    assert [p.name for p in admission.plugins()] == ["ProjectValidator", "DeletionConfirmation"]
    kc = tmp_path / "kubeconfig"
    cmd = [
        sys.executable,
        "-m",
        "framework.apiserver",
        "--port",
        "0",
        "--kubeconfig",
        str(kc),
        "--crds",
        str(CRDS),
    ]
    proc = subprocess.Popen(
        [*cmd, "--admission-plugin", "gcm.embedded.admission:plugins"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        eventually(lambda: proc.poll() is None and kc.exists(), timeout=60, message="server started")
        c = Client.from_kubeconfig(kc, qps=0)
        body = {"apiVersion": CORE_V1BETA1, "kind": KIND_PROJECT, "metadata": {"name": "cli"}, "spec": {}}
        created = c.create(body)
        assert created["spec"]["createdBy"]["name"] == "admin"  # the mutator ran
        with pytest.raises(Forbidden) as e:
            c.delete(CORE_V1BETA1, KIND_PROJECT, "cli")
        assert REFUSED in str(e.value)
    finally:
        proc.terminate()
        proc.wait(30)
